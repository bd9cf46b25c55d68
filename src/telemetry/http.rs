//! The two layers every request passes: [`RequestIdLayer`], outermost (the request id, taken
//! from `x-request-id` or made, and echoed), and [`HttpMetricsLayer`], on each route (metrics by
//! route template and status, one log line per failure, naming the request id).
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

/// Gives every request an id: the caller's `x-request-id` if it sent one, else a new UUID v4,
/// set on the request (where [`HttpMetrics`] reads it) and on the response.
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
        let id = match request.headers().get(&X_REQUEST_ID) {
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

fn new_request_id() -> HeaderValue {
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
            method: request.method().clone(),
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
        method: Method,
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
            let route = this.route.as_ref().map_or("unmatched", MatchedPath::as_str);
            let status = response.status();
            super::record(this.method, route, status, this.started.elapsed());
            let request_id = id_text(this.request_id);
            if status.is_server_error() {
                let cause = response.extensions().get::<InternalCause>();
                tracing::error!(
                    request_id,
                    method = %this.method,
                    route,
                    status = status.as_u16(),
                    cause = cause.map_or("-", |c| c.0.as_str()),
                    "request failed"
                );
            } else if status.is_client_error() {
                tracing::debug!(
                    request_id,
                    method = %this.method,
                    route,
                    status = status.as_u16(),
                    "request refused"
                );
            }
        }
        Poll::Ready(result)
    }
}
