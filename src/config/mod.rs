//! Configuration: environment variables with matching flags, parsed by clap into typed values
//! (`videoapp --help` shows each default and limit). Missing or malformed settings stop the
//! process at start with one line that names every one of them.

mod commands;
mod errors;
mod media;
mod parse;
pub mod reference;
mod settings;
#[cfg(test)]
mod tests;
mod values;

pub use commands::{ClickHouseConfig, Config, ConnectionLimits, PlatformConfig, WebhookLimits};
pub use errors::{both, ConfigError, ConfigErrors};
pub use media::{MediaConfig, MediaLimits, MediaSettings, MediaStorage, S3Config};
pub use parse::parse;
pub use settings::{
    LogFormat, Settings, DEFAULT_BATCH_MAX_AGE_MS, DEFAULT_BATCH_MAX_ROWS,
    DEFAULT_BODY_READ_TIMEOUT_SECONDS, DEFAULT_HEADER_READ_TIMEOUT_SECONDS,
    DEFAULT_IDLE_TIMEOUT_SECONDS, DEFAULT_MAX_CONNECTIONS, DEFAULT_SPOOL_COMMIT_DELAY_MICROS,
    DEFAULT_SPOOL_MAX_BYTES, DEFAULT_WEBHOOK_BODY_BUDGET_BYTES,
    DEFAULT_WEBHOOK_REPLAY_WINDOW_SECONDS, DEFAULT_WEBHOOK_RETENTION_SECONDS, DEV_STORE_LISTEN,
    SERVE_LISTEN, WEBHOOK_MAX_BODY_BYTES, WEBHOOK_MAX_FUTURE_SKEW,
};
pub use values::TokenKeyBytes;
