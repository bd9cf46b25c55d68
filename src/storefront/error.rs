//! Errors of the storefront surface and their HTTP mapping (DESIGN §4).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

use super::signature::SignatureError;
use crate::error::{error_response, InternalCause};

#[derive(Debug, thiserror::Error)]
pub enum StorefrontError {
    #[error("Missing required parameter: {0}")]
    MissingParameter(&'static str),
    #[error("Invalid parameter {name}: {message}")]
    InvalidParameter { name: &'static str, message: String },
    #[error("Invalid request signature: {0}")]
    InvalidSignature(SignatureError),
    #[error("Shop not found or app not installed")]
    ShopNotFound,
    #[error("{0}")]
    InvalidBody(String),
    #[error("{field}: {message}")]
    InvalidEvent { field: String, message: String },
    #[error("Content-Type must be application/json or text/plain")]
    UnsupportedMediaType,
    #[error("Request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// Load is shed: the spool is full (or failing). Says when to retry.
    #[error("Too many events right now; retry after {} seconds", .0.as_secs().max(1))]
    Overloaded(std::time::Duration),
    /// An answer with no body (widget-by-id's 400 and 404).
    #[error("{0}")]
    Empty(StatusCode),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl StorefrontError {
    pub fn invalid(name: &'static str, message: impl Into<String>) -> Self {
        StorefrontError::InvalidParameter {
            name,
            message: message.into(),
        }
    }
}

impl From<std::sync::Arc<sqlx::Error>> for StorefrontError {
    fn from(e: std::sync::Arc<sqlx::Error>) -> Self {
        StorefrontError::Internal(anyhow::anyhow!("catalog load failed: {e}"))
    }
}

impl IntoResponse for StorefrontError {
    fn into_response(self) -> Response {
        let (status, code) = match &self {
            StorefrontError::MissingParameter(_) => (StatusCode::BAD_REQUEST, "MISSING_PARAMETER"),
            StorefrontError::InvalidParameter { .. } => {
                (StatusCode::BAD_REQUEST, "INVALID_PARAMETER")
            }
            StorefrontError::InvalidSignature(_) => (StatusCode::UNAUTHORIZED, "INVALID_SIGNATURE"),
            StorefrontError::ShopNotFound => (StatusCode::NOT_FOUND, "SHOP_NOT_FOUND"),
            StorefrontError::InvalidBody(_) => (StatusCode::BAD_REQUEST, "INVALID_BODY"),
            StorefrontError::InvalidEvent { .. } => (StatusCode::BAD_REQUEST, "INVALID_EVENT"),
            StorefrontError::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE")
            }
            StorefrontError::PayloadTooLarge(_) => {
                (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE")
            }
            StorefrontError::Overloaded(_) => (StatusCode::SERVICE_UNAVAILABLE, "SPOOL_FULL"),
            StorefrontError::Empty(status) => return status.into_response(),
            StorefrontError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR"),
        };
        let mut response = error_response(status, code, self.to_string());
        if status == StatusCode::UNAUTHORIZED {
            // The proxy signature is not a bearer scheme.
            response
                .headers_mut()
                .remove(axum::http::header::WWW_AUTHENTICATE);
        }
        if let StorefrontError::Overloaded(after) = &self {
            let seconds = after.as_secs().max(1);
            response.headers_mut().insert(
                axum::http::header::RETRY_AFTER,
                axum::http::HeaderValue::from(seconds),
            );
        }
        if let StorefrontError::Internal(cause) = &self {
            response
                .extensions_mut()
                .insert(InternalCause(std::sync::Arc::new(format!("{cause:#}"))));
        }
        response
    }
}
