//! HTTP caching of storefront answers: a weak `ETag` from the catalog version and
//! the request's inputs, `304` on a matching `If-None-Match`, and a day-long `Cache-Control`
//! when the request's `v` names the current version. Also the rendered pages: each answer is
//! rendered once per catalog snapshot and inputs, and compressed (br or gzip, as the request
//! accepts) once per page, not per request; and the widget JSON the pages are made of.

use std::sync::Arc;

use axum::body::Body;
use axum::http::header::{CACHE_CONTROL, ETAG, IF_NONE_MATCH, VARY};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use bytes::Bytes;
use moka::future::Cache;
use std::hash::{DefaultHasher, Hash, Hasher};

use super::presentation::RenderedWidgets;
use super::view_counts::ViewCountSet;
use crate::catalog::domain::ShopDomain;
use crate::catalog::snapshot::ShopSnapshot;
pub use crate::compressed::{Encoding, Page};

const SHORT: &str = "public, max-age=60, stale-while-revalidate=600";
/// The loader asked for exactly this version, so the answer cannot change under that URL.
const PINNED: &str = "public, max-age=86400";

/// The answer to a request that already holds the current one. Documentation only.
#[derive(utoipa::IntoResponses)]
#[response(
    status = 304,
    description = "`If-None-Match` matched the current answer"
)]
pub struct NotModified;

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
        let mut response = Response::new(Body::empty());
        *response.status_mut() = StatusCode::NOT_MODIFIED;
        self.stamp(&mut response);
        response
    }

    /// 200 with `page`'s JSON, in the best coding the request accepts.
    pub async fn ok(&self, request_headers: &HeaderMap, page: &Page) -> Response {
        let mut response = page.response(request_headers, "application/json").await;
        self.stamp(&mut response);
        response
    }

    fn stamp(&self, response: &mut Response) {
        let headers = response.headers_mut();
        headers.insert(
            ETAG,
            HeaderValue::from_str(&self.etag).expect("an ETag is visible ASCII"),
        );
        let cache_control = if self.pinned { PINNED } else { SHORT };
        headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache_control));
        // Shared caches must keep the codings apart.
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
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
}

/// Recent rendered answers, by snapshot and validator: an answer is the same for every request
/// of that page, so it is rendered (and compressed) once and shared. Bounded by bytes; a
/// reloaded snapshot or new view counts means a new key. Also each shop's [`RenderedWidgets`].
#[derive(Clone)]
pub struct RenderedPages {
    pages: Cache<(u64, String), Arc<Page>>,
    /// One set a shop: only the current snapshot and counts are asked for, and a set made for
    /// others is replaced. A synchronous cache, so that a page renders in a plain closure: a
    /// render future would make every request's future larger, and it is copied as it is boxed.
    widgets: moka::sync::Cache<ShopDomain, Arc<RenderedWidgets>>,
}

/// As many shops as the catalog cache keeps snapshots of.
const MAX_SHOPS: u64 = 100_000;
const IDLE: std::time::Duration = std::time::Duration::from_secs(600);

impl RenderedPages {
    pub fn new(max_bytes: u64) -> Self {
        RenderedPages {
            pages: Cache::builder()
                .max_capacity(max_bytes)
                // The compressed forms add about a fifth.
                .weigher(|_, page: &Arc<Page>| {
                    u32::try_from(page.len() + page.len() / 5).unwrap_or(u32::MAX)
                })
                .time_to_idle(IDLE)
                .build(),
            widgets: moka::sync::Cache::builder()
                .max_capacity(MAX_SHOPS)
                .time_to_idle(IDLE)
                .build(),
        }
    }

    /// The page of `validator`, rendered by `render` unless another request already did.
    pub async fn get_or_render(
        &self,
        snapshot_id: u64,
        validator: &Validator,
        render: impl FnOnce() -> Vec<u8>,
    ) -> Arc<Page> {
        let key = (snapshot_id, validator.etag.clone());
        if let Some(page) = self.pages.get(&key).await {
            return page;
        }
        // Boxed, as the catalog's load: the rendering path's future is only made on a miss.
        let render = async { Arc::new(Page::new(Bytes::from(render()))) };
        Box::pin(self.pages.get_with(key, render)).await
    }

    /// The shop's rendered widgets for `snapshot` and `counts`: the shared set when it was made
    /// for these, otherwise a new one (made once, then shared until either changes).
    pub fn widgets(
        &self,
        snapshot: &ShopSnapshot,
        counts: &Arc<ViewCountSet>,
    ) -> Arc<RenderedWidgets> {
        if let Some(current) = self.widgets.get(&snapshot.shop) {
            if current.is_for(snapshot, counts) {
                return current;
            }
        }
        let fresh = Arc::new(RenderedWidgets::render(snapshot, counts.clone()));
        self.widgets.insert(snapshot.shop.clone(), fresh.clone());
        fresh
    }
}
