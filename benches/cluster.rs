//! The service on the local ClickHouse cluster (scripts/cluster: 2 shards × 2 replicas and
//! ZooKeeper, on this one machine) beside the single server, in one run: rounds alternate
//! between them, each on fresh databases. Per target:
//!
//! - ingest: `videoapp serve` as its own process; 64 clients post batches of 50 events (five
//!   kinds, over the last six days) for the measured seconds; acknowledged events per second, and
//!   the drain until ClickHouse holds exactly the acknowledged events;
//! - analytics on what was ingested: summary, videos by revenue and the day series, each asked
//!   for ranges nobody asked before (so ClickHouse computes every answer), p50 and p95.
//!
//! Settings: `CLUSTER_BENCH_SECONDS` (10), `CLUSTER_BENCH_ROUNDS` (2), `CLUSTER_BENCH_QUERIES`
//! (30 per kind), `VIDEOAPP_TEST_CLUSTER_URLS` (the nodes, as for the tests).

mod support;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use chrono::{Days, Utc};
use futures::StreamExt;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use uuid::Uuid;

use support::helpers::{cluster_urls, signed, ADMIN_TOKEN};
use support::load::setting;
use support::{ClickHouseTarget, Databases, ServiceProcess, EVENTS, SHOP};

const CLIENTS: usize = 64;
const PER_REQUEST: usize = 50;
const VIDEOS: usize = 200;
const DRAIN_LIMIT: Duration = Duration::from_secs(300);

struct Target {
    name: &'static str,
    clickhouse: ClickHouseTarget,
}

#[derive(Default)]
struct Figures {
    events_per_second: Vec<f64>,
    drain: Vec<Duration>,
    /// Acknowledged events ÷ (posting seconds + drain): what ClickHouse took in.
    stored_per_second: Vec<f64>,
    /// Per kind of analytics request, every latency of every round.
    latencies: [Vec<Duration>; 3],
}

const KINDS: [&str; 3] = ["summary", "videos by revenue", "day series"];

fn main() -> ExitCode {
    if !support::load::benching("cluster") {
        return ExitCode::SUCCESS;
    }
    let targets = [
        Target {
            name: "single server",
            clickhouse: ClickHouseTarget::single(),
        },
        Target {
            name: "cluster 2x2",
            clickhouse: ClickHouseTarget {
                url: cluster_urls().swap_remove(0),
                cluster: Some("videoapp".into()),
            },
        },
    ];
    let rounds = setting("CLUSTER_BENCH_ROUNDS", 2);
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let mut figures: Vec<Figures> = targets.iter().map(|_| Figures::default()).collect();
    for round in 1..=rounds {
        for (target, figures) in targets.iter().zip(figures.iter_mut()) {
            println!("round {round}: {}", target.name);
            let (databases, outcome) = runtime.block_on(async {
                let (databases, url) = Databases::create_on(target.clickhouse.clone()).await;
                let outcome = run(&databases, &url, figures).await;
                (databases, outcome)
            });
            databases.drop_all();
            if let Err(e) = outcome {
                return support::exit(Err(e));
            }
        }
    }
    report(&targets, &figures);
    ExitCode::SUCCESS
}

async fn run(databases: &Databases, url: &str, figures: &mut Figures) -> Result<(), String> {
    // Analytics asked as often as the run needs; events as old as six days kept as sent.
    let unlimited = [("VIDEOAPP_RATE_LIMIT_PER_MINUTE", "1000000".to_string())];
    let service = ServiceProcess::start_with(databases, url, &unlimited).await?;
    let client = reqwest::Client::new();
    let videos = create_videos(&client, &service.base_url).await?;

    let seconds = setting("CLUSTER_BENCH_SECONDS", 10);
    let acknowledged = ingest(&client, &service, &videos, seconds).await?;
    let rate = acknowledged as f64 / seconds as f64;
    let drained = drain(&client, databases, acknowledged, Instant::now()).await?;
    println!(
        "  ingest: {rate:.0} acknowledged events/s; all {acknowledged} in ClickHouse after {:.2} s",
        drained.as_secs_f64()
    );
    figures.events_per_second.push(rate);
    figures.drain.push(drained);
    let stored = acknowledged as f64 / (seconds as f64 + drained.as_secs_f64());
    figures.stored_per_second.push(stored);

    let key = api_key(&client, &service.base_url).await?;
    let queries = setting("CLUSTER_BENCH_QUERIES", 30);
    let today = Utc::now().date_naive();
    for (kind, latencies) in figures.latencies.iter_mut().enumerate() {
        for i in 0..queries {
            // A range of its own: no answer kept from an earlier request serves it.
            let start = today - Days::new(6 + i + 40 * kind as u64);
            let range = format!("start_date={start}&end_date={today}");
            let path = match kind {
                0 => format!("/api/v1/analytics/summary?{range}"),
                1 => format!("/api/v1/analytics/videos?{range}&sort_by=revenue&limit=50"),
                _ => format!("/api/v1/analytics/timeseries?{range}&interval=day"),
            };
            let started = Instant::now();
            let response = client
                .get(format!("{}{path}", service.base_url))
                .bearer_auth(&key)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            let status = response.status();
            let body = response.bytes().await.map_err(|e| e.to_string())?;
            latencies.push(started.elapsed());
            if !status.is_success() {
                return Err(format!(
                    "{path}: {status}: {}",
                    String::from_utf8_lossy(&body)
                ));
            }
        }
    }
    Ok(())
}

async fn create_videos(client: &reqwest::Client, base: &str) -> Result<Vec<String>, String> {
    let url = format!("{base}/admin/v1/shops/{SHOP}/videos");
    let created = futures::stream::iter(0..VIDEOS).map(|i| {
        let body = json!({ "title": format!("Video {i}"),
                           "videoUrl": format!("https://cdn.example.com/{i}.mp4"),
                           "status": "PUBLISHED" });
        let request = client.post(&url).bearer_auth(ADMIN_TOKEN).json(&body);
        async move {
            let response = request.send().await.map_err(|e| e.to_string())?;
            let video: Value = response.json().await.map_err(|e| e.to_string())?;
            video["id"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("no video created: {video}"))
        }
    });
    created
        .buffered(8)
        .collect::<Vec<_>>()
        .await
        .into_iter()
        .collect()
}

async fn api_key(client: &reqwest::Client, base: &str) -> Result<String, String> {
    let url = format!("{base}/admin/v1/shops/{SHOP}/api-keys");
    let request = client.post(url).bearer_auth(ADMIN_TOKEN);
    let response = request.json(&json!({ "name": "bench" })).send().await;
    let key: Value = response
        .map_err(|e| e.to_string())?
        .json()
        .await
        .map_err(|e| e.to_string())?;
    key["key"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("no key: {key}"))
}

/// A batch of events of every kind, for the shop's videos, over the last six days.
fn batch(rng: &mut StdRng, videos: &[String]) -> Value {
    let kinds = [
        "impression",
        "impression",
        "view",
        "click",
        "add_to_cart",
        "checkout_completed",
    ];
    let now = Utc::now();
    let events: Vec<Value> = (0..PER_REQUEST)
        .map(|_| {
            let kind = *kinds.choose(rng).unwrap();
            let at = now - chrono::Duration::seconds(rng.gen_range(0..6 * 86_400));
            let mut event = json!({
                "eventId": Uuid::from_u128(rng.gen()),
                "eventType": kind,
                "videoId": videos.choose(rng).unwrap(),
                "timestamp": at.to_rfc3339(),
            });
            if kind == "checkout_completed" {
                event["revenue"] = json!(format!(
                    "{}.{:02}",
                    rng.gen_range(5..200),
                    rng.gen_range(0..100)
                ));
                event["currency"] = json!("EUR");
            }
            event
        })
        .collect();
    json!({ "events": events })
}

/// Posts from [`CLIENTS`] clients for `seconds`; returns how many events were acknowledged.
async fn ingest(
    client: &reqwest::Client,
    service: &ServiceProcess,
    videos: &[String],
    seconds: u64,
) -> Result<u64, String> {
    let url = format!("{}{EVENTS}?{}", service.base_url, signed(SHOP, &[]));
    let acknowledged = AtomicU64::new(0);
    let until = Instant::now() + Duration::from_secs(seconds);
    let clients = (0..CLIENTS).map(|c| {
        let (url, acknowledged) = (&url, &acknowledged);
        async move {
            let mut rng = StdRng::seed_from_u64(c as u64);
            while Instant::now() < until {
                let body = batch(&mut rng, videos);
                let response = client.post(url).json(&body).send().await;
                let status = response.map_err(|e| e.to_string())?.status();
                if status != reqwest::StatusCode::ACCEPTED {
                    return Err(format!("events answered {status}"));
                }
                acknowledged.fetch_add(PER_REQUEST as u64, Ordering::Relaxed);
            }
            Ok::<(), String>(())
        }
    });
    futures::future::try_join_all(clients).await?;
    Ok(acknowledged.into_inner())
}

/// How long until ClickHouse holds exactly `expected` events (never more).
async fn drain(
    client: &reqwest::Client,
    databases: &Databases,
    expected: u64,
    since: Instant,
) -> Result<Duration, String> {
    let sql = format!("SELECT count() FROM {}.events", databases.name);
    loop {
        let response = client
            .post(&databases.clickhouse.url)
            .body(sql.clone())
            .send();
        let text = response.await.map_err(|e| e.to_string())?.text().await;
        let held: u64 = text.map_err(|e| e.to_string())?.trim().parse().unwrap_or(0);
        if held > expected {
            return Err(format!(
                "ClickHouse holds {held} events, {expected} acknowledged"
            ));
        }
        if held == expected {
            return Ok(since.elapsed());
        }
        if since.elapsed() > DRAIN_LIMIT {
            return Err(format!("{held} of {expected} events after {DRAIN_LIMIT:?}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn percentile(values: &[Duration], p: f64) -> f64 {
    let mut ms: Vec<f64> = values.iter().map(|d| d.as_secs_f64() * 1e3).collect();
    ms.sort_by(f64::total_cmp);
    let rank = ((p * ms.len() as f64).ceil() as usize).clamp(1, ms.len());
    ms[rank - 1]
}

fn report(targets: &[Target], figures: &[Figures]) {
    println!(
        "\n| | {} |",
        targets
            .iter()
            .map(|t| t.name)
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(targets.len()));
    let row = |label: &str, cell: &dyn Fn(&Figures) -> String| {
        let cells: Vec<String> = figures.iter().map(cell).collect();
        println!("| {label} | {} |", cells.join(" | "));
    };
    row("acknowledged events/s, each round", &|f| {
        let rates: Vec<String> = f
            .events_per_second
            .iter()
            .map(|r| format!("{r:.0}"))
            .collect();
        rates.join(", ")
    });
    row("into ClickHouse, events/s, each round", &|f| {
        let rates: Vec<String> = f
            .stored_per_second
            .iter()
            .map(|r| format!("{r:.0}"))
            .collect();
        rates.join(", ")
    });
    row("drain after the last post", &|f| {
        let drains: Vec<String> = f
            .drain
            .iter()
            .map(|d| format!("{:.2} s", d.as_secs_f64()))
            .collect();
        drains.join(", ")
    });
    for (kind, name) in KINDS.iter().enumerate() {
        row(&format!("{name}, p50 / p95"), &|f| {
            let l = &f.latencies[kind];
            format!("{:.1} / {:.1} ms", percentile(l, 0.5), percentile(l, 0.95))
        });
    }
}
