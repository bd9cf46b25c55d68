//! The one error type of every HTTP surface (admin, storefront, analytics, operations) and the
//! body they all answer with, `{ "success": false, "error": { "code", "message" } }`.
//!
//! Each variant's status and code are in [`ApiError::status_and_code`]; the headers some answers
//! carry (`WWW-Authenticate`, `Retry-After`) and the internal cause of a 5xx are added in
//! [`ApiError::into_response`] only.

use std::sync::Arc;
use std::time::Duration;

use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::{IntoResponses, ToSchema};

use crate::catalog::cache::SnapshotError;
use crate::catalog::CatalogError;

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

/// A request body that arrived too slowly or is too large: how an endpoint that reads its body
/// within a deadline and a size cap documents those answers. Documentation only.
#[derive(IntoResponses)]
pub enum BodyLimits {
    #[response(
        status = 408,
        description = "REQUEST_TIMEOUT: the body arrived too slowly"
    )]
    TimedOut(ErrorBody),
    #[response(status = 413, description = "PAYLOAD_TOO_LARGE")]
    TooLarge(ErrorBody),
}

/// How long a client is asked to wait when ClickHouse or Postgres cannot be reached.
const UNAVAILABLE_RETRY: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    // ---- 400: the request's input
    #[error("Missing required parameter: {0}")]
    MissingParameter(String),
    /// A query parameter that is malformed, out of range, or given more than once.
    #[error("Invalid parameter {name}: {message}")]
    InvalidParameter { name: String, message: String },
    /// Query parameters the endpoint does not take, each named once.
    #[error("{}", unknown_parameters(.0))]
    UnknownParameters(Vec<String>),
    #[error("Invalid {0}: use the format YYYY-MM-DD (e.g. 2026-10-22)")]
    InvalidDate(String),
    /// Two well-formed dates that make no range (reversed, or too long).
    #[error("{0}")]
    InvalidDateRange(String),
    /// The body is not the document the endpoint takes (syntax, shape, unknown field).
    #[error("{0}")]
    InvalidBody(String),
    /// A shopper event's field; the message starts with the field's path.
    #[error("{field}: {message}")]
    InvalidEvent { field: String, message: String },
    /// A platform webhook sent longer ago than the replay window, or from the future; the
    /// message says which.
    #[error("{0}")]
    StaleDelivery(String),
    /// A value is well-formed JSON but not acceptable; the message starts with the field's name.
    #[error("{field}: {message}")]
    Validation { field: String, message: String },
    /// Media refused for what it is or how it was sent: a file that is not a playable video, a
    /// limit passed, an upload out of step with the tus protocol, a video not yet playable. The
    /// code names the problem (`media::Refusal`).
    #[error("{message}")]
    Media {
        status: StatusCode,
        code: &'static str,
        message: String,
    },

    // ---- 401
    #[error("Missing or invalid admin token. Use: Authorization: Bearer <admin token>")]
    AdminTokenRequired,
    #[error("Missing or invalid Authorization header. Use: Authorization: Bearer vk_…")]
    ApiKeyRequired,
    #[error("Invalid or revoked API key")]
    InvalidApiKey,
    /// The platform's session token (the embedded app's); the message says what is wrong.
    #[error("Invalid session token: {0}")]
    InvalidSessionToken(String),
    /// The app proxy's signature; not a bearer scheme, so no challenge is sent.
    #[error("Invalid request signature: {0}")]
    InvalidSignature(SignatureError),

    // ---- 404
    /// `what` starts the message: "shop not found", "Resource not found".
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("Shop not found or app not installed")]
    ShopNotFound,
    #[error("no route for {0}")]
    NoRoute(String),
    /// The platform's endpoints on an instance without the platform settings.
    #[error(
        "The platform is not set up on this instance (VIDEOAPP_CLIENT_ID and VIDEOAPP_TOKEN_KEY)"
    )]
    PlatformOff,

    // ---- 408, 413, 414, 415, 431
    /// The body did not arrive within the body read timeout after the request's head.
    #[error("Request body did not arrive in time")]
    RequestTimeout,
    #[error("Request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("Request URI is longer than {} bytes", crate::serve::MAX_URI_BYTES)]
    UriTooLong,
    /// Too many header fields, or too many bytes of them.
    #[error(
        "Request headers exceed {} fields or {} bytes",
        crate::serve::MAX_HEADERS,
        crate::serve::MAX_HEADER_BYTES
    )]
    HeadersTooLarge,
    /// The content types the endpoint takes, as the message lists them.
    #[error("Content-Type must be {0}")]
    UnsupportedMediaType(&'static str),

    // ---- 429, 503: the client is told when to come back
    #[error("Too many requests. Please retry after {} seconds.", retry_seconds(*.0))]
    RateLimited(Duration),
    /// Load is shed: the event spool is full (or failing).
    #[error("Too many events right now; retry after {} seconds", retry_seconds(*.0))]
    SpoolFull(Duration),
    /// Load is shed: the memory for bodies whose sender is not yet known is in use.
    #[error(
        "Too many request bodies are being received right now; retry after {} seconds",
        retry_seconds(*.0)
    )]
    Busy(Duration),
    /// ClickHouse or Postgres did not answer. The cause is logged, never sent.
    #[error("Analytics are unavailable right now; please retry")]
    Unavailable(#[source] anyhow::Error),
    /// The shop's catalog cannot be read (Postgres is unreachable) and this instance holds no
    /// copy of it. The cause is logged, never sent.
    #[error("The shop's catalog cannot be read right now; please retry")]
    CatalogUnavailable(#[source] anyhow::Error),
    /// Postgres, which holds every shop's catalog, keys and settings, cannot be reached: the
    /// admin API and the dashboard wait for it. The cause is logged, never sent.
    #[error("The catalog cannot be read or written right now; please retry")]
    DatabaseUnavailable(#[source] anyhow::Error),

    // ---- 502
    /// The platform did not answer as it documents. The cause is logged, never sent.
    #[error("The platform did not answer as expected; please retry")]
    Platform(#[source] anyhow::Error),

    // ---- 500
    /// Detail is logged by the middleware, never sent.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),

    /// A bare status with no body: widget-by-id answers its 204, and the 400 and 404 it is
    /// documented with, this way.
    #[error("{0}")]
    NoBody(StatusCode),
}

fn unknown_parameters(names: &[String]) -> String {
    let plural = if names.len() == 1 { "" } else { "s" };
    format!(
        "Unknown query parameter{plural}: {}; this endpoint's parameters are listed in /openapi.json",
        names.join(", ")
    )
}

/// Whole seconds, rounded up, at least one: what `Retry-After` and the message both say, so a
/// client that waits that long is never early.
pub fn retry_seconds(wait: Duration) -> u64 {
    let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
    seconds.max(1)
}

impl ApiError {
    pub fn validation(field: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::Validation {
            field: field.into(),
            message: message.into(),
        }
    }

    pub fn invalid(name: impl Into<String>, message: impl Into<String>) -> Self {
        ApiError::InvalidParameter {
            name: name.into(),
            message: message.into(),
        }
    }

    fn status_and_code(&self) -> (StatusCode, &'static str) {
        use ApiError::*;
        match self {
            MissingParameter(_) => (StatusCode::BAD_REQUEST, "MISSING_PARAMETER"),
            InvalidParameter { .. } => (StatusCode::BAD_REQUEST, "INVALID_PARAMETER"),
            UnknownParameters(_) => (StatusCode::BAD_REQUEST, "UNKNOWN_PARAMETER"),
            InvalidDate(_) => (StatusCode::BAD_REQUEST, "INVALID_DATE"),
            InvalidDateRange(_) => (StatusCode::BAD_REQUEST, "INVALID_DATE_RANGE"),
            InvalidBody(_) => (StatusCode::BAD_REQUEST, "INVALID_BODY"),
            InvalidEvent { .. } => (StatusCode::BAD_REQUEST, "INVALID_EVENT"),
            StaleDelivery(_) => (StatusCode::BAD_REQUEST, "STALE_DELIVERY"),
            Validation { .. } => (StatusCode::BAD_REQUEST, "VALIDATION_ERROR"),
            Media { status, code, .. } => (*status, code),
            AdminTokenRequired | ApiKeyRequired => (StatusCode::UNAUTHORIZED, "UNAUTHORIZED"),
            InvalidApiKey => (StatusCode::UNAUTHORIZED, "INVALID_API_KEY"),
            InvalidSignature(_) => (StatusCode::UNAUTHORIZED, "INVALID_SIGNATURE"),
            InvalidSessionToken(_) => (StatusCode::UNAUTHORIZED, "INVALID_SESSION_TOKEN"),
            NotFound(_) | NoRoute(_) | PlatformOff => (StatusCode::NOT_FOUND, "NOT_FOUND"),
            ShopNotFound => (StatusCode::NOT_FOUND, "SHOP_NOT_FOUND"),
            RequestTimeout => (StatusCode::REQUEST_TIMEOUT, "REQUEST_TIMEOUT"),
            PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "PAYLOAD_TOO_LARGE"),
            UriTooLong => (StatusCode::URI_TOO_LONG, "URI_TOO_LONG"),
            HeadersTooLarge => (
                StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
                "HEADERS_TOO_LARGE",
            ),
            UnsupportedMediaType(_) => {
                (StatusCode::UNSUPPORTED_MEDIA_TYPE, "UNSUPPORTED_MEDIA_TYPE")
            }
            RateLimited(_) => (StatusCode::TOO_MANY_REQUESTS, "RATE_LIMIT_EXCEEDED"),
            SpoolFull(_) => (StatusCode::SERVICE_UNAVAILABLE, "SPOOL_FULL"),
            Busy(_) => (StatusCode::SERVICE_UNAVAILABLE, "SERVICE_BUSY"),
            Unavailable(_) | CatalogUnavailable(_) | DatabaseUnavailable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "SERVICE_UNAVAILABLE")
            }
            Platform(_) => (StatusCode::BAD_GATEWAY, "PLATFORM_ERROR"),
            Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL_ERROR"),
            NoBody(status) => (*status, ""),
        }
    }

    /// Bearer-credential failures challenge the client for a bearer token; the storefront's
    /// signature failure is not one.
    fn challenges_bearer(&self) -> bool {
        matches!(
            self,
            ApiError::AdminTokenRequired
                | ApiError::ApiKeyRequired
                | ApiError::InvalidApiKey
                | ApiError::InvalidSessionToken(_)
        )
    }

    fn retry_after(&self) -> Option<Duration> {
        match self {
            ApiError::RateLimited(wait) | ApiError::SpoolFull(wait) | ApiError::Busy(wait) => {
                Some(*wait)
            }
            ApiError::Unavailable(_)
            | ApiError::CatalogUnavailable(_)
            | ApiError::DatabaseUnavailable(_) => Some(UNAVAILABLE_RETRY),
            _ => None,
        }
    }

    fn internal_cause(&self) -> Option<&anyhow::Error> {
        match self {
            ApiError::Internal(cause)
            | ApiError::Unavailable(cause)
            | ApiError::CatalogUnavailable(cause)
            | ApiError::Platform(cause) => Some(cause),
            _ => None,
        }
    }
}

/// A failed Postgres call: 503 when Postgres could not be reached (the client may retry), an
/// internal error otherwise.
impl From<sqlx::Error> for ApiError {
    fn from(e: sqlx::Error) -> Self {
        match crate::db::is_unreachable(&e) {
            true => ApiError::DatabaseUnavailable(e.into()),
            false => ApiError::Internal(e.into()),
        }
    }
}

/// A shop's snapshot the catalog cache could neither load nor fall back on: unavailable while
/// Postgres is unreachable, an internal error otherwise.
impl From<SnapshotError> for ApiError {
    fn from(e: SnapshotError) -> Self {
        match e {
            SnapshotError::Unreachable(_) => ApiError::CatalogUnavailable(e.into()),
            SnapshotError::Failed(_) => ApiError::Internal(e.into()),
        }
    }
}

impl From<clickhouse::error::Error> for ApiError {
    fn from(e: clickhouse::error::Error) -> Self {
        ApiError::Unavailable(e.into())
    }
}

/// The catalog's errors as the admin API answers them. (The analytics API maps them itself: to
/// it a missing shop means the key's shop is gone.)
impl From<CatalogError> for ApiError {
    fn from(e: CatalogError) -> Self {
        match e {
            CatalogError::ShopNotFound => ApiError::NotFound("shop"),
            CatalogError::NotFound(what) => ApiError::NotFound(what),
            CatalogError::Invalid { field, message } => ApiError::Validation { field, message },
            CatalogError::NotReady(message) => ApiError::Media {
                status: StatusCode::BAD_REQUEST,
                code: "VIDEO_NOT_READY",
                message,
            },
            CatalogError::Db(e) => e.into(),
        }
    }
}

/// The internal cause of a 5xx, attached to the response so the logging middleware can record it
/// inside the request span without it ever reaching the client.
#[derive(Clone, Debug)]
pub struct InternalCause(pub Arc<String>);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if let ApiError::NoBody(status) = self {
            return status.into_response();
        }
        let body = ErrorBody {
            success: false,
            error: ErrorDetail {
                code,
                message: self.to_string(),
            },
        };
        let mut response = (status, axum::Json(body)).into_response();
        if self.challenges_bearer() {
            response
                .headers_mut()
                .insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
        }
        if let Some(wait) = self.retry_after() {
            response
                .headers_mut()
                .insert(RETRY_AFTER, HeaderValue::from(retry_seconds(wait)));
        }
        if let Some(cause) = self.internal_cause() {
            response
                .extensions_mut()
                .insert(InternalCause(Arc::new(format!("{cause:#}"))));
        }
        response
    }
}

/// Why a signature of the platform's was refused: the app proxy's query signature, or a
/// webhook's HMAC of its body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the signature parameter is missing")]
    Missing,
    #[error("the signature parameter appears more than once")]
    Duplicated,
    #[error("the signature does not match the request")]
    Mismatch,
    #[error("the timestamp parameter is missing or not a Unix time")]
    BadTimestamp,
    #[error("the request timestamp is outside the allowed window")]
    Stale,
    #[error("the X-Shopify-Hmac-Sha256 header is missing")]
    MissingHmacHeader,
    #[error("X-Shopify-Hmac-Sha256 is not the HMAC of the body under the app's secret")]
    BodyMismatch,
}

impl SignatureError {
    pub fn metric_label(self) -> &'static str {
        match self {
            SignatureError::Missing => "missing",
            SignatureError::Duplicated => "duplicated",
            SignatureError::Mismatch => "mismatch",
            SignatureError::BadTimestamp => "bad_timestamp",
            SignatureError::Stale => "stale",
            SignatureError::MissingHmacHeader => "missing_hmac",
            SignatureError::BodyMismatch => "body_mismatch",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_seconds_round_up_to_a_whole_second_and_never_say_zero() {
        for (wait, seconds) in [
            (Duration::ZERO, 1),
            (Duration::from_millis(1), 1),
            (Duration::from_millis(999), 1),
            (Duration::from_secs(1), 1),
            (Duration::from_millis(1_001), 2),
            (Duration::from_millis(4_200), 5),
            (Duration::from_secs(5), 5),
            (Duration::new(59, 1), 60),
        ] {
            assert_eq!(retry_seconds(wait), seconds, "{wait:?}");
        }
    }

    fn header(response: &Response, name: axum::http::HeaderName) -> Option<&str> {
        response.headers().get(name).map(|v| v.to_str().unwrap())
    }

    #[test]
    fn retry_after_and_the_message_say_the_same_rounded_up_number() {
        for error in [
            ApiError::RateLimited(Duration::from_millis(2_300)),
            ApiError::SpoolFull(Duration::from_millis(2_300)),
            ApiError::Busy(Duration::from_millis(2_300)),
        ] {
            let message = error.to_string();
            let response = error.into_response();
            assert_eq!(header(&response, RETRY_AFTER), Some("3"));
            assert!(message.contains("retry after 3 seconds"), "{message}");
        }
        for error in [
            ApiError::Unavailable(anyhow::anyhow!("down")),
            ApiError::CatalogUnavailable(anyhow::anyhow!("down")),
            ApiError::from(sqlx::Error::PoolTimedOut),
            ApiError::from(CatalogError::Db(sqlx::Error::PoolTimedOut)),
        ] {
            let response = error.into_response();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(header(&response, RETRY_AFTER), Some("5"));
        }
    }

    #[test]
    fn only_bearer_credential_failures_challenge_for_a_bearer_token() {
        for error in [
            ApiError::AdminTokenRequired,
            ApiError::ApiKeyRequired,
            ApiError::InvalidApiKey,
        ] {
            let response = error.into_response();
            assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
            assert_eq!(header(&response, WWW_AUTHENTICATE), Some("Bearer"));
        }
        let response = ApiError::InvalidSignature(SignatureError::Mismatch).into_response();
        assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
        assert_eq!(header(&response, WWW_AUTHENTICATE), None);
    }

    #[test]
    fn server_errors_carry_their_cause_for_the_log_and_not_in_the_body() {
        let response = ApiError::Internal(anyhow::anyhow!("disk on fire")).into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let cause = response.extensions().get::<InternalCause>().unwrap();
        assert_eq!(cause.0.as_str(), "disk on fire");
        let body =
            futures::executor::block_on(axum::body::to_bytes(response.into_body(), 1024)).unwrap();
        assert!(!String::from_utf8_lossy(&body).contains("fire"));
    }

    #[test]
    fn a_bare_status_has_no_body() {
        let response = ApiError::NoBody(StatusCode::NO_CONTENT).into_response();
        assert_eq!(response.status(), StatusCode::NO_CONTENT);
        let body =
            futures::executor::block_on(axum::body::to_bytes(response.into_body(), 1024)).unwrap();
        assert!(body.is_empty());
    }
}
