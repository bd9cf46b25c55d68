//! Configuration: environment variables with matching flags, parsed by clap into typed values
//! (`videoapp --help` shows each default and limit). Missing or malformed settings stop the
//! process at start with one line that names every one of them.

use std::ffi::{OsStr, OsString};
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{
    EnumValueParser, PossibleValue, StringValueParser, TypedValueParser, ValueParser,
};
use clap::error::{ContextKind, ContextValue};
use clap::parser::ValueSource;
use clap::{value_parser, Arg, ArgAction, Args, Command, FromArgMatches, Parser, ValueEnum};
use secrecy::SecretString;
use url::Url;

use crate::platform::credentials::TokenKey;

mod media;
pub mod reference;
pub use media::{MediaConfig, MediaLimits, MediaSettings, MediaStorage, S3Config};

/// Where `serve` listens unless told otherwise.
pub const SERVE_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 8080);
/// Where `dev-store` listens unless told otherwise: beside the service.
pub const DEV_STORE_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 3000);
const LOOPBACK: std::net::Ipv4Addr = std::net::Ipv4Addr::LOCALHOST;

/// Every request under load may wait this long for a shared fsync: a typo must not make it
/// seconds.
const MAX_COMMIT_DELAY_MICROS: u64 = 100_000;
/// Past this many bytes of spooled events, ingestion answers 503.
pub const DEFAULT_SPOOL_MAX_BYTES: u64 = 1 << 30;
/// Under load, how long a request may wait for others to share its fsync. Every sync costs the
/// writer CPU and wakes every thread that waits on it; at full load 600 µs made groups of ≈ 50
/// requests per fsync instead of ≈ 35, and reached 6 percentage points more of the bare-axum
/// ceiling's throughput than 150 µs, with the same p99 at half the service's rate (BENCHMARKS.md,
/// Ingest). A lone request never waits for it.
pub const DEFAULT_SPOOL_COMMIT_DELAY_MICROS: u64 = 600;
/// How long an event waits, at most, for its batch to fill.
pub const DEFAULT_BATCH_MAX_AGE_MS: u64 = 1000;
/// Rows per ClickHouse insert, at most. ClickHouse's cost is mostly per insert (a part per table
/// and materialized view, then merges): at 10,000 rows it spent 6–9 µs of CPU per event under
/// full load, at 25,000 about 5, with less disk writing beside the spool's syncs (BENCHMARKS.md,
/// Ingest). Below 25,000 events a second a batch ships by age instead, once a second.
pub const DEFAULT_BATCH_MAX_ROWS: u64 = 25_000;
/// A client has this long, from connecting or from its first byte after a response, to send a
/// request's head: a slow-loris connection is reclaimed within it.
pub const DEFAULT_HEADER_READ_TIMEOUT_SECONDS: u64 = 10;
/// A request's body must have arrived this long after its head (a deadline for the whole body,
/// not a rate): 64 KiB of events or 1 MiB of admin JSON take far less on any live link.
pub const DEFAULT_BODY_READ_TIMEOUT_SECONDS: u64 = 30;
/// A keep-alive connection with no request for this long is closed. Behind a load balancer, set
/// it above the balancer's own idle timeout, so that side closes first and never sends a request
/// on a connection this side is closing.
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: u64 = 60;
/// Open connections on the public port, at most; more wait in the listen backlog. A held
/// connection costs a task and its buffers (tens of KiB), so 10,000 bound memory to a few hundred
/// MiB and stay below the open-file limit a service is given, while a load balancer in front
/// keeps far fewer open.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 10_000;
/// Past this a typo (an extra zero or three), not a capacity plan.
const MAX_MAX_CONNECTIONS: u32 = 1_000_000;
/// The platform retries a failed delivery 8 times over 4 hours, each time with the time it was
/// first triggered: 6 hours takes its last retry with room to spare.
pub const DEFAULT_WEBHOOK_REPLAY_WINDOW_SECONDS: u64 = 6 * 3600;
/// Done deliveries are kept this long (their ids are what recognises a repeated delivery): well
/// past the replay window, so that a delivery still inside it is always recognised.
pub const DEFAULT_WEBHOOK_RETENTION_SECONDS: u64 = 48 * 3600;
/// Webhook bodies held in memory at once before their HMAC is checked: sixteen of the largest
/// deliveries (4 MiB), far more than the platform sends at once to one instance.
pub const DEFAULT_WEBHOOK_BODY_BUDGET_BYTES: u64 = 64 * 1024 * 1024;
/// The budget must hold at least the largest delivery, or that delivery is never taken.
const MIN_WEBHOOK_BODY_BUDGET_BYTES: u64 = crate::platform::MAX_WEBHOOK_BODY_BYTES as u64;

/// Every setting, typed. Settings only some commands need are `Option`s, checked when a command
/// builds its configuration ([`Settings::server_config`] and the methods beside it), so all that
/// a command misses is named at once. [`Settings::default`] is every documented default.
#[derive(Debug, Clone, Args)]
pub struct Settings {
    /// Postgres connection URL (the catalog), e.g. postgres://user:password@host:5432/videoapp.
    /// Required by every command but `sign`.
    #[arg(
        long,
        env = "DATABASE_URL",
        global = true,
        hide_env_values = true,
        value_name = "URL",
        value_parser = postgres_url
    )]
    pub database_url: Option<SecretString>,
    /// ClickHouse HTTP URL, e.g. http://127.0.0.1:8123. Required by `serve`, `migrate` and
    /// `generate`.
    #[arg(
        long,
        env = "CLICKHOUSE_URL",
        global = true,
        value_name = "URL",
        value_parser = http_url
    )]
    pub clickhouse_url: Option<Url>,
    /// ClickHouse database of the service, created by the migrations: letters, digits and _.
    #[arg(
        long,
        env = "CLICKHOUSE_DATABASE",
        global = true,
        value_name = "NAME",
        default_value = "videoapp",
        value_parser = identifier
    )]
    pub clickhouse_database: String,
    /// ClickHouse user.
    #[arg(
        long,
        env = "CLICKHOUSE_USER",
        global = true,
        value_name = "USER",
        default_value = "default",
        value_parser = trim(StringValueParser::new())
    )]
    pub clickhouse_user: String,
    /// ClickHouse password (none by default).
    #[arg(
        long,
        env = "CLICKHOUSE_PASSWORD",
        global = true,
        hide_env_values = true,
        value_name = "PASSWORD",
        default_value = "",
        hide_default_value = true,
        value_parser = password
    )]
    pub clickhouse_password: SecretString,
    /// ClickHouse cluster to run on, as the servers' `remote_servers` name it: the migrations then
    /// make replicated tables on every node and `Distributed` tables over them, events sharded by
    /// shop. Unset: one server.
    #[arg(
        long,
        env = "CLICKHOUSE_CLUSTER",
        global = true,
        value_name = "NAME",
        value_parser = identifier
    )]
    pub clickhouse_cluster: Option<String>,
    /// Public listener [default: 127.0.0.1:8080; for dev-store: 127.0.0.1:3000].
    #[arg(
        long,
        env = "VIDEOAPP_LISTEN",
        global = true,
        value_name = "ADDRESS",
        value_parser = socket_addr
    )]
    pub listen: Option<SocketAddr>,
    /// Prometheus listener, never exposed with the public API.
    #[arg(
        long,
        env = "VIDEOAPP_METRICS_LISTEN",
        global = true,
        value_name = "ADDRESS",
        default_value = "127.0.0.1:9464",
        value_parser = socket_addr
    )]
    pub metrics_listen: SocketAddr,
    /// The app proxy's shared secret (signs storefront requests). Required by `serve`, `sign` and
    /// `dev-store`.
    #[arg(
        long,
        env = "VIDEOAPP_PROXY_SECRET",
        global = true,
        hide_env_values = true,
        value_name = "SECRET",
        value_parser = proxy_secret
    )]
    pub proxy_secret: Option<SecretString>,
    /// The app's client id on the platform. Set, the platform settings are on: session tokens
    /// are checked against it and the install exchanges them for access tokens, which needs
    /// the token key below.
    #[arg(
        long,
        env = "VIDEOAPP_CLIENT_ID",
        global = true,
        value_name = "ID",
        value_parser = client_id
    )]
    pub client_id: Option<String>,
    /// The key that seals the shops' access tokens in Postgres: 32 bytes as 64 hex digits or in
    /// base64 (`openssl rand -hex 32`). Required by `serve` when the client id is set.
    #[arg(
        long,
        env = "VIDEOAPP_TOKEN_KEY",
        global = true,
        hide_env_values = true,
        value_name = "KEY",
        value_parser = token_key
    )]
    pub token_key: Option<TokenKey>,
    /// Where the platform's per-shop endpoints (token exchange, Admin GraphQL) are reached instead
    /// of https://{shop}: a local stand-in of the platform, for tests and the demo.
    #[arg(
        long,
        env = "VIDEOAPP_PLATFORM_ORIGIN",
        global = true,
        value_name = "URL",
        value_parser = http_url
    )]
    pub platform_origin: Option<Url>,
    /// Where the built merchant dashboard is (`dashboard.js`, `dashboard.css`; `npm run build`
    /// in web/ writes them).
    #[arg(
        long,
        env = "VIDEOAPP_DASHBOARD_DIR",
        global = true,
        value_name = "DIR",
        default_value = "web/dist/dashboard"
    )]
    pub dashboard_dir: PathBuf,
    /// Bearer token of the admin API, at least 16 characters. Required by `serve`.
    #[arg(
        long,
        env = "VIDEOAPP_ADMIN_TOKEN",
        global = true,
        hide_env_values = true,
        value_name = "TOKEN",
        value_parser = admin_token
    )]
    pub admin_token: Option<SecretString>,
    /// Directory of the durable event spool.
    #[arg(
        long,
        env = "VIDEOAPP_SPOOL_DIR",
        global = true,
        value_name = "DIR",
        default_value = "spool"
    )]
    pub spool_dir: PathBuf,
    /// How log lines are written.
    #[arg(
        long,
        env = "VIDEOAPP_LOG_FORMAT",
        global = true,
        value_name = "FORMAT",
        default_value = "human",
        value_parser = trim(EnumValueParser::<LogFormat>::new())
    )]
    pub log_format: LogFormat,
    /// Storefront signatures older or newer than this many seconds are refused.
    #[arg(
        long = "signature-max-age-seconds",
        env = "VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "90",
        value_parser = seconds
    )]
    pub signature_max_age: Duration,
    /// Development only: accept unsigned storefront requests (logs a warning at start). The
    /// variable takes true, false, 1, 0, yes, no, on or off.
    #[arg(
        long,
        env = "VIDEOAPP_INSECURE_SKIP_SIGNATURE",
        global = true,
        action = ArgAction::SetTrue,
        value_parser = boolean
    )]
    pub insecure_skip_signature: bool,
    /// Whether this instance does the work of recorded platform webhooks (every instance
    /// records them). Off, the instance only records: for instances that should serve requests
    /// and nothing else. Takes the same values as the variable above.
    #[arg(
        long = "webhook-work",
        env = "VIDEOAPP_WEBHOOK_WORK",
        global = true,
        value_name = "BOOL",
        default_value = "true",
        action = ArgAction::Set,
        value_parser = boolean
    )]
    pub webhook_work: bool,
    /// Upper bound on how stale a cached catalog snapshot may be if a change notification is
    /// lost, in seconds.
    #[arg(
        long = "catalog-cache-ttl-seconds",
        env = "VIDEOAPP_CATALOG_CACHE_TTL_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "300",
        value_parser = seconds
    )]
    pub catalog_cache_ttl: Duration,
    /// Seconds a request waits for a Postgres connection before it fails (1 to 300). Once
    /// Postgres is known to be unreachable, requests do not wait at all.
    #[arg(
        long = "postgres-acquire-timeout-seconds",
        env = "VIDEOAPP_POSTGRES_ACQUIRE_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "5",
        value_parser = trim(value_parser!(u64).range(1..=300).map(Duration::from_secs))
    )]
    pub postgres_acquire_timeout: Duration,
    /// Past this many bytes of spooled events (1 GiB by default; at least 1), ingestion answers
    /// 503.
    #[arg(
        long,
        env = "VIDEOAPP_SPOOL_MAX_BYTES",
        global = true,
        value_name = "BYTES",
        default_value_t = DEFAULT_SPOOL_MAX_BYTES,
        value_parser = trim(value_parser!(u64).range(1..))
    )]
    pub spool_max_bytes: u64,
    /// A ClickHouse insert carries at most this many events (at least 1).
    #[arg(
        long,
        env = "VIDEOAPP_BATCH_MAX_ROWS",
        global = true,
        value_name = "ROWS",
        default_value_t = DEFAULT_BATCH_MAX_ROWS,
        value_parser = trim(value_parser!(u64).range(1..))
    )]
    pub batch_max_rows: u64,
    /// An event waits at most this many milliseconds (at least 1) for its batch to fill.
    #[arg(
        long = "batch-max-age-ms",
        env = "VIDEOAPP_BATCH_MAX_AGE_MS",
        global = true,
        value_name = "MILLISECONDS",
        default_value = "1000",
        value_parser = trim(value_parser!(u64).range(1..).map(Duration::from_millis))
    )]
    pub batch_max_age: Duration,
    /// Under load, how long (microseconds, at most 100000) the spool may wait for more requests
    /// to share one fsync; 0 syncs at once.
    #[arg(
        long = "spool-commit-delay-micros",
        env = "VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS",
        global = true,
        value_name = "MICROSECONDS",
        default_value = "600",
        value_parser = trim(value_parser!(u64).range(..=MAX_COMMIT_DELAY_MICROS).map(Duration::from_micros))
    )]
    pub spool_commit_delay: Duration,
    /// Seconds one ClickHouse insert may take before it counts as failed.
    #[arg(
        long = "clickhouse-insert-timeout-seconds",
        env = "VIDEOAPP_CLICKHOUSE_INSERT_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "30",
        value_parser = seconds
    )]
    pub clickhouse_insert_timeout: Duration,
    /// Event timestamps further than this many seconds in the future are replaced by the
    /// receive time.
    #[arg(
        long = "event-max-future-seconds",
        env = "VIDEOAPP_EVENT_MAX_FUTURE_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "86400",
        value_parser = seconds
    )]
    pub event_max_future: Duration,
    /// Event timestamps further than this many seconds in the past are replaced by the receive
    /// time (raise it to back-fill history; the default is 7 days).
    #[arg(
        long = "event-max-past-seconds",
        env = "VIDEOAPP_EVENT_MAX_PAST_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "604800",
        value_parser = seconds
    )]
    pub event_max_past: Duration,
    /// The storefront's viewCount is re-read from ClickHouse at most this often (seconds), per
    /// shop.
    #[arg(
        long = "view-count-refresh-seconds",
        env = "VIDEOAPP_VIEW_COUNT_REFRESH_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "60",
        value_parser = seconds
    )]
    pub view_count_refresh: Duration,
    /// A partition of an aggregate that nothing has written for this many seconds (60 to
    /// 31622400, a year) is merged into one part, so that queries over it read one row per key
    /// (see `warehouse::compaction`; not on a cluster).
    #[arg(
        long = "compaction-quiet-seconds",
        env = "VIDEOAPP_COMPACTION_QUIET_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "3600",
        value_parser = trim(value_parser!(u64).range(60..=31_622_400).map(Duration::from_secs))
    )]
    pub compaction_quiet: Duration,
    /// Analytics API requests per key per rolling minute (at least 1).
    #[arg(
        long,
        env = "VIDEOAPP_RATE_LIMIT_PER_MINUTE",
        global = true,
        value_name = "REQUESTS",
        default_value_t = 60,
        value_parser = trim(value_parser!(u32).range(1..=i64::from(u32::MAX)))
    )]
    pub rate_limit_per_minute: u32,
    /// Seconds to finish in-flight work after SIGTERM.
    #[arg(
        long = "shutdown-grace-seconds",
        env = "VIDEOAPP_SHUTDOWN_GRACE_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "10",
        value_parser = seconds
    )]
    pub shutdown_grace: Duration,
    /// Seconds a client has to send a request's head, from connecting or from the first byte of
    /// the next request on a kept-alive connection (at least 1).
    #[arg(
        long = "header-read-timeout-seconds",
        env = "VIDEOAPP_HEADER_READ_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "10",
        value_parser = positive_seconds()
    )]
    pub header_read_timeout: Duration,
    /// Seconds a request's whole body may take to arrive after its head (at least 1); a slower
    /// one is answered 408.
    #[arg(
        long = "body-read-timeout-seconds",
        env = "VIDEOAPP_BODY_READ_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "30",
        value_parser = positive_seconds()
    )]
    pub body_read_timeout: Duration,
    /// Seconds a kept-alive connection may wait for its next request (at least 1).
    #[arg(
        long = "idle-timeout-seconds",
        env = "VIDEOAPP_IDLE_TIMEOUT_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value = "60",
        value_parser = positive_seconds()
    )]
    pub idle_timeout: Duration,
    /// Open connections on the public port, at most (1 to 1000000); more wait to be accepted.
    #[arg(
        long,
        env = "VIDEOAPP_MAX_CONNECTIONS",
        global = true,
        value_name = "CONNECTIONS",
        default_value_t = DEFAULT_MAX_CONNECTIONS,
        value_parser = trim(value_parser!(u32).range(1..=i64::from(MAX_MAX_CONNECTIONS)))
    )]
    pub max_connections: u32,
    /// A webhook delivery whose `X-Shopify-Triggered-At` is more than this many seconds ago (60
    /// to 604800) is refused. The platform retries a failed delivery for 4 hours, with its first
    /// time: below that, genuine retries are refused.
    #[arg(
        long = "webhook-replay-window-seconds",
        env = "VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value_t = DEFAULT_WEBHOOK_REPLAY_WINDOW_SECONDS,
        value_parser = trim(value_parser!(u64).range(60..=604_800))
    )]
    pub webhook_replay_window_seconds: u64,
    /// Recorded webhook deliveries whose work ended this many seconds ago (3600 to 31622400) are
    /// deleted. Must exceed the replay window and 5 minutes, so a delivery inside the window is
    /// always recognised as a repeat.
    #[arg(
        long = "webhook-retention-seconds",
        env = "VIDEOAPP_WEBHOOK_RETENTION_SECONDS",
        global = true,
        value_name = "SECONDS",
        default_value_t = DEFAULT_WEBHOOK_RETENTION_SECONDS,
        value_parser = trim(value_parser!(u64).range(3600..=31_622_400))
    )]
    pub webhook_retention_seconds: u64,
    /// Bytes of webhook bodies this instance holds at once before their HMAC is checked (at
    /// least 4194304, the largest delivery); past it, deliveries are answered 503.
    #[arg(
        long,
        env = "VIDEOAPP_WEBHOOK_BODY_BUDGET_BYTES",
        global = true,
        value_name = "BYTES",
        default_value_t = DEFAULT_WEBHOOK_BODY_BUDGET_BYTES,
        value_parser = trim(value_parser!(u64).range(MIN_WEBHOOK_BODY_BUDGET_BYTES..))
    )]
    pub webhook_body_budget_bytes: u64,
    #[command(flatten)]
    pub media: MediaSettings,
}

impl Default for Settings {
    /// Every setting at its documented default; nothing is read from the environment.
    fn default() -> Self {
        let command = without_env(Settings::augment_args(Command::new("videoapp")));
        let matches = command
            .try_get_matches_from(["videoapp"])
            .expect("the defaults parse");
        Settings::from_arg_matches(&matches).expect("the defaults parse")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Text for people to read.
    Human,
    /// One JSON object per line.
    Json,
}

#[derive(Debug, Clone)]
pub struct ClickHouseConfig {
    pub url: String,
    pub database: String,
    pub user: String,
    pub password: SecretString,
    /// The cluster the tables span, if any.
    pub cluster: Option<String>,
}

/// What `serve` runs with.
#[derive(Debug, Clone)]
pub struct Config {
    pub database_url: SecretString,
    pub clickhouse: ClickHouseConfig,
    pub listen: SocketAddr,
    pub metrics_listen: SocketAddr,
    pub proxy_secret: SecretString,
    pub admin_token: SecretString,
    pub spool_dir: PathBuf,
    pub signature_max_age: Duration,
    pub insecure_skip_signature: bool,
    pub webhook_work: bool,
    /// Set when the platform settings are.
    pub platform: Option<PlatformConfig>,
    pub dashboard_dir: PathBuf,
    pub catalog_cache_ttl: Duration,
    pub postgres_acquire_timeout: Duration,
    pub spool_max_bytes: u64,
    pub batch_max_rows: usize,
    pub batch_max_age: Duration,
    pub spool_commit_delay: Duration,
    pub clickhouse_insert_timeout: Duration,
    pub event_max_future: Duration,
    pub event_max_past: Duration,
    pub rate_limit_per_minute: NonZeroU32,
    pub view_count_refresh: Duration,
    pub compaction_quiet: Duration,
    pub shutdown_grace: Duration,
    pub connections: ConnectionLimits,
    pub webhooks: WebhookLimits,
    pub media: MediaConfig,
}

/// How old a webhook delivery may be, how long recorded ones are kept, and how many bytes of
/// unauthenticated webhook bodies the instance holds at once.
#[derive(Debug, Clone, Copy)]
pub struct WebhookLimits {
    pub replay_window: Duration,
    pub retention: Duration,
    pub body_budget_bytes: u64,
}

/// The platform settings: the app's client id, the key that seals access tokens, and where the
/// platform's per-shop endpoints are when not at the shop's own address.
#[derive(Debug, Clone)]
pub struct PlatformConfig {
    pub client_id: String,
    pub token_key: TokenKey,
    pub origin: Option<Url>,
}

/// How long the public port waits for each part of a client's request, and how many clients it
/// serves at once.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    pub header_read_timeout: Duration,
    pub body_read_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_connections: u32,
}

impl Settings {
    /// Where `serve` listens.
    pub fn serve_listen(&self) -> SocketAddr {
        self.listen.unwrap_or(SERVE_LISTEN)
    }

    /// Where `dev-store` listens: by default beside the service's 8080.
    pub fn dev_store_listen(&self) -> SocketAddr {
        self.listen.unwrap_or(DEV_STORE_LISTEN)
    }

    pub fn database_url(&self) -> Result<&SecretString, ConfigErrors> {
        required(self.database_url.as_ref(), "database_url")
    }

    pub fn proxy_secret(&self) -> Result<&SecretString, ConfigErrors> {
        required(self.proxy_secret.as_ref(), "proxy_secret")
    }

    pub fn admin_token(&self) -> Result<&SecretString, ConfigErrors> {
        required(self.admin_token.as_ref(), "admin_token")
    }

    pub fn clickhouse(&self) -> Result<ClickHouseConfig, ConfigErrors> {
        let url = required(self.clickhouse_url.as_ref(), "clickhouse_url")?;
        Ok(ClickHouseConfig {
            url: url.as_str().trim_end_matches('/').to_string(),
            database: self.clickhouse_database.clone(),
            user: self.clickhouse_user.clone(),
            password: self.clickhouse_password.clone(),
            cluster: self.clickhouse_cluster.clone(),
        })
    }

    /// What the commands that touch both databases need: Postgres, then ClickHouse.
    pub fn storage(&self) -> Result<(SecretString, ClickHouseConfig), ConfigErrors> {
        let (database_url, clickhouse) = both(self.database_url(), self.clickhouse())?;
        Ok((database_url.clone(), clickhouse))
    }

    /// The platform settings, when the client id is set; the token key is then required.
    pub fn platform(&self) -> Result<Option<PlatformConfig>, ConfigErrors> {
        let Some(client_id) = &self.client_id else {
            return Ok(None);
        };
        let token_key = required(self.token_key.as_ref(), "token_key")?;
        Ok(Some(PlatformConfig {
            client_id: client_id.clone(),
            token_key: token_key.clone(),
            origin: self.platform_origin.clone(),
        }))
    }

    /// The webhook limits; the retention must outlast the replay window (and the clock skew a
    /// delivery's time is allowed), or a repeat inside the window could find its id deleted.
    pub fn webhook_limits(&self) -> Result<WebhookLimits, ConfigErrors> {
        let replay_window = Duration::from_secs(self.webhook_replay_window_seconds);
        let retention = Duration::from_secs(self.webhook_retention_seconds);
        let skew = crate::platform::WEBHOOK_MAX_FUTURE_SKEW;
        if retention <= replay_window + skew {
            let (env, _) = names("webhook_retention_seconds");
            let reason = format!(
                "{} seconds must be more than the replay window ({} seconds, \
                 VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS) and {} seconds",
                retention.as_secs(),
                replay_window.as_secs(),
                skew.as_secs()
            );
            return Err(ConfigErrors(vec![ConfigError::Invalid {
                env,
                flag: None,
                reason,
            }]));
        }
        Ok(WebhookLimits {
            replay_window,
            retention,
            body_budget_bytes: self.webhook_body_budget_bytes,
        })
    }

    /// Everything `serve` needs, or every required setting that is missing.
    pub fn server_config(&self) -> Result<Config, ConfigErrors> {
        let (
            ((((database_url, clickhouse), (proxy_secret, admin_token)), platform), webhooks),
            media,
        ) = both(
            both(
                both(
                    both(
                        both(self.database_url(), self.clickhouse()),
                        both(self.proxy_secret(), self.admin_token()),
                    ),
                    self.platform(),
                ),
                self.webhook_limits(),
            ),
            self.media.media_config(),
        )?;
        Ok(Config {
            database_url: database_url.clone(),
            clickhouse,
            listen: self.serve_listen(),
            metrics_listen: self.metrics_listen,
            proxy_secret: proxy_secret.clone(),
            admin_token: admin_token.clone(),
            spool_dir: self.spool_dir.clone(),
            signature_max_age: self.signature_max_age,
            insecure_skip_signature: self.insecure_skip_signature,
            webhook_work: self.webhook_work,
            platform,
            dashboard_dir: self.dashboard_dir.clone(),
            catalog_cache_ttl: self.catalog_cache_ttl,
            postgres_acquire_timeout: self.postgres_acquire_timeout,
            spool_max_bytes: self.spool_max_bytes,
            batch_max_rows: usize::try_from(self.batch_max_rows).unwrap_or(usize::MAX),
            batch_max_age: self.batch_max_age,
            spool_commit_delay: self.spool_commit_delay,
            clickhouse_insert_timeout: self.clickhouse_insert_timeout,
            event_max_future: self.event_max_future,
            event_max_past: self.event_max_past,
            // The parser refuses 0.
            rate_limit_per_minute: NonZeroU32::new(self.rate_limit_per_minute)
                .unwrap_or(NonZeroU32::MIN),
            view_count_refresh: self.view_count_refresh,
            compaction_quiet: self.compaction_quiet,
            shutdown_grace: self.shutdown_grace,
            connections: ConnectionLimits {
                header_read_timeout: self.header_read_timeout,
                body_read_timeout: self.body_read_timeout,
                idle_timeout: self.idle_timeout,
                max_connections: self.max_connections,
            },
            webhooks,
            media,
        })
    }
}

/// Both values, or the problems of either or both.
pub fn both<A, B>(
    a: Result<A, ConfigErrors>,
    b: Result<B, ConfigErrors>,
) -> Result<(A, B), ConfigErrors> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (Err(e), Ok(_)) | (Ok(_), Err(e)) => Err(e),
        (Err(ConfigErrors(mut a)), Err(ConfigErrors(b))) => {
            a.extend(b);
            Err(ConfigErrors(a))
        }
    }
}

fn required<'a, T>(value: Option<&'a T>, id: &str) -> Result<&'a T, ConfigErrors> {
    value.ok_or_else(|| {
        let (env, flag) = names(id);
        ConfigErrors(vec![ConfigError::Missing { env, flag }])
    })
}

/// The environment variable and flag of the setting `id` (its field's name).
fn names(id: &str) -> (String, String) {
    let command = Settings::augment_args(Command::new("videoapp"));
    let arg = command
        .get_arguments()
        .find(|arg| arg.get_id() == id)
        .expect("a setting of that name");
    let env = arg.get_env().expect("every setting has a variable");
    let flag = arg.get_long().expect("every setting has a flag");
    (env.to_string_lossy().into_owned(), flag.to_string())
}

// ---- problems ---------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConfigError {
    /// A setting the command needs is not given.
    Missing { env: String, flag: String },
    /// A setting's value is malformed; `flag` is set when the value came from the command line.
    Invalid {
        env: String,
        flag: Option<String>,
        reason: String,
    },
}

impl ConfigError {
    /// The setting's environment variable.
    pub fn env(&self) -> &str {
        match self {
            ConfigError::Missing { env, .. } | ConfigError::Invalid { env, .. } => env,
        }
    }
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::Missing { env, flag } => {
                write!(f, "missing required setting {env} (or --{flag})")
            }
            ConfigError::Invalid {
                env,
                flag: None,
                reason,
            } => write!(f, "invalid setting {env}: {reason}"),
            ConfigError::Invalid {
                env,
                flag: Some(flag),
                reason,
            } => write!(f, "invalid setting {env} (--{flag}): {reason}"),
        }
    }
}

/// Every problem found with the settings. Shown on one line: the missing settings together, then
/// each malformed one.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConfigErrors(Vec<ConfigError>);

impl ConfigErrors {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &ConfigError> {
        self.0.iter()
    }

    /// What a command built from the settings, if neither these problems (found while parsing)
    /// nor the command found any; else all of them. A setting found malformed was parsed as if
    /// it were not given: that it is then missing goes without saying.
    pub fn and<T>(mut self, built: Result<T, ConfigErrors>) -> Result<T, ConfigErrors> {
        match built {
            Ok(value) if self.is_empty() => Ok(value),
            Ok(_) => Err(self),
            Err(ConfigErrors(more)) => {
                for problem in more {
                    if !self.0.iter().any(|known| known.env() == problem.env()) {
                        self.0.push(problem);
                    }
                }
                Err(self)
            }
        }
    }
}

impl std::fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let missing: Vec<String> = self
            .iter()
            .filter_map(|problem| match problem {
                ConfigError::Missing { env, flag } => Some(format!("{env} (or --{flag})")),
                ConfigError::Invalid { .. } => None,
            })
            .collect();
        let mut parts = Vec::new();
        match missing.len() {
            0 => {}
            1 => parts.push(format!("missing required setting {}", missing[0])),
            _ => parts.push(format!("missing required settings {}", missing.join(", "))),
        }
        parts.extend(
            self.iter()
                .filter(|problem| matches!(problem, ConfigError::Invalid { .. }))
                .map(ToString::to_string),
        );
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for ConfigErrors {}

// ---- parsing ----------------------------------------------------------------------------------

/// Parses the command line and the environment into `P`, as `P::parse()` does, except that a
/// malformed setting does not stop the parse at the first: every setting given (as a flag, else
/// as its variable) is first checked with its own value parser, the malformed ones are left out
/// of the parse, and they come back named, to be reported with what the command finds missing.
/// A variable that is empty or only whitespace counts as unset. Anything else wrong with the
/// command line (an unknown flag, a subcommand's own argument) and `--help` are clap's to report.
pub fn parse<P: Parser>() -> (P, ConfigErrors) {
    parse_from(P::command(), std::env::args_os())
}

fn parse_from<P: FromArgMatches>(
    mut command: Command,
    argv: impl IntoIterator<Item = OsString>,
) -> (P, ConfigErrors) {
    let mut argv: Vec<OsString> = argv.into_iter().collect();
    // The settings' arguments, those flattened into them (the media's) too: a group with a
    // flattened part names no members, so they are read off the settings alone.
    let ids: Vec<clap::Id> = Settings::augment_args(Command::new("videoapp"))
        .get_arguments()
        .map(|arg| arg.get_id().clone())
        .collect();
    let settings: Vec<Arg> = command
        .get_arguments()
        .filter(|arg| ids.contains(arg.get_id()))
        .cloned()
        .collect();
    // What the command line gives each setting, unparsed. If it does not parse even so, the real
    // parse below reports why.
    let given = as_given(&command, &settings)
        .try_get_matches_from(&argv)
        .ok();
    let mut problems = Vec::new();
    for arg in &settings {
        let id = arg.get_id().as_str();
        let (env, flag) = names(id);
        let on_command_line =
            given.as_ref().and_then(|m| m.value_source(id)) == Some(ValueSource::CommandLine);
        if on_command_line {
            // The flag wins over the variable; clap would still parse the variable where the flag
            // follows the subcommand (a global flag's value reaches the top level only after).
            command = command.mut_arg(id, |arg| arg.env(None));
            if !arg.get_action().takes_values() {
                continue;
            }
            let value = given.as_ref().and_then(|m| m.get_one::<OsString>(id));
            if let Some(reason) = value.and_then(|value| refusal(arg, &flag, value)) {
                argv = without_option(argv, &flag);
                problems.push(ConfigError::Invalid {
                    env,
                    flag: Some(flag),
                    reason,
                });
            }
        } else if let Some(value) = arg.get_env().and_then(std::env::var_os) {
            let blank = value.to_str().is_some_and(|v| v.trim().is_empty());
            let refused = match blank {
                true => None,
                false => refusal(arg, &flag, &value),
            };
            if blank || refused.is_some() {
                command = command.mut_arg(id, |arg| arg.env(None));
            }
            if let Some(reason) = refused {
                problems.push(ConfigError::Invalid {
                    env,
                    flag: None,
                    reason,
                });
            }
        }
    }
    let matches = command
        .try_get_matches_from_mut(argv)
        .unwrap_or_else(|e| e.exit());
    let parsed = P::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit());
    (parsed, ConfigErrors(problems))
}

/// `command` taking the settings' values as the command line gives them: no environment, no
/// value parsers.
fn as_given(command: &Command, settings: &[Arg]) -> Command {
    settings.iter().fold(command.clone(), |command, setting| {
        command.mut_arg(setting.get_id(), |arg| {
            let arg = arg.env(None);
            if arg.get_action().takes_values() {
                arg.value_parser(ValueParser::os_string())
            } else {
                arg
            }
        })
    })
}

/// `command` reading nothing from the environment.
fn without_env(command: Command) -> Command {
    let ids: Vec<_> = command
        .get_arguments()
        .filter(|arg| arg.get_env().is_some())
        .map(|arg| arg.get_id().clone())
        .collect();
    ids.iter().fold(command, |command, id| {
        command.mut_arg(id, |arg| arg.env(None))
    })
}

/// Why `arg`'s own value parser refuses `value`, if it does. clap offers no way to call a value
/// parser on its own, so a command with only that argument parses `--flag=value`.
fn refusal(arg: &Arg, flag: &str, value: &OsStr) -> Option<String> {
    let probe = arg.clone().env(None).action(ArgAction::Set).global(false);
    let mut flag = OsString::from(format!("--{flag}="));
    flag.push(value);
    match Command::new("probe")
        .arg(probe)
        .try_get_matches_from([OsString::from("probe"), flag])
    {
        Ok(_) => None,
        Err(e) => Some(reason(&e, value)),
    }
}

/// What is wrong, in words: the value parser's own, or what clap knows. Never the value of a
/// secret: their parsers say what is wrong without repeating it.
fn reason(e: &clap::Error, value: &OsStr) -> String {
    let value = value.to_string_lossy();
    let value = value.trim();
    match std::error::Error::source(e) {
        Some(cause) if cause.is::<std::num::ParseIntError>() => {
            format!("'{value}' is not a whole number")
        }
        Some(cause) if cause.is::<std::num::TryFromIntError>() => format!("'{value}' is too large"),
        Some(cause) => cause.to_string(),
        None => match e.get(ContextKind::ValidValue) {
            Some(ContextValue::Strings(valid)) => {
                format!("'{value}' is not {}", valid.join(" or "))
            }
            _ => e.kind().as_str().unwrap_or("malformed").to_string(),
        },
    }
}

/// `argv` without the option `--flag` (given as `--flag value` or `--flag=value`).
fn without_option(argv: Vec<OsString>, flag: &str) -> Vec<OsString> {
    let alone = format!("--{flag}");
    let joined = format!("--{flag}=");
    let mut kept = Vec::with_capacity(argv.len());
    let mut words = argv.into_iter();
    while let Some(word) = words.next() {
        if word == "--" {
            kept.push(word);
            kept.extend(words);
            break;
        }
        if word == alone.as_str() {
            words.next();
        } else if !word.to_str().is_some_and(|w| w.starts_with(&joined)) {
            kept.push(word);
        }
    }
    kept
}

// ---- value parsers ----------------------------------------------------------------------------

/// `parser`, given the value without surrounding whitespace (which an env file easily leaves).
fn trim<P: TypedValueParser>(parser: P) -> Trimmed<P> {
    Trimmed(parser)
}

#[derive(Clone)]
struct Trimmed<P>(P);

impl<P: TypedValueParser> TypedValueParser for Trimmed<P> {
    type Value = P::Value;

    fn parse_ref(
        &self,
        cmd: &Command,
        arg: Option<&Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        let value = value.to_str().map_or(value, |v| OsStr::new(v.trim()));
        self.0.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        self.0.possible_values()
    }
}

/// Why a setting's value is refused. The variants for secrets (and the Postgres URL, which carries
/// a password) do not repeat the value.
#[derive(Debug, PartialEq, thiserror::Error)]
enum InvalidValue {
    #[error("'{0}' is not an address like 127.0.0.1:8080")]
    SocketAddr(String),
    #[error("'{0}' is not a whole number of seconds")]
    Seconds(String),
    #[error("'{0}' is not true or false")]
    Boolean(String),
    #[error("must be a URL like postgres://user:password@host:5432/database")]
    PostgresUrl,
    #[error("'{0}' is not an HTTP URL like http://127.0.0.1:8123")]
    HttpUrl(String),
    #[error("'{0}' is not a plain identifier (letters, digits, _)")]
    Identifier(String),
    #[error("must not be empty")]
    Empty,
    #[error("must be at least {MIN_ADMIN_TOKEN_LEN} characters")]
    TooShort,
    #[error("{0}")]
    TokenKey(&'static str),
}

const MIN_ADMIN_TOKEN_LEN: usize = 16;

fn socket_addr(raw: &str) -> Result<SocketAddr, InvalidValue> {
    let raw = raw.trim();
    raw.parse()
        .map_err(|_| InvalidValue::SocketAddr(raw.to_string()))
}

fn seconds(raw: &str) -> Result<Duration, InvalidValue> {
    let raw = raw.trim();
    raw.parse()
        .map(Duration::from_secs)
        .map_err(|_| InvalidValue::Seconds(raw.to_string()))
}

/// Whole seconds, at least one: a timeout of zero would refuse every client.
fn positive_seconds() -> impl TypedValueParser<Value = Duration> {
    trim(value_parser!(u64).range(1..).map(Duration::from_secs))
}

fn boolean(raw: &str) -> Result<bool, InvalidValue> {
    match raw.trim().to_ascii_lowercase().as_str() {
        "0" | "false" | "no" | "off" => Ok(false),
        "1" | "true" | "yes" | "on" => Ok(true),
        other => Err(InvalidValue::Boolean(other.to_string())),
    }
}

fn postgres_url(raw: &str) -> Result<SecretString, InvalidValue> {
    let raw = raw.trim();
    match Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "postgres" | "postgresql") => Ok(raw.into()),
        _ => Err(InvalidValue::PostgresUrl),
    }
}

fn http_url(raw: &str) -> Result<Url, InvalidValue> {
    let raw = raw.trim();
    match Url::parse(raw) {
        Ok(url) if matches!(url.scheme(), "http" | "https") && url.host().is_some() => Ok(url),
        _ => Err(InvalidValue::HttpUrl(raw.to_string())),
    }
}

/// A name ClickHouse takes unquoted: letters, digits (not first) and `_`.
fn identifier(raw: &str) -> Result<String, InvalidValue> {
    let raw = raw.trim();
    let plain = !raw.is_empty()
        && raw
            .bytes()
            .enumerate()
            .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
    match plain {
        true => Ok(raw.to_string()),
        false => Err(InvalidValue::Identifier(raw.to_string())),
    }
}

/// Taken as given: a password may begin or end with a space.
fn password(raw: &str) -> Result<SecretString, std::convert::Infallible> {
    Ok(raw.into())
}

fn proxy_secret(raw: &str) -> Result<SecretString, InvalidValue> {
    match raw.trim() {
        "" => Err(InvalidValue::Empty),
        secret => Ok(secret.into()),
    }
}

fn client_id(raw: &str) -> Result<String, InvalidValue> {
    match raw.trim() {
        "" => Err(InvalidValue::Empty),
        id => Ok(id.to_string()),
    }
}

fn token_key(raw: &str) -> Result<TokenKey, InvalidValue> {
    TokenKey::parse(raw).map_err(InvalidValue::TokenKey)
}

fn admin_token(raw: &str) -> Result<SecretString, InvalidValue> {
    match raw.trim() {
        token if token.len() < MIN_ADMIN_TOKEN_LEN => Err(InvalidValue::TooShort),
        token => Ok(token.into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        settings: Settings,
    }

    /// The settings and problems `args` give, with nothing from the environment.
    fn parse_args(args: &[&str]) -> (Settings, ConfigErrors) {
        let argv = std::iter::once("videoapp").chain(args.iter().copied());
        let (cli, problems) = parse_from::<Cli>(without_env(Cli::command()), argv.map(Into::into));
        (cli.settings, problems)
    }

    /// A change to a complete configuration, and the setting the error must name.
    type Case = (fn(&mut Settings), &'static str);

    fn complete() -> Settings {
        Settings {
            database_url: Some("postgres://u:p@127.0.0.1:5432/db".into()),
            clickhouse_url: Some("http://127.0.0.1:8123".parse().unwrap()),
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
        assert_eq!(config.clickhouse.url, "http://127.0.0.1:8123");
        assert_eq!(config.clickhouse.database, "videoapp");
        assert_eq!(config.clickhouse.user, "default");
        assert_eq!(config.signature_max_age, Duration::from_secs(90));
        assert!(!config.insecure_skip_signature);
        assert_eq!(config.spool_dir, PathBuf::from("spool"));
        assert_eq!(config.catalog_cache_ttl, Duration::from_secs(300));
        assert_eq!(config.spool_max_bytes, DEFAULT_SPOOL_MAX_BYTES);
        assert_eq!(config.batch_max_rows as u64, DEFAULT_BATCH_MAX_ROWS);
        assert_eq!(
            config.batch_max_age,
            Duration::from_millis(DEFAULT_BATCH_MAX_AGE_MS)
        );
        assert_eq!(
            config.spool_commit_delay,
            Duration::from_micros(DEFAULT_SPOOL_COMMIT_DELAY_MICROS)
        );
        assert_eq!(config.clickhouse_insert_timeout, Duration::from_secs(30));
        assert_eq!(config.event_max_future, Duration::from_secs(86_400));
        assert_eq!(config.event_max_past, Duration::from_secs(604_800));
        assert_eq!(config.rate_limit_per_minute.get(), 60);
        assert_eq!(config.view_count_refresh, Duration::from_secs(60));
        assert_eq!(config.compaction_quiet, Duration::from_secs(3600));
        assert_eq!(config.shutdown_grace, Duration::from_secs(10));
        let connections = config.connections;
        assert_eq!(
            connections.header_read_timeout,
            Duration::from_secs(DEFAULT_HEADER_READ_TIMEOUT_SECONDS)
        );
        assert_eq!(
            connections.body_read_timeout,
            Duration::from_secs(DEFAULT_BODY_READ_TIMEOUT_SECONDS)
        );
        assert_eq!(
            connections.idle_timeout,
            Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECONDS)
        );
        assert_eq!(connections.max_connections, DEFAULT_MAX_CONNECTIONS);
        let webhooks = config.webhooks;
        assert_eq!(webhooks.replay_window, Duration::from_secs(6 * 3600));
        assert_eq!(webhooks.retention, Duration::from_secs(48 * 3600));
        assert_eq!(webhooks.body_budget_bytes, 64 * 1024 * 1024);
        assert_eq!(complete().log_format, LogFormat::Human);
        assert_eq!(complete().dev_store_listen().to_string(), "127.0.0.1:3000");
    }

    #[test]
    fn each_missing_required_setting_is_named() {
        let cases: [Case; 4] = [
            (|s| s.database_url = None, "DATABASE_URL"),
            (|s| s.clickhouse_url = None, "CLICKHOUSE_URL"),
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
    fn every_missing_required_setting_is_named_at_once() {
        let err = Settings::default().server_config().unwrap_err().to_string();
        assert_eq!(
            err,
            "missing required settings DATABASE_URL (or --database-url), \
             CLICKHOUSE_URL (or --clickhouse-url), VIDEOAPP_PROXY_SECRET (or --proxy-secret), \
             VIDEOAPP_ADMIN_TOKEN (or --admin-token)"
        );
    }

    #[test]
    fn malformed_values_are_named() {
        let cases = [
            (["--listen", "localhost"], "VIDEOAPP_LISTEN"),
            (["--database-url", "mysql://x"], "DATABASE_URL"),
            (["--clickhouse-url", "127.0.0.1:8123"], "CLICKHOUSE_URL"),
            (["--clickhouse-database", "a-b"], "CLICKHOUSE_DATABASE"),
            (["--admin-token", "short"], "VIDEOAPP_ADMIN_TOKEN"),
            (
                ["--shutdown-grace-seconds", "ten"],
                "VIDEOAPP_SHUTDOWN_GRACE_SECONDS",
            ),
            (
                ["--header-read-timeout-seconds", "0"],
                "VIDEOAPP_HEADER_READ_TIMEOUT_SECONDS",
            ),
            (["--max-connections", "0"], "VIDEOAPP_MAX_CONNECTIONS"),
            (
                ["--compaction-quiet-seconds", "59"],
                "VIDEOAPP_COMPACTION_QUIET_SECONDS",
            ),
            (
                ["--compaction-quiet-seconds", "31622401"],
                "VIDEOAPP_COMPACTION_QUIET_SECONDS",
            ),
            (
                ["--webhook-replay-window-seconds", "59"],
                "VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS",
            ),
            (
                ["--webhook-retention-seconds", "3599"],
                "VIDEOAPP_WEBHOOK_RETENTION_SECONDS",
            ),
            (
                ["--webhook-body-budget-bytes", "4194303"],
                "VIDEOAPP_WEBHOOK_BODY_BUDGET_BYTES",
            ),
        ];
        for (args, name) in cases {
            let (_, problems) = parse_args(&args);
            let err = problems.to_string();
            assert!(err.starts_with(&format!("invalid setting {name}")), "{err}");
            assert_eq!(problems.iter().count(), 1, "{err}");
        }
    }

    #[test]
    fn every_malformed_value_is_named_at_once_and_left_out() {
        let (settings, problems) = parse_args(&[
            "--listen=nope",
            "--spool-commit-delay-micros",
            "5000000",
            "--log-format",
            "xml",
            "--rate-limit-per-minute",
            "0",
            "--shutdown-grace-seconds",
            "3",
        ]);
        assert_eq!(
            problems.to_string(),
            "invalid setting VIDEOAPP_LISTEN (--listen): 'nope' is not an address like \
             127.0.0.1:8080; invalid setting VIDEOAPP_LOG_FORMAT (--log-format): 'xml' is not \
             human or json; invalid setting VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS \
             (--spool-commit-delay-micros): 5000000 is not in 0..=100000; invalid setting \
             VIDEOAPP_RATE_LIMIT_PER_MINUTE (--rate-limit-per-minute): 0 is not in 1..=4294967295"
        );
        // The malformed ones are parsed as if not given; the rest as given.
        assert_eq!(settings.listen, None);
        assert_eq!(settings.rate_limit_per_minute, 60);
        assert_eq!(settings.shutdown_grace, Duration::from_secs(3));
    }

    #[test]
    fn a_retention_that_does_not_outlast_the_replay_window_is_refused() {
        let mut settings = complete();
        settings.webhook_replay_window_seconds = 4 * 3600;
        settings.webhook_retention_seconds = 4 * 3600 + 300;
        assert_eq!(
            settings.server_config().unwrap_err().to_string(),
            "invalid setting VIDEOAPP_WEBHOOK_RETENTION_SECONDS: 14700 seconds must be more than \
             the replay window (14400 seconds, VIDEOAPP_WEBHOOK_REPLAY_WINDOW_SECONDS) and 300 \
             seconds"
        );
        settings.webhook_retention_seconds += 1;
        let limits = settings.server_config().unwrap().webhooks;
        assert_eq!(limits.retention, Duration::from_secs(14_701));
    }

    #[test]
    fn missing_and_malformed_settings_are_named_together() {
        let (settings, problems) = parse_args(&["--listen", "nope", "--proxy-secret", "s"]);
        let err = problems.and(settings.server_config()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "missing required settings DATABASE_URL (or --database-url), CLICKHOUSE_URL (or \
             --clickhouse-url), VIDEOAPP_ADMIN_TOKEN (or --admin-token); invalid setting \
             VIDEOAPP_LISTEN (--listen): 'nope' is not an address like 127.0.0.1:8080"
        );
        // A malformed required setting is named as malformed, not also as missing.
        let (settings, problems) = parse_args(&["--admin-token", "short"]);
        let err = problems.and(settings.admin_token()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid setting VIDEOAPP_ADMIN_TOKEN (--admin-token): must be at least 16 characters"
        );
    }

    #[test]
    fn values_are_typed_and_trimmed() {
        let (settings, problems) = parse_args(&[
            "--listen",
            " 0.0.0.0:80 ",
            "--clickhouse-url",
            "http://ch:8123/",
            "--batch-max-age-ms",
            " 250",
            "--spool-commit-delay-micros",
            "0",
            "--log-format",
            "json ",
            "--insecure-skip-signature",
            "--proxy-secret",
            " hush\n",
        ]);
        assert!(problems.is_empty(), "{problems}");
        assert_eq!(settings.serve_listen().to_string(), "0.0.0.0:80");
        assert_eq!(settings.clickhouse().unwrap().url, "http://ch:8123");
        assert_eq!(settings.batch_max_age, Duration::from_millis(250));
        assert_eq!(settings.spool_commit_delay, Duration::ZERO);
        assert_eq!(settings.log_format, LogFormat::Json);
        assert!(settings.insecure_skip_signature);
        use secrecy::ExposeSecret;
        assert_eq!(settings.proxy_secret().unwrap().expose_secret(), "hush");
    }

    #[test]
    fn the_skip_flag_takes_the_usual_words_for_true_and_false() {
        for word in ["1", "true", "YES", " on"] {
            assert_eq!(boolean(word), Ok(true), "{word}");
        }
        for word in ["0", "false", "No", "off "] {
            assert_eq!(boolean(word), Ok(false), "{word}");
        }
        assert!(boolean("maybe").is_err());
    }

    #[test]
    fn only_the_malformed_option_is_dropped_from_the_command_line() {
        let argv = |words: &[&str]| words.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            without_option(
                argv(&[
                    "videoapp",
                    "--listen",
                    "x",
                    "serve",
                    "--listen=y",
                    "--metrics-listen",
                    "z"
                ]),
                "listen"
            ),
            argv(&["videoapp", "serve", "--metrics-listen", "z"])
        );
        assert_eq!(
            without_option(argv(&["videoapp", "sign", "--", "--listen", "x"]), "listen"),
            argv(&["videoapp", "sign", "--", "--listen", "x"])
        );
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let secrets = [
            "db-password-3141",
            "clickhouse-password-2718",
            "proxy-secret-1618",
            "admin-token-0123456789",
        ];
        let settings = Settings {
            database_url: Some(format!("postgres://u:{}@127.0.0.1:5432/db", secrets[0]).into()),
            clickhouse_password: secrets[1].into(),
            proxy_secret: Some(secrets[2].into()),
            admin_token: Some(secrets[3].into()),
            ..complete()
        };
        let config = settings.server_config().unwrap();
        for shown in [format!("{settings:?}"), format!("{config:?}")] {
            assert!(shown.contains("127.0.0.1:9464"), "{shown}");
            for secret in secrets {
                assert!(!shown.contains(secret), "{secret} in {shown}");
            }
        }
    }

    #[test]
    fn help_shows_defaults_and_limits() {
        let help = Cli::command().render_help().to_string();
        for shown in [
            "[default: 90]",
            "[default: 1073741824]",
            "at most 100000",
            "[possible values: human, json]",
            "[env: VIDEOAPP_SPOOL_COMMIT_DELAY_MICROS=",
        ] {
            assert!(help.contains(shown), "{shown} not in {help}");
        }
    }
}
