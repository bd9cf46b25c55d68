//! The analytics scale bench (BENCHMARKS.md, "Analytics at scale"): the videos endpoint over 365
//! days on a realistic data set, beside the same aggregate computed from the raw `events` table,
//! in one run.
//!
//! 1. Data: a dedicated Postgres database and ClickHouse database (`scale_bench`), filled once by
//!    `videoapp generate` (the `videoapp` binary that `cargo bench` builds: the bench profile,
//!    which inherits `release`) with 10,000,000 events, 1,000 videos, 400 days and 4 shops. Later
//!    runs reuse it when the saved plan, the shops file (`target/scale-bench/shops.json`), the
//!    shops in Postgres and the row count of `events` all match and the data ends at most 7 days
//!    ago; `--regenerate` (or `ANALYTICS_SCALE_REGENERATE=1`) drops and regenerates it. The
//!    tables are measured as they are: nothing is merged by force unless
//!    `ANALYTICS_SCALE_OPTIMIZE=1`; rows, active parts and running merges are reported.
//! 2. The real service in process (`Application::build`, rate limit raised out of the way), and
//!    for the shop with the most events, `GET /api/v1/analytics/videos` for the last 365 local
//!    days, `limit=100`, `sort_order=desc`, for every sort key.
//! 3. On the same ClickHouse HTTP interface the service uses (its `Warehouse` client): the raw
//!    aggregate (`countIf`/`sumIf` over `events`, `GROUP BY video_id`), the view query alone (the
//!    service's own `video_totals`, sql/20), and, for the breakdown, the handler's Postgres
//!    catalog reads alone and the serialization of one answer. Raw and view must agree on every
//!    video, and every endpoint answer must have the order and the numbers the raw table gives;
//!    any difference fails the run.
//!
//! Timed steps start once no other load run is on the machine, dirty pages are written and no
//! merge is running. They are interleaved: warm-ups, then N rounds, each running every step once
//! in a random order (fixed seed), so that all steps see the same machine.
//!
//! `cargo bench --bench analytics_scale [-- --regenerate]`. Without `--bench` (so under
//! `cargo test`) it only says it skipped. Settings: `ANALYTICS_SCALE_SAMPLES` (50),
//! `ANALYTICS_SCALE_WARMUP` (5), `ANALYTICS_SCALE_EVENTS` (10000000), `ANALYTICS_SCALE_DATABASE`
//! (`scale_bench`), `ANALYTICS_SCALE_WAIT_SECONDS` (1800: how long to wait for other load runs
//! to finish), `ANALYTICS_SCALE_OPTIMIZE=1` (`OPTIMIZE TABLE video_daily FINAL` before
//! measuring; it stays merged for later runs).

mod support;

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::{ExitCode, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use chrono::{DateTime, Days, Utc};
use clickhouse::Row;
use futures::future::LocalBoxFuture;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;
use videoapp::analytics::dates::DateRange;
use videoapp::analytics::queries::{self, Totals};
use videoapp::catalog::domain::ShopDomain;
use videoapp::catalog::{shops, videos};
use videoapp::config::{ClickHouseConfig, Settings};
use videoapp::warehouse::Warehouse;

use support::{CpuTicks, Databases, TICKS_PER_SECOND};

const SORT_KEYS: [&str; 8] = [
    "views",
    "clicks",
    "impressions",
    "add_to_cart",
    "orders",
    "revenue",
    "title",
    "created_at",
];
/// Days in the measured range, ending today in the shop's timezone.
const RANGE_DAYS: u64 = 365;
const LIMIT: usize = 100;
/// The targets.
const TARGET_P95: Duration = Duration::from_millis(100);
const TARGET_RATIO: f64 = 20.0;
/// Processes whose CPU is part of the measured work, not a disturbance.
const DATABASE_PROCESSES: [&str; 2] = ["clickhouse", "postgres"];
/// CPU of anything else (or steal) above this many cores marks the timed steps as disturbed.
const FOREIGN_CPU_LIMIT: f64 = 0.15;
/// Saved data whose last day is older than this is generated again, so that the range stays
/// (nearly) full.
const MAX_STALE_DAYS: i64 = 7;
/// How long to wait for the disks and ClickHouse's merges to go quiet before timing.
const SETTLE_LIMIT: Duration = Duration::from_secs(180);

/// The same per-video aggregate as `video_daily` holds, computed from the raw events.
const RAW_SQL: &str = "SELECT video_id, \
    countIf(event_type = 'impression'), \
    countIf(event_type = 'view'), \
    countIf(event_type = 'click'), \
    countIf(event_type = 'add_to_cart'), \
    countIf(event_type = 'checkout_completed'), \
    sumIf(revenue_e4, event_type = 'checkout_completed') \
    FROM events \
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?) \
    GROUP BY video_id";

fn main() -> ExitCode {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("skipped: scale run is for cargo bench");
        return ExitCode::SUCCESS;
    }
    let options = match Options::from_env() {
        Ok(options) => options,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    support::init_tracing();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let outcome = runtime.block_on(run(&options));
    drop(runtime);
    let _ = std::fs::remove_dir_all(&options.spool_dir);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Options {
    samples: usize,
    warmup: usize,
    regenerate: bool,
    optimize: bool,
    wait: Duration,
    plan: Plan,
    database: String,
    data_dir: PathBuf,
    spool_dir: PathBuf,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, Deserialize)]
struct Plan {
    events: u64,
    shops: usize,
    videos: usize,
    days: u64,
    seed: u64,
}

impl Options {
    fn from_env() -> Result<Options, String> {
        let read = |name: &str, default: u64| -> Result<u64, String> {
            match std::env::var(name) {
                Ok(raw) => raw
                    .trim()
                    .parse::<u64>()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| format!("{name}={raw} is not a positive whole number")),
                Err(_) => Ok(default),
            }
        };
        let flag = |name: &str| std::env::var(name).is_ok_and(|v| v == "1");
        let database =
            std::env::var("ANALYTICS_SCALE_DATABASE").unwrap_or_else(|_| "scale_bench".into());
        if database.is_empty()
            || !database
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        {
            return Err(format!(
                "ANALYTICS_SCALE_DATABASE={database}: use lowercase letters, digits and _"
            ));
        }
        let target_dir = std::env::var_os("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target"));
        Ok(Options {
            samples: read("ANALYTICS_SCALE_SAMPLES", 50)? as usize,
            warmup: read("ANALYTICS_SCALE_WARMUP", 5)? as usize,
            regenerate: flag("ANALYTICS_SCALE_REGENERATE")
                || std::env::args().any(|a| a == "--regenerate"),
            optimize: flag("ANALYTICS_SCALE_OPTIMIZE"),
            wait: Duration::from_secs(read("ANALYTICS_SCALE_WAIT_SECONDS", 1800)?),
            plan: Plan {
                events: read("ANALYTICS_SCALE_EVENTS", 10_000_000)?,
                shops: 4,
                videos: 1000,
                days: 400,
                seed: 1,
            },
            data_dir: target_dir.join(database.replace('_', "-")),
            spool_dir: std::env::temp_dir()
                .join(format!("videoapp-{database}-{}", Uuid::new_v4().simple())),
            database,
        })
    }
}

/// One shop as `videoapp generate` prints it.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
struct GeneratedShop {
    domain: String,
    timezone: String,
    api_key: String,
    videos: usize,
}

/// What generation left beside the data: the plan, when and how long.
#[derive(Debug, Clone, serde::Serialize, Deserialize)]
struct Generation {
    plan: Plan,
    finished_at: DateTime<Utc>,
    seconds: f64,
    /// Other load runs seen while it ran.
    disturbed_by: Vec<String>,
    /// The generator's last progress line (its own insert rate).
    #[serde(default)]
    last_progress: Option<String>,
}

async fn run(options: &Options) -> Result<(), String> {
    let databases = Databases {
        postgres_admin_url: support::postgres_admin_url(),
        postgres: options.database.clone(),
        clickhouse_url: support::clickhouse_url(),
        clickhouse: options.database.clone(),
        spool_dir: options.spool_dir.clone(),
    };
    let monitor = Monitor::start();
    let (generation, generated_shops) = prepare_data(options, &databases, &monitor).await?;
    let database_url = support::database_url(&databases.postgres_admin_url, &databases.postgres);
    let warehouse = Warehouse::new(&ClickHouseConfig {
        url: databases.clickhouse_url.clone(),
        database: databases.clickhouse.clone(),
        user: "default".into(),
        password: Default::default(),
    });
    let db = &databases.clickhouse;

    if options.optimize {
        let started = Instant::now();
        ch(&format!("OPTIMIZE TABLE {db}.video_daily FINAL")).await?;
        println!(
            "OPTIMIZE TABLE video_daily FINAL took {:.1} s",
            started.elapsed().as_secs_f64()
        );
    }

    // The data set as it is now.
    let state_before = TableState::read(&databases).await?;
    let per_shop = ch(&format!(
        "SELECT shop_domain, count() FROM {db}.events GROUP BY shop_domain ORDER BY count() DESC, shop_domain"
    ))
    .await?;
    let biggest = per_shop
        .lines()
        .next()
        .and_then(|l| l.split('\t').next())
        .ok_or("the events table is empty")?
        .to_string();
    let shop = generated_shops
        .iter()
        .find(|s| s.domain == biggest)
        .ok_or_else(|| format!("{biggest} has events but is not in the shops file"))?
        .clone();
    let domain = ShopDomain::parse(&shop.domain).map_err(|e| format!("{}: {e:?}", shop.domain))?;

    // The service, and a pool of our own for the catalog reads alone.
    let settings = Settings {
        rate_limit_per_minute: 1_000_000_000,
        ..support::service_settings(
            database_url.clone(),
            &databases,
            &format!("scale-bench-admin-{}", Uuid::new_v4().simple()),
            &format!("scale-bench-secret-{}", Uuid::new_v4().simple()),
        )
    };
    let service = support::start_service(settings).await;
    let pool = videoapp::db::connect(&database_url)
        .await
        .map_err(|e| format!("Postgres {}: {e}", databases.postgres))?;
    let tz = shops::get(&pool, &domain)
        .await
        .map_err(|e| format!("shop {domain}: {e}"))?
        .timezone
        .tz();
    let today = Utc::now().with_timezone(&tz).date_naive();
    let range = DateRange {
        start: today - Days::new(RANGE_DAYS - 1),
        end: today,
    };
    let covered: u64 = ch(&format!(
        "SELECT uniqExact(local_date) FROM {db}.events WHERE shop_domain = '{}' \
         AND local_date >= toDate('{}') AND local_date <= toDate('{}')",
        shop.domain, range.start, range.end
    ))
    .await?
    .trim()
    .parse()
    .map_err(|e| format!("days with data: {e}"))?;
    let range_rows = ch(&format!(
        "SELECT count() FROM {db}.events WHERE shop_domain = '{}' \
         AND local_date >= toDate('{}') AND local_date <= toDate('{}')",
        shop.domain, range.start, range.end
    ))
    .await?
    .trim()
    .to_string();
    let range_view_rows = ch(&format!(
        "SELECT count() FROM {db}.video_daily WHERE shop_domain = '{}' \
         AND local_date >= toDate('{}') AND local_date <= toDate('{}')",
        shop.domain, range.start, range.end
    ))
    .await?
    .trim()
    .to_string();

    let client = reqwest::Client::new();
    let url = |key: &str| {
        format!(
            "{}/api/v1/analytics/videos?start_date={}&end_date={}&limit={LIMIT}&sort_by={key}&sort_order=desc",
            service.base_url, range.start, range.end
        )
    };
    let get = |key: &'static str| {
        let request = client.get(url(key)).bearer_auth(&shop.api_key);
        async move {
            let response = request
                .send()
                .await
                .map_err(|e| format!("GET {key}: {e}"))?;
            let status = response.status();
            let body = response
                .bytes()
                .await
                .map_err(|e| format!("GET {key}: {e}"))?;
            if status != reqwest::StatusCode::OK {
                return Err(format!(
                    "sort_by={key} answered {status}: {}",
                    String::from_utf8_lossy(&body)
                ));
            }
            Ok(body)
        }
    };
    let raw = || async {
        let rows: Vec<Keyed> = warehouse
            .client()
            .query(RAW_SQL)
            .bind(domain.as_str())
            .bind(range.start.to_string())
            .bind(range.end.to_string())
            .fetch_all()
            .await
            .map_err(|e| format!("raw aggregate: {e}"))?;
        Ok::<_, String>(
            rows.into_iter()
                .map(|r| (r.id, r.totals))
                .collect::<HashMap<_, _>>(),
        )
    };
    let view = || async {
        queries::video_totals(&warehouse, &domain, &range)
            .await
            .map_err(|e| format!("view query: {e:?}"))
    };
    let catalog = || async {
        shops::get(&pool, &domain)
            .await
            .map_err(|e| format!("shops::get: {e}"))?;
        videos::list(&pool, &domain)
            .await
            .map_err(|e| format!("videos::list: {e}"))
    };

    // Correctness first, untimed: raw and view agree on every video; every sort key gives the
    // order and numbers the raw table implies.
    let raw_totals = raw().await?;
    let view_totals = view().await?;
    let all_videos = catalog().await?;
    check_same(&raw_totals, &view_totals)?;
    let mut body_bytes = 0;
    let mut answers = Vec::new();
    for key in SORT_KEYS {
        let body = get(key).await?;
        body_bytes = body.len();
        let answer: Value =
            serde_json::from_slice(&body).map_err(|e| format!("sort_by={key}: {e}"))?;
        check_answer(key, &answer, &all_videos, &raw_totals)?;
        answers.push(answer);
    }
    println!(
        "checked: raw and view agree on all {} videos with events; every sort key's first {LIMIT} \
         rows match the raw table (order and numbers)",
        raw_totals.len()
    );

    // The timed steps, interleaved: every round runs each step once, in a random order, so that
    // all steps see the same machine and no step always follows the raw scan.
    wait_for_quiet(options.wait, "the measurements").await?;
    settle(&databases).await?;
    let mut calls: Vec<(String, Call<'_>)> = Vec::new();
    for key in SORT_KEYS {
        let get = &get;
        calls.push((
            format!("endpoint sort_by={key}"),
            Box::new(move || Box::pin(async move { get(key).await.map(drop) })),
        ));
    }
    calls.push((
        "view query alone (sql/20)".into(),
        Box::new(|| Box::pin(async { view().await.map(drop) })),
    ));
    calls.push((
        "catalog reads alone (Postgres)".into(),
        Box::new(|| Box::pin(async { catalog().await.map(drop) })),
    ));
    calls.push((
        "raw aggregate (events)".into(),
        Box::new(|| Box::pin(async { raw().await.map(drop) })),
    ));
    // Serializing an answer of the same shape (serde_json, from a parsed copy).
    calls.push((
        "JSON: serialize one answer".into(),
        Box::new(|| {
            Box::pin(async {
                serde_json::to_vec(&answers[0])
                    .map(drop)
                    .map_err(|e| e.to_string())
            })
        }),
    ));
    let (steps, window) = measure(&monitor, options, calls).await?;
    let (endpoint, rest) = steps.split_at(SORT_KEYS.len());
    let [view_step, catalog_step, raw_step, json_step] = rest else {
        unreachable!("four steps follow the endpoint's");
    };
    let state_after = TableState::read(&databases).await?;

    // The report.
    println!();
    println!("data set ({}):", databases.clickhouse);
    println!(
        "  plan: {} events, {} shops, {} videos, {} days (seed {})",
        generation.plan.events,
        generation.plan.shops,
        generation.plan.videos,
        generation.plan.days,
        generation.plan.seed
    );
    println!(
        "  generated {} in {:.1} s ({:.0} events/s end to end; generator: {}){}",
        generation.finished_at.format("%Y-%m-%d %H:%M UTC"),
        generation.seconds,
        generation.plan.events as f64 / generation.seconds,
        generation.last_progress.as_deref().unwrap_or("-"),
        if generation.disturbed_by.is_empty() {
            String::new()
        } else {
            format!(
                "; DISTURBED by other load runs: {}",
                generation.disturbed_by.join("; ")
            )
        }
    );
    println!("  events per shop:");
    for line in per_shop.lines() {
        println!("    {}", line.replace('\t', "  "));
    }
    println!("  before the timed steps: {state_before}");
    println!("  after the timed steps:  {state_after}");
    println!(
        "  measured shop {} ({}), {} videos; range {} .. {} ({RANGE_DAYS} local days, {covered} \
         with data): {range_rows} rows in events, {range_view_rows} rows in video_daily",
        shop.domain,
        shop.timezone,
        all_videos.len(),
        range.start,
        range.end
    );
    println!(
        "  answer: {body_bytes} bytes, {LIMIT} rows; {} videos with events",
        raw_totals.len()
    );
    println!();
    println!(
        "  {:<34} {:>4} {:>9} {:>9} {:>9}",
        "step", "n", "p50", "p95", "max"
    );
    for step in &steps {
        println!("  {}", step.row());
    }
    println!("  {window}");
    println!();
    println!("  ratio raw / endpoint (p50, p95):");
    let raw_p50 = raw_step.percentile(50.0);
    let raw_p95 = raw_step.percentile(95.0);
    let mut worst_p95 = Duration::ZERO;
    let mut worst_ratio = f64::INFINITY;
    for step in endpoint {
        let (p50, p95) = (step.percentile(50.0), step.percentile(95.0));
        let r50 = raw_p50.as_secs_f64() / p50.as_secs_f64();
        let r95 = raw_p95.as_secs_f64() / p95.as_secs_f64();
        worst_p95 = worst_p95.max(p95);
        worst_ratio = worst_ratio.min(r50).min(r95);
        println!("    {:<32} {r50:>6.1}x {r95:>6.1}x", step.name);
    }
    let p95_met = worst_p95 < TARGET_P95;
    let ratio_met = worst_ratio >= TARGET_RATIO;
    println!();
    println!(
        "  target p95 < {} ms: {} (worst p95 {})",
        TARGET_P95.as_millis(),
        if p95_met { "met" } else { "NOT met" },
        format_duration(worst_p95)
    );
    println!(
        "  target >= {TARGET_RATIO:.0}x faster than the raw scan: {} (lowest ratio {worst_ratio:.1}x)",
        if ratio_met { "met" } else { "NOT met" }
    );
    let mean_endpoint = endpoint
        .iter()
        .map(|s| s.percentile(50.0).as_secs_f64())
        .sum::<f64>()
        / endpoint.len() as f64;
    let parts = [
        ("catalog reads (Postgres)", catalog_step.percentile(50.0)),
        ("view query (ClickHouse)", view_step.percentile(50.0)),
        ("JSON serialization", json_step.percentile(50.0)),
    ];
    println!(
        "  where an endpoint request's time goes (p50s; the endpoint's mean p50 over the keys is {}):",
        format_duration(Duration::from_secs_f64(mean_endpoint))
    );
    let mut accounted = 0.0;
    for (name, d) in parts {
        accounted += d.as_secs_f64();
        println!(
            "    {name:<26} {:>9} {:>5.0}%",
            format_duration(d),
            d.as_secs_f64() / mean_endpoint * 100.0
        );
    }
    let rest = (mean_endpoint - accounted).max(0.0);
    println!(
        "    {:<26} {:>9} {:>5.0}%",
        "the rest (HTTP, auth, sort)",
        format_duration(Duration::from_secs_f64(rest)),
        rest / mean_endpoint * 100.0
    );
    if window.disturbed() {
        println!("  note: the timed steps were DISTURBED; compare with an undisturbed run");
    }
    Ok(())
}

#[derive(Row, Deserialize)]
struct Keyed {
    id: String,
    totals: Totals,
}

/// The data, generated unless a complete set is already there. Returns how it was generated and
/// its shops.
async fn prepare_data(
    options: &Options,
    databases: &Databases,
    monitor: &Monitor,
) -> Result<(Generation, Vec<GeneratedShop>), String> {
    let shops_file = options.data_dir.join("shops.json");
    let generation_file = options.data_dir.join("generation.json");
    if !options.regenerate {
        match existing_data(options, databases, &shops_file, &generation_file).await {
            Ok(found) => {
                println!(
                    "reusing the data set in {} (generated {}; `--regenerate` to start afresh)",
                    options.database,
                    found.0.finished_at.format("%Y-%m-%d %H:%M UTC")
                );
                return Ok(found);
            }
            Err(why) => println!("generating the data set: {why}"),
        }
    }
    let _ = std::fs::remove_file(&generation_file);
    let _ = std::fs::remove_file(&shops_file);
    support::drop_database(&databases.postgres_admin_url, &databases.postgres).await;
    ch(&format!("DROP DATABASE IF EXISTS {}", databases.clickhouse)).await?;
    let database_url =
        support::ensure_database(&databases.postgres_admin_url, &databases.postgres).await;

    wait_for_quiet(options.wait, "generation").await?;
    let plan = &options.plan;
    let binary = env!("CARGO_BIN_EXE_videoapp");
    println!(
        "{binary} generate --shops {} --videos {} --days {} --events {} --seed {}",
        plan.shops, plan.videos, plan.days, plan.events, plan.seed
    );
    let since = Instant::now();
    let output = tokio::process::Command::new(binary)
        .args(["generate", "--shops", &plan.shops.to_string()])
        .args(["--videos", &plan.videos.to_string()])
        .args(["--days", &plan.days.to_string()])
        .args(["--events", &plan.events.to_string()])
        .args(["--seed", &plan.seed.to_string()])
        .env("DATABASE_URL", &database_url)
        .env("CLICKHOUSE_URL", &databases.clickhouse_url)
        .env("CLICKHOUSE_DATABASE", &databases.clickhouse)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .await
        .map_err(|e| format!("{binary}: {e}"))?;
    let seconds = since.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        eprintln!("{log}");
        return Err(format!("videoapp generate failed ({})", output.status));
    }
    // Its last progress line: `N / N events (R/s)`, R counting the inserts only.
    let last_progress = log
        .lines()
        .rfind(|l| l.contains(" events ("))
        .map(|l| l.trim().to_string());
    let shops: Vec<GeneratedShop> = serde_json::from_slice(&output.stdout)
        .map_err(|e| format!("videoapp generate printed no shops JSON: {e}"))?;
    let generation = Generation {
        plan: plan.clone(),
        finished_at: Utc::now(),
        seconds,
        disturbed_by: monitor.seen_since(since),
        last_progress,
    };
    println!(
        "generated in {seconds:.1} s (the generator's last line: {})",
        generation.last_progress.as_deref().unwrap_or("none")
    );
    std::fs::create_dir_all(&options.data_dir)
        .map_err(|e| format!("{}: {e}", options.data_dir.display()))?;
    let write = |path: &PathBuf, value: Value| {
        std::fs::write(path, serde_json::to_vec_pretty(&value).expect("JSON"))
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    write(&shops_file, json!(shops))?;
    write(&generation_file, json!(generation))?;
    Ok((generation, shops))
}

/// The saved shops and plan, if the databases still hold exactly that data set.
async fn existing_data(
    options: &Options,
    databases: &Databases,
    shops_file: &PathBuf,
    generation_file: &PathBuf,
) -> Result<(Generation, Vec<GeneratedShop>), String> {
    let read = |path: &PathBuf| {
        std::fs::read(path).map_err(|_| format!("no {} from an earlier run", path.display()))
    };
    let generation: Generation = serde_json::from_slice(&read(generation_file)?)
        .map_err(|e| format!("{}: {e}", generation_file.display()))?;
    let shops: Vec<GeneratedShop> = serde_json::from_slice(&read(shops_file)?)
        .map_err(|e| format!("{}: {e}", shops_file.display()))?;
    if generation.plan != options.plan {
        return Err(format!(
            "the saved data set was generated with {:?}, this run wants {:?}",
            generation.plan, options.plan
        ));
    }
    let events = ch(&format!(
        "SELECT count() FROM {}.events",
        databases.clickhouse
    ))
    .await
    .map_err(|_| format!("no {}.events table in ClickHouse", databases.clickhouse))?;
    if events.trim() != options.plan.events.to_string() {
        return Err(format!(
            "{}.events holds {} rows, not {}",
            databases.clickhouse,
            events.trim(),
            options.plan.events
        ));
    }
    // The data ends on the day it was generated; the range ends today.
    let last_day = ch(&format!(
        "SELECT max(local_date) FROM {}.events",
        databases.clickhouse
    ))
    .await?;
    let last_day = chrono::NaiveDate::parse_from_str(last_day.trim(), "%Y-%m-%d")
        .map_err(|e| format!("the last day of the data ({last_day}): {e}"))?;
    if (Utc::now().date_naive() - last_day).num_days() > MAX_STALE_DAYS {
        return Err(format!(
            "the data set ends on {last_day}, more than {MAX_STALE_DAYS} days ago"
        ));
    }
    let url = support::database_url(&databases.postgres_admin_url, &databases.postgres);
    let found = async {
        let mut conn = <sqlx::PgConnection as sqlx::Connection>::connect(&url).await?;
        let domains: Vec<String> = shops.iter().map(|s| s.domain.clone()).collect();
        sqlx::query_scalar::<_, i64>(
            "SELECT count(*) FROM shops WHERE domain = ANY($1) AND uninstalled_at IS NULL",
        )
        .bind(domains)
        .fetch_one(&mut conn)
        .await
    }
    .await
    .map_err(|e| format!("the shops in Postgres {}: {e}", databases.postgres))?;
    if found as usize != shops.len() || shops.len() != options.plan.shops {
        return Err(format!(
            "Postgres {} has {found} of the {} saved shops",
            databases.postgres,
            shops.len()
        ));
    }
    Ok((generation, shops))
}

/// Rows and active parts of the two tables that matter.
struct TableState {
    events_rows: String,
    events_parts: String,
    events_size: String,
    daily_rows: String,
    daily_parts: String,
    daily_size: String,
    merges: String,
}

impl TableState {
    async fn read(databases: &Databases) -> Result<TableState, String> {
        let db = &databases.clickhouse;
        let ask = |sql: String| async move { ch(&sql).await.map(|s| s.trim().to_string()) };
        let parts = |table: &str| {
            format!(
                "SELECT count() FROM system.parts WHERE active AND database = '{db}' AND table = '{table}'"
            )
        };
        let size = |table: &str| {
            format!(
                "SELECT formatReadableSize(sum(bytes_on_disk)) FROM system.parts \
                 WHERE active AND database = '{db}' AND table = '{table}'"
            )
        };
        Ok(TableState {
            events_rows: ask(format!("SELECT count() FROM {db}.events")).await?,
            events_parts: ask(parts("events")).await?,
            events_size: ask(size("events")).await?,
            daily_rows: ask(format!("SELECT count() FROM {db}.video_daily")).await?,
            daily_parts: ask(parts("video_daily")).await?,
            daily_size: ask(size("video_daily")).await?,
            merges: ask(format!(
                "SELECT count() FROM system.merges WHERE database = '{db}'"
            ))
            .await?,
        })
    }
}

impl std::fmt::Display for TableState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "events {} rows in {} active parts ({}); video_daily {} rows in {} active parts ({}); \
             {} merges running",
            self.events_rows,
            self.events_parts,
            self.events_size,
            self.daily_rows,
            self.daily_parts,
            self.daily_size,
            self.merges
        )
    }
}

fn check_same(raw: &HashMap<String, Totals>, view: &HashMap<String, Totals>) -> Result<(), String> {
    if raw.len() != view.len() {
        return Err(format!(
            "MISMATCH: the raw table has events for {} videos, video_daily for {}",
            raw.len(),
            view.len()
        ));
    }
    for (id, totals) in raw {
        if view.get(id) != Some(totals) {
            return Err(format!(
                "MISMATCH for video {id}: raw {totals:?}, video_daily {:?}",
                view.get(id)
            ));
        }
    }
    Ok(())
}

/// The answer lists the first [`LIMIT`] videos in the order the handler promises (the key
/// descending, ties by id ascending), each with the raw table's numbers.
fn check_answer(
    key: &str,
    answer: &Value,
    catalog: &[videos::Video],
    raw: &HashMap<String, Totals>,
) -> Result<(), String> {
    let totals = |id: &Uuid| raw.get(&id.to_string()).copied().unwrap_or_default();
    let mut expected: Vec<&videos::Video> = catalog.iter().collect();
    expected.sort_by(|a, b| {
        let (ta, tb) = (totals(&a.id), totals(&b.id));
        let order = match key {
            "views" => ta.views.cmp(&tb.views),
            "clicks" => ta.clicks.cmp(&tb.clicks),
            "impressions" => ta.impressions.cmp(&tb.impressions),
            "add_to_cart" => ta.add_to_cart.cmp(&tb.add_to_cart),
            "orders" => ta.orders.cmp(&tb.orders),
            "revenue" => ta.revenue_e4.cmp(&tb.revenue_e4),
            "title" => a.title.cmp(&b.title),
            _ => a.created_at.cmp(&b.created_at),
        };
        order.reverse().then_with(|| a.id.cmp(&b.id))
    });
    let data = answer["data"]
        .as_array()
        .ok_or_else(|| format!("sort_by={key}: no data array"))?;
    if data.len() != LIMIT.min(catalog.len()) {
        return Err(format!("sort_by={key}: {} rows, not {LIMIT}", data.len()));
    }
    if answer["pagination"]["total_count"].as_u64() != Some(catalog.len() as u64) {
        return Err(format!(
            "sort_by={key}: total_count {}, the shop has {} videos",
            answer["pagination"]["total_count"],
            catalog.len()
        ));
    }
    for (row, video) in data.iter().zip(expected) {
        let id = video.id.to_string();
        if row["id"].as_str() != Some(id.as_str()) {
            return Err(format!(
                "MISMATCH sort_by={key}: got {} where the raw table puts {id}",
                row["id"]
            ));
        }
        let t = totals(&video.id);
        let m = &row["metrics"];
        let cents = m["revenue"].as_f64().map(|r| (r * 100.0).round() as i64);
        let same = m["impressions"].as_u64() == Some(t.impressions)
            && m["views"].as_u64() == Some(t.views)
            && m["clicks"].as_u64() == Some(t.clicks)
            && m["add_to_cart"].as_u64() == Some(t.add_to_cart)
            && m["orders"].as_u64() == Some(t.orders)
            && cents == Some((t.revenue_e4 + 50).div_euclid(100));
        if !same {
            return Err(format!(
                "MISMATCH sort_by={key}, video {id}: endpoint {m}, raw table {t:?}"
            ));
        }
    }
    Ok(())
}

/// One statement on ClickHouse, outside the timed steps.
async fn ch(sql: &str) -> Result<String, String> {
    support::clickhouse_query(&reqwest::Client::new(), "default", sql).await
}

/// Lets what generation left in flight finish, so that it does not run during the timed steps:
/// dirty pages are written out (`sync`) and ClickHouse's running merges of the bench database
/// end. Nothing is forced: no merge is started, the parts stay as they are.
async fn settle(databases: &Databases) -> Result<(), String> {
    let since = Instant::now();
    let _ = tokio::process::Command::new("sync").status().await;
    loop {
        let merges = ch(&format!(
            "SELECT count() FROM system.merges WHERE database = '{}'",
            databases.clickhouse
        ))
        .await?;
        if merges.trim() == "0" {
            break;
        }
        if since.elapsed() > SETTLE_LIMIT {
            println!(
                "note: {} merges still running after {SETTLE_LIMIT:?}; measuring anyway",
                merges.trim()
            );
            break;
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
    Ok(())
}

/// Waits until no other load run is on the machine, at most `limit`.
async fn wait_for_quiet(limit: Duration, what: &str) -> Result<(), String> {
    let since = Instant::now();
    let mut announced = false;
    loop {
        let others = support::load::foreign_load();
        if others.is_empty() {
            return Ok(());
        }
        if since.elapsed() > limit {
            return Err(format!(
                "other load runs still running after {limit:?}: {}",
                others.join("; ")
            ));
        }
        if !announced {
            println!(
                "waiting for other load runs to finish before {what}: {}",
                others.join("; ")
            );
            announced = true;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// Watches for other load runs in the background (twice a second).
struct Monitor {
    seen: Arc<Mutex<Vec<(Instant, String)>>>,
}

impl Monitor {
    fn start() -> Monitor {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        std::thread::spawn(move || loop {
            let now = Instant::now();
            for other in support::load::foreign_load() {
                sink.lock().expect("monitor lock").push((now, other));
            }
            std::thread::sleep(Duration::from_millis(500));
        });
        Monitor { seen }
    }

    /// The distinct processes seen since `since`.
    fn seen_since(&self, since: Instant) -> Vec<String> {
        let mut found: Vec<String> = self
            .seen
            .lock()
            .expect("monitor lock")
            .iter()
            .filter(|(at, _)| *at >= since)
            .map(|(_, what)| what.clone())
            .collect();
        found.sort();
        found.dedup();
        found
    }
}

/// One timed call, boxed so that different steps can share a list.
type Call<'a> = Box<dyn FnMut() -> LocalBoxFuture<'a, Result<(), String>> + 'a>;

struct Step {
    name: String,
    samples: Vec<Duration>,
}

impl Step {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.samples.clone();
        sorted.sort();
        // Nearest rank.
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank.min(sorted.len()) - 1]
    }

    fn row(&self) -> String {
        format!(
            "{:<34} {:>4} {:>9} {:>9} {:>9}",
            self.name,
            self.samples.len(),
            format_duration(self.percentile(50.0)),
            format_duration(self.percentile(95.0)),
            format_duration(self.percentile(100.0)),
        )
    }
}

/// The machine over the timed steps, in cores busy.
struct Window {
    seconds: f64,
    machine: f64,
    own: f64,
    databases: f64,
    other: f64,
    steal: f64,
    /// Other load runs seen meanwhile.
    others: Vec<String>,
}

impl Window {
    fn disturbed(&self) -> bool {
        !self.others.is_empty() || self.other > FOREIGN_CPU_LIMIT || self.steal > FOREIGN_CPU_LIMIT
    }
}

impl std::fmt::Display for Window {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "CPU over the {:.1} s of timed steps, in cores: machine {:.2} = this process (service \
             and client) {:.2} + ClickHouse and Postgres {:.2} + other {:.2}; steal {:.2}; other \
             load runs seen: {}{}",
            self.seconds,
            self.machine,
            self.own,
            self.databases,
            self.other,
            self.steal,
            if self.others.is_empty() {
                "none".to_string()
            } else {
                self.others.join("; ")
            },
            if self.disturbed() { " (DISTURBED)" } else { "" }
        )
    }
}

/// Warm-ups, then `samples` rounds; each round runs every call once, in a fresh random order
/// (fixed seed), so that no step always follows the same one (the raw scan leaves the caches
/// cold for whatever comes next).
async fn measure(
    monitor: &Monitor,
    options: &Options,
    mut calls: Vec<(String, Call<'_>)>,
) -> Result<(Vec<Step>, Window), String> {
    let n = calls.len();
    for _ in 0..options.warmup {
        for (_, call) in calls.iter_mut() {
            call().await?;
        }
    }
    let since = Instant::now();
    let before = CpuTicks::take(&DATABASE_PROCESSES);
    let mut samples = vec![Vec::with_capacity(options.samples); n];
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = StdRng::seed_from_u64(0x5ca1e);
    for _ in 0..options.samples {
        order.shuffle(&mut rng);
        for &at in &order {
            let started = Instant::now();
            (calls[at].1)().await?;
            samples[at].push(started.elapsed());
        }
    }
    let after = CpuTicks::take(&DATABASE_PROCESSES);
    let seconds = since.elapsed().as_secs_f64();
    let cores = |a: f64, b: f64| (b - a).max(0.0) / TICKS_PER_SECOND / seconds;
    let machine = cores(before.machine_busy, after.machine_busy);
    let own = cores(before.own, after.own);
    let databases = cores(before.named, after.named);
    let window = Window {
        seconds,
        machine,
        own,
        databases,
        other: (machine - own - databases).max(0.0),
        steal: cores(before.machine_steal, after.machine_steal),
        others: monitor.seen_since(since),
    };
    let steps = calls
        .into_iter()
        .zip(samples)
        .map(|((name, _), samples)| Step { name, samples })
        .collect();
    Ok((steps, window))
}

fn format_duration(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms >= 100.0 {
        format!("{ms:.0} ms")
    } else if ms >= 1.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.0} µs", ms * 1000.0)
    }
}
