//! What counting each event once costs the shipper (README, "How events flow"): the Postgres
//! claims of one spool batch before it goes to ClickHouse, for a batch as large as the shipper
//! sends (`VIDEOAPP_BATCH_MAX_ROWS`, 25,000) and a small one.
//!
//! - `claims/new_ids_<n>`: n events with client ids never seen (the common case: every id is
//!   claimed);
//! - `claims/repeated_ids_<n>`: the same n events again from another batch (every id is found
//!   taken, nothing is claimed);
//! - `claims/no_client_ids_<n>`: n events whose ids the service made (no claim at all).
//!
//! `cargo bench --bench claims` measures; `cargo test --all-targets` runs each once. Needs the
//! local Postgres (`source scripts/lib.sh && ensure_stack`).

mod support;

use std::time::Duration;

use chrono::NaiveDate;
use criterion::{BatchSize, Criterion, Throughput};
use tokio::runtime::Runtime;
use uuid::Uuid;
use videoapp::ingest::claims::Claims;
use videoapp::ingest::event::{EventType, SpoolEvent};

use support::Databases;

fn event(client_event_id: bool) -> SpoolEvent {
    SpoolEvent {
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
    }
}

fn batch(n: usize, client_event_id: bool) -> Vec<SpoolEvent> {
    (0..n).map(|_| event(client_event_id)).collect()
}

fn main() {
    support::init_tracing();
    let runtime = Runtime::new().expect("a tokio runtime");
    let (databases, database_url) = runtime.block_on(Databases::create());
    let claims = runtime.block_on(async {
        let pool = videoapp::db::connect(&database_url)
            .await
            .unwrap_or_else(|e| support::fail(format!("Postgres: {e}")));
        videoapp::db::migrate(&pool)
            .await
            .unwrap_or_else(|e| support::fail(format!("migrations: {e}")));
        pool.close().await;
        Claims::connect_lazy(&database_url).expect("a database URL")
    });
    let mut criterion = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(20))
        .configure_from_args();
    {
        let mut group = criterion.benchmark_group("claims");
        for n in [25_000, 100] {
            group.throughput(Throughput::Elements(n as u64));
            group.bench_function(format!("new_ids_{n}"), |b| {
                b.to_async(&runtime).iter_batched(
                    || batch(n, true),
                    |events| async {
                        let (counted, _) =
                            claims.counted(Uuid::now_v7(), events, false).await.unwrap();
                        assert_eq!(counted.len(), n);
                    },
                    BatchSize::PerIteration,
                )
            });
            let seen = batch(n, true);
            runtime
                .block_on(claims.counted(Uuid::now_v7(), seen.clone(), false))
                .unwrap();
            group.bench_function(format!("repeated_ids_{n}"), |b| {
                b.to_async(&runtime).iter_batched(
                    || seen.clone(),
                    |events| async {
                        let (counted, _) =
                            claims.counted(Uuid::now_v7(), events, false).await.unwrap();
                        assert!(counted.is_empty());
                    },
                    BatchSize::PerIteration,
                )
            });
            group.bench_function(format!("no_client_ids_{n}"), |b| {
                b.to_async(&runtime).iter_batched(
                    || batch(n, false),
                    |events| async {
                        let (counted, _) =
                            claims.counted(Uuid::now_v7(), events, false).await.unwrap();
                        assert_eq!(counted.len(), n);
                    },
                    BatchSize::PerIteration,
                )
            });
        }
        group.finish();
    }
    criterion.final_summary();
    drop(claims);
    drop(runtime);
    databases.drop_all();
}
