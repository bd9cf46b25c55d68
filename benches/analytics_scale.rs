//! Analytics at scale: `GET /api/v1/analytics/videos` over 365 days on a realistic data set,
//! beside the same aggregate computed from the raw `events` table.
//!
//! 1. Data: fresh `bench_<uuid>` databases filled by `videoapp generate` (the release binary
//!    `cargo bench` builds) with 10,000,000 events, 4 shops, 1,000 videos and 400 days (seed 1),
//!    about 20 s; nothing is merged by force (the parts of `video_daily` are printed). Dropped at
//!    the end.
//! 2. The service in process against it (rate limit out of the way) and, for the shop with the
//!    most events, the endpoint for the last 365 local days, `limit=100`, for every sort key,
//!    beside the raw aggregate (`countIf`/`sumIf` over `events`, `GROUP BY video_id`) over
//!    ClickHouse's HTTP interface. 5 warm-ups, then rounds that run every step once in a random
//!    order (fixed seed), so that every step sees the same machine; p50 and p95 per step.
//!
//! `cargo bench --bench analytics_scale`; under `cargo test` it says it skipped.
//! `ANALYTICS_SCALE_SAMPLES` sets the rounds (50).

mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Deserialize;
use videoapp::config::Settings;

use support::load::{self, format_latency, setting};
use support::Databases;

const GENERATE: [&str; 10] = [
    "--shops", "4", "--videos", "1000", "--days", "400", "--events", "10000000", "--seed", "1",
];
const RANGE_DAYS: u64 = 365;

/// One shop as `videoapp generate` prints it.
#[derive(Deserialize)]
struct GeneratedShop {
    domain: String,
    timezone: String,
    api_key: String,
}

fn main() -> ExitCode {
    if !load::benching("scale") {
        return ExitCode::SUCCESS;
    }
    support::init_tracing();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, outcome) = runtime.block_on(async {
        let (databases, database_url) = Databases::create().await;
        (databases.clone(), run(&databases, database_url).await)
    });
    drop(runtime);
    databases.drop_all();
    support::exit(outcome)
}

async fn run(databases: &Databases, database_url: String) -> Result<(), String> {
    let client = reqwest::Client::new();
    let ch = async |sql: &str| {
        support::helpers::try_clickhouse_query(&client, &databases.name, sql).await
    };
    let binary = env!("CARGO_BIN_EXE_videoapp");
    let started = Instant::now();
    let output = tokio::process::Command::new(binary)
        .arg("generate")
        .args(GENERATE)
        .env("DATABASE_URL", &database_url)
        .env("CLICKHOUSE_URL", support::helpers::clickhouse_url())
        .env("CLICKHOUSE_DATABASE", &databases.name)
        .stderr(std::process::Stdio::inherit())
        .output()
        .await
        .map_err(|e| format!("{binary}: {e}"))?;
    if !output.status.success() {
        return Err(format!("videoapp generate failed ({})", output.status));
    }
    let took = started.elapsed().as_secs_f64();
    println!("generate {} took {took:.1} s", GENERATE.join(" "));
    let shops: Vec<GeneratedShop> = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("videoapp generate printed no shops: {e}"))?;
    let biggest =
        "SELECT shop_domain FROM events GROUP BY shop_domain ORDER BY count() DESC LIMIT 1";
    let biggest = ch(biggest).await?;
    let shop = shops.into_iter().find(|s| s.domain == biggest);
    let shop = shop.ok_or_else(|| format!("{biggest} has events but is not in the shops file"))?;
    let tz: chrono_tz::Tz =
        (shop.timezone.parse()).map_err(|e| format!("{}: {e}", shop.timezone))?;
    let end = Utc::now().with_timezone(&tz).date_naive();
    let start = end - Days::new(RANGE_DAYS - 1);
    let rows = ch("SELECT count() FROM video_daily").await?;
    let parts = ch(
        "SELECT count() FROM system.parts WHERE active AND database = currentDatabase() \
                    AND table = 'video_daily'",
    );
    let (parts, domain) = (parts.await?, &shop.domain);
    println!("video_daily: {rows} rows in {parts} active parts; measured shop {domain} ({tz}), {start} .. {end}");

    let settings = Settings {
        rate_limit_per_minute: 1_000_000_000,
        ..support::service_settings(database_url, databases)
    };
    let (base_url, _) = support::start_service(settings).await;
    // The per-video aggregate `video_daily` holds, computed from the raw events.
    let raw_sql = format!(
        "SELECT video_id, countIf(event_type = 'impression'), countIf(event_type = 'view'), \
         countIf(event_type = 'click'), countIf(event_type = 'add_to_cart'), \
         countIf(event_type = 'checkout_completed'), \
         sumIf(revenue_e4, event_type = 'checkout_completed') FROM events \
         WHERE shop_domain = '{domain}' AND local_date >= toDate('{start}') \
         AND local_date <= toDate('{end}') GROUP BY video_id"
    );
    // Steps: 0..8 the endpoint by sort key, 8 the raw aggregate.
    let keys = &support::helpers::SORT_KEYS;
    let step = async |i: usize| match keys.get(i) {
        None => ch(&raw_sql).await.map(drop),
        Some(key) => {
            let url = format!(
                "{base_url}/api/v1/analytics/videos?start_date={start}&end_date={end}&limit=100\
                 &sort_by={key}&sort_order=desc"
            );
            match load::answer(client.get(url).bearer_auth(&shop.api_key)).await? {
                (reqwest::StatusCode::OK, _) => Ok(()),
                (status, body) => Err(format!("sort_by={key}: {status}: {body:?}")),
            }
        }
    };
    let (warmup, samples) = (5, setting("ANALYTICS_SCALE_SAMPLES", 50));
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); keys.len() + 1];
    let mut order: Vec<usize> = (0..times.len()).collect();
    let mut rng = StdRng::seed_from_u64(7);
    for round in 0..warmup + samples {
        order.shuffle(&mut rng);
        for &i in &order {
            let started = Instant::now();
            step(i).await?;
            if round >= warmup {
                times[i].push(started.elapsed());
            }
        }
    }

    let percentile = |t: &[Duration], p: f64| -> Duration {
        let mut sorted = t.to_vec();
        sorted.sort();
        sorted[((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
    };
    let (raw50, raw95) = (percentile(&times[8], 50.0), percentile(&times[8], 95.0));
    let (step, p50, p95, ratio) = ("step", "p50", "p95", "raw / step");
    println!("\n  {step:<30} {p50:>9} {p95:>9} {ratio:>14}");
    for (i, t) in times.iter().enumerate() {
        let (p50, p95) = (percentile(t, 50.0), percentile(t, 95.0));
        let name = keys.get(i).map_or("raw aggregate (events)".into(), |k| {
            format!("endpoint sort_by={k}")
        });
        println!(
            "  {name:<30} {:>9} {:>9} {:>6.1}x {:>5.1}x",
            format_latency(p50),
            format_latency(p95),
            raw50.as_secs_f64() / p50.as_secs_f64(),
            raw95.as_secs_f64() / p95.as_secs_f64()
        );
    }
    Ok(())
}
