//! Errors of the analytics API (API-SPEC §7, DESIGN §6) and their HTTP mapping.

use std::time::Duration;

use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::error::{error_response, InternalCause};

#[derive(Debug, thiserror::Error)]
pub enum AnalyticsError {
    #[error("Missing or invalid Authorization header. Use: Authorization: Bearer vk_…")]
    Unauthorized,
    #[error("Invalid or revoked API key")]
    InvalidApiKey,
    #[error("Too many requests. Please retry after {} seconds.", retry_seconds(*.0))]
    RateLimited(Duration),
    #[error("Invalid {0}: use the format YYYY-MM-DD (e.g. 2026-10-22)")]
    InvalidDate(&'static str),
    #[error("{0}")]
    InvalidDateRange(String),
    #[error("Invalid parameter {name}: {message}")]
    InvalidParameter { name: &'static str, message: String },
    #[error("Resource not found")]
    NotFound,
    #[error("Analytics are unavailable right now; please retry")]
    Unavailable(#[source] anyhow::Error),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// Whole seconds, rounded up, at least one: the same number in the header and the message.
pub fn retry_seconds(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

impl AnalyticsError {
    pub fn invalid(name: &'static str, message: impl Into<String>) -> Self {
        AnalyticsError::InvalidParameter {
            name,
            message: message.into(),
        }
    }
}

impl From<sqlx::Error> for AnalyticsError {
    fn from(e: sqlx::Error) -> Self {
        AnalyticsError::Internal(e.into())
    }
}

impl From<clickhouse::error::Error> for AnalyticsError {
    fn from(e: clickhouse::error::Error) -> Self {
        AnalyticsError::Unavailable(e.into())
    }
}

impl IntoResponse for AnalyticsError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            AnalyticsError::Unauthorized => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            AnalyticsError::InvalidApiKey => (StatusCode::UNAUTHORIZED, "INVALID_API_KEY"),
            AnalyticsError::RateLimited(_) => {
                (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMIT_EXCEEDED")
            }
            AnalyticsError::InvalidDate(_) => (StatusCode::BAD_REQUEST, "INVALID_DATE"),
            AnalyticsError::InvalidDateRange(_) => (StatusCode::BAD_REQUEST, "INVALID_DATE_RANGE"),
            AnalyticsError::InvalidParameter { .. } => {
                (StatusCode::BAD_REQUEST, "INVALID_PARAMETER")
            }
            AnalyticsError::NotFound => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            AnalyticsError::Unavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE")
            }
            AnalyticsError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR"),
        };
        let mut response = error_response(status, code, self.to_string());
        let headers = response.headers_mut();
        match &self {
            AnalyticsError::Unauthorized | AnalyticsError::InvalidApiKey => {
                headers.insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            }
            AnalyticsError::RateLimited(wait) => {
                headers.insert(RETRY_AFTER, HeaderValue::from(retry_seconds(*wait)));
            }
            AnalyticsError::Unavailable(_) => {
                headers.insert(RETRY_AFTER, HeaderValue::from(5u64));
            }
            _ => {}
        }
        if let AnalyticsError::Internal(cause) | AnalyticsError::Unavailable(cause) = &self {
            response
                .extensions_mut()
                .insert(InternalCause(std::sync::Arc::new(format!("{cause:#}"))));
        }
        response
    }
}
