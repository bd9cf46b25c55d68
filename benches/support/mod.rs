//! What the storefront benches share: the real service on port 0 against a fresh Postgres
//! database (and a fresh ClickHouse database) on the local servers, seeded through the admin API
//! with one realistic shop, and signed storefront URLs for it.
//!
//! Databases are named `bench_<uuid>`; [`Databases::drop_all`] removes them at the end of a run.
//! A run that dies half-way leaves them behind (they are harmless; drop `bench_*` by hand).

// Each bench target uses its own part of this module.
#![allow(dead_code)]

pub mod load;
pub mod open_loop;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use chrono::Utc;
use futures::stream::{self, StreamExt};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;
use videoapp::app::Application;
use videoapp::app::PublicService;
use videoapp::catalog::cache::CatalogCache;
use videoapp::config::{LogFormat, Settings};
use videoapp::storefront::signature::{signed_query, ProxySecret};

pub const SHOP: &str = "bench-store.myshopify.com";
pub const PATH_PREFIX: &str = "/apps/videoapp_sub";
pub const CONTEXTUAL_WIDGETS: &str = "/apps/videoapp_sub/contextual-widgets";

pub const PRODUCTS: usize = 500;
pub const VIDEOS: usize = 500;
pub const WIDGETS: usize = 50;
pub const VIDEOS_PER_MANUAL_WIDGET: usize = 10;
/// How many of the 50 widgets a `location=home` page renders (see [`widget_plan`]).
pub const WIDGETS_AT_HOME: usize = 20;

/// Longer than any run, so one pre-signed URL stays valid throughout.
pub const SIGNATURE_MAX_AGE_SECONDS: &str = "3600";
/// Start-up (connect, migrate, seed) must never hang a run.
const START_TIMEOUT: Duration = Duration::from_secs(180);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The Postgres server's maintenance database, as for the tests.
pub fn postgres_admin_url() -> String {
    std::env::var("VIDEOAPP_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://videoapp:videoapp@127.0.0.1:54329/postgres".to_string())
}

pub fn clickhouse_url() -> String {
    std::env::var("VIDEOAPP_TEST_CLICKHOUSE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:18123".to_string())
}

/// Logs as `videoapp serve` has them (RUST_LOG, default `info`), so the per-request span costs
/// what it costs in production.
pub fn init_tracing() {
    videoapp::telemetry::init_tracing(LogFormat::Human);
}

/// Stops the process with one clear line: benches have nothing useful to do without the stack.
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// What a run created, so it can be removed afterwards.
#[derive(Clone, Debug)]
pub struct Databases {
    pub postgres_admin_url: String,
    pub postgres: String,
    pub clickhouse_url: String,
    pub clickhouse: String,
    pub spool_dir: PathBuf,
}

impl Databases {
    /// Names a fresh `bench_<uuid>` pair and a spool directory, and creates the Postgres
    /// database (the service's migrations create the ClickHouse one). Returns the database's
    /// URL too. Fails the process with a clear message when Postgres is unreachable.
    pub async fn create() -> (Databases, String) {
        let id = Uuid::new_v4().simple().to_string();
        let databases = Databases {
            postgres_admin_url: postgres_admin_url(),
            postgres: format!("bench_{id}"),
            clickhouse_url: clickhouse_url(),
            clickhouse: format!("bench_{id}"),
            spool_dir: std::env::temp_dir().join(format!("videoapp-bench-{id}")),
        };
        let database_url =
            create_database(&databases.postgres_admin_url, &databases.postgres).await;
        (databases, database_url)
    }

    /// Drops both databases and the spool directory. Call it after the runtime that ran the
    /// service is gone (its pools and listener would otherwise hold the database open).
    /// Best effort: a failure is reported, not fatal.
    pub fn drop_all(&self) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
        runtime.block_on(async {
            let dropped_pg = async {
                let mut admin = PgConnection::connect(&self.postgres_admin_url).await?;
                let sql = format!(
                    r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#,
                    self.postgres
                );
                admin.execute(sql.as_str()).await?;
                Ok::<_, sqlx::Error>(())
            };
            if let Err(e) = tokio::time::timeout(CONNECT_TIMEOUT, dropped_pg)
                .await
                .unwrap_or_else(|_| Err(sqlx::Error::PoolTimedOut))
            {
                eprintln!(
                    "warning: could not drop Postgres database {}: {e}",
                    self.postgres
                );
            }
            let dropped_ch = reqwest::Client::new()
                .post(&self.clickhouse_url)
                .timeout(CONNECT_TIMEOUT)
                .body(format!("DROP DATABASE IF EXISTS {}", self.clickhouse))
                .send()
                .await
                .and_then(|r| r.error_for_status());
            if let Err(e) = dropped_ch {
                eprintln!(
                    "warning: could not drop ClickHouse database {}: {e}",
                    self.clickhouse
                );
            }
        });
        let _ = std::fs::remove_dir_all(&self.spool_dir);
    }
}

/// The service, running on this runtime, with the bench shop seeded and its cache warm.
pub struct BenchApp {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The same service the listener serves, for in-process requests (`oneshot`).
    pub router: PublicService,
    /// The service's catalog cache (the per-shop snapshots).
    pub catalog: CatalogCache,
    pub databases: Databases,
    secret: ProxySecret,
}

impl BenchApp {
    /// Creates the databases, builds and starts the service, seeds the shop and warms its cache.
    /// Fails the process with a clear message when Postgres is unreachable; never hangs.
    pub async fn start() -> BenchApp {
        match tokio::time::timeout(START_TIMEOUT, Self::start_inner()).await {
            Ok(app) => app,
            Err(_) => fail(format!(
                "the bench service did not start and seed within {START_TIMEOUT:?}"
            )),
        }
    }

    async fn start_inner() -> BenchApp {
        let (databases, database_url) = Databases::create().await;
        let id = &databases.postgres["bench_".len()..];
        let admin_token = format!("bench-admin-token-{id}");
        let secret = format!("bench-proxy-secret-{id}");
        let settings = Settings {
            signature_max_age: Duration::from_secs(SIGNATURE_MAX_AGE_SECONDS.parse().unwrap()),
            ..service_settings(database_url, &databases, &admin_token, &secret)
        };
        let Service {
            base_url,
            router,
            catalog,
        } = start_service(settings).await;

        let bench = BenchApp {
            base_url,
            router,
            catalog,
            databases,
            secret: ProxySecret::new(secret),
        };
        let admin = Admin::new(&bench.base_url, admin_token);
        seed(&admin).await;
        bench.warm_up().await;
        bench
    }

    /// A freshly signed query for the bench shop's home page, as the app proxy sends it.
    pub fn signed_query(&self) -> String {
        let params = [
            ("shop", SHOP),
            ("path_prefix", PATH_PREFIX),
            ("location", "home"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        signed_query(&self.secret, &params, Utc::now())
    }

    /// Path and query of a freshly signed contextual-widgets request (`location=home`).
    pub fn contextual_widgets_uri(&self) -> String {
        format!("{CONTEXTUAL_WIDGETS}?{}", self.signed_query())
    }

    /// The same, as a full URL on the service's listener.
    pub fn contextual_widgets_url(&self) -> String {
        format!("{}{}", self.base_url, self.contextual_widgets_uri())
    }

    pub fn proxy_secret(&self) -> &ProxySecret {
        &self.secret
    }

    /// Loads the shop's snapshot into the cache and checks the home page shows what the seed
    /// promises.
    async fn warm_up(&self) {
        let response = reqwest::get(self.contextual_widgets_url())
            .await
            .unwrap_or_else(|e| fail(format!("contextual-widgets: {e}")));
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .unwrap_or_else(|e| fail(format!("contextual-widgets body: {e}")));
        if status != reqwest::StatusCode::OK {
            fail(format!("contextual-widgets answered {status}: {body}"));
        }
        let shown = body["widgets"].as_array().map_or(0, Vec::len);
        if shown != WIDGETS_AT_HOME {
            fail(format!(
                "the home page shows {shown} widgets, the seed meant {WIDGETS_AT_HOME}"
            ));
        }
    }
}

/// The service's settings for `databases`: listeners on port 0, a short shutdown grace, and
/// everything else at its default. Adjust fields with struct update syntax.
pub fn service_settings(
    database_url: String,
    databases: &Databases,
    admin_token: &str,
    secret: &str,
) -> Settings {
    Settings {
        database_url: Some(database_url.into()),
        clickhouse_url: Some(
            databases.clickhouse_url.parse().unwrap_or_else(|e| {
                fail(format!("ClickHouse URL {}: {e}", databases.clickhouse_url))
            }),
        ),
        clickhouse_database: databases.clickhouse.clone(),
        listen: Some(([127, 0, 0, 1], 0).into()),
        metrics_listen: ([127, 0, 0, 1], 0).into(),
        proxy_secret: Some(secret.into()),
        admin_token: Some(admin_token.into()),
        spool_dir: databases.spool_dir.clone(),
        shutdown_grace: Duration::from_secs(1),
        ..Settings::default()
    }
}

/// The real service, built with `Application::build` and serving on this runtime until the
/// process ends.
pub struct Service {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    pub router: PublicService,
    pub catalog: CatalogCache,
}

/// Builds the service from `settings` (migrating both databases) and starts serving. Fails the
/// process with one clear line when it cannot.
pub async fn start_service(settings: Settings) -> Service {
    let config = settings
        .server_config()
        .unwrap_or_else(|e| fail(format!("bench settings: {e}")));
    let app = Application::build(config)
        .await
        .unwrap_or_else(|e| fail(format!("the service did not build: {e:#}")));
    let service = Service {
        base_url: format!("http://{}", app.local_addr()),
        router: app.router(),
        catalog: app.catalog_cache(),
    };
    tokio::spawn(app.run_until(std::future::pending()));
    service
}

/// A connection to the Postgres server's maintenance database, or one clear line and exit 2.
async fn connect_admin(admin_url: &str) -> PgConnection {
    let connect = PgConnection::connect(admin_url);
    match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => fail(format!(
            "Postgres is not reachable at {} ({e}). Start it with \
             `source scripts/lib.sh && ensure_stack` (or scripts/test), or set \
             VIDEOAPP_TEST_DATABASE_URL",
            redact(admin_url)
        )),
        Err(_) => fail(format!(
            "Postgres at {} did not answer within {CONNECT_TIMEOUT:?}. Start it with \
             `source scripts/lib.sh && ensure_stack`",
            redact(admin_url)
        )),
    }
}

/// The URL of database `name` on the server of `admin_url`.
pub fn database_url(admin_url: &str, name: &str) -> String {
    let mut url = url::Url::parse(admin_url)
        .unwrap_or_else(|e| fail(format!("the Postgres URL {}: {e}", redact(admin_url))));
    url.set_path(name);
    url.to_string()
}

/// `POST` here records shopper events (DESIGN §5).
pub const EVENTS: &str = "/apps/videoapp_sub/analytics";

/// At most this many of the service's warning and error log lines are echoed.
const ECHOED_LOG_LINES: usize = 40;

/// The real service as a process of its own: the `videoapp` binary cargo built for this bench
/// target (`target/release/videoapp` under `cargo bench`), running `serve`, so that its CPU time
/// and its memory are its own. Killed when dropped.
pub struct ServiceProcess {
    child: Child,
    pub pid: u32,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// `http://127.0.0.1:PORT/metrics` (the Prometheus listener).
    pub metrics_url: String,
    pub binary: PathBuf,
    secret: ProxySecret,
}

impl ServiceProcess {
    /// Starts `videoapp serve` against `databases` with the production defaults (batch size and
    /// age, spool cap, log level), except for what a bench must set: loopback listeners on port
    /// 0, JSON logs (the "serving" line names the addresses), fresh secrets, the bench spool
    /// directory and `VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS=3600` (one pre-signed URL for the whole
    /// run). `RUST_LOG` and `VIDEOAPP_BATCH_*` are passed on when set. Then creates the bench
    /// shop through the admin API.
    pub async fn start(
        databases: &Databases,
        database_url: &str,
    ) -> Result<ServiceProcess, String> {
        let binary = PathBuf::from(env!("CARGO_BIN_EXE_videoapp"));
        let id = &databases.postgres["bench_".len()..];
        let admin_token = format!("bench-admin-token-{id}");
        let secret = format!("bench-proxy-secret-{id}");
        // `INGEST_LOAD_CALLGRIND=FILE`: the service runs under callgrind, which counts every
        // instruction by function (about 50 times slower; the figures to read are per request).
        let mut command = match std::env::var_os("INGEST_LOAD_CALLGRIND") {
            Some(file) => {
                let mut command = Command::new("valgrind");
                let mut out = std::ffi::OsString::from("--callgrind-out-file=");
                out.push(file);
                command.args(["--tool=callgrind".as_ref(), out.as_os_str()]);
                command.arg(&binary);
                command
            }
            None => Command::new(&binary),
        };
        command
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", database_url)
            .env("CLICKHOUSE_URL", &databases.clickhouse_url)
            .env("CLICKHOUSE_DATABASE", &databases.clickhouse)
            .env("VIDEOAPP_LISTEN", "127.0.0.1:0")
            .env("VIDEOAPP_METRICS_LISTEN", "127.0.0.1:0")
            .env("VIDEOAPP_LOG_FORMAT", "json")
            .env("VIDEOAPP_PROXY_SECRET", &secret)
            .env("VIDEOAPP_ADMIN_TOKEN", &admin_token)
            .env("VIDEOAPP_SPOOL_DIR", &databases.spool_dir)
            .env(
                "VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS",
                SIGNATURE_MAX_AGE_SECONDS,
            );
        if let Ok(filter) = std::env::var("RUST_LOG") {
            command.env("RUST_LOG", filter);
        }
        // Experiments only (BENCHMARKS.md): batch settings given to the harness reach the
        // service; a plain run leaves them at their defaults.
        for (name, value) in batch_overrides() {
            command.env(name, value);
        }
        let mut child = command
            .arg("serve")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut service = ServiceProcess {
            pid: child.id(),
            child,
            base_url: String::new(),
            metrics_url: String::new(),
            binary,
            secret: ProxySecret::new(secret),
        };
        let (addresses, serving) = tokio::sync::oneshot::channel();
        std::thread::Builder::new()
            .name("service-log".into())
            .spawn(move || read_service_log(stderr, addresses))
            .map_err(|e| format!("cannot read the service's log: {e}"))?;
        let (listen, metrics) = match tokio::time::timeout(START_TIMEOUT, serving).await {
            Ok(Ok(Ok(addresses))) => addresses,
            Ok(Ok(Err(log))) => return Err(format!("the service exited before serving:\n{log}")),
            Ok(Err(_)) => return Err("the service's log ended before serving".to_string()),
            Err(_) => {
                return Err(format!(
                    "the service did not serve within {START_TIMEOUT:?}"
                ))
            }
        };
        service.base_url = format!("http://{listen}");
        service.metrics_url = format!("http://{metrics}/metrics");
        seed_shop(&Admin::new(&service.base_url, admin_token)).await?;
        Ok(service)
    }

    /// Path and query of a freshly signed events request for the bench shop, as the app proxy
    /// forwards the widget loader's beacon (`logged_in_customer_id` empty: an anonymous shopper).
    /// The signature covers only the query, so one URL serves every request of a run.
    pub fn events_uri(&self) -> String {
        let params = [
            ("shop", SHOP),
            ("logged_in_customer_id", ""),
            ("path_prefix", PATH_PREFIX),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        format!(
            "{EVENTS}?{}",
            signed_query(&self.secret, &params, Utc::now())
        )
    }

    /// The Prometheus exposition of the service.
    pub async fn metrics(&self, client: &reqwest::Client) -> Result<String, String> {
        let response = client
            .get(&self.metrics_url)
            .timeout(CONNECT_TIMEOUT)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(|e| format!("GET {}: {e}", self.metrics_url))?;
        response
            .text()
            .await
            .map_err(|e| format!("GET {}: {e}", self.metrics_url))
    }

    /// Peak and current resident memory of the process, in KiB (`VmHWM`, `VmRSS`).
    pub fn memory_kib(&self) -> Option<(u64, u64)> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid)).ok()?;
        let field = |name: &str| -> Option<u64> {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))?
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .ok()
        };
        Some((field("VmHWM:")?, field("VmRSS:")?))
    }

    /// SIGTERM, then waits for the graceful exit (at most `limit`; killed after that).
    pub async fn stop(mut self, limit: Duration) -> Result<std::process::ExitStatus, String> {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.pid as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .map_err(|e| format!("SIGTERM to the service: {e}"))?;
        let started = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Ok(status),
                Ok(None) if started.elapsed() < limit => {
                    tokio::time::sleep(Duration::from_millis(50)).await
                }
                Ok(None) => {
                    return Err(format!(
                        "the service did not stop within {limit:?} of SIGTERM"
                    ))
                }
                Err(e) => return Err(format!("waiting for the service: {e}")),
            }
        }
    }
}

/// `VIDEOAPP_BATCH_*` settings in this process's environment, which [`ServiceProcess::start`]
/// passes on.
pub fn batch_overrides() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(name, _)| {
            name.starts_with("VIDEOAPP_BATCH_") || name == "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS"
        })
        .collect()
}

/// A failed run must not leave a server behind.
impl Drop for ServiceProcess {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads the service's JSON log: reports the addresses of its "videoapp serving" line (or, if it
/// exits first, its last lines), then keeps draining it so it never blocks on a full pipe,
/// echoing warnings and errors.
fn read_service_log(
    stderr: std::process::ChildStderr,
    addresses: tokio::sync::oneshot::Sender<Result<(String, String), String>>,
) {
    let mut lines = BufReader::new(stderr).lines().map_while(Result::ok);
    let mut seen = Vec::new();
    let mut addresses = Some(addresses);
    for line in lines.by_ref() {
        let entry: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        if entry["message"] == "videoapp serving" {
            let listen = entry["listen"].as_str().unwrap_or_default().to_string();
            let metrics = entry["metrics"].as_str().unwrap_or_default().to_string();
            if let Some(tx) = addresses.take() {
                let _ = tx.send(Ok((listen, metrics)));
            }
            break;
        }
        seen.push(line);
        if seen.len() > 20 {
            seen.remove(0);
        }
    }
    if let Some(tx) = addresses {
        let _ = tx.send(Err(seen.join("\n")));
        return;
    }
    let mut echoed = 0;
    for line in lines {
        let entry: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
        let level = entry["level"].as_str().unwrap_or("");
        if matches!(level, "WARN" | "ERROR") || entry.is_null() {
            echoed += 1;
            if echoed <= ECHOED_LOG_LINES {
                eprintln!(
                    "  service log: {}",
                    line.chars().take(400).collect::<String>()
                );
            } else if echoed == ECHOED_LOG_LINES + 1 {
                eprintln!("  service log: (further warnings and errors not shown)");
            }
        }
    }
}

/// The value of a Prometheus series without labels, or the sum over all of a name's labelled
/// series.
pub fn metric_value(exposition: &str, name: &str) -> Option<f64> {
    let values: Vec<f64> = exposition
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let rest = l.strip_prefix(name)?;
            let rest = match rest.strip_prefix('{') {
                Some(labelled) => &labelled[labelled.find('}')? + 1..],
                None => rest,
            };
            rest.strip_prefix(' ')?.trim().parse::<f64>().ok()
        })
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Runs `sql` on the bench ClickHouse server in `database` and returns its output, trimmed.
pub async fn clickhouse_query(
    client: &reqwest::Client,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let response = client
        .post(format!("{}/?database={database}", clickhouse_url()))
        .timeout(CONNECT_TIMEOUT)
        .body(sql.to_string())
        .send()
        .await
        .map_err(|e| {
            format!(
                "ClickHouse at {} did not answer ({e}). Start it with \
                 `source scripts/lib.sh && ensure_stack`",
                clickhouse_url()
            )
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(format!("ClickHouse: {sql}: {status}: {}", text.trim()));
    }
    Ok(text.trim().to_string())
}

async fn create_database(admin_url: &str, name: &str) -> String {
    let mut admin = connect_admin(admin_url).await;
    admin
        .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
        .await
        .unwrap_or_else(|e| fail(format!("CREATE DATABASE {name}: {e}")));
    database_url(admin_url, name)
}

/// Creates database `name` unless it exists (a long-lived bench database); returns its URL.
pub async fn ensure_database(admin_url: &str, name: &str) -> String {
    let mut admin = connect_admin(admin_url).await;
    let exists: bool =
        sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)")
            .bind(name)
            .fetch_one(&mut admin)
            .await
            .unwrap_or_else(|e| fail(format!("looking for database {name}: {e}")));
    if !exists {
        admin
            .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
            .await
            .unwrap_or_else(|e| fail(format!("CREATE DATABASE {name}: {e}")));
    }
    database_url(admin_url, name)
}

/// How many `test_*` databases earlier test runs left on the servers (Postgres, ClickHouse).
/// Hundreds of them keep Postgres's autovacuum launcher forking workers and ClickHouse's
/// background pool scheduling merges, in the middle of a load run; `scripts/test` drops them
/// when it starts.
pub async fn leftover_test_databases(client: &reqwest::Client) -> Result<(u64, u64), String> {
    let mut admin = connect_admin(&postgres_admin_url()).await;
    let postgres: i64 =
        sqlx::query_scalar("SELECT count(*) FROM pg_database WHERE left(datname, 5) = 'test_'")
            .fetch_one(&mut admin)
            .await
            .map_err(|e| format!("counting Postgres test databases: {e}"))?;
    let clickhouse = clickhouse_query(
        client,
        "default",
        "SELECT count() FROM system.databases WHERE substring(name, 1, 5) = 'test_'",
    )
    .await?;
    let clickhouse = clickhouse
        .parse()
        .map_err(|e| format!("counting ClickHouse test databases: {clickhouse:?}: {e}"))?;
    Ok((postgres.max(0) as u64, clickhouse))
}

/// Drops database `name` if it exists, closing its connections.
pub async fn drop_database(admin_url: &str, name: &str) {
    let mut admin = connect_admin(admin_url).await;
    admin
        .execute(format!(r#"DROP DATABASE IF EXISTS "{name}" WITH (FORCE)"#).as_str())
        .await
        .unwrap_or_else(|e| fail(format!("DROP DATABASE {name}: {e}")));
}

/// CPU time from /proc (Linux), in clock ticks (USER_HZ, 100 per second).
#[derive(Debug, Clone, Copy, Default)]
pub struct CpuTicks {
    /// user + nice + system over all cores.
    pub machine_busy: f64,
    pub machine_steal: f64,
    /// This process (user + system).
    pub own: f64,
    /// Processes whose command name starts with one of the names given to [`CpuTicks::take`]
    /// (e.g. the database servers).
    pub named: f64,
}

pub const TICKS_PER_SECOND: f64 = 100.0;

impl CpuTicks {
    pub fn take(names: &[&str]) -> CpuTicks {
        let process = |path: &std::path::Path| -> Option<(String, f64)> {
            let stat = std::fs::read_to_string(path).ok()?;
            let name = stat[stat.find('(')? + 1..stat.rfind(')')?].to_string();
            let fields: Vec<f64> = stat[stat.rfind(')')? + 2..]
                .split_whitespace()
                .map(|f| f.parse().unwrap_or(0.0))
                .collect();
            // utime is field 14, stime 15; `fields` starts at field 3.
            Some((name, fields.get(11)? + fields.get(12)?))
        };
        let mut ticks = CpuTicks::default();
        if let Ok(machine) = std::fs::read_to_string("/proc/stat") {
            let cpu: Vec<f64> = machine
                .lines()
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .skip(1)
                .map(|f| f.parse().unwrap_or(0.0))
                .collect();
            let field = |n: usize| cpu.get(n).copied().unwrap_or(0.0);
            ticks.machine_busy = field(0) + field(1) + field(2);
            ticks.machine_steal = field(7);
        }
        ticks.own = process(std::path::Path::new("/proc/self/stat")).map_or(0.0, |(_, t)| t);
        for pid in load::numbered_entries("/proc") {
            let stat = format!("/proc/{pid}/stat");
            if let Some((name, t)) = process(std::path::Path::new(&stat)) {
                if names.iter().any(|n| name.starts_with(n)) {
                    ticks.named += t;
                }
            }
        }
        ticks
    }
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "(unparsable URL)".to_string(),
    }
}

struct Admin {
    client: reqwest::Client,
    /// `…/admin/v1/shops/{SHOP}`.
    base: String,
    token: String,
}

impl Admin {
    fn new(base_url: &str, token: String) -> Admin {
        Admin {
            client: reqwest::Client::new(),
            base: format!("{base_url}/admin/v1/shops/{SHOP}"),
            token,
        }
    }

    async fn try_send(
        &self,
        method: reqwest::Method,
        path: &str,
        body: Value,
    ) -> Result<Value, String> {
        let url = format!("{}{path}", self.base);
        let response = self
            .client
            .request(method.clone(), &url)
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .map_err(|e| format!("{method} {url}: {e}"))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(format!("{method} {url} answered {status}: {text}"));
        }
        Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        self.try_send(method, path, body)
            .await
            .unwrap_or_else(|e| fail(e))
    }
}

const ADJECTIVES: [&str; 12] = [
    "Organic",
    "Relaxed",
    "Vintage",
    "Everyday",
    "Lightweight",
    "Oversized",
    "Recycled",
    "Classic",
    "Cropped",
    "Tailored",
    "Ribbed",
    "Washed",
];
const MATERIALS: [&str; 8] = [
    "Cotton",
    "Linen",
    "Merino Wool",
    "Denim",
    "Cashmere",
    "Silk",
    "Corduroy",
    "Hemp",
];
const GARMENTS: [&str; 10] = [
    "Crew Neck T-Shirt",
    "Button-Down Shirt",
    "Wide-Leg Trousers",
    "Midi Skirt",
    "Hoodie",
    "Bomber Jacket",
    "Cardigan",
    "Chino Shorts",
    "Wrap Dress",
    "Tote Bag",
];
const COLOURS: [&str; 9] = [
    "Heather Grey",
    "Sage",
    "Navy",
    "Off White",
    "Black",
    "Terracotta",
    "Sand",
    "Olive",
    "Dusty Rose",
];
const HOOKS: [&str; 8] = [
    "Styling the",
    "3 ways to wear the",
    "Unboxing our",
    "Behind the seams:",
    "Try-on haul:",
    "Why customers love the",
    "Care guide for the",
    "Outfit of the day with the",
];

fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word.to_ascii_lowercase());
    }
    slug
}

fn product_gid(i: usize) -> String {
    format!("gid://shopify/Product/{}", 8_091_234_560_000 + i as u64)
}

fn product(rng: &mut StdRng, i: usize) -> Value {
    let title = format!(
        "{} {} {} – {}",
        ADJECTIVES.choose(rng).unwrap(),
        MATERIALS.choose(rng).unwrap(),
        GARMENTS.choose(rng).unwrap(),
        COLOURS.choose(rng).unwrap()
    );
    let handle = format!("{}-{i}", slug(&title));
    let collections: Vec<String> = (0..rng.gen_range(1..=3))
        .map(|_| {
            format!(
                "gid://shopify/Collection/{}",
                4_123_456_000u64 + rng.gen_range(0..40u64)
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    json!({
        "id": product_gid(i),
        "title": title,
        "handle": handle,
        "image": format!(
            "https://cdn.shopify.com/s/files/1/0612/3456/7890/files/{handle}_1024x1024.jpg?v=17{:08}",
            rng.gen_range(0..100_000_000u32)
        ),
        "url": format!("https://{SHOP}/products/{handle}"),
        "collectionIds": collections,
    })
}

fn video(rng: &mut StdRng, i: usize) -> Value {
    let title = format!(
        "{} {} {} {}",
        HOOKS.choose(rng).unwrap(),
        ADJECTIVES.choose(rng).unwrap().to_lowercase(),
        MATERIALS.choose(rng).unwrap().to_lowercase(),
        GARMENTS.choose(rng).unwrap().to_lowercase()
    );
    let file = format!("{}-{i:04}", slug(&title));
    let asset = Uuid::from_u128(rng.gen()).simple().to_string();
    let linked = rng.gen_range(1..=3);
    let products: Vec<String> = rand::seq::index::sample(rng, PRODUCTS, linked)
        .into_iter()
        .map(product_gid)
        .collect();
    json!({
        "title": title,
        "thumbnail": format!("https://cdn.videoapp.example/media/{asset}/thumbnails/{file}-poster.jpg"),
        "videoUrl": format!("https://cdn.videoapp.example/media/{asset}/{file}-1080p.mp4"),
        "miniVersionUrl": format!("https://cdn.videoapp.example/media/{asset}/{file}-preview-360p.mp4"),
        "duration": (rng.gen_range(8.0..95.0f64) * 1000.0).round() / 1000.0,
        "status": "PUBLISHED",
        "productIds": products,
    })
}

/// The 50 widgets, all `active`. Exactly [`WIDGETS_AT_HOME`] of them render on the home page:
///
/// - 20 manual carousels and stories with no location rule, or one that includes `home`;
/// - 10 `productpage` widgets (product pages only);
/// - 10 manual carousels limited to `product` or `collection` pages;
/// - 5 product-sourced carousels (nothing to show without a current product);
/// - 5 manual stories limited to some products (no product on the home page).
fn widget_plan(rng: &mut StdRng, video_ids: &[String]) -> Vec<Value> {
    let manual_videos = |rng: &mut StdRng| -> Vec<String> {
        video_ids
            .choose_multiple(rng, VIDEOS_PER_MANUAL_WIDGET)
            .cloned()
            .collect()
    };
    let styles = ["default", "compact", "large"];
    let clicks = ["open_modal", "open_product", "none"];
    let layouts = ["vertical", "horizontal"];
    let mut widgets = Vec::with_capacity(WIDGETS);
    for i in 0..WIDGETS {
        let (widget_type, source, rules, label) = match i {
            0..20 => {
                let locations = match i % 3 {
                    0 => json!([]),
                    1 => json!(["home"]),
                    _ => json!(["home", "collection", "page"]),
                };
                let kind = if i % 2 == 0 { "carousel" } else { "story" };
                (
                    kind,
                    "manual",
                    json!({ "locations": locations }),
                    "Homepage",
                )
            }
            20..30 => {
                let source = if i % 2 == 0 { "manual" } else { "product" };
                ("productpage", source, json!({}), "Product page")
            }
            30..40 => {
                let location = if i % 2 == 0 { "product" } else { "collection" };
                (
                    "carousel",
                    "manual",
                    json!({ "locations": [location] }),
                    "Collection",
                )
            }
            40..45 => ("carousel", "product", json!({}), "Shop the look"),
            _ => {
                let products: Vec<String> = (0..5)
                    .map(|_| product_gid(rng.gen_range(0..PRODUCTS)))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                (
                    "story",
                    "manual",
                    json!({ "productIds": products }),
                    "Featured",
                )
            }
        };
        let videos = if source == "manual" {
            manual_videos(rng)
        } else {
            Vec::new()
        };
        widgets.push(json!({
            "type": widget_type,
            "title": format!("{label} {widget_type} #{:02} – new season picks", i + 1),
            "status": "active",
            "priority": rng.gen_range(0..10),
            "viewStyle": styles[i % styles.len()],
            "clickBehavior": clicks[i % clicks.len()],
            "modalLayout": layouts[i % layouts.len()],
            "sourceType": source,
            "videoIds": videos,
            "rules": rules,
        }));
    }
    widgets
}

/// The bench shop itself (no catalog), through the admin API.
async fn seed_shop(admin: &Admin) -> Result<(), String> {
    admin
        .try_send(
            reqwest::Method::PUT,
            "",
            json!({ "name": "Bench Store", "currency": "EUR", "timezone": "Europe/Paris" }),
        )
        .await
        .map(drop)
}

/// The shop, its products, videos and widgets, through the admin API. Deterministic.
async fn seed(admin: &Admin) {
    const PARALLEL: usize = 8;
    let mut rng = StdRng::seed_from_u64(0x5eed);
    seed_shop(admin).await.unwrap_or_else(|e| fail(e));
    let products: Vec<Value> = (0..PRODUCTS).map(|i| product(&mut rng, i)).collect();
    admin
        .send(
            reqwest::Method::PUT,
            "/products",
            json!({ "products": products }),
        )
        .await;
    let videos: Vec<Value> = (0..VIDEOS).map(|i| video(&mut rng, i)).collect();
    let video_ids: Vec<String> = stream::iter(videos)
        .map(|body| async move {
            let created = admin.send(reqwest::Method::POST, "/videos", body).await;
            created["id"]
                .as_str()
                .unwrap_or_else(|| fail(format!("a created video without an id: {created}")))
                .to_string()
        })
        .buffered(PARALLEL)
        .collect()
        .await;
    let widgets = widget_plan(&mut rng, &video_ids);
    stream::iter(widgets)
        .map(|body| admin.send(reqwest::Method::POST, "/widgets", body))
        .buffered(PARALLEL)
        .collect::<Vec<_>>()
        .await;
}
