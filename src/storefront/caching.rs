//! HTTP caching of storefront answers (DESIGN §4): a weak `ETag` from the catalog version and
//! the request's inputs, `304` on a matching `If-None-Match`, and a day-long `Cache-Control`
//! when the request's `v` names the current version. Also the shared-bytes body that lets many
//! requests send one rendered page without copying it.

use std::collections::VecDeque;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use serde::Serialize;

const SHORT: &str = "public, max-age=60, stale-while-revalidate=600";
/// The loader asked for exactly this version, so the answer cannot change under that URL.
const PINNED: &str = "public, max-age=86400";

/// The validator of one answer and how long it may be cached.
pub struct Validator {
    pub etag: String,
    pinned: bool,
}

impl Validator {
    /// For an answer that is a function of `version` and `inputs`. Weak, because the body's
    /// `timestamp` differs between equivalent answers.
    pub fn new(version: i64, inputs: impl Hash, pinned: bool) -> Validator {
        let mut hasher = DefaultHasher::new();
        inputs.hash(&mut hasher);
        Validator {
            etag: format!("W/\"{version}-{:016x}\"", hasher.finish()),
            pinned,
        }
    }

    /// Does the client's `If-None-Match` already name this answer?
    pub fn is_fresh(&self, request_headers: &HeaderMap) -> bool {
        matches(request_headers.get(IF_NONE_MATCH), &self.etag)
    }

    pub fn not_modified(&self) -> Response {
        self.finish(StatusCode::NOT_MODIFIED, Body::empty())
    }

    /// 200 with a JSON `body`.
    pub fn ok(&self, body: Body) -> Response {
        let mut response = self.finish(StatusCode::OK, body);
        response
            .headers_mut()
            .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        response
    }

    /// 304 when the client's copy is current, otherwise 200 with `body()` as JSON.
    pub fn respond<T: Serialize>(
        &self,
        request_headers: &HeaderMap,
        body: impl FnOnce() -> T,
    ) -> Response {
        if self.is_fresh(request_headers) {
            return self.not_modified();
        }
        let bytes = serde_json::to_vec(&body()).expect("storefront JSON always serializes");
        self.ok(Body::from(bytes))
    }

    fn finish(&self, status: StatusCode, body: Body) -> Response {
        let mut response = Response::new(body);
        *response.status_mut() = status;
        let headers = response.headers_mut();
        headers.insert(
            ETAG,
            HeaderValue::from_str(&self.etag).expect("an ETag is visible ASCII"),
        );
        let cache_control = if self.pinned { PINNED } else { SHORT };
        headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache_control));
        response
    }
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

/// A body made of byte chunks sent one after another, with its exact length known (so the
/// answer has a `Content-Length`). Shared chunks are sent as they are, never copied.
pub struct Chunks {
    chunks: VecDeque<Bytes>,
    remaining: u64,
}

impl Chunks {
    pub fn new(chunks: impl IntoIterator<Item = Bytes>) -> Chunks {
        let chunks: VecDeque<Bytes> = chunks.into_iter().filter(|c| !c.is_empty()).collect();
        let remaining = chunks.iter().map(|c| c.len() as u64).sum();
        Chunks { chunks, remaining }
    }
}

impl http_body::Body for Chunks {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let next = self.chunks.pop_front();
        if let Some(chunk) = &next {
            self.remaining -= chunk.len() as u64;
        }
        Poll::Ready(next.map(|chunk| Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn if_none_match_compares_weakly_and_accepts_lists_and_star() {
        let tag = Validator::new(7, ("home", 1), false).etag;
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
        let etag = |version, inputs| Validator::new(version, inputs, false).etag;
        assert_ne!(etag(1, "home"), etag(2, "home"));
        assert_ne!(etag(1, "home"), etag(1, "product"));
        assert_eq!(etag(1, "home"), etag(1, "home"));
    }

    #[tokio::test]
    async fn chunks_arrive_whole_and_in_order_with_their_length() {
        let body = Chunks::new([
            Bytes::from_static(b"{\"a\":"),
            Bytes::new(),
            Bytes::from_static(b"[1,2]}"),
        ]);
        assert_eq!(http_body::Body::size_hint(&body).exact(), Some(11));
        let bytes = axum::body::to_bytes(Body::new(body), 1024).await.unwrap();
        assert_eq!(&bytes[..], b"{\"a\":[1,2]}");
    }
}

/// The rendered `widgets` array of recent pages, by snapshot and validator: the part of a
/// contextual-widgets answer that is the same for every request of that page, so it is built
/// once and shared. Bounded by bytes; a reloaded snapshot or new view counts means a new key.
#[derive(Clone)]
pub struct RenderedPages(moka::future::Cache<(u64, String), Bytes>);

impl RenderedPages {
    pub fn new(max_bytes: u64) -> Self {
        RenderedPages(
            moka::future::Cache::builder()
                .max_capacity(max_bytes)
                .weigher(|_, page: &Bytes| u32::try_from(page.len()).unwrap_or(u32::MAX))
                .time_to_idle(std::time::Duration::from_secs(600))
                .build(),
        )
    }

    pub async fn get_or_render(
        &self,
        snapshot_id: u64,
        validator: &Validator,
        render: impl FnOnce() -> Bytes,
    ) -> Bytes {
        let key = (snapshot_id, validator.etag.clone());
        if let Some(page) = self.0.get(&key).await {
            return page;
        }
        let page = render();
        self.0.insert(key, page.clone()).await;
        page
    }
}
