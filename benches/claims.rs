//! The shipper's Postgres claims of one full batch whose client ids are all new, all taken by an
//! earlier batch, or made by the service (BENCHMARKS.md, "Counting each event once").

mod support;

use std::time::Duration;

use chrono::NaiveDate;
use criterion::{BatchSize, Criterion, Throughput};
use tokio::runtime::Runtime;
use uuid::Uuid;
use videoapp::ingest::claims::Claims;
use videoapp::ingest::event::{EventType, SpoolEvent};

use support::Databases;

/// A full batch, as the shipper sends it (`VIDEOAPP_BATCH_MAX_ROWS`).
const N: usize = 25_000;

type Batch<'a> = dyn Fn() -> Vec<SpoolEvent> + 'a;

fn batch(client_event_id: bool) -> Vec<SpoolEvent> {
    let event = || SpoolEvent {
        event_id: Uuid::new_v4(),
        client_event_id,
        shop: "bench.myshopify.com".into(),
        local_date: NaiveDate::from_ymd_opt(2026, 11, 23).expect("a date"),
        event_time: 1_764_000_000,
        received_at: 1_764_000_000,
        timestamp_replaced: false,
        event_type: EventType::Impression,
        attribution: None,
        video_id: Uuid::new_v4().to_string(),
        widget_id: Uuid::new_v4().to_string(),
        session_id: Uuid::new_v4().to_string(),
        customer_id: String::new(),
        product_id: String::new(),
        order_id: String::new(),
        revenue_e4: 0,
        currency: String::new(),
        product_ids: Vec::new(),
        placement: None,
        device: None,
        country: None,
        source: None,
        watched_ms: 0,
        max_percent: 0,
        group: None,
    };
    (0..N).map(|_| event()).collect()
}

fn main() {
    videoapp::telemetry::init_tracing(videoapp::config::LogFormat::Human);
    let runtime = Runtime::new().expect("a tokio runtime");
    let (databases, database_url) = runtime.block_on(Databases::create(None));
    let claims = runtime.block_on(async {
        let pool = videoapp::db::connect(&database_url).await;
        let pool = pool.unwrap_or_else(|e| support::fail(format!("Postgres: {e}")));
        let migrated = videoapp::db::migrate(&pool).await;
        migrated.unwrap_or_else(|e| support::fail(format!("migrations: {e}")));
        pool.close().await;
        Claims::connect_lazy(&database_url).expect("a database URL")
    });
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .configure_from_args();
    let mut group = criterion.benchmark_group("claims");
    group.throughput(Throughput::Elements(N as u64));
    let seen = batch(true);
    let claimed = claims.counted(Uuid::now_v7(), seen.clone(), false);
    runtime.block_on(claimed).unwrap();
    // Each case: the batch, and how many of its events count.
    let cases: [(&str, &Batch, usize); 3] = [
        ("new_ids_25000", &|| batch(true), N),
        ("repeated_ids_25000", &|| seen.clone(), 0),
        ("no_client_ids_25000", &|| batch(false), N),
    ];
    for (name, events, counting) in cases {
        group.bench_function(name, |b| {
            b.to_async(&runtime).iter_batched(
                events,
                |events| async {
                    let (counted, _) = claims.counted(Uuid::now_v7(), events, false).await.unwrap();
                    assert_eq!(counted.len(), counting);
                },
                BatchSize::PerIteration,
            )
        });
    }
    group.finish();
    criterion.final_summary();
    drop((claims, runtime));
    databases.drop_all();
}
