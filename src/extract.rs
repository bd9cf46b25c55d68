//! Extractors that turn request parts into typed values with our error body, instead of axum's
//! plain-text rejections.

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts};
use serde::de::DeserializeOwned;

use crate::error::ApiError;

/// Admin request bodies are small; anything larger is a mistake or an attack.
pub const MAX_ADMIN_BODY_BYTES: usize = 1024 * 1024;

/// JSON body extractor whose errors name the offending field (via `serde_path_to_error`).
pub struct AppJson<T>(pub T);

impl<S, T> FromRequest<S> for AppJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::UnsupportedMediaType);
        }
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(|_| ApiError::PayloadTooLarge(MAX_ADMIN_BODY_BYTES))?;
        parse_json(&bytes).map(AppJson)
    }
}

/// Deserializes `bytes`, reporting where in the document a value was wrong.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if !inner.is_data() {
            // Syntax errors and truncated documents: there is no field to name.
            return ApiError::InvalidBody(format!("invalid JSON body: {inner}"));
        }
        let field = if path == "." {
            "body".to_string()
        } else {
            path
        };
        ApiError::validation(field, strip_position(&inner.to_string()))
    })?;
    de.end()
        .map_err(|e| ApiError::InvalidBody(format!("invalid JSON body: {e}")))?;
    Ok(value)
}

/// serde_json appends " at line 1 column 17"; with the field path in front that is noise.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Path parameters with our error body: a malformed path is reported like any other bad input.
pub struct AppPath<T>(pub T);

impl<S, T> FromRequestParts<S> for AppPath<T>
where
    S: Send + Sync,
    T: DeserializeOwned + Send,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|axum::extract::Path(v)| AppPath(v))
            .map_err(|e| ApiError::validation("path", e.body_text()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        priority: i32,
    }

    #[test]
    fn a_wrong_type_names_the_nested_field() {
        let err = parse_json::<Body>(br#"{"name":"x","inner":{"priority":"high"}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inner.priority: invalid type: string \"high\", expected i32"
        );
    }

    #[test]
    fn malformed_json_is_an_invalid_body() {
        let err = parse_json::<Body>(b"{not json").unwrap_err();
        assert!(matches!(err, ApiError::InvalidBody(_)), "{err:?}");
    }

    #[test]
    fn trailing_garbage_is_rejected() {
        let err = parse_json::<Inner>(br#"{"priority":1} x"#).unwrap_err();
        assert!(matches!(err, ApiError::InvalidBody(_)), "{err:?}");
    }
}
