//! Configuration: environment variables with matching flags. A missing or malformed required
//! setting stops the process at start with one line that names it.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

/// Every setting, as given. Parsed into [`Config`] (or the part a command needs) by the methods
/// below, so the error names the setting the way an operator wrote it.
#[derive(Debug, Clone, Default, Args)]
pub struct Settings {
    /// Postgres connection URL (the catalog).
    #[arg(long, env = "DATABASE_URL", global = true, hide_env_values = true)]
    pub database_url: Option<String>,
    /// ClickHouse HTTP URL, e.g. http://127.0.0.1:8123.
    #[arg(long, env = "CLICKHOUSE_URL", global = true)]
    pub clickhouse_url: Option<String>,
    /// ClickHouse database of the service (created by the migrations). Default: videoapp.
    #[arg(long, env = "CLICKHOUSE_DATABASE", global = true)]
    pub clickhouse_database: Option<String>,
    /// ClickHouse user. Default: default.
    #[arg(long, env = "CLICKHOUSE_USER", global = true)]
    pub clickhouse_user: Option<String>,
    #[arg(
        long,
        env = "CLICKHOUSE_PASSWORD",
        global = true,
        hide_env_values = true
    )]
    pub clickhouse_password: Option<String>,
    /// Public listener. Default: 127.0.0.1:8080 (`dev-store`: 127.0.0.1:3000).
    #[arg(long, env = "VIDEOAPP_LISTEN", global = true)]
    pub listen: Option<String>,
    /// Prometheus listener, never exposed with the public API. Default: 127.0.0.1:9464.
    #[arg(long, env = "VIDEOAPP_METRICS_LISTEN", global = true)]
    pub metrics_listen: Option<String>,
    /// The app proxy's shared secret (signs storefront requests).
    #[arg(
        long,
        env = "VIDEOAPP_PROXY_SECRET",
        global = true,
        hide_env_values = true
    )]
    pub proxy_secret: Option<String>,
    /// Bearer token of the admin API (at least 16 characters).
    #[arg(
        long,
        env = "VIDEOAPP_ADMIN_TOKEN",
        global = true,
        hide_env_values = true
    )]
    pub admin_token: Option<String>,
    /// Directory of the durable event spool. Default: ./spool.
    #[arg(long, env = "VIDEOAPP_SPOOL_DIR", global = true)]
    pub spool_dir: Option<PathBuf>,
    /// Log lines as `human` (default) or `json`.
    #[arg(long, env = "VIDEOAPP_LOG_FORMAT", global = true)]
    pub log_format: Option<String>,
    /// Storefront signatures older or newer than this many seconds are refused. Default: 90.
    #[arg(long, env = "VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS", global = true)]
    pub signature_max_age_seconds: Option<String>,
    /// Development only: accept unsigned storefront requests (logs a warning at start).
    #[arg(long, env = "VIDEOAPP_INSECURE_SKIP_SIGNATURE", global = true)]
    pub insecure_skip_signature: Option<String>,
    /// Upper bound on how stale a cached catalog snapshot may be if a change notification is
    /// lost. Default: 300.
    #[arg(long, env = "VIDEOAPP_CATALOG_CACHE_TTL_SECONDS", global = true)]
    pub catalog_cache_ttl_seconds: Option<String>,
    /// Past this many bytes of spooled events, ingestion answers 503. Default: 1 GiB.
    #[arg(long, env = "VIDEOAPP_SPOOL_MAX_BYTES", global = true)]
    pub spool_max_bytes: Option<String>,
    /// A ClickHouse insert carries at most this many events. Default: 25000.
    #[arg(long, env = "VIDEOAPP_BATCH_MAX_ROWS", global = true)]
    pub batch_max_rows: Option<String>,
    /// An event waits at most this long (milliseconds) for its batch to fill. Default: 1000.
    #[arg(long, env = "VIDEOAPP_BATCH_MAX_AGE_MS", global = true)]
    pub batch_max_age_ms: Option<String>,
    /// Under load, how long (microseconds) the spool may wait for more requests to share one
    /// fsync; 0 syncs at once. Default: 600.
    #[arg(long, env = "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS", global = true)]
    pub spool_commit_delay_micros: Option<String>,
    /// Seconds one ClickHouse insert may take before it counts as failed. Default: 30.
    #[arg(
        long,
        env = "VIDEOAPP_CLICKHOUSE_INSERT_TIMEOUT_SECONDS",
        global = true
    )]
    pub clickhouse_insert_timeout_seconds: Option<String>,
    /// Event timestamps further in the future are replaced by the receive time. Default: 86400.
    #[arg(long, env = "VIDEOAPP_EVENT_MAX_FUTURE_SECONDS", global = true)]
    pub event_max_future_seconds: Option<String>,
    /// Event timestamps further in the past are replaced by the receive time (raise it to
    /// back-fill history). Default: 604800 (7 days).
    #[arg(long, env = "VIDEOAPP_EVENT_MAX_PAST_SECONDS", global = true)]
    pub event_max_past_seconds: Option<String>,
    /// The storefront's viewCount is re-read from ClickHouse at most this often, per shop.
    /// Default: 60.
    #[arg(long, env = "VIDEOAPP_VIEW_COUNT_REFRESH_SECONDS", global = true)]
    pub view_count_refresh_seconds: Option<String>,
    /// Analytics API requests per key per rolling minute. Default: 60.
    #[arg(long, env = "VIDEOAPP_RATE_LIMIT_PER_MINUTE", global = true)]
    pub rate_limit_per_minute: Option<String>,
    /// Seconds to finish in-flight work after SIGTERM. Default: 10.
    #[arg(long, env = "VIDEOAPP_SHUTDOWN_GRACE_SECONDS", global = true)]
    pub shutdown_grace_seconds: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    #[error("missing required setting {env} (or --{flag})")]
    Missing {
        env: &'static str,
        flag: &'static str,
    },
    #[error("invalid setting {env}: {reason}")]
    Invalid { env: &'static str, reason: String },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    Human,
    Json,
}

#[derive(Clone)]
pub struct ClickHouseConfig {
    pub url: String,
    pub database: String,
    pub user: String,
    pub password: String,
}

impl std::fmt::Debug for ClickHouseConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClickHouseConfig")
            .field("url", &self.url)
            .field("database", &self.database)
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

/// What `serve` runs with.
#[derive(Clone)]
pub struct Config {
    pub database_url: String,
    pub clickhouse: ClickHouseConfig,
    pub listen: SocketAddr,
    pub metrics_listen: SocketAddr,
    pub proxy_secret: String,
    pub admin_token: String,
    pub spool_dir: PathBuf,
    pub signature_max_age: Duration,
    pub insecure_skip_signature: bool,
    pub catalog_cache_ttl: Duration,
    pub spool_max_bytes: u64,
    pub batch_max_rows: usize,
    pub batch_max_age: Duration,
    pub spool_commit_delay: Duration,
    pub clickhouse_insert_timeout: Duration,
    pub event_max_future: Duration,
    pub event_max_past: Duration,
    pub rate_limit_per_minute: std::num::NonZeroU32,
    pub view_count_refresh: Duration,
    pub shutdown_grace: Duration,
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets (the URL's password, the proxy secret, the admin token) stay out of logs.
        f.debug_struct("Config")
            .field("clickhouse", &self.clickhouse)
            .field("listen", &self.listen)
            .field("metrics_listen", &self.metrics_listen)
            .field("spool_dir", &self.spool_dir)
            .field("signature_max_age", &self.signature_max_age)
            .field("insecure_skip_signature", &self.insecure_skip_signature)
            .field("catalog_cache_ttl", &self.catalog_cache_ttl)
            .field("spool_max_bytes", &self.spool_max_bytes)
            .field("batch_max_rows", &self.batch_max_rows)
            .field("batch_max_age", &self.batch_max_age)
            .field("spool_commit_delay", &self.spool_commit_delay)
            .field("shutdown_grace", &self.shutdown_grace)
            .finish_non_exhaustive()
    }
}

fn present(value: &Option<String>) -> Option<&str> {
    value.as_deref().map(str::trim).filter(|v| !v.is_empty())
}

fn required<'a>(
    value: &'a Option<String>,
    env: &'static str,
    flag: &'static str,
) -> Result<&'a str, ConfigError> {
    present(value).ok_or(ConfigError::Missing { env, flag })
}

fn invalid(env: &'static str, reason: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        env,
        reason: reason.into(),
    }
}

fn socket_addr(
    value: &Option<String>,
    env: &'static str,
    default: &str,
) -> Result<SocketAddr, ConfigError> {
    let raw = present(value).unwrap_or(default);
    raw.parse().map_err(|_| {
        invalid(
            env,
            format!("'{raw}' is not an address like 127.0.0.1:8080"),
        )
    })
}

fn seconds(
    value: &Option<String>,
    env: &'static str,
    default: u64,
) -> Result<Duration, ConfigError> {
    match present(value) {
        None => Ok(Duration::from_secs(default)),
        Some(raw) => raw
            .parse::<u64>()
            .map(Duration::from_secs)
            .map_err(|_| invalid(env, format!("'{raw}' is not a whole number of seconds"))),
    }
}

const MAX_COMMIT_DELAY_MICROS: u64 = 100_000;
/// Past this many bytes of spooled events, ingestion answers 503.
pub const DEFAULT_SPOOL_MAX_BYTES: u64 = 1 << 30;
/// Under load, how long a request may wait for others to share its fsync. Every sync costs the
/// writer CPU and wakes every thread that waits on it; at full load 600 µs made groups of ≈ 50
/// instead of ≈ 35 and gave 6 points more of the ceiling than 150 µs, with the same p99 at half
/// rate (BENCHMARKS.md › Ingest, session 6). A lone request never waits for it.
pub const DEFAULT_SPOOL_COMMIT_DELAY_MICROS: u64 = 600;
/// How long an event waits, at most, for its batch to fill.
pub const DEFAULT_BATCH_MAX_AGE_MS: u64 = 1000;
/// Rows per ClickHouse insert, at most. ClickHouse's cost is mostly per insert (a part per table
/// and materialized view, then merges): at 10,000 rows it spent 6–9 µs of CPU per event under
/// full load, at 25,000 about 5, with less disk writing beside the spool's syncs (BENCHMARKS.md,
/// Ingest). Below 25,000 events a second a batch ships by age instead, once a second.
pub const DEFAULT_BATCH_MAX_ROWS: u64 = 25_000;

fn number(
    value: &Option<String>,
    env: &'static str,
    default: u64,
    min: u64,
) -> Result<u64, ConfigError> {
    match present(value) {
        None => Ok(default),
        Some(raw) => match raw.parse::<u64>() {
            Ok(n) if n >= min => Ok(n),
            _ => Err(invalid(
                env,
                format!("'{raw}' is not a whole number ≥ {min}"),
            )),
        },
    }
}

fn flag(value: &Option<String>, env: &'static str) -> Result<bool, ConfigError> {
    match present(value).map(str::to_ascii_lowercase).as_deref() {
        None | Some("0" | "false" | "no" | "off") => Ok(false),
        Some("1" | "true" | "yes" | "on") => Ok(true),
        Some(other) => Err(invalid(env, format!("'{other}' is not true or false"))),
    }
}

impl Settings {
    pub fn log_format(&self) -> Result<LogFormat, ConfigError> {
        match present(&self.log_format) {
            None | Some("human") => Ok(LogFormat::Human),
            Some("json") => Ok(LogFormat::Json),
            Some(other) => Err(invalid(
                "VIDEOAPP_LOG_FORMAT",
                format!("'{other}' is not human or json"),
            )),
        }
    }

    /// Where `dev-store` listens: `--listen`, by default beside the service's 8080.
    pub fn dev_store_listen(&self) -> Result<SocketAddr, ConfigError> {
        socket_addr(&self.listen, "VIDEOAPP_LISTEN", "127.0.0.1:3000")
    }

    pub fn proxy_secret(&self) -> Result<String, ConfigError> {
        let secret = required(&self.proxy_secret, "VIDEOAPP_PROXY_SECRET", "proxy-secret")?;
        Ok(secret.to_string())
    }

    pub fn database_url(&self) -> Result<String, ConfigError> {
        let url = required(&self.database_url, "DATABASE_URL", "database-url")?;
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "postgres" | "postgresql") => Ok(url.to_string()),
            _ => Err(invalid(
                "DATABASE_URL",
                "must be a URL like postgres://user:password@host:5432/database",
            )),
        }
    }

    pub fn clickhouse(&self) -> Result<ClickHouseConfig, ConfigError> {
        let url = required(&self.clickhouse_url, "CLICKHOUSE_URL", "clickhouse-url")?;
        match url::Url::parse(url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => {}
            _ => {
                return Err(invalid(
                    "CLICKHOUSE_URL",
                    format!("'{url}' is not an HTTP URL like http://127.0.0.1:8123"),
                ))
            }
        }
        let database = present(&self.clickhouse_database).unwrap_or("videoapp");
        let valid_name = database
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
        if !valid_name {
            return Err(invalid(
                "CLICKHOUSE_DATABASE",
                format!("'{database}' is not a plain identifier (letters, digits, _)"),
            ));
        }
        Ok(ClickHouseConfig {
            url: url.trim_end_matches('/').to_string(),
            database: database.to_string(),
            user: present(&self.clickhouse_user)
                .unwrap_or("default")
                .to_string(),
            password: self.clickhouse_password.clone().unwrap_or_default(),
        })
    }

    /// Everything `serve` needs, or the first problem found.
    pub fn server_config(&self) -> Result<Config, ConfigError> {
        let admin_token = required(&self.admin_token, "VIDEOAPP_ADMIN_TOKEN", "admin-token")?;
        if admin_token.len() < 16 {
            return Err(invalid(
                "VIDEOAPP_ADMIN_TOKEN",
                "must be at least 16 characters",
            ));
        }
        Ok(Config {
            database_url: self.database_url()?,
            clickhouse: self.clickhouse()?,
            listen: socket_addr(&self.listen, "VIDEOAPP_LISTEN", "127.0.0.1:8080")?,
            metrics_listen: socket_addr(
                &self.metrics_listen,
                "VIDEOAPP_METRICS_LISTEN",
                "127.0.0.1:9464",
            )?,
            proxy_secret: self.proxy_secret()?,
            admin_token: admin_token.to_string(),
            spool_dir: self
                .spool_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("spool")),
            signature_max_age: seconds(
                &self.signature_max_age_seconds,
                "VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS",
                90,
            )?,
            insecure_skip_signature: flag(
                &self.insecure_skip_signature,
                "VIDEOAPP_INSECURE_SKIP_SIGNATURE",
            )?,
            catalog_cache_ttl: seconds(
                &self.catalog_cache_ttl_seconds,
                "VIDEOAPP_CATALOG_CACHE_TTL_SECONDS",
                300,
            )?,
            spool_max_bytes: number(
                &self.spool_max_bytes,
                "VIDEOAPP_SPOOL_MAX_BYTES",
                DEFAULT_SPOOL_MAX_BYTES,
                1,
            )?,
            batch_max_rows: number(
                &self.batch_max_rows,
                "VIDEOAPP_BATCH_MAX_ROWS",
                DEFAULT_BATCH_MAX_ROWS,
                1,
            )? as usize,
            batch_max_age: Duration::from_millis(number(
                &self.batch_max_age_ms,
                "VIDEOAPP_BATCH_MAX_AGE_MS",
                DEFAULT_BATCH_MAX_AGE_MS,
                1,
            )?),
            spool_commit_delay: Duration::from_micros(
                match number(
                    &self.spool_commit_delay_micros,
                    "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS",
                    DEFAULT_SPOOL_COMMIT_DELAY_MICROS,
                    0,
                )? {
                    // Every request under load may wait this long: a typo must not make it seconds.
                    micros if micros > MAX_COMMIT_DELAY_MICROS => {
                        return Err(invalid(
                            "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS",
                            format!("{micros} is above {MAX_COMMIT_DELAY_MICROS} (0.1 s)"),
                        ))
                    }
                    micros => micros,
                },
            ),
            clickhouse_insert_timeout: seconds(
                &self.clickhouse_insert_timeout_seconds,
                "VIDEOAPP_CLICKHOUSE_INSERT_TIMEOUT_SECONDS",
                30,
            )?,
            event_max_future: seconds(
                &self.event_max_future_seconds,
                "VIDEOAPP_EVENT_MAX_FUTURE_SECONDS",
                86_400,
            )?,
            event_max_past: seconds(
                &self.event_max_past_seconds,
                "VIDEOAPP_EVENT_MAX_PAST_SECONDS",
                604_800,
            )?,
            rate_limit_per_minute: {
                let n = number(
                    &self.rate_limit_per_minute,
                    "VIDEOAPP_RATE_LIMIT_PER_MINUTE",
                    60,
                    1,
                )?;
                u32::try_from(n)
                    .ok()
                    .and_then(std::num::NonZeroU32::new)
                    .ok_or_else(|| invalid("VIDEOAPP_RATE_LIMIT_PER_MINUTE", "too large"))?
            },
            view_count_refresh: seconds(
                &self.view_count_refresh_seconds,
                "VIDEOAPP_VIEW_COUNT_REFRESH_SECONDS",
                60,
            )?,
            shutdown_grace: seconds(
                &self.shutdown_grace_seconds,
                "VIDEOAPP_SHUTDOWN_GRACE_SECONDS",
                10,
            )?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A change to a complete configuration, and the setting the error must name.
    type Case = (fn(&mut Settings), &'static str);

    fn complete() -> Settings {
        Settings {
            database_url: Some("postgres://u:p@127.0.0.1:5432/db".into()),
            clickhouse_url: Some("http://127.0.0.1:8123".into()),
            proxy_secret: Some("secret".into()),
            admin_token: Some("0123456789abcdef".into()),
            ..Settings::default()
        }
    }

    #[test]
    fn a_complete_configuration_takes_the_documented_defaults() {
        let config = complete().server_config().unwrap();
        assert_eq!(config.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(config.metrics_listen.to_string(), "127.0.0.1:9464");
        assert_eq!(config.clickhouse.database, "videoapp");
        assert_eq!(config.signature_max_age, Duration::from_secs(90));
        assert!(!config.insecure_skip_signature);
    }

    #[test]
    fn each_missing_required_setting_is_named() {
        let cases: [Case; 4] = [
            (|s| s.database_url = None, "DATABASE_URL"),
            (|s| s.clickhouse_url = Some(" ".into()), "CLICKHOUSE_URL"),
            (|s| s.proxy_secret = None, "VIDEOAPP_PROXY_SECRET"),
            (|s| s.admin_token = None, "VIDEOAPP_ADMIN_TOKEN"),
        ];
        for (unset, name) in cases {
            let mut settings = complete();
            unset(&mut settings);
            let err = settings.server_config().unwrap_err().to_string();
            assert!(
                err.starts_with(&format!("missing required setting {name}")),
                "{err}"
            );
        }
    }

    #[test]
    fn malformed_values_are_named() {
        let cases: [Case; 6] = [
            (|s| s.listen = Some("localhost".into()), "VIDEOAPP_LISTEN"),
            (
                |s| s.database_url = Some("mysql://x".into()),
                "DATABASE_URL",
            ),
            (
                |s| s.clickhouse_url = Some("127.0.0.1:8123".into()),
                "CLICKHOUSE_URL",
            ),
            (
                |s| s.clickhouse_database = Some("a-b".into()),
                "CLICKHOUSE_DATABASE",
            ),
            (
                |s| s.admin_token = Some("short".into()),
                "VIDEOAPP_ADMIN_TOKEN",
            ),
            (
                |s| s.shutdown_grace_seconds = Some("ten".into()),
                "VIDEOAPP_SHUTDOWN_GRACE_SECONDS",
            ),
        ];
        for (break_it, name) in cases {
            let mut settings = complete();
            break_it(&mut settings);
            let err = settings.server_config().unwrap_err().to_string();
            assert!(err.starts_with(&format!("invalid setting {name}")), "{err}");
        }
    }
}
