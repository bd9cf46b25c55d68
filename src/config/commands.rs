//! What each command runs with, built from the settings: every setting a command needs but
//! misses is named at once.

use super::values::TokenKeyBytes;
use super::WEBHOOK_MAX_FUTURE_SKEW;
use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use secrecy::SecretString;
use url::Url;

use super::errors::{both, names, required, ConfigError, ConfigErrors};
use super::media::MediaConfig;
use super::settings::{Settings, DEV_STORE_LISTEN, SERVE_LISTEN};

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
    pub token_key: TokenKeyBytes,
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
        let skew = WEBHOOK_MAX_FUTURE_SKEW;
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
