//! The service as a process of its own: for signals, SIGKILL and a metrics recorder of its own.

use super::*;

use serde_json::Value;

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
        let what = format!("a log line {message:?}");
        eventually(&what, within, || async {
            let log = self.log.lock().unwrap();
            let found = log
                .iter()
                .find(|entry| entry["message"] == message)
                .cloned();
            found.ok_or(log.len())
        })
        .await
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
    // One the test names (e.g. the cluster's shared one), or a fresh one.
    let clickhouse_database = env
        .iter()
        .find(|(name, _)| *name == "CLICKHOUSE_DATABASE")
        .map_or_else(fresh_clickhouse_database, |(_, database)| database.clone());
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
        let what = format!("{name}{labels:?} as wanted");
        let holds = &holds;
        eventually(&what, within, move || async move {
            let value = self.metric(name, labels).await;
            value.filter(|v| holds(*v)).ok_or(value)
        })
        .await
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
