//! Analytics at scale: one shop with 10,000 videos and 100,000,000 events over 400 days, and what
//! its analyst asks over the last 365 local days, each beside the same figures computed from the
//! raw `events` table.
//!
//! 1. Data: fresh `bench_<uuid>` databases filled by `videoapp generate` (the release binary
//!    `cargo bench` builds; seed 1, 50 widgets), 10–20 minutes, then up to
//!    `ANALYTICS_SCALE_SETTLE_SECONDS` (600) for ClickHouse's background merges to finish.
//!    Then the aggregates' partitions are left as a live store's would be
//!    (`warehouse::compaction`): those of past months and years merged into one part each, this
//!    month's and this year's, which a selling store keeps writing, as ClickHouse's merges left
//!    them. Dropped at the end, unless `ANALYTICS_SCALE_KEEP=1`;
//!    `ANALYTICS_SCALE_DATABASE=bench_…` measures a kept data set again instead of generating
//!    one; `ANALYTICS_SCALE_EVENTS` makes a smaller one for a try.
//! 2. The service as a child process (rate limit out of the way), and for each step the same
//!    aggregate from `events` over ClickHouse's HTTP interface: the videos sorted by revenue
//!    (`limit=100`, pages 1 and 100), the shop's and the busiest video's day series, all four
//!    again with `compare=previous_year`, and the CSV of all 10,000 videos, with the service's
//!    peak resident memory while it answers (`VmHWM`, reset before each CSV request). The
//!    service keeps sorted lists, and the totals of the days before today, while what they were
//!    computed from stays as it was, so each page of videos is measured three ways (see
//!    `Before`): computed afresh (beside the raw aggregate), after today's numbers moved as they
//!    do for a shop selling right now, and asked a second time in a row. The CSV is always
//!    computed afresh.
//!    2 warm-up rounds, then rounds that run their steps once each in a random order (fixed
//!    seed): `ANALYTICS_SCALE_SAMPLES` (50) rounds of the JSON answers, the first
//!    `ANALYTICS_SCALE_RAW_SAMPLES` (10) of them with the raw aggregates and the CSV too.
//!
//! `cargo bench --bench analytics_scale`; under `cargo test` it says it skipped.

mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use chrono::{Days, Months, NaiveDate, Utc};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde::Deserialize;
use serde_json::Value;

use support::load::{self, format_latency, setting};
use support::{Databases, ServiceProcess};

const GENERATE: &str = "--shops 1 --videos 10000 --widgets 50 --days 400 --seed 1";
const DAYS: usize = 365;
const VIDEOS: usize = 10_000;
const LIMIT: usize = 100;
const WARMUP: u64 = 2;
/// The goals: p95 of a JSON answer, and of the whole CSV.
const JSON_GOAL: Duration = Duration::from_millis(50);
const CSV_GOAL: Duration = Duration::from_secs(1);

/// One shop as `videoapp generate` prints it.
#[derive(Deserialize)]
struct GeneratedShop {
    domain: String,
    timezone: String,
    api_key: String,
}

/// What a step asks and what its answer must hold.
enum Ask {
    /// A JSON answer of the service with `rows` entries in `data`.
    Json {
        path: String,
        rows: usize,
        before: Before,
    },
    /// A CSV answer of the service with `rows` lines under its header, asked right after the
    /// shop's numbers moved.
    Csv { path: String, rows: usize },
    /// An aggregate of the raw events.
    Raw(String),
    /// No raw counterpart: the step above's stands for it.
    Nothing,
}

/// What happens, untimed, before a JSON step. The service keeps sorted lists, and the totals of
/// the days before today, each for as long as what it was computed from has not moved, so a
/// list is measured three ways.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    Nothing,
    /// Everything moves (as after a migration, or for a range nobody asked about before): the
    /// answer is computed afresh from ClickHouse.
    EverythingMoves,
    /// Today's numbers move, as they do with every batch a selling shop's events make: the
    /// days before today come from memory, today's from ClickHouse.
    TodayMoves,
    /// The same request: the answer a reader paging through the list, or asking again, gets.
    SameRequest,
}

/// Where `videoapp generate`'s account of the data set is kept beside the databases.
fn shops_file(databases: &Databases) -> PathBuf {
    std::env::temp_dir().join(format!("{}-shops.json", databases.name))
}

fn main() -> ExitCode {
    if !load::benching("scale") {
        return ExitCode::SUCCESS;
    }
    support::init_tracing();
    // The service takes its settings from the environment it inherits.
    if std::env::var_os("VIDEOAPP_RATE_LIMIT_PER_MINUTE").is_none() {
        std::env::set_var("VIDEOAPP_RATE_LIMIT_PER_MINUTE", "4000000000");
    }
    // The data set is written once, so every partition would soon be quiet: the service's own
    // merging is put out of reach, and the bench merges what a live store's would (below).
    if std::env::var_os("VIDEOAPP_COMPACTION_QUIET_SECONDS").is_none() {
        std::env::set_var("VIDEOAPP_COMPACTION_QUIET_SECONDS", "31622400");
    }
    let reuse = std::env::var("ANALYTICS_SCALE_DATABASE").ok();
    let keep = std::env::var_os("ANALYTICS_SCALE_KEEP").is_some_and(|v| v == "1");
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, outcome) = runtime.block_on(async {
        let (databases, database_url) = match reuse.clone() {
            Some(name) => Databases::existing(name),
            None => Databases::create().await,
        };
        let outcome = run(&databases, &database_url, reuse.is_none()).await;
        (databases, outcome)
    });
    drop(runtime);
    if keep {
        println!(
            "kept: ANALYTICS_SCALE_DATABASE={} measures this data set again",
            databases.name
        );
    } else {
        databases.drop_all();
        let _ = std::fs::remove_file(shops_file(&databases));
    }
    support::exit(outcome)
}

async fn run(databases: &Databases, database_url: &str, generate: bool) -> Result<(), String> {
    let client = reqwest::Client::new();
    let ch = async |sql: &str| {
        support::helpers::try_clickhouse_query(&client, &databases.name, sql).await
    };
    if generate {
        generate_data(databases, database_url).await?;
    }
    let file = shops_file(databases);
    let shops = std::fs::read(&file).map_err(|e| format!("{}: {e}", file.display()))?;
    let shops: Vec<GeneratedShop> =
        serde_json::from_slice(&shops).map_err(|e| format!("{}: no shops: {e}", file.display()))?;
    let shop = shops.into_iter().next().ok_or("no shop was generated")?;
    settle(&ch).await?;

    let tz: chrono_tz::Tz =
        (shop.timezone.parse()).map_err(|e| format!("{}: {e}", shop.timezone))?;
    let end = Utc::now().with_timezone(&tz).date_naive();
    let start = end - Days::new(DAYS as u64 - 1);
    let year = |d: NaiveDate| d.checked_sub_months(Months::new(12)).expect("a date");
    let previous = (year(start), year(end));
    let (domain, range) = (&shop.domain, format!("start_date={start}&end_date={end}"));
    println!("measured shop {domain} ({tz}), {start} .. {end}, previous year {previous:?}");

    past_partitions_merged(databases, end, &ch).await?;
    let service = ServiceProcess::start(databases, database_url).await?;
    let postgres = sqlx::PgPool::connect(database_url)
        .await
        .map_err(|e| e.to_string())?;
    // What the service records when a migration applies, and when a batch lands today.
    let moves = async |what: Before| {
        let sql = match what {
            Before::EverythingMoves => {
                "UPDATE shops SET analytics_version = analytics_version + 1 WHERE domain = $1"
            }
            _ => {
                "INSERT INTO analytics_days (shop_domain, local_date, change) \
                 VALUES ($1, $2, nextval('analytics_changes')) \
                 ON CONFLICT (shop_domain, local_date) DO UPDATE SET change = EXCLUDED.change"
            }
        };
        let moved = sqlx::query(sql)
            .bind(&shop.domain)
            .bind(end)
            .execute(&postgres);
        moved.await.map(drop).map_err(|e| format!("Postgres: {e}"))
    };
    let get = |path: &str| {
        let url = format!("{}/api/v1/analytics/{path}", service.base_url);
        client.get(url).bearer_auth(&shop.api_key)
    };
    let busiest = format!("videos?{range}&sort_by=views&sort_order=desc&limit=1");
    let busiest = json(get(&busiest)).await?;
    let video = busiest["data"][0]["id"].as_str().ok_or("no video")?;

    let days = |from: NaiveDate, to: NaiveDate| {
        format!("local_date >= toDate('{from}') AND local_date <= toDate('{to}')")
    };
    let (current, earlier) = (days(start, end), days(previous.0, previous.1));
    let both = format!("({current}) OR ({earlier})");
    let shop_rows = format!("shop_domain = '{domain}'");
    let video_rows = format!("{shop_rows} AND video_id = '{video}'");
    let by_revenue = |compare: bool, offset: usize| {
        let (within, metrics) = match compare {
            false => (&current, raw_metrics(&current)),
            true => (
                &both,
                format!("{}, {}", raw_metrics(&current), raw_metrics(&earlier)),
            ),
        };
        let revenue = format!("sumIf(revenue_e4, event_type = 'checkout_completed' AND {current})");
        format!(
            "SELECT video_id, {metrics} FROM events WHERE {shop_rows} AND ({within}) \
             GROUP BY video_id ORDER BY {revenue} DESC, video_id LIMIT {offset}, {LIMIT}"
        )
    };
    let by_day = |rows: &str, compare: bool| {
        let within = if compare { &both } else { &current };
        format!(
            "SELECT local_date, {} FROM events WHERE {rows} AND ({within}) \
             GROUP BY local_date ORDER BY local_date",
            raw_metrics("1")
        )
    };
    let list = format!("videos?{range}&sort_by=revenue&sort_order=desc&limit={LIMIT}");
    let series = format!("timeseries?{range}&interval=day");
    let last = VIDEOS / LIMIT;
    // Each step beside its raw aggregate, and its goal.
    let mut pairs: Vec<(String, [Ask; 2], Duration)> = Vec::new();
    for compare in [false, true] {
        let (name, query) = match compare {
            false => ("", ""),
            true => (", previous_year", "&compare=previous_year"),
        };
        let mut add = |what: &str, path: &str, raw| {
            let list = what.starts_with('v');
            let (rows, path) = (if list { LIMIT } else { DAYS }, format!("{path}{query}"));
            let before = if list {
                Before::EverythingMoves
            } else {
                Before::Nothing
            };
            let ask = |before| Ask::Json {
                path: path.clone(),
                rows,
                before,
            };
            pairs.push((
                format!("{what}{name}"),
                [ask(before), Ask::Raw(raw)],
                JSON_GOAL,
            ));
            if list {
                for (name, before) in [
                    (
                        "  the same, after today's numbers moved",
                        Before::TodayMoves,
                    ),
                    ("  the same, asked again", Before::SameRequest),
                ] {
                    pairs.push((name.to_string(), [ask(before), Ask::Nothing], JSON_GOAL));
                }
            }
        };
        let page = |n: usize| format!("{list}&page={n}");
        let raw = by_revenue(compare, 0);
        add("videos by revenue, page 1", &page(1), raw);
        let raw = by_revenue(compare, (last - 1) * LIMIT);
        add(&format!("videos by revenue, page {last}"), &page(last), raw);
        add("day series, shop", &series, by_day(&shop_rows, compare));
        let (path, raw) = (
            format!("{series}&video_id={video}"),
            by_day(&video_rows, compare),
        );
        add("day series, busiest video", &path, raw);
    }
    let all_videos = format!(
        "SELECT video_id, {} FROM events WHERE {shop_rows} AND ({current}) GROUP BY video_id \
         FORMAT CSVWithNames",
        raw_metrics(&current)
    );
    let path = format!("videos?{range}&sort_by=revenue&sort_order=desc&format=csv");
    let csv = [Ask::Csv { path, rows: VIDEOS }, Ask::Raw(all_videos)];
    pairs.push((format!("CSV, {VIDEOS} videos by revenue"), csv, CSV_GOAL));

    check_pages(&get, &ch, &pairs).await?;

    // Steps 2p and 2p + 1: pair p's service answer and its raw aggregate.
    let steps: Vec<&Ask> = pairs.iter().flat_map(|p| &p.1).collect();
    let heavy = |i: usize| i % 2 == 1 || matches!(steps[i], Ask::Csv { .. });
    let samples = setting("ANALYTICS_SCALE_SAMPLES", 50);
    let heavy_samples = setting("ANALYTICS_SCALE_RAW_SAMPLES", 10).min(samples);
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); steps.len()];
    let (mut peak_kib, mut before_kib, mut peak_reset) = (0, 0, true);
    let mut rng = StdRng::seed_from_u64(7);
    let started = Instant::now();
    for round in 0..WARMUP + samples {
        let mut order: Vec<usize> = (0..steps.len())
            .filter(|&i| round < WARMUP + heavy_samples || !heavy(i))
            .collect();
        order.shuffle(&mut rng);
        for i in order {
            let csv = matches!(steps[i], Ask::Csv { .. });
            if csv {
                peak_reset &= service.reset_peak_rss();
                before_kib = before_kib.max(service.rss_kib().unwrap_or(0));
            }
            let took = step(&get, &ch, &moves, steps[i], round == 0).await?;
            if csv {
                peak_kib = peak_kib.max(service.peak_rss_kib().unwrap_or(0));
            }
            if round >= WARMUP {
                times[i].push(took);
            }
        }
    }
    println!(
        "{samples} rounds ({heavy_samples} with the raw aggregates) in {:.0} s",
        started.elapsed().as_secs_f64()
    );

    let percentile = |t: &[Duration], p: f64| -> Duration {
        let mut sorted = t.to_vec();
        sorted.sort();
        sorted[((p / 100.0 * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len()) - 1]
    };
    let [what, p50, p95, raw50, raw95] = ["step", "p50", "p95", "raw p50", "raw p95"];
    println!("\n  {what:<44} {p50:>9} {p95:>9} {raw50:>9} {raw95:>9}  goal");
    for (p, (name, asks, goal)) in pairs.iter().enumerate() {
        let [ours, raw] = [&times[2 * p], &times[2 * p + 1]];
        if ours.is_empty() {
            continue; // measured in the rounds with raw aggregates only, and there were none
        }
        let p95 = percentile(ours, 95.0);
        let verdict = if p95 < *goal { "met" } else { "MISSED" };
        let raw = match asks[1] {
            Ask::Nothing => ["", ""].map(String::from),
            _ if raw.is_empty() => ["-", "-"].map(String::from),
            _ => [50.0, 95.0].map(|p| format_latency(percentile(raw, p))),
        };
        println!(
            "  {name:<44} {:>9} {:>9} {:>9} {:>9}  p95 < {goal:?}: {verdict}",
            format_latency(percentile(ours, 50.0)),
            format_latency(p95),
            raw[0],
            raw[1],
        );
    }
    let reset = match peak_reset {
        true => "reset before each CSV request",
        false => "since start: the kernel refused the reset",
    };
    println!(
        "  service memory: {:.1} MiB resident before a CSV request, peak {:.1} MiB ({reset})",
        before_kib as f64 / 1024.0,
        peak_kib as f64 / 1024.0
    );
    Ok(())
}

/// Generates the data set into `databases` and keeps `videoapp generate`'s account of it.
async fn generate_data(databases: &Databases, database_url: &str) -> Result<(), String> {
    let binary = env!("CARGO_BIN_EXE_videoapp");
    let events = setting("ANALYTICS_SCALE_EVENTS", 100_000_000);
    let started = Instant::now();
    let output = tokio::process::Command::new(binary)
        .arg("generate")
        .args(GENERATE.split(' '))
        .args(["--events", &events.to_string()])
        .env("DATABASE_URL", database_url)
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
    println!("generate {GENERATE} --events {events} took {took:.1} s");
    let file = shops_file(databases);
    std::fs::write(&file, &output.stdout).map_err(|e| format!("{}: {e}", file.display()))
}

/// Waits for ClickHouse's background merges (at most `ANALYTICS_SCALE_SETTLE_SECONDS`), then
/// prints what the tables hold.
async fn settle(ch: &impl AsyncFn(&str) -> Result<String, String>) -> Result<(), String> {
    let started = Instant::now();
    let limit = Duration::from_secs(setting("ANALYTICS_SCALE_SETTLE_SECONDS", 600));
    let merges = "SELECT count() FROM system.merges WHERE database = currentDatabase()";
    while ch(merges).await? != "0" && started.elapsed() < limit {
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    let left = ch(merges).await?;
    println!(
        "waited {:.0} s for merges ({left} still running)",
        started.elapsed().as_secs_f64()
    );
    let tables = ch(
        "SELECT table, sum(rows), count(), round(sum(bytes_on_disk) / 1048576) FROM system.parts \
         WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table",
    );
    println!("table, rows, active parts, MiB on disk:\n{}", tables.await?);
    Ok(())
}

/// Merges the aggregates' partitions of past months and years into one part each, as the
/// service does once they are quiet; those that hold `today`'s month or year are left as they
/// are, since a live store keeps writing them. Then prints what the aggregates hold.
async fn past_partitions_merged(
    databases: &Databases,
    today: NaiveDate,
    ch: &impl AsyncFn(&str) -> Result<String, String>,
) -> Result<(), String> {
    use videoapp::warehouse::compaction::{merge, quiet_partitions};
    let url = &databases.clickhouse.url;
    let warehouse = support::helpers::warehouse_on(url, &databases.name, None);
    let current = [
        today.format("%Y%m").to_string(),
        today.format("%Y").to_string(),
    ];
    let started = Instant::now();
    let partitions = quiet_partitions(&warehouse, Duration::ZERO).await;
    let partitions = partitions.map_err(|e| format!("ClickHouse: {e}"))?;
    let past = partitions.iter().filter(|p| !current.contains(&p.id));
    for partition in past {
        let merged = merge(&warehouse, partition).await;
        merged.map_err(|e| format!("merging {} {}: {e}", partition.table, partition.id))?;
    }
    let tables = ch("SELECT table, sum(rows), count() FROM system.parts \
         WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table");
    println!(
        "merged the aggregates' past partitions in {:.0} s; table, rows, parts:\n{}",
        started.elapsed().as_secs_f64(),
        tables.await?
    );
    Ok(())
}

/// The twelve figures of a metrics object as aggregates of the `events` rows where `when` holds.
fn raw_metrics(when: &str) -> String {
    let count = |what: &str| format!("countIf({what} AND {when})");
    let revenue = |what: &str| format!("sumIf(revenue_e4, {what} AND {when})");
    let (cart, order) = (
        "event_type = 'add_to_cart'",
        "event_type = 'checkout_completed'",
    );
    let mut figures = vec![
        count("event_type = 'impression'"),
        count("event_type = 'view'"),
        count("event_type = 'click'"),
        count(cart),
        count(order),
        revenue(order),
    ];
    for attribution in ["direct", "influenced"] {
        let of = format!("attribution = '{attribution}'");
        figures.push(count(&format!("{cart} AND {of}")));
        figures.push(count(&format!("{order} AND {of}")));
        figures.push(revenue(&format!("{order} AND {of}")));
    }
    figures.join(", ")
}

async fn json(request: reqwest::RequestBuilder) -> Result<Value, String> {
    match load::answer(request).await? {
        (reqwest::StatusCode::OK, body) => serde_json::from_slice(&body).map_err(|e| e.to_string()),
        (status, body) => Err(format!("{status}: {body:?}")),
    }
}

/// Runs one step and returns how long it took; the first time, checks the answer's shape.
async fn step(
    get: &impl Fn(&str) -> reqwest::RequestBuilder,
    ch: &impl AsyncFn(&str) -> Result<String, String>,
    moves: &impl AsyncFn(Before) -> Result<(), String>,
    ask: &Ask,
    check: bool,
) -> Result<Duration, String> {
    match ask {
        Ask::Json { path, before, .. } if *before == Before::SameRequest => {
            load::answer(get(path)).await?;
        }
        Ask::Json { path, before, .. } if *before == Before::TodayMoves => {
            // The days before today as the previous batch left them: in memory.
            load::answer(get(path)).await?;
            moves(*before).await?;
        }
        Ask::Json { before, .. } if *before != Before::Nothing => moves(*before).await?,
        Ask::Csv { .. } => moves(Before::EverythingMoves).await?,
        _ => {}
    }
    let started = Instant::now();
    let (path, rows, body) = match ask {
        Ask::Raw(sql) => {
            ch(sql).await?;
            return Ok(started.elapsed());
        }
        Ask::Nothing => return Ok(Duration::ZERO),
        Ask::Json { path, rows, .. } | Ask::Csv { path, rows } => {
            let (status, body) = load::answer(get(path)).await?;
            if status != reqwest::StatusCode::OK {
                return Err(format!("{path}: {status}: {body:?}"));
            }
            (path, *rows, body)
        }
    };
    let took = started.elapsed();
    if check {
        let found = match ask {
            Ask::Csv { .. } => {
                body.split(|&b| b == b'\n')
                    .filter(|l| !l.is_empty())
                    .count()
                    - 1
            }
            _ => {
                let body: Value = serde_json::from_slice(&body).map_err(|e| e.to_string())?;
                body["data"].as_array().map_or(0, Vec::len)
            }
        };
        if found != rows {
            return Err(format!("{path}: {found} rows, not {rows}"));
        }
    }
    Ok(took)
}

/// The pages of videos hold the videos the raw aggregate puts there, in its order.
async fn check_pages(
    get: &impl Fn(&str) -> reqwest::RequestBuilder,
    ch: &impl AsyncFn(&str) -> Result<String, String>,
    pairs: &[(String, [Ask; 2], Duration)],
) -> Result<(), String> {
    for (name, asks, _) in pairs.iter().filter(|p| p.0.starts_with("videos")) {
        let [Ask::Json { path, .. }, Ask::Raw(raw)] = asks else {
            continue;
        };
        let body = json(get(path)).await?;
        let ours: Vec<&str> = (body["data"].as_array().into_iter().flatten())
            .filter_map(|v| v["id"].as_str())
            .collect();
        let raw = ch(raw).await?;
        let theirs: Vec<&str> = raw.lines().filter_map(|l| l.split('\t').next()).collect();
        if ours != theirs {
            return Err(format!(
                "{name}: the service's ids differ from the raw aggregate's"
            ));
        }
    }
    println!("pages of videos: the same ids as the raw aggregate");
    Ok(())
}
