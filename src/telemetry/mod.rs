//! Logs (human or JSON lines), the Prometheus recorder, and the per-request layers (`http`): the
//! request id, HTTP metrics by route template, one log line per failure.

mod http;

pub use http::{new_request_id, HttpMetricsLayer, RequestId, RequestIdLayer, X_REQUEST_ID};

use http::MethodLabel;

use std::collections::HashMap;
use std::sync::{OnceLock, PoisonError, RwLock};
use std::time::Duration;

use axum::extract::Request;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use metrics::{Counter, Histogram};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::config::LogFormat;
use crate::error::ApiError;

/// Installs the global tracing subscriber. `RUST_LOG` filters by target and level
/// (`info,videoapp::ingest=debug`); default `info` (`error` for the MP4 box reader).
///
/// The filter is `Targets`, not `EnvFilter`: `EnvFilter` supports span-field directives, and for
/// them does bookkeeping on every span enter and exit, which was 2–3% of the CPU of an event
/// request (BENCHMARKS.md, Ingest).
pub fn init_tracing(format: LogFormat) {
    let requested = std::env::var("RUST_LOG").ok();
    let parsed = requested.as_deref().map(str::parse::<Targets>);
    let filter = match &parsed {
        Some(Ok(targets)) => targets.clone(),
        // The box reader warns of every box it does not know in an uploaded file: that is
        // the file's business, not the service's.
        _ => Targets::new()
            .with_default(LevelFilter::INFO)
            .with_target("mp4_atom", LevelFilter::ERROR),
    };
    let registry = tracing_subscriber::registry().with(filter);
    let fmt = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    // A second call (tests start many apps in one process) keeps the first subscriber.
    let _ = match format {
        LogFormat::Human => registry.with(fmt).try_init(),
        LogFormat::Json => registry.with(fmt.json().flatten_event(true)).try_init(),
    };
    if let (Some(Err(e)), Some(requested)) = (parsed, requested) {
        tracing::warn!(error = %e, rust_log = %requested, "RUST_LOG is not a list of target=level directives; logging at info");
    }
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

/// The route label of requests no route matches.
const UNMATCHED: &str = "unmatched";

/// The handles of `http_requests_total` and `http_request_duration_seconds` per route, method
/// and status. Resolving labels through the registry builds and hashes label strings on every
/// request; this finds the handles with one lookup of the route. Under callgrind that saves 3,200
/// instructions per acknowledged event (`ingest_load`: 57.2–57.3 k with `counter!`/`histogram!`
/// on label strings against 54.0–54.3 k, without valgrind's software SHA-256: 5.6%;
/// BENCHMARKS.md, Decisions).
///
/// Bounded as the labels are: the routes are the router's templates and [`UNMATCHED`], the
/// methods the ten [`MethodLabel`]s, the statuses three digits.
#[derive(Default)]
struct HttpHandles {
    by_route: RwLock<HashMap<Box<str>, RouteMetrics>>,
}

type RouteMetrics = Vec<(MethodLabel, u16, Counter, Histogram)>;

impl HttpHandles {
    fn record(&self, method: MethodLabel, route: &str, status: StatusCode, elapsed: Duration) {
        let status = status.as_u16();
        let seconds = elapsed.as_secs_f64();
        let is_this =
            |(m, s, _, _): &&(MethodLabel, u16, Counter, Histogram)| *m == method && *s == status;
        let find = |metrics: &RouteMetrics| {
            metrics
                .iter()
                .find(is_this)
                .map(|(_, _, counter, histogram)| {
                    counter.increment(1);
                    histogram.record(seconds);
                })
        };
        let known = self
            .by_route
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(route)
            .and_then(find);
        if known.is_some() {
            return;
        }
        let labels = [
            ("method", method.as_str().to_string()),
            ("route", route.to_string()),
            ("status", status.to_string()),
        ];
        let counter = metrics::counter!("http_requests_total", &labels);
        let histogram = metrics::histogram!("http_request_duration_seconds", &labels);
        counter.increment(1);
        histogram.record(seconds);
        let mut by_route = self
            .by_route
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let known = by_route.entry(route.into()).or_default();
        if !known.iter().any(|entry| is_this(&entry)) {
            known.push((method, status, counter, histogram));
        }
    }

    /// How many handle pairs are held.
    #[cfg(test)]
    fn len(&self) -> usize {
        let by_route = self.by_route.read().unwrap_or_else(PoisonError::into_inner);
        by_route.values().map(Vec::len).sum()
    }
}

pub(crate) fn record(method: MethodLabel, route: &str, status: StatusCode, elapsed: Duration) {
    static HANDLES: OnceLock<HttpHandles> = OnceLock::new();
    HANDLES
        .get_or_init(Default::default)
        .record(method, route, status, elapsed);
}

/// Answer for paths no route matches, counted under one route label so raw URIs never become
/// labels.
pub async fn not_found(req: Request) -> impl IntoResponse {
    record(
        MethodLabel::of(req.method()),
        UNMATCHED,
        StatusCode::NOT_FOUND,
        Duration::ZERO,
    );
    ApiError::NoRoute(req.uri().path().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Method;

    #[test]
    fn made_up_methods_add_no_handles() {
        let handles = HttpHandles::default();
        let elapsed = Duration::from_millis(1);
        let once = |method: &str, route: &str| {
            let method = MethodLabel::of(&Method::from_bytes(method.as_bytes()).unwrap());
            handles.record(method, route, StatusCode::METHOD_NOT_ALLOWED, elapsed);
        };
        once("GET", "/healthz");
        once("FIRST", "/healthz");
        once("FIRST", UNMATCHED);
        let warm = handles.len();
        assert_eq!(warm, 3);
        for n in 0..1_000 {
            once(&format!("M{n}"), "/healthz");
            once(&format!("M{n}"), UNMATCHED);
        }
        assert_eq!(handles.len(), warm);
    }
}
