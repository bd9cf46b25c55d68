//! The signed query of an app-proxy request: verified, then read as typed parameters.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use chrono::Utc;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use utoipa::IntoParams;

use super::signature::{self, CustomerId};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::extract::{decode_pairs, QueryPairs};

/// A storefront request whose signature checked out: the parameters the platform adds, and the
/// endpoint's own (`T`), both read from the query as [`crate::extract::AppQuery`] reads it.
pub struct Signed<T = NoParams> {
    pub proxy: ProxyParams,
    pub query: T,
}

/// The parameters the platform adds to every request it proxies.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProxyParams {
    /// The shop's domain, e.g. example.myshopify.com.
    #[param(inline)]
    pub shop: ShopDomain,
    /// The logged-in customer's id (digits); absent or empty when none. The only thing that
    /// binds an event to a customer.
    // The pattern is `CustomerId::PATTERN` (the attribute takes a literal only).
    #[param(value_type = Option<String>, pattern = "^[0-9]{1,20}$", max_length = 20)]
    pub logged_in_customer_id: Option<CustomerId>,
    /// The proxy path prefix, e.g. /apps/videoapp_sub.
    pub path_prefix: Option<String>,
    /// Unix seconds; refused when more than 90 s (configurable) from now.
    // `timestamp` and `signature` are checked on the raw query before this is read; optional here
    // only for the development flag that skips the check.
    #[param(required = true)]
    pub timestamp: Option<i64>,
    /// HMAC-SHA256 of the other parameters (app-proxy scheme), lowercase hex.
    #[param(required = true)]
    pub signature: Option<String>,
}

/// For endpoints that read no parameters of their own.
#[derive(Deserialize, IntoParams)]
pub struct NoParams {}

impl<T> FromRequestParts<AppState> for Signed<T>
where
    T: DeserializeOwned + IntoParams,
{
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        // Decoded once: the signature is checked on the pairs as sent, then they are read.
        let raw = decode_pairs(parts.uri.query().unwrap_or(""));
        let config = &state.config;
        if !config.insecure_skip_signature {
            let max_age = config.signature_max_age.as_secs() as i64;
            signature::verify_pairs(&state.proxy_secret, &raw, Utc::now(), max_age).map_err(|e| {
                metrics::counter!("storefront_signature_failures_total", "reason" => e.metric_label())
                    .increment(1);
                ApiError::InvalidSignature(e)
            })?;
        }
        let pairs = QueryPairs::from_raw(raw);
        Ok(Signed {
            proxy: pairs.read()?,
            query: pairs.read()?,
        })
    }
}
