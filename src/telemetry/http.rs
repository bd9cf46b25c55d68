//! The two layers every request passes: [`RequestIdLayer`], outermost (the request id, taken
//! from `x-request-id` or made, and echoed), and [`HttpMetricsLayer`], on each route (metrics by
//! route template and status, one log line per failure, naming the request id).
//!
//! Nothing a caller chooses freely reaches a metric label or a log line: the method is one of
//! ten labels ([`MethodLabel`]), the route a template of the router or `unmatched`, the status
//! three digits, and a request id is kept only if it is short and plain ([`is_kept_request_id`]).
//!
//! They are hand-written services with plain futures instead of tower-http's `SetRequestId` and
//! `PropagateRequestId` plus an `axum::middleware::from_fn`, which did the same work in 3,200 more
//! instructions per acknowledged event under callgrind (`ingest_load`: 54.0–54.3 k against
//! 57.1–57.2 k per event without valgrind's software SHA-256, +5.6%; the connection task +5.7%):
//! a boxed future and a cloned route service per request, and the request id inserted into the
//! request's and the response's extensions, a map allocated for each (BENCHMARKS.md, Decisions).

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Instant;

use axum::extract::MatchedPath;
use axum::http::{HeaderName, HeaderValue, Method, Request, Response};
use pin_project_lite::pin_project;
use tower::{Layer, Service};
use tracing::instrument::Instrumented;
use tracing::Instrument;

use crate::error::InternalCause;

pub const X_REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// The longest caller's request id kept: room for any common id format (a UUID is 36, a W3C
/// trace id 32), too short to fill logs or responses.
pub const MAX_REQUEST_ID_LEN: usize = 128;

/// Whether the caller's `x-request-id` is kept: 1 to [`MAX_REQUEST_ID_LEN`] characters, each a
/// letter, a digit or one of `.` `_` `:` `-` (ASCII). Anything else (spaces, quotes, non-ASCII,
/// control characters, an overlong value) could forge or flood log lines, so it is replaced.
pub fn is_kept_request_id(id: &HeaderValue) -> bool {
    let id = id.as_bytes();
    (1..=MAX_REQUEST_ID_LEN).contains(&id.len())
        && id
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// The method as a metric and log label: the nine standard methods by name, any other as
/// `other`, so that made-up methods cannot add series.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MethodLabel(&'static str);

impl MethodLabel {
    pub fn of(method: &Method) -> Self {
        Self(match *method {
            Method::GET => "GET",
            Method::HEAD => "HEAD",
            Method::POST => "POST",
            Method::PUT => "PUT",
            Method::PATCH => "PATCH",
            Method::DELETE => "DELETE",
            Method::OPTIONS => "OPTIONS",
            Method::TRACE => "TRACE",
            Method::CONNECT => "CONNECT",
            _ => "other",
        })
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }
}

/// Gives every request an id: the caller's `x-request-id` if it is one [`is_kept_request_id`]
/// keeps, else a new UUID v4 (the caller's value is then dropped, neither echoed nor logged), set
/// on the request (where [`HttpMetrics`] reads it) and on the response.
#[derive(Clone, Copy, Default)]
pub struct RequestIdLayer;

impl<S> Layer<S> for RequestIdLayer {
    type Service = RequestId<S>;

    fn layer(&self, inner: S) -> RequestId<S> {
        RequestId { inner }
    }
}

#[derive(Clone)]
pub struct RequestId<S> {
    inner: S,
}

impl<S, B, R> Service<Request<B>> for RequestId<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = RequestIdFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<B>) -> Self::Future {
        let given = request.headers().get(&X_REQUEST_ID);
        let id = match given.filter(|given| is_kept_request_id(given)) {
            Some(given) => given.clone(),
            None => {
                let made = new_request_id();
                request.headers_mut().insert(X_REQUEST_ID, made.clone());
                made
            }
        };
        RequestIdFuture {
            inner: self.inner.call(request),
            id: Some(id),
        }
    }
}

pub fn new_request_id() -> HeaderValue {
    let mut text = uuid::Uuid::encode_buffer();
    let text = uuid::Uuid::new_v4().hyphenated().encode_lower(&mut text);
    HeaderValue::from_str(text).expect("a hyphenated UUID is a valid header value")
}

pin_project! {
    pub struct RequestIdFuture<F> {
        #[pin]
        inner: F,
        id: Option<HeaderValue>,
    }
}

impl<F, R, E> Future for RequestIdFuture<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut response = ready!(this.inner.poll(cx))?;
        if let Some(id) = this.id.take() {
            // A handler that set its own id keeps it.
            response.headers_mut().entry(X_REQUEST_ID).or_insert(id);
        }
        Poll::Ready(Ok(response))
    }
}

/// On every route (`Router::route_layer`, where the matched route template is known): counts
/// and times the request by route template, method and status, and logs each failure once.
///
/// The request span is at debug level: at the default `info` no span is made at all, and the one
/// line that matters, a 5xx's, names the request id itself.
#[derive(Clone, Copy, Default)]
pub struct HttpMetricsLayer;

impl<S> Layer<S> for HttpMetricsLayer {
    type Service = HttpMetrics<S>;

    fn layer(&self, inner: S) -> HttpMetrics<S> {
        HttpMetrics { inner }
    }
}

#[derive(Clone)]
pub struct HttpMetrics<S> {
    inner: S,
}

impl<S, B, R> Service<Request<B>> for HttpMetrics<S>
where
    S: Service<Request<B>, Response = Response<R>>,
{
    type Response = Response<R>;
    type Error = S::Error;
    type Future = HttpMetricsFuture<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let started = Instant::now();
        let request_id = request.headers().get(&X_REQUEST_ID).cloned();
        let span = tracing::debug_span!("request", request_id = id_text(&request_id));
        HttpMetricsFuture {
            route: request.extensions().get::<MatchedPath>().cloned(),
            method: MethodLabel::of(request.method()),
            inner: self.inner.call(request).instrument(span),
            started,
            request_id,
        }
    }
}

/// The request id as log text; `-` if there is none or it is not visible ASCII.
fn id_text(id: &Option<HeaderValue>) -> &str {
    id.as_ref().and_then(|id| id.to_str().ok()).unwrap_or("-")
}

pin_project! {
    pub struct HttpMetricsFuture<F> {
        #[pin]
        inner: Instrumented<F>,
        started: Instant,
        route: Option<MatchedPath>,
        method: MethodLabel,
        request_id: Option<HeaderValue>,
    }
}

impl<F, R, E> Future for HttpMetricsFuture<F>
where
    F: Future<Output = Result<Response<R>, E>>,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let result = ready!(this.inner.poll(cx));
        if let Ok(response) = &result {
            let route = this
                .route
                .as_ref()
                .map_or(super::UNMATCHED, MatchedPath::as_str);
            let status = response.status();
            super::record(*this.method, route, status, this.started.elapsed());
            let request_id = id_text(this.request_id);
            if status.is_server_error() {
                let cause = response.extensions().get::<InternalCause>();
                tracing::error!(
                    request_id,
                    method = this.method.as_str(),
                    route,
                    status = status.as_u16(),
                    cause = cause.map_or("-", |c| c.0.as_str()),
                    "request failed"
                );
            } else if status.is_client_error() {
                tracing::debug!(
                    request_id,
                    method = this.method.as_str(),
                    route,
                    status = status.as_u16(),
                    "request refused"
                );
            }
        }
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn standard_methods_are_labelled_by_name_and_any_other_as_other() {
        for name in [
            "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT",
        ] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(MethodLabel::of(&method).as_str(), name);
        }
        for name in ["FOOBARBAZ", "get", "PROPFIND", "X", &"M".repeat(200)] {
            let method = Method::from_bytes(name.as_bytes()).unwrap();
            assert_eq!(MethodLabel::of(&method).as_str(), "other", "{name}");
        }
    }

    fn kept(id: &[u8]) -> bool {
        is_kept_request_id(&HeaderValue::from_bytes(id).unwrap())
    }

    #[test]
    fn a_short_plain_request_id_is_kept() {
        assert!(kept(b"abc-123"));
        assert!(kept(b"0f8fad5b-d9cb-469f-a165-70867728950e"));
        assert!(kept(
            b"trace:4bf92f3577b34da6a3ce929d0e0e4736.span_00f067aa0ba902b7"
        ));
        assert!(kept(b"x"));
        let safe = b"ABCXYZabcxyz0189._:-";
        let longest: Vec<u8> = safe
            .iter()
            .copied()
            .cycle()
            .take(MAX_REQUEST_ID_LEN)
            .collect();
        assert!(kept(&longest));
    }

    #[test]
    fn a_long_empty_or_unusual_request_id_is_replaced() {
        assert!(!kept(&[b'a'; MAX_REQUEST_ID_LEN + 1]));
        assert!(!kept(&[b'a'; 100 * 1024]));
        assert!(!kept(b""));
        for id in [
            &b"two words"[..],
            b"\"quoted\"",
            b"tab\there",
            "caf\u{e9}".as_bytes(),
            b"\xff\xfe",
            b"a/b",
            b"a=b;c",
            b"{\"json\":1}",
            b"%0A",
        ] {
            assert!(!kept(id), "{}", String::from_utf8_lossy(id));
        }
    }

    /// The request ids the inner service saw on the request, and the one the response carries.
    async fn ids_through_the_layer(given: Option<&[u8]>) -> (Vec<HeaderValue>, HeaderValue) {
        let inner = tower::service_fn(|request: Request<()>| async move {
            let seen: Vec<HeaderValue> = request
                .headers()
                .get_all(&X_REQUEST_ID)
                .iter()
                .cloned()
                .collect();
            Ok::<_, std::convert::Infallible>(Response::new(seen))
        });
        let mut request = Request::new(());
        if let Some(given) = given {
            let value = HeaderValue::from_bytes(given).unwrap();
            request.headers_mut().append(X_REQUEST_ID, value);
        }
        let response = RequestIdLayer.layer(inner).call(request).await.unwrap();
        let echoed = response.headers()[&X_REQUEST_ID].clone();
        (response.into_body(), echoed)
    }

    #[tokio::test]
    async fn a_kept_request_id_is_seen_and_echoed() {
        let (seen, echoed) = ids_through_the_layer(Some(b"abc-123")).await;
        assert_eq!(seen, [HeaderValue::from_static("abc-123")]);
        assert_eq!(echoed, "abc-123");
    }

    #[tokio::test]
    async fn a_replaced_or_missing_request_id_is_a_new_uuid_seen_and_echoed() {
        for given in [None, Some(&b"two words"[..]), Some(&[b'a'; 129][..])] {
            let (seen, echoed) = ids_through_the_layer(given).await;
            assert_eq!(
                seen,
                std::slice::from_ref(&echoed),
                "the caller's value is gone"
            );
            let id = echoed.to_str().unwrap();
            let uuid = uuid::Uuid::parse_str(id).unwrap();
            assert_eq!(uuid.get_version_num(), 4, "{id}");
        }
    }
}
