//! Criterion benches of the storefront, in process (no socket, no HTTP parsing), for a shop with
//! 50 widgets (20 on the home page, 10 videos each) and 500 videos, on a warm cache:
//!
//! - `contextual_widgets_warm`: one signed `location=home` request through the whole router, body
//!   collected; `contextual_widgets_not_modified`: the same with a matching `If-None-Match` (a
//!   304: everything but the body); `router_floor_healthz`: `GET /healthz` through the same
//!   router; `signature_verify`: the app-proxy signature check of that query alone;
//! - `compress_page_gzip`, `compress_page_br`: compressing that page's answer, which the service
//!   does once per page and coding.
//!
//! `cargo bench --bench storefront`; `cargo test --all-targets` runs each once. Needs Postgres.

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
use videoapp::storefront::signature::verify;

/// One request through the router: the status, the ETag and the collected body.
async fn send(router: &PublicService, request: Request<Body>) -> (StatusCode, String, Bytes) {
    let response = router.clone().oneshot(request).await.unwrap();
    let etag = response
        .headers()
        .get(ETAG)
        .map(|v| v.to_str().unwrap().to_string());
    let status = response.status();
    let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, etag.unwrap_or_default(), black_box(body))
}

/// A GET of `uri`, with `If-None-Match` when given.
fn get(uri: &Uri, if_none_match: Option<&str>) -> Request<Body> {
    let request = Request::get(uri.clone());
    let request = match if_none_match {
        Some(etag) => request.header(IF_NONE_MATCH, etag),
        None => request,
    };
    request.body(Body::empty()).unwrap()
}

fn main() {
    support::init_tracing();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let app = runtime.block_on(support::BenchApp::start());
    let router = &app.router;
    // Signed once: the service accepts it for an hour, far longer than the run. Parsed once, as
    // the server's HTTP layer would have parsed it: each request clones it.
    let uri: Uri = app
        .contextual_widgets_uri()
        .parse()
        .expect("a signed URI parses");
    let healthz = Uri::from_static("/healthz");
    let (_, etag, page) = runtime.block_on(send(router, get(&uri, None)));
    let widgets = support::catalog::WIDGETS_AT_HOME;
    eprintln!(
        "contextual-widgets (location=home): {} bytes, {widgets} widgets",
        page.len()
    );
    let requests = [
        ("contextual_widgets_warm", &uri, None, StatusCode::OK),
        (
            "contextual_widgets_not_modified",
            &uri,
            Some(etag.as_str()),
            StatusCode::NOT_MODIFIED,
        ),
        ("router_floor_healthz", &healthz, None, StatusCode::OK),
    ];

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("storefront");
    group.throughput(Throughput::Elements(1));
    for (name, uri, etag, expected) in requests {
        assert_eq!(
            runtime.block_on(send(router, get(uri, etag))).0,
            expected,
            "{name}"
        );
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter(|| send(router, get(uri, etag)))
        });
    }
    let query = app.signed_query();
    let (secret, max_age) = (
        &support::proxy_secret(),
        support::SIGNATURE_MAX_AGE_SECONDS as i64,
    );
    assert!(verify(secret, &query, Utc::now(), max_age).is_ok());
    group.bench_function("signature_verify", |b| {
        b.iter(|| verify(secret, black_box(&query), Utc::now(), max_age))
    });
    for (name, encoding) in [
        ("compress_page_gzip", Encoding::Gzip),
        ("compress_page_br", Encoding::Brotli),
    ] {
        let compressed = runtime
            .block_on(Page::new(page.clone()).encoded(encoding))
            .0;
        eprintln!("{name}: {} bytes → {} bytes", page.len(), compressed.len());
        group.bench_function(name, |b| {
            b.to_async(&runtime)
                .iter(|| async { Page::new(page.clone()).encoded(encoding).await.0.len() })
        });
    }
    group.finish();
    criterion.final_summary();

    let databases = app.databases.clone();
    drop(app);
    // The service's pools go with the runtime; then the databases can be dropped.
    drop(runtime);
    databases.drop_all();
}
