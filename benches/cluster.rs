//! The service on the local ClickHouse cluster (`VIDEOAPP_TEST_CLUSTER_URLS`) beside the single
//! server (BENCHMARKS.md, "Cluster").

mod support;

use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context};
use chrono::{Days, Utc};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use uuid::Uuid;

use support::catalog::Admin;
use support::helpers::signed;
use support::load::{percentile, setting};
use support::{Databases, Outcome, ServiceProcess, EVENTS, SHOP};

const CLIENTS: u64 = 64;
const PER_REQUEST: usize = 50;
const VIDEOS: usize = 200;
/// An event's kind is one of these, impressions twice as likely.
const EVENT_KINDS: &str = "impression,impression,view,click,add_to_cart,checkout_completed";
const KINDS: [&str; 3] = ["summary", "videos by revenue", "day series"];

/// Per target: each round's acknowledged events/s, events/s into ClickHouse (acknowledged ÷
/// (seconds + drain)) and drain; every latency of each kind of request.
#[derive(Default)]
struct Figures {
    rounds: Vec<[f64; 3]>,
    latencies: [Vec<Duration>; 3],
}

fn main() -> ExitCode {
    if !support::load::benching("cluster") {
        return ExitCode::SUCCESS;
    }
    let targets = [("single server", None), ("cluster 2x2", Some("videoapp"))];
    let mut figures: Vec<Figures> = targets.iter().map(|_| Figures::default()).collect();
    for round in 1..=setting("CLUSTER_BENCH_ROUNDS", 2) {
        for ((name, cluster), figures) in targets.iter().zip(figures.iter_mut()) {
            println!("round {round}: {name}");
            let run = async |databases: &Databases, url: &str| run(databases, url, figures).await;
            let code = support::on_fresh_databases(*cluster, run);
            if code != ExitCode::SUCCESS {
                return code;
            }
        }
    }
    for ((name, _), f) in targets.iter().zip(&figures) {
        let each = |(i, decimals): (usize, usize)| {
            let format = |r: &[f64; 3]| format!("{:.decimals$}", r[i]);
            f.rounds.iter().map(format).collect::<Vec<_>>().join(", ")
        };
        let [acknowledged, stored, drain] = [(0, 0), (1, 0), (2, 2)].map(each);
        println!("{name}: acknowledged events/s {acknowledged}; into ClickHouse, events/s {stored}; drain {drain} s");
        for (kind, latencies) in KINDS.iter().zip(&f.latencies) {
            let [p50, p95] = [50.0, 95.0].map(|p| percentile(latencies, p).as_secs_f64() * 1e3);
            println!("  {kind}: p50 {p50:.1} ms, p95 {p95:.1} ms");
        }
    }
    ExitCode::SUCCESS
}

async fn run(databases: &Databases, url: &str, figures: &mut Figures) -> Outcome {
    let unlimited = [("VIDEOAPP_RATE_LIMIT_PER_MINUTE", "1000000".to_string())];
    let service = ServiceProcess::start_with(databases, url, &unlimited).await?;
    let client = reqwest::Client::new();
    let admin = Admin::new(&service.base_url);
    let videos = (0..VIDEOS).map(|i| {
        json!({ "title": format!("Video {i}"), "status": "PUBLISHED",
                "videoUrl": format!("https://cdn.example.com/{i}.mp4") })
    });
    let videos = admin.create_all("/videos", videos.collect()).await;
    let id = |v: &Value| Some(v["id"].as_str()?.to_string());
    let videos: Vec<String> = videos.iter().filter_map(id).collect();

    let seconds = setting("CLUSTER_BENCH_SECONDS", 10);
    let acknowledged = ingest(&service, &videos, seconds).await?;
    let rate = acknowledged as f64 / seconds as f64;
    let drained = service.drained(Instant::now(), Some(acknowledged));
    let (after, all) = (drained.await?.as_secs_f64(), acknowledged);
    println!("  {rate:.0} acknowledged events/s; all {all} in ClickHouse after {after:.2} s");
    let stored = acknowledged as f64 / (seconds as f64 + after);
    figures.rounds.push([rate, stored, after]);

    let name = json!({ "name": "bench" });
    let key = admin.send(reqwest::Method::POST, "/api-keys", name).await;
    let missing = || format!("no key: {key}");
    let key = key["key"].as_str().with_context(missing)?;
    let today = Utc::now().date_naive();
    for (kind, latencies) in figures.latencies.iter_mut().enumerate() {
        for i in 0..setting("CLUSTER_BENCH_QUERIES", 30) {
            // A range of its own: no answer kept from an earlier request serves it.
            let start = today - Days::new(6 + i + 40 * kind as u64);
            let range = format!("start_date={start}&end_date={today}");
            let path = match kind {
                0 => format!("summary?{range}"),
                1 => format!("videos?{range}&sort_by=revenue&limit=50"),
                _ => format!("timeseries?{range}&interval=day"),
            };
            let url = format!("{}/api/v1/analytics/{path}", service.base_url);
            let started = Instant::now();
            let (status, body) = support::load::answer(client.get(url).bearer_auth(key)).await?;
            latencies.push(started.elapsed());
            let body = String::from_utf8_lossy(&body);
            ensure!(status.is_success(), "{path}: {status}: {body}");
        }
    }
    Ok(())
}

/// A batch of events of every kind, for the shop's videos, over the last six days.
fn batch(rng: &mut StdRng, videos: &[String]) -> Value {
    let kinds: Vec<&str> = EVENT_KINDS.split(',').collect();
    let now = Utc::now();
    let event = |rng: &mut StdRng| {
        let kind = *kinds.choose(rng).unwrap();
        let at = now - chrono::Duration::seconds(rng.gen_range(0..6 * 86_400));
        let mut event = json!({ "eventId": Uuid::from_u128(rng.gen()), "eventType": kind,
                                "videoId": videos.choose(rng).unwrap(), "timestamp": at.to_rfc3339() });
        if kind == "checkout_completed" {
            let revenue = format!("{}.{:02}", rng.gen_range(5..200), rng.gen_range(0..100));
            event["revenue"] = json!(revenue);
            event["currency"] = json!("EUR");
        }
        event
    };
    json!({ "events": (0..PER_REQUEST).map(|_| event(rng)).collect::<Vec<_>>() })
}

/// Posts from [`CLIENTS`] clients for `seconds`; returns how many events were acknowledged.
async fn ingest(service: &ServiceProcess, videos: &[String], seconds: u64) -> Outcome<u64> {
    let client = &reqwest::Client::new();
    let url = format!("{}{EVENTS}?{}", service.base_url, signed(SHOP, &[]));
    let acknowledged = AtomicU64::new(0);
    let until = Instant::now() + Duration::from_secs(seconds);
    let clients = (0..CLIENTS).map(async |c| {
        let mut rng = StdRng::seed_from_u64(c);
        while Instant::now() < until {
            let events = batch(&mut rng, videos);
            let status = client.post(&url).json(&events).send().await?.status();
            let accepted = status == reqwest::StatusCode::ACCEPTED;
            ensure!(accepted, "events answered {status}");
            acknowledged.fetch_add(PER_REQUEST as u64, Ordering::Relaxed);
        }
        anyhow::Ok(())
    });
    futures::future::try_join_all(clients).await?;
    Ok(acknowledged.into_inner())
}
