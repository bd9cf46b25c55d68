//! The test harness: each test gets the real service on port 0, with its own fresh Postgres
//! database and its own ClickHouse database, on the servers `scripts/test` starts.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection, PgPool};
use uuid::Uuid;
use videoapp::app::Application;
use videoapp::catalog::cache::CatalogCache;
use videoapp::config::{MediaSettings, Settings};
use videoapp::storefront::signature::{signed_query, ProxySecret};

pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";
pub const PROXY_SECRET: &str = "test-proxy-secret";

/// The analytics API's sort keys, as its contract names them.
pub const SORT_KEYS: [&str; 8] = [
    "views",
    "clicks",
    "impressions",
    "add_to_cart",
    "orders",
    "revenue",
    "title",
    "created_at",
];

/// The Postgres server's maintenance database; tests create their own databases through it.
pub fn postgres_admin_url() -> String {
    std::env::var("VIDEOAPP_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://videoapp:videoapp@127.0.0.1:54329/postgres".to_string())
}

pub fn clickhouse_url() -> String {
    std::env::var("VIDEOAPP_TEST_CLICKHOUSE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:18123".to_string())
}

/// The HTTP addresses of the local cluster's nodes (scripts/cluster): 1 and 2 replicate shard 1,
/// 3 and 4 shard 2.
pub fn cluster_urls() -> Vec<String> {
    std::env::var("VIDEOAPP_TEST_CLUSTER_URLS")
        .unwrap_or_else(|_| {
            (1..=4)
                .map(|n| format!("http://127.0.0.1:1821{n},"))
                .collect()
        })
        .split(',')
        .filter(|url| !url.is_empty())
        .map(str::to_string)
        .collect()
}

/// Databases with this prefix live on the cluster; [`clickhouse_query`] asks its first node.
pub const CLUSTER_DATABASE_PREFIX: &str = "test_cluster_";

/// Where a running service answers, and the databases and spool it runs on: the same for a
/// [`TestApp`] and a [`ProcessApp`], which both deref to it.
pub struct Instance {
    pub address: String,
    pub metrics_address: String,
    pub client: reqwest::Client,
    pub database_url: String,
    pub clickhouse_database: String,
    pub spool_dir: std::path::PathBuf,
}

pub struct TestApp {
    instance: Instance,
    /// A pool on the test's own database, for arranging and asserting beside the service.
    pub db: PgPool,
    /// The instance's catalog cache, to observe loads.
    pub catalog: CatalogCache,
    stop: std::sync::Mutex<Option<tokio::sync::oneshot::Sender<()>>>,
    server: std::sync::Mutex<Option<tokio::task::JoinHandle<anyhow::Result<()>>>>,
}

/// A fresh, empty Postgres database; returns its URL.
pub async fn fresh_database() -> String {
    let name = format!("test_{}", Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&postgres_admin_url())
        .await
        .expect("Postgres is not running: start it with scripts/test (or scripts/up)");
    admin
        .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
        .await
        .expect("create test database");
    let mut url = url::Url::parse(&postgres_admin_url()).unwrap();
    url.set_path(&name);
    url.to_string()
}

/// Settings for a test instance on `database_url`, listening on free ports.
pub fn test_settings(database_url: &str, clickhouse_database: &str) -> Settings {
    Settings {
        database_url: Some(database_url.into()),
        clickhouse_url: Some(clickhouse_url().parse().expect("a ClickHouse URL")),
        clickhouse_database: clickhouse_database.to_string(),
        listen: Some(([127, 0, 0, 1], 0).into()),
        metrics_listen: ([127, 0, 0, 1], 0).into(),
        proxy_secret: Some(PROXY_SECRET.into()),
        admin_token: Some(ADMIN_TOKEN.into()),
        shutdown_grace: Duration::from_secs(2),
        spool_dir: fresh_spool_dir(),
        // Small batches ship fast, so tests see their rows quickly.
        batch_max_age: Duration::from_millis(100),
        media: MediaSettings {
            media_dir: fresh_media_dir(),
            // Tests that process videos start workers of their own.
            media_workers: 0,
            ..Settings::default().media
        },
        ..Settings::default()
    }
}

/// A media directory of the test's own.
pub fn fresh_media_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("videoapp-test-media-{}", Uuid::new_v4().simple()))
}

/// A spool directory of the test's own.
pub fn fresh_spool_dir() -> std::path::PathBuf {
    std::env::temp_dir().join(format!("videoapp-test-spool-{}", Uuid::new_v4().simple()))
}

pub fn fresh_clickhouse_database() -> String {
    format!("test_{}", Uuid::new_v4().simple())
}

pub async fn spawn_app() -> TestApp {
    spawn_app_with(|_| {}).await
}

/// Starts the service with the test settings changed by `adjust`.
pub async fn spawn_app_with(adjust: impl FnOnce(&mut Settings)) -> TestApp {
    let database_url = fresh_database().await;
    let clickhouse_database = fresh_clickhouse_database();
    let mut settings = test_settings(&database_url, &clickhouse_database);
    adjust(&mut settings);
    let clickhouse_database = settings.clickhouse_database.clone();
    spawn_with_settings(settings, database_url, clickhouse_database).await
}

/// Starts a service on an existing database (e.g. a second instance beside another).
pub async fn spawn_with_settings(
    settings: Settings,
    database_url: String,
    clickhouse_database: String,
) -> TestApp {
    let config = settings.server_config().expect("test settings are valid");
    let spool_dir = config.spool_dir.clone();
    let app = Application::build(config).await.expect("service builds");
    let address = format!("http://{}", app.local_addr());
    let metrics_address = format!("http://{}", app.metrics_addr());
    let catalog = app.catalog_cache();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Dropping the sender (the test ends) also stops it; until then it serves.
    let server = tokio::spawn(app.run_until(async move {
        let _ = stopped.await;
    }));
    TestApp {
        db: PgPool::connect(&database_url)
            .await
            .expect("connect to test database"),
        instance: Instance {
            address,
            metrics_address,
            client: reqwest::Client::new(),
            database_url,
            clickhouse_database,
            spool_dir,
        },
        catalog,
        stop: std::sync::Mutex::new(Some(stop)),
        server: std::sync::Mutex::new(Some(server)),
    }
}

/// A query string signed now with the test secret, as the app proxy would send it.
pub fn signed(shop: &str, params: &[(&str, &str)]) -> String {
    let mut all = vec![
        ("shop".to_string(), shop.to_string()),
        ("path_prefix".to_string(), "/apps/videoapp_sub".to_string()),
    ];
    all.extend(params.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    signed_query(&ProxySecret::new(PROXY_SECRET), &all, chrono::Utc::now())
}

impl TestApp {
    /// Stops the service as SIGTERM would, and waits until it has finished.
    pub async fn shutdown(&self) {
        if let Some(stop) = self.stop.lock().unwrap().take() {
            let _ = stop.send(());
        }
        let server = self.server.lock().unwrap().take();
        if let Some(server) = server {
            server.await.expect("server task").expect("clean shutdown");
        }
    }
}

/// Shallow merge of JSON objects: `extra`'s keys win.
pub fn merge(base: &mut Value, extra: Value) {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
}

pub async fn json_of(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, body)
}

/// Asserts our error body with `code`, and that the message mentions `needle`.
pub async fn assert_error(response: Response, status: StatusCode, code: &str, needle: &str) {
    let (actual, body) = json_of(response).await;
    assert_eq!(actual, status, "{body}");
    assert_eq!(body["success"], json!(false), "{body}");
    assert_eq!(body["error"]["code"], json!(code), "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(needle),
        "message {message:?} does not mention {needle:?}"
    );
}

/// `GET`, `PATCH` (a new title) and `DELETE` of the admin item at `path` (below `/admin/v1`).
pub async fn get_patch_delete(app: &impl Service, path: &str) -> [Response; 3] {
    let get = app.send_admin(Method::GET, path).await;
    let patch = app
        .send_admin_json(Method::PATCH, path, &json!({ "title": "Changed" }))
        .await;
    let delete = app.send_admin(Method::DELETE, path).await;
    [get, patch, delete]
}

/// The ids of a JSON array's items, in order.
pub fn ids_of(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"))
        .iter()
        .map(|item| item["id"].as_str().expect("an id").to_string())
        .collect()
}

/// `body` without its `updatedAt`, which every write moves.
pub fn without_updated_at(mut body: Value) -> Value {
    body.as_object_mut().unwrap().remove("updatedAt");
    body
}

/// Asserts a 400 `VALIDATION_ERROR` whose message mentions `needle` (the field at fault).
pub async fn assert_validation_error(response: Response, needle: &str) {
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        needle,
    )
    .await;
}

/// `text` with a control character in its middle, for each kind a stored text refuses: NUL
/// (which Postgres cannot store), other C0 controls with tab and newline among them, DEL, C1.
pub fn with_control_characters(text: &str) -> Vec<String> {
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    let (head, tail) = text.split_at(middle);
    [
        '\0', '\u{1}', '\t', '\n', '\r', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}',
    ]
    .into_iter()
    .map(|c| format!("{head}{c}{tail}"))
    .collect()
}

/// Asserts the 400 that names `field` for a control character in its text.
pub async fn assert_control_character_refused(response: Response, field: &str) {
    assert_validation_error(
        response,
        &format!("{field}: must not contain control characters"),
    )
    .await;
}

/// The service as a separate process (for signals and SIGKILL), and the address it serves on.
pub struct ServiceProcess {
    pub child: std::process::Child,
    pub address: String,
    pub metrics_address: String,
    /// Every JSON log line so far, in order.
    log: std::sync::Arc<std::sync::Mutex<Vec<Value>>>,
}

impl ServiceProcess {
    /// Waits for a log line whose message is `message`, and returns it.
    pub async fn wait_for_log(&self, message: &str, within: std::time::Duration) -> Value {
        let started = std::time::Instant::now();
        loop {
            let found = self
                .log
                .lock()
                .unwrap()
                .iter()
                .find(|entry| entry["message"] == message)
                .cloned();
            if let Some(entry) = found {
                return entry;
            }
            assert!(
                started.elapsed() < within,
                "no log line {message:?} within {within:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }

    /// Every JSON log line so far, in order.
    pub fn log(&self) -> Vec<Value> {
        self.log.lock().unwrap().clone()
    }

    pub async fn metrics(&self) -> String {
        reqwest::get(format!("{}/metrics", self.metrics_address))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}

/// A failing test must not leave a server behind (it would hold ports and pipes open).
impl Drop for ServiceProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `videoapp serve` with `env` (on top of a clean environment) and waits for its
/// "serving" log line, which names the address (it listens on port 0).
pub fn spawn_binary(env: &[(&str, String)]) -> ServiceProcess {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_videoapp"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default());
    spawn_serving(command, env)
}

/// Runs `command` (the binary, or a wrapper that runs it) as `… serve` on ports 0 with the test
/// secrets and `env` on top, and waits for its "serving" log line, which names the addresses.
pub fn spawn_serving(mut command: std::process::Command, env: &[(&str, String)]) -> ServiceProcess {
    use std::io::{BufRead, BufReader};
    command
        .env("VIDEOAPP_LISTEN", "127.0.0.1:0")
        .env("VIDEOAPP_METRICS_LISTEN", "127.0.0.1:0")
        .env("VIDEOAPP_LOG_FORMAT", "json")
        .env("VIDEOAPP_PROXY_SECRET", PROXY_SECRET)
        .env("VIDEOAPP_ADMIN_TOKEN", ADMIN_TOKEN);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command
        .arg("serve")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start the videoapp binary");
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let log = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let (address, metrics_address) = loop {
        let Some(Ok(line)) = lines.next() else {
            let log = log.lock().unwrap();
            panic!("the service exited before serving; its log: {log:#?}");
        };
        let Ok(entry) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        log.lock().unwrap().push(entry.clone());
        if entry["message"] == "videoapp serving" {
            let at = |field: &str| format!("http://{}", entry[field].as_str().unwrap());
            break (at("listen"), at("metrics"));
        }
    };
    // Keep reading its log so it never blocks on a full pipe, and keep the lines for the test.
    let kept = log.clone();
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            if let Ok(entry) = serde_json::from_str::<Value>(&line) {
                kept.lock().unwrap().push(entry);
            }
        }
    });
    ServiceProcess {
        child,
        address,
        metrics_address,
        log,
    }
}

/// Runs a query on the test ClickHouse server and returns its TSV output, trimmed.
pub async fn clickhouse_query(database: &str, sql: &str) -> String {
    let client = reqwest::Client::new();
    let output = try_clickhouse_query(&client, database, sql).await;
    output.unwrap_or_else(|e| panic!("{e}"))
}

/// [`clickhouse_query`] on `client`, saying what failed instead of panicking.
pub async fn try_clickhouse_query(
    client: &reqwest::Client,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let server = match database.starts_with(CLUSTER_DATABASE_PREFIX) {
        true => cluster_urls().swap_remove(0),
        false => clickhouse_url(),
    };
    try_clickhouse_query_on(client, &server, database, sql).await
}

/// `sql` in `database` on the ClickHouse server at `server`: its trimmed text, or why not.
pub async fn try_clickhouse_query_on(
    client: &reqwest::Client,
    server: &str,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let url = format!("{server}/?database={database}");
    let request = client.post(url).timeout(Duration::from_secs(600));
    let sent = request.body(sql.to_string()).send().await;
    let response = sent.map_err(|e| {
        format!("ClickHouse is not reachable ({e}); set VIDEOAPP_TEST_CLICKHOUSE_URL")
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    match status.is_success() {
        true => Ok(text.trim().to_string()),
        false => Err(format!("ClickHouse: {sql}: {status}: {}", text.trim())),
    }
}

/// Segment files that hold records: sealed ones, and open ones past their first header (the
/// spool keeps a pre-allocated, all-zero segment ready, which holds nothing).
pub fn spooled_segments(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|path| {
            path.is_file() && path.extension().is_some_and(|x| x == "open" || x == "log")
        })
        .filter(|path| {
            let mut header = [0u8; 4];
            let written = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header))
                .is_ok();
            written && header != [0; 4]
        })
        .count()
}

/// Waits until the app's spool holds nothing: every acknowledged event was inserted, and the
/// insert returned, so the materialized views have it too. (Rows show in `events` a moment
/// before the same insert has written the views.)
pub async fn wait_until_shipped(app: &impl Service, within: std::time::Duration) {
    wait_until_spool_empty(&app.spool_dir, within).await;
}

/// Waits until the spool directory `dir` holds no records (see [`wait_until_shipped`]).
pub async fn wait_until_spool_empty(dir: &std::path::Path, within: std::time::Duration) {
    let started = std::time::Instant::now();
    while spooled_segments(dir) > 0 {
        assert!(started.elapsed() < within, "the spool never drained");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

// ---- the service driven over HTTP, in this process or in its own -------------------------------

/// A running service as tests drive it: inside the test process ([`TestApp`]) or as a process of
/// its own ([`ProcessApp`]). The requests are the same for both: only how the catalog cache is
/// observed differs.
pub trait Service: std::ops::Deref<Target = Instance> {
    /// How many catalog snapshots the service has read from Postgres so far.
    async fn catalog_loads(&self) -> u64;

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// An admin API request (`path` is below `/admin/v1`), with the admin token.
    fn admin(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(&format!("/admin/v1{path}")))
            .bearer_auth(ADMIN_TOKEN)
    }

    /// Sends an admin API request without a body.
    async fn send_admin(&self, method: Method, path: &str) -> Response {
        self.admin(method, path).send().await.unwrap()
    }

    /// Sends an admin API request with a JSON body.
    async fn send_admin_json(
        &self,
        method: Method,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Response {
        self.admin(method, path).json(body).send().await.unwrap()
    }

    /// The array `field` of the admin API's answer to `GET path`; asserts a 200.
    async fn admin_list(&self, path: &str, field: &str) -> Vec<Value> {
        let (status, body) = json_of(self.send_admin(Method::GET, path).await).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body[field]
            .as_array()
            .unwrap_or_else(|| panic!("no {field} array: {body}"))
            .clone()
    }

    async fn get(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    /// A signed `POST /apps/videoapp_sub/analytics` with a JSON body.
    async fn post_events(&self, shop: &str, body: &Value) -> Response {
        let url = format!("/apps/videoapp_sub/analytics?{}", signed(shop, &[]));
        self.client
            .post(self.url(&url))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// A signed storefront GET of `/apps/videoapp_sub/{endpoint}` for `shop`.
    async fn storefront(&self, endpoint: &str, shop: &str, params: &[(&str, &str)]) -> Response {
        let url = format!("/apps/videoapp_sub/{endpoint}?{}", signed(shop, params));
        self.get(&url).await
    }

    /// Creates (or updates) a shop with default settings.
    async fn create_shop(&self, shop: &str) {
        self.create_shop_with(shop, json!({})).await;
    }

    /// Creates (or updates) a shop with `settings` (e.g. its `timezone`) over the defaults.
    async fn create_shop_with(&self, shop: &str, settings: Value) {
        let mut body = json!({ "name": "Test shop" });
        merge(&mut body, settings);
        let response = self
            .send_admin_json(Method::PUT, &format!("/shops/{shop}"), &body)
            .await;
        assert!(
            response.status().is_success(),
            "create shop: {}",
            response.status()
        );
    }

    /// Creates a published video and returns its id.
    async fn create_video(&self, shop: &str, body: Value) -> String {
        let mut video = json!({
            "title": "A video",
            "videoUrl": "https://cdn.example.com/v.mp4",
            "status": "PUBLISHED",
        });
        merge(&mut video, body);
        let response = self
            .send_admin_json(Method::POST, &format!("/shops/{shop}/videos"), &video)
            .await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates an active widget and returns its id.
    async fn create_widget(&self, shop: &str, body: Value) -> String {
        let mut widget = json!({ "type": "carousel", "status": "active" });
        merge(&mut widget, body);
        let response = self
            .send_admin_json(Method::POST, &format!("/shops/{shop}/widgets"), &widget)
            .await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates a shop with one published video (`video`'s fields over the defaults) and an active
    /// widget showing it; returns the ids of the video and of the widget.
    async fn create_shop_showing_a_video(&self, shop: &str, video: Value) -> (String, String) {
        self.create_shop(shop).await;
        let video = self.create_video(shop, video).await;
        let widget = self
            .create_widget(shop, json!({ "videoIds": [video] }))
            .await;
        (video, widget)
    }

    /// Creates an analytics API key named `name`; returns the creation answer (`id`, `key`, …).
    async fn create_api_key(&self, shop: &str, name: &str) -> Value {
        let path = format!("/shops/{shop}/api-keys");
        let body = json!({ "name": name });
        self.admin_expecting(Method::POST, &path, &body, StatusCode::CREATED)
            .await
    }

    /// The admin API's answer to `method path` with `body`; asserts its status is `expected`.
    async fn admin_expecting(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        expected: StatusCode,
    ) -> Value {
        let (status, answer) =
            json_of(self.send_admin_json(method.clone(), path, body).await).await;
        assert_eq!(status, expected, "{method} {path}: {answer}");
        answer
    }

    async fn catalog_version(&self, shop: &str) -> i64 {
        let response = self
            .send_admin(Method::GET, &format!("/shops/{shop}"))
            .await;
        let (_, body) = json_of(response).await;
        body["catalogVersion"].as_i64().unwrap()
    }

    /// The Prometheus text of the metrics listener. A [`TestApp`]'s recorder is the test
    /// process's, shared by every test in it: assert on a [`ProcessApp`]'s.
    async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.metrics_address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}

impl std::ops::Deref for TestApp {
    type Target = Instance;
    fn deref(&self) -> &Instance {
        &self.instance
    }
}

impl Service for TestApp {
    async fn catalog_loads(&self) -> u64 {
        self.catalog.loads()
    }
}

/// `videoapp serve` as a process of its own, on a fresh Postgres database, ClickHouse database
/// and spool. Its metrics recorder is its own: every sample on its `/metrics` comes from what this
/// test did, so a test can assert exact values (the in-process [`TestApp`]s share one recorder).
pub struct ProcessApp {
    /// Held so that the process ends with the test; its log is there to read.
    pub process: ServiceProcess,
    instance: Instance,
}

/// Starts a [`ProcessApp`] with the test settings (small batches, a short shutdown grace), then
/// `env` on top (e.g. `CLICKHOUSE_URL` of a fault proxy).
pub async fn spawn_process_app(env: &[(&'static str, String)]) -> ProcessApp {
    spawn_process_app_on(fresh_spool_dir(), env).await
}

/// [`spawn_process_app`] on the spool at `spool_dir` (e.g. one a test filled beforehand).
pub async fn spawn_process_app_on(
    spool_dir: std::path::PathBuf,
    env: &[(&'static str, String)],
) -> ProcessApp {
    spawn_process_app_with(spool_dir, str::to_string, env).await
}

/// [`spawn_process_app`], the service reaching its fresh database at the URL `reach` makes of
/// the database's own (e.g. through a fault proxy); the test's connections go to it directly.
pub async fn spawn_process_app_reaching_postgres(
    reach: impl FnOnce(&str) -> String,
    env: &[(&'static str, String)],
) -> ProcessApp {
    spawn_process_app_with(fresh_spool_dir(), reach, env).await
}

async fn spawn_process_app_with(
    spool_dir: std::path::PathBuf,
    reach: impl FnOnce(&str) -> String,
    env: &[(&'static str, String)],
) -> ProcessApp {
    let database_url = fresh_database().await;
    let clickhouse_database = fresh_clickhouse_database();
    let mut all = vec![
        ("DATABASE_URL", reach(&database_url)),
        ("CLICKHOUSE_URL", clickhouse_url()),
        ("CLICKHOUSE_DATABASE", clickhouse_database.clone()),
        ("VIDEOAPP_SPOOL_DIR", spool_dir.display().to_string()),
        ("VIDEOAPP_BATCH_MAX_AGE_MS", "100".to_string()),
        ("VIDEOAPP_SHUTDOWN_GRACE_SECONDS", "2".to_string()),
    ];
    all.extend(env.iter().cloned());
    // Off the test's runtime: it may be serving a fault proxy the service starts through.
    let process = tokio::task::spawn_blocking(move || spawn_binary(&all))
        .await
        .expect("the service started");
    ProcessApp {
        instance: Instance {
            address: process.address.clone(),
            metrics_address: process.metrics_address.clone(),
            client: reqwest::Client::new(),
            database_url,
            clickhouse_database,
            spool_dir,
        },
        process,
    }
}

impl ProcessApp {
    /// The value of one sample on this process's `/metrics`, if it has been recorded.
    pub async fn metric(&self, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
        metric_value(&self.metrics().await, name, labels)
    }

    /// Waits until the sample `name{labels}` is recorded and `holds` for its value; returns it.
    pub async fn wait_for_metric(
        &self,
        name: &str,
        labels: &[(&str, &str)],
        holds: impl Fn(f64) -> bool,
        within: std::time::Duration,
    ) -> f64 {
        let started = std::time::Instant::now();
        loop {
            let value = self.metric(name, labels).await;
            if let Some(value) = value.filter(|v| holds(*v)) {
                return value;
            }
            assert!(
                started.elapsed() < within,
                "{name}{labels:?} is {value:?} after {within:?}"
            );
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    }
}

impl std::ops::Deref for ProcessApp {
    type Target = Instance;
    fn deref(&self) -> &Instance {
        &self.instance
    }
}

impl Service for ProcessApp {
    async fn catalog_loads(&self) -> u64 {
        self.metric("catalog_cache_loads_total", &[])
            .await
            .unwrap_or(0.0) as u64
    }
}

/// The value of the sample `name` whose labels are exactly `labels` (in any order) in Prometheus
/// text, or `None` if there is no such sample. `name` is the full sample name: a histogram's
/// `…_count`, `…_sum` or `…_bucket` (with its `le` label).
pub fn metric_value(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut wanted: Labels = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    wanted.sort();
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .filter_map(parse_sample)
        .find(|(sample, sample_labels, _)| sample == name && *sample_labels == wanted)
        .map(|(_, _, value)| value)
}

/// A sample's labels, sorted by name.
type Labels = Vec<(String, String)>;

/// One line of Prometheus text: its name, its labels and its value.
fn parse_sample(line: &str) -> Option<(String, Labels, f64)> {
    let name_end = line.find(['{', ' '])?;
    let name = line[..name_end].to_string();
    let mut rest = &line[name_end..];
    let mut labels = Vec::new();
    if let Some(mut inside) = rest.strip_prefix('{') {
        // Labels: name="value" (with \" \\ \n escapes), separated by ',', up to '}'.
        loop {
            inside = inside.trim_start_matches(',');
            if let Some(after) = inside.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after_key) = inside.split_once("=\"")?;
            let mut value = String::new();
            let mut chars = after_key.char_indices();
            let close = loop {
                match chars.next()? {
                    (_, '\\') => match chars.next()?.1 {
                        'n' => value.push('\n'),
                        other => value.push(other),
                    },
                    (i, '"') => break i,
                    (_, other) => value.push(other),
                }
            };
            labels.push((key.to_string(), value));
            inside = &after_key[close + 1..];
        }
    }
    labels.sort();
    let value = rest.split_whitespace().next()?.parse().ok()?;
    Some((name, labels, value))
}

#[test]
fn a_sample_is_found_by_its_name_and_exact_label_set() {
    let text = "# TYPE http_requests_total counter\n\
        http_requests_total{method=\"GET\",route=\"/a/{b}\",status=\"404\"} 3\n\
        http_requests_total{method=\"GET\",route=\"/a/{b}\",status=\"404\",x=\"y\"} 5\n\
        events_rejected_total{reason=\"a \\\"quoted\\\", odd} label\"} 2\n\
        events_accepted_total 10\n\
        spool_sync_duration_seconds_bucket{le=\"+Inf\"} 7\n";
    let get = |name, labels: &[(&str, &str)]| metric_value(text, name, labels);
    assert_eq!(
        get(
            "http_requests_total",
            &[("status", "404"), ("method", "GET"), ("route", "/a/{b}")]
        ),
        Some(3.0)
    );
    assert_eq!(get("http_requests_total", &[("method", "GET")]), None);
    assert_eq!(
        get(
            "events_rejected_total",
            &[("reason", "a \"quoted\", odd} label")]
        ),
        Some(2.0)
    );
    assert_eq!(get("events_accepted_total", &[]), Some(10.0));
    assert_eq!(get("events_accepted", &[]), None);
    assert_eq!(
        get("spool_sync_duration_seconds_bucket", &[("le", "+Inf")]),
        Some(7.0)
    );
}

// ---- the catalog's change listener ------------------------------------------------------------

/// Waits until the service's change listener is live and has caught up: it has invalidated the
/// catalog cache as it does once it starts listening, and has handled every notification sent
/// before this call (the NOTIFY of each catalog write included). So a later change to the cache
/// is the doing of what the test does next, not of a start-up flush or an old notification.
///
/// Observed, not assumed: a shop nobody installed is cached (as not installed), a notification
/// names it, and the next request for it must read it again. The first such probe may go
/// unheard (sent before LISTEN took effect), and what it sees may be the start-up flush rather
/// than the notification; a second probe, sent once the first was seen, can only be answered by
/// the listener handling it, after everything sent before.
pub async fn wait_until_listening(app: &impl Service, within: std::time::Duration) {
    let started = std::time::Instant::now();
    let mut db = PgConnection::connect(&app.database_url).await.unwrap();
    for _ in 0..2 {
        while !change_heard(app, &mut db).await {
            assert!(
                started.elapsed() < within,
                "the change listener did not answer within {within:?}"
            );
        }
    }
}

/// One probe of [`wait_until_listening`]: did the service reload a cached shop within half a
/// second of a notification naming it? (Half a second is well inside any cache TTL a test uses,
/// so the reload cannot be the entry expiring.)
async fn change_heard(app: &impl Service, db: &mut PgConnection) -> bool {
    let shop = format!("probe-{}.myshopify.com", Uuid::new_v4().simple());
    let request = || app.storefront("contextual-widgets", &shop, &[("location", "home")]);
    let loaded_at = std::time::Instant::now();
    assert_eq!(request().await.status(), StatusCode::NOT_FOUND);
    let loads = app.catalog_loads().await;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(videoapp::catalog::CHANGES_CHANNEL)
        .bind(&shop)
        .execute(&mut *db)
        .await
        .unwrap();
    while loaded_at.elapsed() < std::time::Duration::from_millis(500) {
        assert_eq!(request().await.status(), StatusCode::NOT_FOUND);
        if app.catalog_loads().await > loads {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}

/// A warehouse handle on `database` of the ClickHouse server (or cluster) at `url`, as the
/// default user.
pub fn warehouse_on(
    url: &str,
    database: &str,
    cluster: Option<&str>,
) -> videoapp::warehouse::Warehouse {
    videoapp::warehouse::Warehouse::new(&videoapp::config::ClickHouseConfig {
        url: url.to_string(),
        database: database.to_string(),
        user: "default".to_string(),
        password: Default::default(),
        cluster: cluster.map(String::from),
    })
}

/// A warehouse handle on a fresh database of the test ClickHouse server (created by the
/// migration runner).
pub fn fresh_warehouse() -> videoapp::warehouse::Warehouse {
    warehouse_on(&clickhouse_url(), &fresh_clickhouse_database(), None)
}

/// `n` events from `first`: two shops, three videos and none, two widgets and none, every type
/// and attribution, over 45 days across three months, with revenue on carts too (which counts
/// nowhere: revenue is the orders').
pub fn insert_events(first: u64, n: u64) -> String {
    format!(
        "INSERT INTO events (event_id, batch_id, shop_domain, local_date, event_time, received_at, \
         timestamp_replaced, event_type, attribution, video_id, widget_id, session_id, customer_id, \
         product_id, order_id, revenue_e4, currency) \
         SELECT toUUID('00000000-0000-0000-0000-000000000000'), \
           toUUID('00000000-0000-0000-0000-000000000000'), \
           if(number % 3 = 0, 'b.myshopify.com', 'a.myshopify.com'), \
           toDate('2026-01-20') + number % 45, now(), now(), 0, \
           ['impression', 'view', 'click', 'add_to_cart', 'checkout_completed'][1 + number % 5], \
           ['none', 'direct', 'influenced', 'direct', 'none', 'influenced', 'none'][1 + number % 7], \
           ['v0', 'v1', 'v2', ''][1 + number % 4], ['w0', 'w1', ''][1 + intDiv(number, 2) % 3], \
           '', '', '', '', (number * 7919) % 1000000, 'EUR' \
         FROM system.numbers WHERE number >= {first} LIMIT {n}"
    )
}

/// The sums an aggregate holds per key, and the same recounted from `events`, as TSV.
pub async fn aggregate_and_recount(
    database: &str,
    table: &str,
    keys: &str,
    event_keys: &str,
) -> [String; 2] {
    let held = clickhouse_query(
        database,
        &format!(
            "SELECT {keys}, sum(impressions), sum(views), sum(clicks), sum(add_to_cart), \
             sum(orders), sum(revenue_e4), sum(direct_add_to_cart), sum(direct_orders), \
             sum(direct_revenue_e4), sum(influenced_add_to_cart), sum(influenced_orders), \
             sum(influenced_revenue_e4) FROM {table} GROUP BY {keys} ORDER BY {keys}"
        ),
    )
    .await;
    let cart = "event_type = 'add_to_cart'";
    let order = "event_type = 'checkout_completed'";
    let recount = clickhouse_query(
        database,
        &format!(
            "SELECT {event_keys}, countIf(event_type = 'impression'), countIf(event_type = 'view'), \
             countIf(event_type = 'click'), countIf({cart}), countIf({order}), \
             sumIf(revenue_e4, {order}), \
             countIf({cart} AND attribution = 'direct'), countIf({order} AND attribution = 'direct'), \
             sumIf(revenue_e4, {order} AND attribution = 'direct'), \
             countIf({cart} AND attribution = 'influenced'), \
             countIf({order} AND attribution = 'influenced'), \
             sumIf(revenue_e4, {order} AND attribution = 'influenced') \
             FROM events GROUP BY {keys} ORDER BY {keys}"
        ),
    )
    .await;
    [held, recount]
}

/// Every aggregate of `database` holds what a recount of its `events` gives, key by key.
pub async fn assert_every_aggregate_equals_its_recount(database: &str) {
    let month = "toStartOfMonth(local_date) AS month";
    let aggregates = [
        ("video_daily", "shop_domain, local_date, video_id", None),
        ("widget_daily", "shop_domain, local_date, widget_id", None),
        (
            "video_monthly",
            "shop_domain, month, video_id",
            Some(format!("shop_domain, {month}, video_id")),
        ),
        (
            "video_yearly",
            "shop_domain, year, video_id",
            Some("shop_domain, toStartOfYear(local_date) AS year, video_id".to_string()),
        ),
        (
            "widget_monthly",
            "shop_domain, month, widget_id",
            Some(format!("shop_domain, {month}, widget_id")),
        ),
        ("shop_daily", "shop_domain, local_date", None),
        (
            "video_daily_by_video",
            "shop_domain, video_id, local_date",
            None,
        ),
    ];
    for (table, keys, event_keys) in aggregates {
        let event_keys = event_keys.unwrap_or_else(|| keys.to_string());
        let [held, recount] = aggregate_and_recount(database, table, keys, &event_keys).await;
        // Both shops, with four videos (one of them none) or a year's days, at the least.
        assert!(recount.lines().count() >= 8, "{table}: {recount}");
        assert_eq!(held, recount, "{table}");
    }
}
