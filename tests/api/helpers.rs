//! The test harness: each test gets the real service on port 0, with its own fresh Postgres
//! database and its own ClickHouse database, on the servers `scripts/test` starts.

use std::time::Duration;

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection, PgPool};
use uuid::Uuid;
use videoapp::app::Application;
use videoapp::catalog::cache::CatalogCache;
use videoapp::config::Settings;
use videoapp::storefront::signature::{signed_query, ProxySecret};

pub const ADMIN_TOKEN: &str = "test-admin-token-0123456789";
pub const PROXY_SECRET: &str = "test-proxy-secret";

/// The Postgres server's maintenance database; tests create their own databases through it.
pub fn postgres_admin_url() -> String {
    std::env::var("VIDEOAPP_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://videoapp:videoapp@127.0.0.1:54329/postgres".to_string())
}

pub fn clickhouse_url() -> String {
    std::env::var("VIDEOAPP_TEST_CLICKHOUSE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:18123".to_string())
}

pub struct TestApp {
    pub address: String,
    pub metrics_address: String,
    pub client: reqwest::Client,
    /// A pool on the test's own database, for arranging and asserting beside the service.
    pub db: PgPool,
    pub database_url: String,
    pub clickhouse_database: String,
    /// The instance's catalog cache, to observe loads.
    pub catalog: CatalogCache,
    /// The spool directory this instance uses.
    pub spool_dir: std::path::PathBuf,
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
        ..Settings::default()
    }
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
        address,
        metrics_address,
        client: reqwest::Client::new(),
        db: PgPool::connect(&database_url)
            .await
            .expect("connect to test database"),
        database_url,
        clickhouse_database,
        catalog,
        spool_dir,
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

    /// A signed `POST /apps/videoapp_sub/analytics` with a JSON body.
    pub async fn post_events(&self, shop: &str, body: &Value) -> Response {
        let url = format!("/apps/videoapp_sub/analytics?{}", signed(shop, &[]));
        self.client
            .post(self.url(&url))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// The Prometheus text of the metrics listener. (The recorder is the test process's, shared
    /// by every test.)
    pub async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.metrics_address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// An admin API request (`path` is below `/admin/v1`), with the admin token.
    pub fn admin(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(&format!("/admin/v1{path}")))
            .bearer_auth(ADMIN_TOKEN)
    }

    /// A signed storefront GET of `/apps/videoapp_sub/{endpoint}` for `shop`.
    pub async fn storefront(
        &self,
        endpoint: &str,
        shop: &str,
        params: &[(&str, &str)],
    ) -> Response {
        let url = format!("/apps/videoapp_sub/{endpoint}?{}", signed(shop, params));
        self.get(&url).await
    }

    pub async fn get(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    /// Creates (or updates) a shop with default settings.
    pub async fn create_shop(&self, shop: &str) {
        let response = self
            .admin(Method::PUT, &format!("/shops/{shop}"))
            .json(&json!({ "name": "Test shop" }))
            .send()
            .await
            .unwrap();
        assert!(
            response.status().is_success(),
            "create shop: {}",
            response.status()
        );
    }

    /// Creates a published video and returns its id.
    pub async fn create_video(&self, shop: &str, body: Value) -> String {
        let mut video = json!({
            "title": "A video",
            "videoUrl": "https://cdn.example.com/v.mp4",
            "status": "PUBLISHED",
        });
        merge(&mut video, body);
        let response = self
            .admin(Method::POST, &format!("/shops/{shop}/videos"))
            .json(&video)
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates an active widget and returns its id.
    pub async fn create_widget(&self, shop: &str, body: Value) -> String {
        let mut widget = json!({ "type": "carousel", "status": "active" });
        merge(&mut widget, body);
        let response = self
            .admin(Method::POST, &format!("/shops/{shop}/widgets"))
            .json(&widget)
            .send()
            .await
            .unwrap();
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    pub async fn catalog_version(&self, shop: &str) -> i64 {
        let response = self
            .admin(Method::GET, &format!("/shops/{shop}"))
            .send()
            .await
            .unwrap();
        let (_, body) = json_of(response).await;
        body["catalogVersion"].as_i64().unwrap()
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
    use std::io::{BufRead, BufReader};
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_videoapp"));
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
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
        let line = lines
            .next()
            .expect("service exited before serving")
            .unwrap();
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
    let response = reqwest::Client::new()
        .post(format!("{}/?database={database}", clickhouse_url()))
        .body(sql.to_string())
        .send()
        .await
        .expect("ClickHouse answers");
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "{sql}: {text}");
    text.trim().to_string()
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
pub async fn wait_until_shipped(app: &TestApp, within: std::time::Duration) {
    let started = std::time::Instant::now();
    while spooled_segments(&app.spool_dir) > 0 {
        assert!(started.elapsed() < within, "the spool never drained");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
