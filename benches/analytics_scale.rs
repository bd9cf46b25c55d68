//! Analytics at scale: what an analyst asks over 365 days of 100 M generated events, each beside
//! the raw `events` table's answer (BENCHMARKS.md, "Analytics at scale").

mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, ensure, Context};
use chrono::{Days, Months, NaiveDate, Utc};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use serde_json::Value;
use videoapp::warehouse::compaction::{crowded_partitions, merge, quiet_partitions, CROWDED};

use support::helpers::warehouse_on;
use support::load::{self, format_latency, percentile, setting};
use support::{Databases, Outcome, ServiceProcess};

const GENERATE: &str = "--shops 1 --videos 10000 --widgets 50 --days 400 --seed 1";
const DAYS: usize = 365;
const VIDEOS: usize = 10_000;
const WIDGETS: usize = 50;
const LIMIT: usize = 100;
const WARMUP: u64 = 2;
/// How long ClickHouse's background merges of the generated data may take.
const SETTLE: Duration = Duration::from_secs(600);
/// The goals: p95 of a JSON answer, and of the whole CSV.
const JSON_GOAL: Duration = Duration::from_millis(50);
const CSV_GOAL: Duration = Duration::from_secs(1);
/// What the service records when a migration applies, and when a batch lands today.
const EVERYTHING_MOVES: &str =
    "UPDATE shops SET analytics_version = analytics_version + 1 WHERE domain = $1";
const TODAY_MOVES: &str = "INSERT INTO analytics_days (shop_domain, local_date, change) \
    VALUES ($1, $2, nextval('analytics_changes')) \
    ON CONFLICT (shop_domain, local_date) DO UPDATE SET change = EXCLUDED.change";

/// A step: a service's answer (path, entries), the CSV of every video, a raw aggregate, or nothing.
enum Ask {
    Json(String, usize, Before),
    Csv(String, usize),
    Raw(String),
    Nothing,
}

/// A list again: after a batch today, and asked again.
const THE_SAME: [(&str, Before); 2] = [
    ("  the same, after a batch today", Before::TodayMoves),
    ("  the same, asked again", Before::SameRequest),
];

/// What is done, untimed, before a list is asked for: the service keeps lists while what they
/// were computed from stays as it was.
#[derive(Clone, Copy, PartialEq)]
enum Before {
    Nothing,
    /// As after a migration, or for a range nobody asked about: computed afresh.
    EverythingMoves,
    /// As with every batch of a selling shop: the days before today from memory.
    TodayMoves,
    SameRequest,
}

fn main() -> ExitCode {
    if !load::benching("scale") {
        return ExitCode::SUCCESS;
    }
    videoapp::telemetry::init_tracing(videoapp::config::LogFormat::Human);
    support::on_fresh_databases(None, run)
}

async fn run(databases: &Databases, database_url: &str) -> Outcome {
    let client = reqwest::Client::new();
    let ch = async |sql: &str| databases.query(&client, sql).await;
    let shop = generate_data(databases, database_url).await?;
    let field = |name: &str| shop[name].as_str().unwrap_or_default().to_string();
    let [domain, timezone, api_key] = ["domain", "timezone", "api_key"].map(field);
    let tz: chrono_tz::Tz = timezone.parse().map_err(|e| anyhow!("{timezone}: {e}"))?;
    let end = Utc::now().with_timezone(&tz).date_naive();
    let start = end - Days::new(DAYS as u64 - 1);
    let year = |d: NaiveDate| d.checked_sub_months(Months::new(12)).expect("a date");
    let previous = (year(start), year(end));
    let range = format!("start_date={start}&end_date={end}");
    println!("measured shop {domain} ({tz}), {start} .. {end}, previous year {previous:?}");
    settle(databases, end).await?;

    // The data set is written once, so every partition would soon be quiet: the service's own
    // merging is put out of reach, and the bench merges what a live store's would.
    let env = [
        ("VIDEOAPP_RATE_LIMIT_PER_MINUTE", "4000000000".into()),
        ("VIDEOAPP_COMPACTION_QUIET_SECONDS", "31622400".into()),
    ];
    let service = ServiceProcess::start_with(databases, database_url, &env).await?;
    let postgres = sqlx::PgPool::connect(database_url).await?;
    let moves = async |sql: &str| {
        let moved = sqlx::query(sql).bind(&domain).bind(end);
        moved.execute(&postgres).await.map(drop).context("Postgres")
    };
    let get = |path: &str| {
        let url = format!("{}/api/v1/analytics/{path}", service.base_url);
        client.get(url).bearer_auth(&api_key)
    };
    let busiest = json(get(&format!("videos?{range}&sort_by=views&limit=1"))).await?;
    let video = busiest["data"][0]["id"].as_str().context("no video")?;

    let days = |(from, to): (NaiveDate, NaiveDate)| {
        format!("local_date >= toDate('{from}') AND local_date <= toDate('{to}')")
    };
    let (current, earlier) = (days((start, end)), days(previous));
    let both = format!("({current}) OR ({earlier})");
    let shop_rows = format!("shop_domain = '{domain}'");
    let video_rows = format!("{shop_rows} AND video_id = '{video}'");
    // The `events` rows of `rows` within the range (and the previous year's), by `key`.
    let select = |key: &str, metrics: &str, rows: &str, compare: bool, rest: &str| {
        let within = if compare { &both } else { &current };
        format!(
            "SELECT {key}, {metrics} FROM events WHERE {rows} AND ({within}) GROUP BY {key} {rest}"
        )
    };
    let by_revenue = |compare: bool, offset: usize| {
        let mut metrics = raw_metrics(&current);
        if compare {
            metrics = format!("{metrics}, {}", raw_metrics(&earlier));
        }
        let revenue = format!("sumIf(revenue_e4, event_type = 'checkout_completed' AND {current})");
        let order = format!("ORDER BY {revenue} DESC, video_id LIMIT {offset}, {LIMIT}");
        select("video_id", &metrics, &shop_rows, compare, &order)
    };
    let by_day = |rows: &str, compare: bool| {
        let metrics = raw_metrics("1");
        select("local_date", &metrics, rows, compare, "ORDER BY local_date")
    };
    let list = format!("videos?{range}&sort_by=revenue&sort_order=desc&limit={LIMIT}");
    let series = format!("timeseries?{range}&interval=day");
    let last = VIDEOS / LIMIT;
    // Each step beside its raw aggregate, and its goal.
    let mut pairs: Vec<(String, [Ask; 2], Duration)> = Vec::new();
    for (name, query) in [("", ""), (", previous_year", "&compare=previous_year")] {
        let compare = !query.is_empty();
        let mut add = |what: &str, path: &str, raw| {
            let (list, path) = (what.starts_with('v'), format!("{path}{query}"));
            let rows = if list { LIMIT } else { DAYS };
            let ask = |before| Ask::Json(path.clone(), rows, before);
            let first = [Before::Nothing, Before::EverythingMoves][usize::from(list)];
            let pair = [ask(first), Ask::Raw(raw)];
            pairs.push((format!("{what}{name}"), pair, JSON_GOAL));
            for (name, before) in THE_SAME.into_iter().filter(|_| list) {
                pairs.push((name.to_string(), [ask(before), Ask::Nothing], JSON_GOAL));
            }
        };
        let page = |n: usize| format!("{list}&page={n}");
        let raw = by_revenue(compare, 0);
        add("videos by revenue, page 1", &page(1), raw);
        let raw = by_revenue(compare, (last - 1) * LIMIT);
        add(&format!("videos by revenue, page {last}"), &page(last), raw);
        add("day series, shop", &series, by_day(&shop_rows, compare));
        let path = format!("{series}&video_id={video}");
        let raw = by_day(&video_rows, compare);
        add("day series, busiest video", &path, raw);
    }
    // Breakdowns and filtered lists (videos and widgets by revenue), each computed afresh, for
    // their p95 beside the plain list's in the same run (the goal: within 1.25×).
    let widgets = format!("widgets?{range}&sort_by=revenue&limit={LIMIT}");
    // What is asked (LIST, WIDGETS, SERIES, VIDEO, RANGE as above), and its entries (0: any).
    let steps = [
        ("summary by device", "summary?RANGE&breakdown=device", 3),
        ("summary by country", "summary?RANGE&breakdown=country", 26),
        ("video by source", "video/VIDEO?RANGE&breakdown=source", 6),
        ("day series by placement", "SERIES&breakdown=placement", 0),
        ("videos, device=mobile", "LIST&device=mobile", LIMIT),
        ("videos, country=CA", "LIST&country=CA", LIMIT),
        ("widgets, source=email", "WIDGETS&source=email", WIDGETS),
    ];
    for (name, path, rows) in steps {
        let path = (path.replace("LIST", &list).replace("WIDGETS", &widgets))
            .replace("SERIES", &series)
            .replace("VIDEO", video)
            .replace("RANGE", &range);
        // A list is asked after a change; a breakdown (a few entries) is never kept.
        let is_list = rows >= WIDGETS;
        let before = [Before::Nothing, Before::EverythingMoves][usize::from(is_list)];
        let ask = [Ask::Json(path, rows, before), Ask::Nothing];
        pairs.push((name.to_string(), ask, JSON_GOAL));
    }
    let (metrics, csv) = (raw_metrics(&current), "FORMAT CSVWithNames");
    let all_videos = select("video_id", &metrics, &shop_rows, false, csv);
    let path = format!("videos?{range}&sort_by=revenue&sort_order=desc&format=csv");
    let csv = [Ask::Csv(path, VIDEOS), Ask::Raw(all_videos)];
    pairs.push((format!("CSV, {VIDEOS} videos by revenue"), csv, CSV_GOAL));
    // The pages of videos hold the videos the raw aggregate puts there, in its order.
    for (name, asks, _) in pairs.iter().filter(|p| p.0.starts_with("videos")) {
        let [Ask::Json(path, ..), Ask::Raw(raw)] = asks else {
            continue;
        };
        let body = json(get(path)).await?;
        let ours = body["data"].as_array().into_iter().flatten();
        let ours = ours.filter_map(|v| v["id"].as_str());
        let raw = ch(raw).await?;
        let same = ours.eq(raw.lines().filter_map(|l| l.split('\t').next()));
        ensure!(same, "{name}: not the raw aggregate's ids");
    }
    println!("pages of videos: the same ids as the raw aggregate");

    // Runs one step and returns how long it took; the first time, checks the answer's rows.
    let step = async |ask: &Ask, check: bool| -> Outcome<Duration> {
        let (path, rows, before) = match ask {
            Ask::Json(path, rows, before) => (path, *rows, *before),
            Ask::Csv(path, rows) => (path, *rows, Before::EverythingMoves),
            Ask::Raw(sql) => {
                let started = Instant::now();
                ch(sql).await?;
                return Ok(started.elapsed());
            }
            Ask::Nothing => return Ok(Duration::ZERO),
        };
        // The same request again, or today's numbers moved: the earlier answer is in memory.
        if matches!(before, Before::TodayMoves | Before::SameRequest) {
            load::answer(get(path)).await?;
        }
        match before {
            Before::EverythingMoves => moves(EVERYTHING_MOVES).await?,
            Before::TodayMoves => moves(TODAY_MOVES).await?,
            _ => {}
        }
        let started = Instant::now();
        let (status, body) = load::answer(get(path)).await?;
        let took = started.elapsed();
        let ok = status == reqwest::StatusCode::OK;
        ensure!(ok, "{path}: {status}: {body:?}");
        let found = match (check, ask) {
            (false, _) => rows,
            (true, Ask::Csv(..)) => String::from_utf8_lossy(&body).lines().count() - 1,
            (true, _) => {
                let body: Value = serde_json::from_slice(&body)?;
                body["data"].as_array().map_or(0, Vec::len)
            }
        };
        // 0: as many as there are (a series per value that had events).
        ensure!(
            rows == 0 || found == rows,
            "{path}: {found} rows, not {rows}"
        );
        Ok(took)
    };
    // Steps 2p and 2p + 1: pair p's service answer and its raw aggregate.
    let steps: Vec<&Ask> = pairs.iter().flat_map(|p| &p.1).collect();
    let heavy = |i: usize| i % 2 == 1 || matches!(steps[i], Ask::Csv(..));
    let samples = setting("ANALYTICS_SCALE_SAMPLES", 50);
    let heavy_samples = setting("ANALYTICS_SCALE_RAW_SAMPLES", 10).min(samples);
    let mut times: Vec<Vec<Duration>> = vec![Vec::new(); steps.len()];
    let (mut peak_kib, mut peak_reset) = (0, true);
    let clear_refs = format!("/proc/{}/clear_refs", service.pid);
    let mut rng = StdRng::seed_from_u64(7);
    let started = Instant::now();
    for round in 0..WARMUP + samples {
        let kept = |i: &usize| round < WARMUP + heavy_samples || !heavy(*i);
        let mut order: Vec<usize> = (0..steps.len()).filter(kept).collect();
        order.shuffle(&mut rng);
        for i in order {
            let csv = matches!(steps[i], Ask::Csv(..));
            // The CSV's peak memory is its own: the peak (VmHWM) is reset before each request.
            peak_reset &= !csv || std::fs::write(&clear_refs, "5").is_ok();
            let took = step(steps[i], round == 0).await?;
            peak_kib = peak_kib.max(if csv { service.peak_rss_kib() } else { 0 });
            times[i].extend((round >= WARMUP).then_some(took));
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    println!("{samples} rounds ({heavy_samples} with the raw aggregates) in {seconds:.0} s");

    let [what, p50, p95, raw50, raw95] = ["step", "p50", "p95", "raw p50", "raw p95"];
    println!("\n  {what:<44} {p50:>9} {p95:>9} {raw50:>9} {raw95:>9}  goal");
    for (p, (name, asks, goal)) in pairs.iter().enumerate() {
        let [ours, raw] = [&times[2 * p], &times[2 * p + 1]];
        if ours.is_empty() {
            continue; // measured in the rounds with raw aggregates only, and there were none
        }
        let [p50, p95] = [50.0, 95.0].map(|p| percentile(ours, p));
        let verdict = if p95 < *goal { "met" } else { "MISSED" };
        let [raw50, raw95] = match asks[1] {
            Ask::Nothing => ["", ""].map(String::from),
            _ if raw.is_empty() => ["-", "-"].map(String::from),
            _ => [50.0, 95.0].map(|p| format_latency(percentile(raw, p).as_secs_f64())),
        };
        let [p50, p95] = [p50, p95].map(|d| format_latency(d.as_secs_f64()));
        println!("  {name:<44} {p50:>9} {p95:>9} {raw50:>9} {raw95:>9}  p95 < {goal:?}: {verdict}");
    }
    let refused = "since start: the kernel refused a reset before a";
    let reset = [refused, "reset before each"][usize::from(peak_reset)];
    let peak = peak_kib as f64 / 1024.0;
    println!("  service memory: peak {peak:.1} MiB during a CSV request ({reset} CSV request)");
    Ok(())
}

/// Generates the data set into `databases`; returns its shop as `videoapp generate` prints it.
async fn generate_data(databases: &Databases, database_url: &str) -> Outcome<Value> {
    let binary = env!("CARGO_BIN_EXE_videoapp");
    let events = setting("ANALYTICS_SCALE_EVENTS", 100_000_000).to_string();
    let started = Instant::now();
    let output = tokio::process::Command::new(binary)
        .arg("generate")
        .args(GENERATE.split(' '))
        .args(["--events", &events])
        .env("DATABASE_URL", database_url)
        .env("CLICKHOUSE_URL", &databases.clickhouse_url)
        .env("CLICKHOUSE_DATABASE", &databases.name)
        .stderr(std::process::Stdio::inherit())
        .output();
    let output = output.await.context(binary)?;
    let status = output.status;
    ensure!(status.success(), "videoapp generate failed ({status})");
    let took = started.elapsed().as_secs_f64();
    println!("generate {GENERATE} --events {events} took {took:.1} s");
    let shops: Vec<Value> = serde_json::from_slice(&output.stdout).context("no shops")?;
    (shops.into_iter().next()).context("no shop was generated")
}

/// After ClickHouse's own merges (at most [`SETTLE`]), the aggregates' partitions merged as the
/// service merges them: past months and years (quiet), and `today`'s that are small and crowded.
async fn settle(databases: &Databases, today: NaiveDate) -> Outcome {
    let (client, started) = (reqwest::Client::new(), Instant::now());
    let ch = async |sql| databases.query(&client, sql).await;
    let merges = "SELECT count() FROM system.merges WHERE database = currentDatabase()";
    while ch(merges).await? != "0" && started.elapsed() < SETTLE {
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
    let warehouse = warehouse_on(&databases.clickhouse_url, &databases.name, None);
    let current = [today.format("%Y%m"), today.format("%Y")].map(|d| d.to_string());
    let quiet = quiet_partitions(&warehouse, Duration::ZERO);
    let both = tokio::try_join!(quiet, crowded_partitions(&warehouse, CROWDED));
    let (past, crowded) = both.context("ClickHouse")?;
    let past = past.into_iter().filter(|p| !current.contains(&p.id));
    for partition in past.chain(crowded.into_iter().filter(|p| current.contains(&p.id))) {
        let merged = merge(&warehouse, &partition).await;
        merged.with_context(|| format!("merging {} {}", partition.table, partition.id))?;
    }
    let seconds = started.elapsed().as_secs_f64();
    let tables = ch("SELECT table, sum(rows), count() FROM system.parts \
         WHERE active AND database = currentDatabase() GROUP BY table ORDER BY table");
    let tables = tables.await?;
    println!("merged in {seconds:.0} s; table, rows, parts:\n{tables}");
    Ok(())
}

/// The twelve figures of a metrics object as aggregates of the `events` rows where `when` holds.
fn raw_metrics(when: &str) -> String {
    let cart = "event_type = 'add_to_cart'";
    let order = "event_type = 'checkout_completed'";
    let count = |what: &str| format!("countIf({what} AND {when})");
    let revenue = |what: &str| format!("sumIf(revenue_e4, {what} AND {when})");
    let events = ["impression", "view", "click"].map(|e| count(&format!("event_type = '{e}'")));
    let mut figures = events.to_vec();
    figures.extend([count(cart), count(order), revenue(order)]);
    for attribution in ["direct", "influenced"] {
        let [cart, order] = [cart, order].map(|e| format!("{e} AND attribution = '{attribution}'"));
        figures.extend([count(&cart), count(&order), revenue(&order)]);
    }
    figures.join(", ")
}

async fn json(request: reqwest::RequestBuilder) -> Outcome<Value> {
    match load::answer(request).await? {
        (reqwest::StatusCode::OK, body) => Ok(serde_json::from_slice(&body)?),
        (status, body) => bail!("{status}: {body:?}"),
    }
}
