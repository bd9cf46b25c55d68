//! The settings: each environment variable and its flag, with its default, limits and help text
//! (clap's definitions, which `--help` and docs/CONFIGURATION.md show), and the defaults and
//! bounds they are checked against.

use super::values::TokenKeyBytes;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::builder::{EnumValueParser, StringValueParser, TypedValueParser};
use clap::{value_parser, ArgAction, Args, Command, FromArgMatches, ValueEnum};
use secrecy::SecretString;
use url::Url;

use super::media::MediaSettings;
use super::parse::without_env;
use super::values::{
    admin_token, boolean, client_id, http_url, identifier, password, positive_seconds,
    postgres_url, proxy_secret, seconds, socket_addr, token_key, trim,
};

/// Where `serve` listens unless told otherwise.
pub const SERVE_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 8080);
/// Where `dev-store` listens unless told otherwise: beside the service.
pub const DEV_STORE_LISTEN: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(LOOPBACK), 3000);
const LOOPBACK: std::net::Ipv4Addr = std::net::Ipv4Addr::LOCALHOST;

/// The largest webhook body the service reads: a product with every variant and image the
/// platform sends stays far below this.
pub const WEBHOOK_MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
/// How far ahead of this instance's clock a webhook's `X-Shopify-Triggered-At` may be: two
/// clocks kept by NTP differ by far less.
pub const WEBHOOK_MAX_FUTURE_SKEW: std::time::Duration = std::time::Duration::from_secs(300);

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
const MIN_WEBHOOK_BODY_BUDGET_BYTES: u64 = WEBHOOK_MAX_BODY_BYTES as u64;

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
    pub token_key: Option<TokenKeyBytes>,
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
    /// Where the built merchant dashboard is (`boot.js`, `dashboard.js`, `dashboard.css`; `npm
    /// run build` in web/ writes them).
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
