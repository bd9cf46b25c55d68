//! Criterion benches of the storefront in process (no socket) for the bench shop, warm cache
//! (BENCHMARKS.md, "Storefront"). Needs Postgres.

mod support;

use std::hint::black_box;

use axum::body::{to_bytes, Body, Bytes};
use axum::http::header::{ETAG, IF_NONE_MATCH};
use axum::http::{Request, StatusCode, Uri};
use chrono::Utc;
use criterion::{Criterion, Throughput};
use tower::ServiceExt;
use videoapp::app::PublicService;
use videoapp::storefront::caching::{Encoding, Page};
use videoapp::storefront::signature::{verify, ProxySecret};

use support::Databases;

/// A GET of `uri` (with `If-None-Match` when given): the status, the ETag and the body.
async fn send(app: &PublicService, uri: &Uri, etag: Option<&str>) -> (StatusCode, String, Bytes) {
    let request = Request::get(uri.clone());
    let request = etag.map_or(request, |etag| {
        Request::get(uri.clone()).header(IF_NONE_MATCH, etag)
    });
    let request = request.body(Body::empty()).unwrap();
    let response = app.clone().oneshot(request).await.unwrap();
    let etag = (response.headers().get(ETAG)).map(|v| v.to_str().unwrap().to_string());
    let status = response.status();
    let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, etag.unwrap_or_default(), black_box(body))
}

fn main() {
    videoapp::telemetry::init_tracing(videoapp::config::LogFormat::Human);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, database_url) = runtime.block_on(Databases::create(None));
    let app = runtime.block_on(support::BenchApp::start(&databases, &database_url));
    let router = &app.router;
    // Signed once (valid for an hour) and parsed once, as the server's HTTP layer would have.
    let query = support::home_query();
    let uri = format!("{}?{query}", support::CONTEXTUAL_WIDGETS);
    let uri: Uri = uri.parse().expect("a signed URI");
    let healthz = Uri::from_static("/healthz");
    let (_, tag, page) = runtime.block_on(send(router, &uri, None));
    let (bytes, widgets) = (page.len(), support::catalog::WIDGETS_AT_HOME);
    eprintln!("contextual-widgets (location=home): {bytes} bytes, {widgets} widgets");
    let (etag, not_modified) = (Some(tag.as_str()), StatusCode::NOT_MODIFIED);
    let requests = [
        ("contextual_widgets_warm", &uri, None, StatusCode::OK),
        ("contextual_widgets_not_modified", &uri, etag, not_modified),
        ("router_floor_healthz", &healthz, None, StatusCode::OK),
    ];
    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("storefront");
    group.throughput(Throughput::Elements(1));
    for (name, uri, etag, expected) in requests {
        let (status, _, _) = runtime.block_on(send(router, uri, etag));
        assert_eq!(status, expected, "{name}");
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| send(router, uri, etag))
        });
    }
    let secret = &ProxySecret::new(support::helpers::PROXY_SECRET);
    let max_age = support::SIGNATURE_MAX_AGE_SECONDS as i64;
    assert!(verify(secret, &query, Utc::now(), max_age).is_ok());
    group.bench_function("signature_verify", |b| {
        b.iter(|| verify(secret, black_box(&query), Utc::now(), max_age))
    });
    for (name, encoding) in [
        ("compress_page_gzip", Encoding::Gzip),
        ("compress_page_br", Encoding::Brotli),
    ] {
        let encode = async || Page::new(page.clone()).encoded(encoding).await.0.len();
        let encoded = runtime.block_on(encode());
        eprintln!("{name}: {} bytes → {encoded} bytes", page.len());
        group.bench_function(name, |b| b.to_async(&runtime).iter(encode));
    }
    group.finish();
    criterion.final_summary();
    // The service's pools go with the runtime; then the databases can be dropped.
    drop((app, runtime));
    databases.drop_all();
}
