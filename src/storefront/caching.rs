//! HTTP caching of storefront answers (DESIGN §4): a weak `ETag` from the catalog version and
//! the request's inputs, `304` on a matching `If-None-Match`, and a day-long `Cache-Control`
//! when the request's `v` names the current version.

use std::hash::{DefaultHasher, Hash, Hasher};

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Serialize;

const SHORT: &str = "public, max-age=60, stale-while-revalidate=600";
/// The loader asked for exactly this version, so the answer cannot change under that URL.
const PINNED: &str = "public, max-age=86400";

/// A validator for an answer that is a function of `version` and `inputs`. Weak, because the
/// body's `timestamp` differs between equivalent answers.
pub fn etag(version: i64, inputs: impl Hash) -> String {
    let mut hasher = DefaultHasher::new();
    inputs.hash(&mut hasher);
    format!("W/\"{version}-{:016x}\"", hasher.finish())
}

fn matches(if_none_match: Option<&HeaderValue>, etag: &str) -> bool {
    let Some(value) = if_none_match.and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let opaque = |tag: &str| tag.trim().trim_start_matches("W/").to_string();
    let ours = opaque(etag);
    value
        .split(',')
        .any(|tag| tag.trim() == "*" || opaque(tag) == ours)
}

/// Answers 304 when the client's copy is current, otherwise `200` with the JSON `body()`.
pub fn cached_json<T: Serialize>(
    request_headers: &HeaderMap,
    etag: String,
    pinned: bool,
    body: impl FnOnce() -> T,
) -> Response {
    let cache_control = HeaderValue::from_static(if pinned { PINNED } else { SHORT });
    let etag_value = HeaderValue::from_str(&etag).expect("an ETag is visible ASCII");
    let response = if matches(request_headers.get(IF_NONE_MATCH), &etag) {
        Response::builder()
            .status(StatusCode::NOT_MODIFIED)
            .body(Body::empty())
    } else {
        let bytes = serde_json::to_vec(&body()).expect("storefront JSON always serializes");
        Response::builder()
            .status(StatusCode::OK)
            .header(CONTENT_TYPE, HeaderValue::from_static("application/json"))
            .body(Body::from(bytes))
    };
    let mut response = response.expect("static parts make a valid response");
    response.headers_mut().insert(ETAG, etag_value);
    response.headers_mut().insert(CACHE_CONTROL, cache_control);
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
        let tag = etag(7, ("home", 1));
        assert!(matches(Some(&HeaderValue::from_str(&tag).unwrap()), &tag));
        let strong = tag.trim_start_matches("W/").to_string();
        assert!(matches(
            Some(&HeaderValue::from_str(&strong).unwrap()),
            &tag
        ));
        let list = format!("\"other\", {tag}");
        assert!(matches(Some(&HeaderValue::from_str(&list).unwrap()), &tag));
        assert!(matches(Some(&HeaderValue::from_static("*")), &tag));
        assert!(!matches(Some(&HeaderValue::from_static("\"7-0\"")), &tag));
        assert!(!matches(None, &tag));
    }

    #[test]
    fn etags_change_with_the_version_and_the_inputs() {
        assert_ne!(etag(1, "home"), etag(2, "home"));
        assert_ne!(etag(1, "home"), etag(1, "product"));
        assert_eq!(etag(1, "home"), etag(1, "home"));
    }
}
