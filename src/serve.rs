//! The public port: HTTP/1.1 connections held to [`ConnectionLimits`], so a client that is slow
//! on purpose (a request head sent a byte at a time, a body that trickles, a connection opened and
//! left) is closed or answered instead of holding the service's resources.
//!
//! - A connection is served only with a permit of a semaphore of `max_connections`; while none is
//!   free, no connection is accepted and new ones wait in the kernel's listen backlog.
//! - Each connection is in one of three phases, timed by one watchdog: reading a head (from the
//!   accept, or from the first byte after a response: `header_read_timeout`), idle between
//!   requests (from the last byte sent: `idle_timeout`), or busy with a request (untimed here; its
//!   body has its own deadline). A connection whose phase outlives its timeout is dropped.
//!   hyper's own `header_read_timeout` is not used: it starts whenever hyper begins to wait for a
//!   head, right after each response too, so it would close idle keep-alive connections after
//!   the header timeout and leave no room for a longer idle one.
//! - A request body must arrive within `body_read_timeout` of its head: reading it later fails
//!   with [`BodyReadTimedOut`], which the body readers answer with 408. A tus upload's chunk
//!   (`POST`/`PATCH` under `…/uploads`) has [`UPLOAD_BODY_READ_TIMEOUT`] instead: megabytes over a
//!   phone's uplink take minutes, and what arrived by the deadline is kept.
//! - A request head over [`MAX_URI_BYTES`], [`MAX_HEADERS`] or [`MAX_HEADER_BYTES`] is answered
//!   414 or 431 with the error body before the router sees it.
//! - On shutdown nothing more is accepted, idle connections close, busy ones finish their request
//!   first; [`serve`] returns once every connection is closed.

use std::convert::Infallible;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::header::X_CONTENT_TYPE_OPTIONS;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use futures::future::Either;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use pin_project_lite::pin_project;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tokio::time::{Instant, Sleep};
use tower::ServiceExt;

use crate::config::ConnectionLimits;
use crate::error::ApiError;

/// Serves `service` on `listener` until `shutdown` completes and every connection has closed.
pub async fn serve<S>(
    listener: TcpListener,
    service: S,
    limits: ConnectionLimits,
    shutdown: impl Future<Output = ()> + Send,
) where
    S: tower::Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let permits = Arc::new(Semaphore::new(limits.max_connections as usize));
    let (stopping_tx, stopping) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    loop {
        let next = async {
            let permit = Arc::clone(&permits)
                .acquire_owned()
                .await
                .expect("the semaphore is never closed");
            (permit, accept(&listener).await)
        };
        let (permit, stream) = tokio::select! {
            accepted = next => accepted,
            () = shutdown.as_mut() => break,
        };
        let connection = Connection::new(stream, limits, stopping.clone(), permit);
        tokio::spawn(connection.serve(service.clone()));
    }
    drop(listener);
    let _ = stopping_tx.send(true);
    // Every connection holds a permit until it closes.
    let _all_closed = permits
        .acquire_many(limits.max_connections)
        .await
        .expect("the semaphore is never closed");
}

/// The next connection. Failures that concern one connection are skipped; others (out of file
/// descriptors) are logged and retried after a pause, as hyper's server did.
async fn accept(listener: &TcpListener) -> TcpStream {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => return stream,
            Err(e) if is_connection_error(&e) => {}
            Err(e) => {
                tracing::error!(error = %e, "accept failed");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

fn is_connection_error(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
    )
}

struct Connection {
    stream: TcpStream,
    limits: ConnectionLimits,
    activity: Arc<Activity>,
    stopping: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
}

impl Connection {
    fn new(
        stream: TcpStream,
        limits: ConnectionLimits,
        stopping: watch::Receiver<bool>,
        permit: OwnedSemaphorePermit,
    ) -> Connection {
        Connection {
            stream,
            limits,
            activity: Arc::new(Activity::new()),
            stopping,
            _permit: permit,
        }
    }

    async fn serve<S>(mut self, service: S)
    where
        S: tower::Service<Request, Response = Response, Error = Infallible>
            + Clone
            + Send
            + 'static,
        S::Future: Send,
    {
        let activity = Arc::clone(&self.activity);
        let body_read_timeout = self.limits.body_read_timeout;
        let handler = hyper::service::service_fn(move |request: hyper::Request<Incoming>| {
            let in_flight = InFlight::begin(Arc::clone(&activity));
            let deadline = Instant::now() + body_deadline(&request, body_read_timeout);
            let oversized = oversized_head(&request);
            let request = request.map(|body| Body::new(DeadlineBody::new(body, deadline)));
            let response = match oversized {
                None => Either::Left(service.clone().oneshot(request)),
                Some(refused) => {
                    // Refused before the router's request-id layer: the answer gets its own id.
                    let mut refused = refused.into_response();
                    let id = crate::telemetry::new_request_id();
                    refused
                        .headers_mut()
                        .insert(crate::telemetry::X_REQUEST_ID, id);
                    Either::Right(std::future::ready(Ok(refused)))
                }
            };
            async move {
                let response = no_sniffing(response.await?).await;
                Ok::<_, Infallible>(response.map(|body| Tracked { body, in_flight }))
            }
        });
        let io = TokioIo::new(Watched {
            inner: self.stream,
            activity: Arc::clone(&self.activity),
        });
        let mut conn =
            pin!(hyper::server::conn::http1::Builder::new().serve_connection(io, handler));
        let mut watchdog = Watchdog {
            activity: self.activity,
            limits: self.limits,
            sleep: Box::pin(tokio::time::sleep(self.limits.header_read_timeout)),
        };
        let mut draining = false;
        loop {
            // The connection first: a byte it has just read moves the watchdog's deadline.
            tokio::select! {
                biased;
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "connection failed");
                    }
                    return;
                }
                _ = self.stopping.wait_for(|stopping| *stopping), if !draining => {
                    draining = true;
                    conn.as_mut().graceful_shutdown();
                }
                () = poll_fn(|cx| watchdog.poll_expired(cx)) => {
                    tracing::debug!("closing a connection that sent no request in time");
                    return;
                }
            }
        }
    }
}

/// Marks an answer as being what its `Content-Type` says, on every answer of every port: a
/// browser never sniffs a JSON error, a CSV or a file into something it would run.
pub async fn no_sniffing(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// The longest request target answered; a longer one is 414 `URI_TOO_LONG`. Far above any URL the
/// loader or an analyst builds (a hundred widget ids are 3.7 KiB).
pub const MAX_URI_BYTES: usize = 8 * 1024;
/// The most header fields, and header bytes, answered; more is 431 `HEADERS_TOO_LARGE`.
pub const MAX_HEADERS: usize = 64;
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// Why a request's head is refused before it reaches the router, with our JSON error body.
/// hyper refuses heads past its own limits itself, without a body: a request target over 64 KiB
/// (414), over 100 header fields or a head over its read buffer, about 400 KiB (431); these
/// limits are set below them so that every head a client can reasonably send is answered here.
/// How long an upload's chunk may take to arrive: an 8 MiB chunk at 50 KB/s, a weak phone uplink,
/// with room to spare.
pub const UPLOAD_BODY_READ_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// The time a request's body has: longer for a tus chunk, whose sender is authenticated before
/// its body is read and whose partial body is kept.
fn body_deadline<B>(request: &hyper::Request<B>, body_read_timeout: Duration) -> Duration {
    let uploads_chunk = matches!(
        *request.method(),
        hyper::Method::PATCH | hyper::Method::POST
    ) && request.uri().path().contains("/uploads");
    match uploads_chunk {
        true => body_read_timeout.max(UPLOAD_BODY_READ_TIMEOUT),
        false => body_read_timeout,
    }
}

fn oversized_head<B>(request: &hyper::Request<B>) -> Option<ApiError> {
    let target = request
        .uri()
        .path_and_query()
        .map_or(0, |p| p.as_str().len());
    if target > MAX_URI_BYTES {
        return Some(ApiError::UriTooLong);
    }
    let headers = request.headers();
    let bytes: usize = (headers.iter())
        .map(|(name, value)| name.as_str().len() + value.len())
        .sum();
    (headers.len() > MAX_HEADERS || bytes > MAX_HEADER_BYTES).then_some(ApiError::HeadersTooLarge)
}

/// Milliseconds since a connection was accepted: when its current head began, and when a byte
/// last moved. A connection is served on one task; the atomics only make it `Sync`.
struct Activity {
    accepted: Instant,
    requests_in_flight: AtomicU32,
    /// When the first byte of the next request's head arrived, or [`Activity::NONE`].
    head_started: AtomicU64,
    last_io: AtomicU64,
}

impl Activity {
    const NONE: u64 = u64::MAX;

    fn new() -> Activity {
        // A new connection is reading its first head from the start.
        Activity {
            accepted: Instant::now(),
            requests_in_flight: AtomicU32::new(0),
            head_started: AtomicU64::new(0),
            last_io: AtomicU64::new(0),
        }
    }

    fn millis(&self, at: Instant) -> u64 {
        u64::try_from(at.duration_since(self.accepted).as_millis()).unwrap_or(u64::MAX - 1)
    }

    fn read(&self) {
        let now = self.millis(Instant::now());
        self.last_io.store(now, Relaxed);
        if self.requests_in_flight.load(Relaxed) == 0
            && self.head_started.load(Relaxed) == Self::NONE
        {
            self.head_started.store(now, Relaxed);
        }
    }

    fn wrote(&self) {
        self.last_io.store(self.millis(Instant::now()), Relaxed);
    }

    /// When the connection's current phase runs out; for a busy one, a time to look again.
    fn due(&self, limits: &ConnectionLimits, now: Instant) -> Instant {
        if self.requests_in_flight.load(Relaxed) > 0 {
            return now + limits.idle_timeout;
        }
        let since = |millis| self.accepted + Duration::from_millis(millis);
        match self.head_started.load(Relaxed) {
            Self::NONE => since(self.last_io.load(Relaxed)) + limits.idle_timeout,
            started => since(started) + limits.header_read_timeout,
        }
    }
}

/// A request from its head until its response's last byte is handed to hyper (or it is dropped).
struct InFlight(Arc<Activity>);

impl InFlight {
    fn begin(activity: Arc<Activity>) -> InFlight {
        activity.requests_in_flight.fetch_add(1, Relaxed);
        activity.head_started.store(Activity::NONE, Relaxed);
        InFlight(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.wrote();
        self.0.requests_in_flight.fetch_sub(1, Relaxed);
    }
}

struct Watchdog {
    activity: Arc<Activity>,
    limits: ConnectionLimits,
    sleep: Pin<Box<Sleep>>,
}

impl Watchdog {
    /// Ready once the connection has outlived its phase's timeout. The timer is moved earlier at
    /// once (a head begins) but later only when it fires, so busy connections do not re-arm it on
    /// every poll.
    fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<()> {
        loop {
            let now = Instant::now();
            let due = self.activity.due(&self.limits, now);
            if due <= now {
                return Poll::Ready(());
            }
            if due < self.sleep.deadline() || self.sleep.is_elapsed() {
                self.sleep.as_mut().reset(due);
            }
            ready!(self.sleep.as_mut().poll(cx));
        }
    }
}

pin_project! {
    /// The connection's socket, noting when bytes move.
    struct Watched {
        #[pin]
        inner: TcpStream,
        activity: Arc<Activity>,
    }
}

impl AsyncRead for Watched {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.project();
        let before = buf.filled().len();
        ready!(this.inner.poll_read(cx, buf))?;
        if buf.filled().len() > before {
            this.activity.read();
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Watched {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let written = ready!(this.inner.poll_write(cx, buf))?;
        this.activity.wrote();
        Poll::Ready(Ok(written))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.project();
        let written = ready!(this.inner.poll_write_vectored(cx, bufs))?;
        this.activity.wrote();
        Poll::Ready(Ok(written))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.project().inner.poll_shutdown(cx)
    }
}

/// Reading a request body past its deadline: answered 408 (`ApiError::RequestTimeout`).
#[derive(Debug, thiserror::Error)]
#[error("the request body did not arrive in time")]
pub struct BodyReadTimedOut;

pin_project! {
    /// A request body that fails with [`BodyReadTimedOut`] when it is waited for past its
    /// deadline. What has arrived by then is still read; the timer is armed only once a read has
    /// to wait.
    struct DeadlineBody {
        #[pin]
        inner: Incoming,
        deadline: Instant,
        sleep: Option<Pin<Box<Sleep>>>,
    }
}

impl DeadlineBody {
    fn new(inner: Incoming, deadline: Instant) -> DeadlineBody {
        DeadlineBody {
            inner,
            deadline,
            sleep: None,
        }
    }
}

impl http_body::Body for DeadlineBody {
    type Data = Bytes;
    type Error = axum::BoxError;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.inner.poll_frame(cx) {
            return Poll::Ready(frame.map(|frame| frame.map_err(Into::into)));
        }
        let deadline = *this.deadline;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        ready!(sleep.as_mut().poll(cx));
        Poll::Ready(Some(Err(BodyReadTimedOut.into())))
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    /// Exact when the request has a `Content-Length`: the body readers refuse one above their
    /// limit before reading.
    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

pin_project! {
    /// A response body that keeps its request in flight until hyper has taken all of it.
    struct Tracked<B> {
        #[pin]
        body: B,
        in_flight: InFlight,
    }
}

impl<B: http_body::Body> http_body::Body for Tracked<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
