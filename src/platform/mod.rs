//! The platform the app runs on: its install (the session token exchanged for an offline access
//! token, kept sealed, and the first product import), its webhooks (the catalog kept in step with
//! the store, the app's uninstall, and the mandatory privacy requests), recorded durably when they
//! arrive and worked on after.

pub mod admin_api;
pub mod credentials;
mod install;
pub mod privacy;
pub mod session_token;
mod topics;
mod webhooks;
pub mod work;

use secrecy::SecretString;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::config::PlatformConfig;

/// What the service needs to act for shops on the platform: set when the platform settings are.
pub struct Platform {
    pub sessions: session_token::SessionTokens,
    pub api: admin_api::AdminApi,
    pub token_key: credentials::TokenKey,
}

impl Platform {
    /// `secret` is the app's client secret (the one that signs the proxy and the webhooks).
    pub fn new(config: &PlatformConfig, secret: &SecretString) -> Self {
        Platform {
            sessions: session_token::SessionTokens::new(secret, &config.client_id),
            api: admin_api::AdminApi::new(
                config.client_id.clone(),
                secret.clone(),
                config.origin.clone(),
            ),
            token_key: credentials::TokenKey::new(&config.token_key),
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(webhooks::receive))
        .routes(routes!(install::install))
}
