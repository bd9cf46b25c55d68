//! The error body every surface shares, `{ "success": false, "error": { "code", "message" } }`,
//! and the error type of the admin and operational routes.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorBody {
    /// Always `false`.
    pub success: bool,
    pub error: ErrorDetail,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ErrorDetail {
    /// Machine-readable code, e.g. `VALIDATION_ERROR`.
    pub code: &'static str,
    /// Human-readable explanation that names the offending field or parameter.
    pub message: String,
}

/// Builds the shared error response. Surfaces with their own error enums call this, so the body
/// shape lives in one place.
pub fn error_response(
    status: StatusCode,
    code: &'static str,
    message: impl Into<String>,
) -> Response {
    let body = ErrorBody {
        success: false,
        error: ErrorDetail {
            code,
            message: message.into(),
        },
    };
    let mut response = (status, axum::Json(body)).into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

/// Errors of the admin API and of the JSON edge.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    #[error("Missing or invalid admin token. Use: Authorization: Bearer <admin token>")]
    Unauthorized,
    /// The body is not the JSON document the endpoint takes (syntax, shape, unknown field).
    #[error("{0}")]
    InvalidBody(String),
    #[error("Content-Type must be application/json")]
    UnsupportedMediaType,
    #[error("Request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// A value is well-formed JSON but not acceptable; the message starts with the field's name.
    #[error("{field}: {message}")]
    Validation { field: String, message: String },
    #[error("{0} not found")]
    NotFound(&'static str),
    /// Detail is logged by the middleware, never sent.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl ApiError {
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            ApiError::Unauthorized => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            ApiError::InvalidBody(_) => (StatusCode::BAD_REQUEST, "INVALID_BODY"),
            ApiError::UnsupportedMediaType => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE")
            }
            ApiError::PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"),
            ApiError::Validation { .. } => (StatusCode::BAD_REQUEST, "VALIDATION_ERROR"),
            ApiError::NotFound(_) => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            ApiError::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR"),
        }
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        ApiError::Internal(e.into())
    }
}

/// The internal cause of a 5xx, attached to the response so the logging middleware can record it
/// inside the request span without it ever reaching the client.
#[derive(Clone, Debug)]
pub struct InternalCause(pub std::sync::Arc<String>);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let mut response = error_response(status, code, self.to_string());
        if let ApiError::Internal(cause) = &self {
            response
                .extensions_mut()
                .insert(InternalCause(std::sync::Arc::new(format!("{cause:#}"))));
        }
        response
    }
}
