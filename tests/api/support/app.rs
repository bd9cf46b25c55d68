//! The service in the test process, on its own fresh Postgres database, ClickHouse database
//! and spool, with the settings tests run it with.

use super::*;
use std::time::Duration;

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
    /// The instance's webhook work, to do at once what is due.
    webhooks: videoapp::platform::work::Worker,
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
    if settings.clickhouse_database == clickhouse_database {
        migrated_clickhouse_database(&clickhouse_database).await;
    }
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
    let webhooks = app.webhook_worker();
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
        webhooks,
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
    /// Does the webhook work that is due, until none is left due (as the instance's own worker
    /// would, soon); how many deliveries it took.
    pub async fn work_webhooks(&self) -> usize {
        videoapp::platform::work::work_until_idle(&self.webhooks)
            .await
            .expect("the webhook deliveries are readable")
    }

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
