//! Criterion benches of the storefront on a warm cache, in process (no socket, no HTTP parsing),
//! for a shop with 50 widgets (20 on the home page, 10 videos each) and 500 videos:
//!
//! - `storefront/contextual_widgets_warm`: one signed `location=home` request through the whole
//!   router (request id, trace span, metrics, signature check, cache lookup, JSON assembly), body
//!   collected;
//! - `storefront/signature_verify`: the app-proxy signature check of that query alone;
//!
//! and, to tell where the time of the first goes:
//!
//! - `storefront/contextual_widgets_not_modified`: the same request with a matching
//!   `If-None-Match`, so everything but building the body (a 304);
//! - `storefront/catalog_cache_get`: the shop's snapshot from the cache;
//! - `storefront/router_floor_healthz`: `GET /healthz` through the same router and middleware;
//! - `storefront/compress_page_gzip` and `storefront/compress_page_br`: compressing that page's
//!   answer, which the service does once per page and coding (then every request shares it).
//!
//! `cargo bench --bench storefront` measures; `cargo test --all-targets` runs each once (criterion's
//! test mode). Needs the local Postgres (`source scripts/lib.sh && ensure_stack`).

mod support;

use std::hint::black_box;

use axum::body::{to_bytes, Body};
use axum::http::header::{ETAG, IF_NONE_MATCH};
use axum::http::{Request, StatusCode, Uri};
use chrono::Utc;
use criterion::{BenchmarkGroup, Criterion, Throughput};
use tokio::runtime::Runtime;
use tower::ServiceExt;
use videoapp::app::PublicService;
use videoapp::catalog::domain::ShopDomain;
use videoapp::storefront::caching::{Encoding, Page};
use videoapp::storefront::signature::verify;

use support::BenchApp;

/// The window the service runs with (`VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS` in support).
const MAX_AGE_SECONDS: i64 = 3600;

fn main() {
    support::init_tracing();
    let runtime = Runtime::new().expect("a tokio runtime");
    let app = runtime.block_on(BenchApp::start());
    let mut criterion = Criterion::default().configure_from_args();
    {
        let mut group = criterion.benchmark_group("storefront");
        group.throughput(Throughput::Elements(1));
        bench_contextual_widgets(&mut group, &runtime, &app);
        bench_signature_verify(&mut group, &app);
        bench_parts(&mut group, &runtime, &app);
        bench_compression(&mut group, &runtime, &app);
        group.finish();
    }
    criterion.final_summary();

    let databases = app.databases.clone();
    drop(app);
    // The service's pools and listener go with the runtime; then the databases can be dropped.
    drop(runtime);
    databases.drop_all();
}

type Group<'a> = BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// One request through the router; returns the status, the ETag and the collected body.
async fn send(
    router: &PublicService,
    request: Request<Body>,
) -> (StatusCode, Option<String>, usize) {
    let response = router.clone().oneshot(request).await.unwrap();
    let status = response.status();
    let etag = response
        .headers()
        .get(ETAG)
        .map(|v| v.to_str().unwrap().to_string());
    let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
    (status, etag, black_box(body).len())
}

fn get(uri: &Uri) -> Request<Body> {
    Request::get(uri.clone())
        .body(Body::empty())
        .expect("a GET request builds")
}

fn bench_contextual_widgets(group: &mut Group<'_>, runtime: &Runtime, app: &BenchApp) {
    // Signed once: the service accepts it for an hour, far longer than the run.
    let uri: Uri = app
        .contextual_widgets_uri()
        .parse()
        .expect("a signed URI parses");
    let (status, _, bytes) = runtime.block_on(send(&app.router, get(&uri)));
    assert_eq!(status, StatusCode::OK, "contextual-widgets");
    eprintln!(
        "contextual-widgets (location=home): {bytes} bytes, {} widgets",
        support::WIDGETS_AT_HOME
    );
    group.bench_function("contextual_widgets_warm", |b| {
        b.to_async(runtime).iter(|| send(&app.router, get(&uri)))
    });
}

fn bench_signature_verify(group: &mut Group<'_>, app: &BenchApp) {
    let query = app.signed_query();
    let secret = app.proxy_secret();
    assert!(
        verify(secret, &query, Utc::now(), MAX_AGE_SECONDS).is_ok(),
        "the bench query verifies"
    );
    group.bench_function("signature_verify", |b| {
        b.iter(|| verify(secret, black_box(&query), Utc::now(), MAX_AGE_SECONDS))
    });
}

fn bench_parts(group: &mut Group<'_>, runtime: &Runtime, app: &BenchApp) {
    let uri: Uri = app.contextual_widgets_uri().parse().unwrap();
    let (_, etag, _) = runtime.block_on(send(&app.router, get(&uri)));
    let etag = etag.expect("contextual-widgets sends an ETag");
    let conditional = || {
        Request::get(uri.clone())
            .header(IF_NONE_MATCH, &etag)
            .body(Body::empty())
            .unwrap()
    };
    let (status, _, _) = runtime.block_on(send(&app.router, conditional()));
    assert_eq!(status, StatusCode::NOT_MODIFIED, "If-None-Match");
    group.bench_function("contextual_widgets_not_modified", |b| {
        b.to_async(runtime)
            .iter(|| send(&app.router, conditional()))
    });

    let shop = ShopDomain::parse(support::SHOP).unwrap();
    let cached = runtime.block_on(app.catalog.get(&shop)).unwrap();
    assert!(cached.is_some(), "the shop's snapshot is cached");
    group.bench_function("catalog_cache_get", |b| {
        b.to_async(runtime)
            .iter(|| async { app.catalog.get(black_box(&shop)).await.unwrap() })
    });

    let healthz: Uri = "/healthz".parse().unwrap();
    let (status, _, _) = runtime.block_on(send(&app.router, get(&healthz)));
    assert_eq!(status, StatusCode::OK, "healthz");
    group.bench_function("router_floor_healthz", |b| {
        b.to_async(runtime)
            .iter(|| send(&app.router, get(&healthz)))
    });
}

fn bench_compression(group: &mut Group<'_>, runtime: &Runtime, app: &BenchApp) {
    let uri: Uri = app
        .contextual_widgets_uri()
        .parse()
        .expect("a signed URI parses");
    let page = runtime.block_on(async {
        let response = app.router.clone().oneshot(get(&uri)).await.unwrap();
        to_bytes(response.into_body(), usize::MAX).await.unwrap()
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
            b.to_async(runtime)
                .iter(|| async { Page::new(page.clone()).encoded(encoding).await.0.len() })
        });
    }
}
