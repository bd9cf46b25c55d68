//! What the benches share: fresh `bench_<uuid>` databases (scripts/test drops those a dead run
//! left) and the service, in process or as its own, with the bench shop and the tests' secrets.

// Each bench target uses its own part of this module, and of the tests' harness.
#![allow(dead_code)]

pub mod catalog;
#[allow(unused_imports)]
#[path = "../../tests/api/support/mod.rs"]
pub mod helpers;
pub mod load;

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;
use videoapp::app::{Application, PublicService};
use videoapp::config::Settings;

use catalog::Admin;
use helpers::{clickhouse_url, cluster_urls, postgres_admin_url, try_clickhouse_query_on};

pub const SHOP: &str = "bench-store.myshopify.com";
pub const CONTEXTUAL_WIDGETS: &str = "/apps/videoapp_sub/contextual-widgets";
/// `POST` here records shopper events.
pub const EVENTS: &str = "/apps/videoapp_sub/analytics";
/// Longer than any run, so one pre-signed URL stays valid throughout.
pub const SIGNATURE_MAX_AGE_SECONDS: u64 = 3600;
/// What a step of a run comes to: its value, or why the run failed.
pub type Outcome<T = ()> = anyhow::Result<T>;
const START_TIMEOUT: Duration = Duration::from_secs(180);
const DRAIN_LIMIT: Duration = Duration::from_secs(300);

/// Stops the process with one clear line: benches have nothing useful to do without the stack.
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// A Postgres and a ClickHouse database of one name, and a spool directory. The ClickHouse one is
/// on the local server, or on the local cluster of that name through its first node.
#[derive(Clone, Debug)]
pub struct Databases {
    pub name: String,
    pub spool_dir: PathBuf,
    pub clickhouse_url: String,
    pub cluster: Option<String>,
}

/// `run` on fresh databases in a runtime of its own, gone before they are dropped; its exit code.
pub fn on_fresh_databases(
    cluster: Option<&str>,
    run: impl AsyncFnOnce(&Databases, &str) -> Outcome,
) -> ExitCode {
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, database_url) = runtime.block_on(Databases::create(cluster));
    let outcome = runtime.block_on(run(&databases, &database_url));
    drop(runtime);
    databases.drop_all();
    let failed = outcome.map_err(|e| eprintln!("error: {e:#}")).is_err();
    ExitCode::from(u8::from(failed))
}

impl Databases {
    /// A fresh `bench_<uuid>` pair (the service's migrations create the ClickHouse one) and the
    /// Postgres database's URL; exit 2 when Postgres is not reachable.
    pub async fn create(cluster: Option<&str>) -> (Databases, String) {
        let name = format!("bench_{}", Uuid::new_v4().simple());
        let connect = PgConnection::connect(&postgres_admin_url());
        let Ok(Ok(mut admin)) = tokio::time::timeout(Duration::from_secs(10), connect).await else {
            fail("Postgres is not reachable: `source scripts/lib.sh && ensure_stack`, or set VIDEOAPP_TEST_DATABASE_URL")
        };
        let sql = format!(r#"CREATE DATABASE "{name}""#);
        let created = admin.execute(sql.as_str()).await;
        created.unwrap_or_else(|e| fail(format!("CREATE DATABASE {name}: {e}")));
        let mut url = url::Url::parse(&postgres_admin_url()).expect("a Postgres URL");
        url.set_path(&name);
        let databases = Databases {
            spool_dir: std::env::temp_dir().join(format!("videoapp-{name}")),
            clickhouse_url: cluster.map_or_else(clickhouse_url, |_| cluster_urls().swap_remove(0)),
            cluster: cluster.map(str::to_string),
            name,
        };
        (databases, url.to_string())
    }

    /// Drops both databases and the spool directory, best effort, after the service's pools.
    pub fn drop_all(&self) {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        runtime.block_on(async {
            let sql = format!(r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#, self.name);
            let dropped = async {
                let mut admin = PgConnection::connect(&postgres_admin_url()).await?;
                admin.execute(sql.as_str()).await.map(drop)
            };
            if let Err(e) = dropped.await {
                eprintln!("warning: could not drop Postgres {}: {e}", self.name);
            }
            let on_cluster = (self.cluster.as_ref()).map(|c| format!(" ON CLUSTER {c}"));
            let (name, on_cluster) = (&self.name, on_cluster.unwrap_or_default());
            let sql = format!("DROP DATABASE IF EXISTS {name}{on_cluster}");
            let (client, url) = (reqwest::Client::new(), &self.clickhouse_url);
            if let Err(e) = try_clickhouse_query_on(&client, url, "default", &sql).await {
                eprintln!("warning: could not drop ClickHouse {}: {e}", self.name);
            }
        });
        let _ = std::fs::remove_dir_all(&self.spool_dir);
    }

    /// `sql` in this ClickHouse database: its trimmed text.
    pub async fn query(&self, client: &reqwest::Client, sql: &str) -> Outcome<String> {
        let answer = try_clickhouse_query_on(client, &self.clickhouse_url, &self.name, sql).await;
        answer.map_err(anyhow::Error::msg)
    }
}

/// The service on this runtime, with the bench shop seeded; `router` for in-process requests.
pub struct BenchApp {
    pub base_url: String,
    pub router: PublicService,
}

impl BenchApp {
    /// Starts the service with the integration tests' settings (the bench spool, a long signature
    /// window) and seeds the shop; exit 2 when the stack is not there.
    pub async fn start(databases: &Databases, database_url: &str) -> BenchApp {
        let started = async {
            let settings = Settings {
                spool_dir: databases.spool_dir.clone(),
                signature_max_age: Duration::from_secs(SIGNATURE_MAX_AGE_SECONDS),
                ..helpers::test_settings(database_url, &databases.name)
            };
            let config = settings.server_config();
            let config = config.unwrap_or_else(|e| fail(format!("settings: {e}")));
            let app = Application::build(config).await;
            let app = app.unwrap_or_else(|e| fail(format!("the service did not build: {e:#}")));
            let (base_url, router) = (format!("http://{}", app.local_addr()), app.router());
            tokio::spawn(app.run_until(std::future::pending()));
            catalog::seed(&Admin::new(&base_url)).await;
            BenchApp { base_url, router }
        };
        let late = format!("the service did not start within {START_TIMEOUT:?}");
        (tokio::time::timeout(START_TIMEOUT, started).await).unwrap_or_else(|_| fail(late))
    }
}

/// A freshly signed query for the bench shop's home page, as the app proxy sends it.
pub fn home_query() -> String {
    helpers::signed(SHOP, &[("location", "home")])
}

/// `videoapp serve` as a process of its own, so that its CPU time and memory are its own:
/// `BENCH_SERVICE_BIN` or the bench's build, under callgrind with `BENCH_CALLGRIND=FILE` (counting
/// off until [`ServiceProcess::callgrind_control`] turns it on). Killed when dropped.
pub struct ServiceProcess {
    pub process: helpers::ServiceProcess,
    pub pid: i32,
    pub base_url: String,
    pub binary: PathBuf,
    pub callgrind: Option<PathBuf>,
    databases: Databases,
}

impl ServiceProcess {
    /// Starts it with the production defaults but for loopback ports, the bench spool, a long
    /// signature window and `extra_env`; the environment passes on (`VIDEOAPP_BATCH_*`, RUST_LOG).
    pub async fn start_with(
        databases: &Databases,
        database_url: &str,
        extra_env: &[(&'static str, String)],
    ) -> Outcome<ServiceProcess> {
        let binary = std::env::var_os("BENCH_SERVICE_BIN");
        let binary = PathBuf::from(binary.unwrap_or(env!("CARGO_BIN_EXE_videoapp").into()));
        let callgrind = std::env::var_os("BENCH_CALLGRIND").map(PathBuf::from);
        let mut command = Command::new(&binary);
        if let Some(file) = &callgrind {
            command = Command::new("valgrind");
            let out = format!("--callgrind-out-file={}", file.display());
            command.args(["--tool=callgrind", "--instr-atstart=no", &out]);
            command.arg(&binary);
        }
        let (spool_dir, max_age) = (&databases.spool_dir, SIGNATURE_MAX_AGE_SECONDS);
        let mut env = vec![
            ("DATABASE_URL", database_url.to_string()),
            ("CLICKHOUSE_URL", databases.clickhouse_url.clone()),
            ("CLICKHOUSE_DATABASE", databases.name.clone()),
            ("VIDEOAPP_SPOOL_DIR", spool_dir.display().to_string()),
            ("VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS", max_age.to_string()),
        ];
        if let Some(cluster) = &databases.cluster {
            env.push(("CLICKHOUSE_CLUSTER", cluster.clone()));
        }
        env.extend(extra_env.iter().cloned());
        // A service that cannot start panics on that thread, which says why.
        let process = tokio::task::spawn_blocking(move || helpers::spawn_serving(command, &env));
        let failed = || format!("{} did not start serving", binary.display());
        let process = process.await.with_context(failed)?;
        catalog::seed_shop(&Admin::new(&process.address)).await;
        Ok(ServiceProcess {
            pid: process.child.id() as i32,
            base_url: process.address.clone(),
            process,
            binary,
            callgrind,
            databases: databases.clone(),
        })
    }

    /// How long after `since` ClickHouse held the events the service counted (and `acknowledged`);
    /// more than acknowledged, or none of that within [`DRAIN_LIMIT`], fails.
    pub async fn drained(&self, since: Instant, acknowledged: Option<u64>) -> Outcome<Duration> {
        let client = reqwest::Client::new();
        let metrics = format!("{}/metrics", self.process.metrics_address);
        tokio::time::sleep_until(since.into()).await;
        loop {
            let exposition = client.get(&metrics).send().await?.text().await?;
            let accepted = helpers::metric_value(&exposition, "events_accepted_total", &[]);
            let accepted = accepted.unwrap_or(0.0) as u64;
            let stored = self.databases.query(&client, "SELECT count() FROM events");
            let stored: u64 = stored.await?.parse().context("ClickHouse count")?;
            let waited = since.elapsed();
            if stored == accepted && acknowledged.is_none_or(|a| a == accepted) {
                return Ok(waited);
            }
            ensure!(
                waited <= DRAIN_LIMIT && acknowledged.is_none_or(|a| stored <= a),
                "END TO END MISMATCH after {waited:.0?}: ClickHouse holds {stored} events, the \
                 service counted {accepted}, its clients saw {acknowledged:?} acknowledged"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// `callgrind_control` on the service, if under callgrind: `--instr=on` (count from now),
    /// `--zero`, `--dump`.
    pub fn callgrind_control(&self, arg: &str) -> Outcome {
        if self.callgrind.is_some() {
            let pid = self.pid.to_string();
            let output = Command::new("callgrind_control").args([arg, &pid]).output();
            let said = output.context("callgrind_control")?.stdout;
            let said = String::from_utf8_lossy(&said);
            ensure!(said.contains("OK"), "callgrind_control {arg}: {said}");
        }
        Ok(())
    }

    /// The peak resident memory of the process in KiB (`VmHWM`).
    pub fn peak_rss_kib(&self) -> u64 {
        let status = procfs::process::Process::new(self.pid).and_then(|p| p.status());
        status.ok().and_then(|s| s.vmhwm).unwrap_or(0)
    }
}
