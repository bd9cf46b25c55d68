//! Logs (human or JSON lines), the Prometheus recorder, and the per-request middleware that
//! records HTTP metrics by route template and logs each failure once, inside the request span.

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use axum::extract::{MatchedPath, Request};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::EnvFilter;

use crate::config::LogFormat;
use crate::error::{error_response, InternalCause};

/// Installs the global tracing subscriber. `RUST_LOG` filters; default `info`.
pub fn init_tracing(format: LogFormat) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second call (tests start many apps in one process) keeps the first subscriber.
    let _ = match format {
        LogFormat::Human => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

/// The process-wide Prometheus recorder; installed on first use.
pub fn prometheus() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(
                    Matcher::Suffix("_seconds".to_string()),
                    &[
                        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
                        5.0, 10.0,
                    ],
                )
                .expect("bucket list is not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Fails only if another recorder is installed, in which case ours just stays unused.
            let _ = metrics::set_global_recorder(recorder);
            let upkeep = handle.clone();
            std::thread::spawn(move || loop {
                std::thread::sleep(Duration::from_secs(5));
                upkeep.run_upkeep();
            });
            handle
        })
        .clone()
}

/// Route-layer middleware: HTTP metrics by route template, and one log line per failure.
pub async fn track_http(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "unmatched".to_string());
    let method = req.method().to_string();
    let response = next.run(req).await;
    record(&method, route, response.status(), started.elapsed());
    if response.status().is_server_error() {
        let cause = response
            .extensions()
            .get::<InternalCause>()
            .map(|c| c.0.as_str().to_owned());
        tracing::error!(
            status = response.status().as_u16(),
            cause = cause.as_deref().unwrap_or("-"),
            "request failed"
        );
    } else if response.status().is_client_error() {
        tracing::debug!(status = response.status().as_u16(), "request refused");
    }
    response
}

fn record(method: &str, route: String, status: StatusCode, elapsed: Duration) {
    let labels = [
        ("method", method.to_string()),
        ("route", route),
        ("status", status.as_u16().to_string()),
    ];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels).record(elapsed.as_secs_f64());
}

/// Answer for paths no route matches, counted under one label so raw URIs never become labels.
pub async fn not_found(req: Request) -> impl IntoResponse {
    record(
        req.method().as_str(),
        "unmatched".to_string(),
        StatusCode::NOT_FOUND,
        Duration::ZERO,
    );
    error_response(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!("no route for {}", req.uri().path()),
    )
}
