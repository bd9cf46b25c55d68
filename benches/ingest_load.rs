//! Load run of event ingestion, end to end into ClickHouse, beside its ceiling, in one run:
//!
//! 1. the real service as a separate process (`target/release/videoapp serve`, the binary cargo
//!    builds for this target), against fresh `bench_<uuid>` databases and a fresh spool
//!    directory, with the production defaults (batches of 25,000 rows or 1 s, fsync per group
//!    commit). Its 202 means the event is fsynced in the spool;
//! 2. a bare axum server in this process (a runtime of its own) whose one POST handler answers
//!    the service's own 202 body, byte for byte, and does nothing else: the ceiling.
//!
//! **Throughput.** `wrk` drives both with the same Lua script: signed `POST
//! /apps/videoapp_sub/analytics` requests, one event each as the widget loader's beacon sends
//! it, cycling through 256 pre-built bodies; 256 connections, warm-up then 15 s measured, a few
//! rounds, targets alternating.
//!
//! Why 256 connections: a durable 202 waits for a disk flush (0.1–1 ms here, and it varies), so a
//! closed-loop generator with C connections cannot get more than C / (flush + round trip)
//! answers a second from the service, however much CPU is left; with 64 the service sat partly
//! idle on a slow-disk day. Beacons come from many browsers at once, not from a few clients in
//! lock-step. Both targets get the same connections; `INGEST_LOAD_CONNECTIONS` sets them. Only 202s count. When the measured time is up, the script stops
//! posting (each connection then sends `GET` to the same path, answered 405 with no side
//! effect), so no event is ever cut off mid-request when wrk exits, and the acknowledgements
//! the script counted are exactly those the service gave.
//!
//! **End to end.** After each of the service's runs the harness waits until ClickHouse's
//! `events` table holds exactly the number of events the service acknowledged
//! (`events_accepted_total` on `/metrics`), which must also equal the 202s the generators
//! counted, and reports how long that took after the last POST. Any difference fails the run.
//!
//! **Latency.** At half the service's measured rate (median of the rounds), an open-loop
//! generator with coordinated-omission correction ([`support::open_loop`]) drives the service,
//! then the ceiling at the same rate: p50/p90/p99/p99.9/max from each request's scheduled send
//! time.
//!
//! At the end: the service's peak resident memory (`VmHWM`), then SIGTERM.
//!
//! `cargo bench --bench ingest_load`. Without `--bench` (so under `cargo test`) it only says it
//! skipped. Settings: `INGEST_LOAD_SECONDS` (15), `INGEST_LOAD_WARMUP_SECONDS` (3),
//! `INGEST_LOAD_ROUNDS` (3), `INGEST_LOAD_CONNECTIONS` (256), `INGEST_LOAD_THREADS` (wrk threads,
//! default the number of cores), `INGEST_LOAD_LATENCY_SECONDS` (15),
//! `INGEST_LOAD_LATENCY_CONNECTIONS` (256), `INGEST_LOAD_RATE` (fixed rate for the latency runs;
//! default half the service's measured rate), `INGEST_LOAD_QUIET_WAIT_SECONDS` (900: how long to
//! wait for other load runs to finish first), `INGEST_LOAD_SETTLE_WAIT_SECONDS` (420: how long to
//! wait for creating a file in ClickHouse's table directory to be cheap again after the previous
//! run's or the test suite's dropped databases; 0 measures it without waiting),
//! `INGEST_LOAD_VERBOSE=1` (wrk's own output), `INGEST_LOAD_EVENT_IDS=1` (every event posted
//! carries an `eventId` of its own, as the loader's do, so the shipper claims each in Postgres:
//! what counting once costs; throughput rounds only) and
//! `INGEST_LOAD_PERF=FILE` (`perf record --call-graph dwarf` of the service during round 1's
//! measured window) and `INGEST_LOAD_INSTRUCTIONS=1` (`perf stat`: each server's instructions per
//! acknowledged event in every measured window, a figure the machine's noise barely moves), and
//! `INGEST_LOAD_CALLGRIND=FILE` (the service runs under `valgrind --tool=callgrind`, writing FILE
//! when it stops: every instruction by function; `callgrind_annotate --inclusive=yes FILE`), and
//! `INGEST_LOAD_CLICKHOUSE_NICE` (19: the nice value of ClickHouse's scheduling group during the
//! run, restored after; 0 gives it the same share of the cores as the service and generators),
//! and `INGEST_LOAD_CLICKHOUSE_IDLE` (1: ClickHouse's threads run under `SCHED_IDLE` during the
//! run, so that a woken service or generator thread pre-empts them at once; 0 leaves them as
//! they are).

mod support;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::post;
use axum::Router;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::json;
use tokio::net::TcpListener;
use tokio::runtime::{Handle, Runtime};
use uuid::Uuid;
use videoapp::config;

use support::load::{
    cores, cpu_model, format_latency, median, preflight, value_after, wait_for_quiet_machine,
    wait_for_settled_filesystem, CpuSnapshot, CpuUsage, Wrk, DISTURBED_CORES, SETTLED_FILE_CREATE,
};
use support::open_loop::{OpenLoop, OpenLoopReport};
use support::{Databases, ServiceProcess};

/// The issue's targets: acknowledged events/s at least this share of the ceiling's…
const TARGET_RATIO: f64 = 0.50;
/// …and p99 under this at half the service's rate.
const TARGET_P99: Duration = Duration::from_millis(10);
/// After the measured seconds, wrk keeps running this long while the script no longer posts, so
/// every event posted is answered before wrk exits.
const TAIL_SECONDS: u64 = 1;
/// Long enough for ext4 to reuse every inode freed before the run: 360 s after a deletion at the
/// latest (`wait_for_settled_filesystem`).
const DEFAULT_SETTLE_WAIT: Duration = Duration::from_secs(420);
/// How long ClickHouse may take to hold every acknowledged event after the last POST.
const DRAIN_LIMIT: Duration = Duration::from_secs(120);
const DRAIN_POLL: Duration = Duration::from_millis(50);
/// Distinct event bodies the generators cycle through.
const BODIES: usize = 256;
/// What `navigator.sendBeacon` sends with a string body.
const BEACON_CONTENT_TYPE: &str = "text/plain;charset=UTF-8";
const USER_AGENT: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) \
                          AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 \
                          Safari/604.1";

fn main() -> ExitCode {
    let wrk = match preflight("ingest_load") {
        Ok(wrk) => wrk,
        Err(code) => return code,
    };
    let settings = match Settings::from_env() {
        Ok(settings) => settings,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let runtime = Runtime::new().expect("a tokio runtime");
    // The ceiling gets a runtime of its own, as many workers as the service has (tokio's
    // default: one per core), apart from the harness's bookkeeping and generator.
    let ceiling_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(cores())
        .thread_name("ceiling")
        .enable_all()
        .build()
        .expect("the ceiling's runtime");
    let (databases, outcome) = runtime.block_on(async {
        let client = reqwest::Client::new();
        if let Err(e) = support::clickhouse_query(&client, "default", "SELECT 1").await {
            support::fail(e);
        }
        match support::leftover_test_databases(&client).await {
            Ok((0, 0)) => {}
            Ok((postgres, clickhouse)) => println!(
                "  WARNING: {postgres} Postgres and {clickhouse} ClickHouse test_* databases are \
                 left from earlier test runs; their background work (autovacuum, merges) runs \
                 during this one. `scripts/test` drops them when it starts."
            ),
            Err(e) => println!("  (cannot count left-over test databases: {e})"),
        }
        let (databases, database_url) = Databases::create().await;
        let outcome = run(
            &databases,
            &database_url,
            ceiling_runtime.handle(),
            &wrk,
            &settings,
        )
        .await;
        (databases, outcome)
    });
    drop(ceiling_runtime);
    drop(runtime);
    databases.drop_all();
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Settings {
    seconds: u64,
    warmup_seconds: u64,
    rounds: u64,
    connections: u64,
    threads: u64,
    latency_seconds: u64,
    latency_connections: u64,
    rate: Option<f64>,
    quiet_wait: Duration,
    settle_wait: Duration,
    verbose: bool,
    /// Every posted event carries an `eventId` of its own, as the loader sends them, so the
    /// shipper claims each one (what counting once costs). Throughput only.
    event_ids: bool,
    perf: Option<PathBuf>,
    count_instructions: bool,
    clickhouse_nice: i32,
    clickhouse_idle: bool,
}

impl Settings {
    fn from_env() -> Result<Settings, String> {
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
        let rate = match std::env::var("INGEST_LOAD_RATE") {
            Ok(raw) => Some(
                raw.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|r| r.is_finite() && *r > 0.0)
                    .ok_or_else(|| format!("INGEST_LOAD_RATE={raw} is not a positive rate"))?,
            ),
            Err(_) => None,
        };
        Ok(Settings {
            seconds: read("INGEST_LOAD_SECONDS", 15)?,
            warmup_seconds: read("INGEST_LOAD_WARMUP_SECONDS", 3)?,
            rounds: read("INGEST_LOAD_ROUNDS", 3)?,
            connections: read("INGEST_LOAD_CONNECTIONS", 256)?,
            threads: read("INGEST_LOAD_THREADS", cores() as u64)?,
            latency_seconds: read("INGEST_LOAD_LATENCY_SECONDS", 15)?,
            latency_connections: read("INGEST_LOAD_LATENCY_CONNECTIONS", 256)?,
            rate,
            quiet_wait: Duration::from_secs(read("INGEST_LOAD_QUIET_WAIT_SECONDS", 900)?),
            settle_wait: match std::env::var("INGEST_LOAD_SETTLE_WAIT_SECONDS") {
                Ok(raw) => Duration::from_secs(raw.trim().parse::<u64>().map_err(|_| {
                    format!("INGEST_LOAD_SETTLE_WAIT_SECONDS={raw} is not a whole number")
                })?),
                Err(_) => DEFAULT_SETTLE_WAIT,
            },
            verbose: std::env::var("INGEST_LOAD_VERBOSE").is_ok_and(|v| v == "1"),
            event_ids: std::env::var("INGEST_LOAD_EVENT_IDS").is_ok_and(|v| v == "1"),
            perf: std::env::var_os("INGEST_LOAD_PERF").map(PathBuf::from),
            count_instructions: std::env::var("INGEST_LOAD_INSTRUCTIONS").is_ok_and(|v| v == "1"),
            clickhouse_nice: match std::env::var("INGEST_LOAD_CLICKHOUSE_NICE") {
                Ok(raw) => raw
                    .trim()
                    .parse::<i32>()
                    .ok()
                    .filter(|n| (0..=19).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "INGEST_LOAD_CLICKHOUSE_NICE={raw} is not a nice value from 0 to 19"
                        )
                    })?,
                Err(_) => 19,
            },
            clickhouse_idle: match std::env::var("INGEST_LOAD_CLICKHOUSE_IDLE").as_deref() {
                Ok("0") => false,
                Ok("1") | Err(_) => true,
                Ok(raw) => return Err(format!("INGEST_LOAD_CLICKHOUSE_IDLE={raw} is not 0 or 1")),
            },
        })
    }
}

async fn run(
    databases: &Databases,
    database_url: &str,
    ceiling: &Handle,
    wrk: &str,
    settings: &Settings,
) -> Result<(), String> {
    let service = ServiceProcess::start(databases, database_url).await?;
    let outcome = measure(&service, databases, ceiling, wrk, settings).await;
    // Peak memory over the whole run, read before the process goes.
    if let Some((peak, now)) = service.memory_kib() {
        println!(
            "  service memory: peak RSS (VmHWM) {:.1} MiB, RSS at the end {:.1} MiB",
            peak as f64 / 1024.0,
            now as f64 / 1024.0
        );
    }
    match service.stop(Duration::from_secs(30)).await {
        Ok(status) if status.success() => {}
        Ok(status) => println!("  WARNING: the service exited with {status} after SIGTERM"),
        Err(e) => println!("  WARNING: {e}"),
    }
    outcome
}

/// The two servers under test, driven the same way.
struct Target {
    name: &'static str,
    url: String,
    addr: SocketAddr,
    is_service: bool,
}

/// One wrk run (warm-up excluded).
#[derive(Clone, Default)]
struct WrkFigures {
    acknowledged_per_second: f64,
    /// Counted by the Lua script: 202s in the measured window, other answers to POSTs.
    accepted: u64,
    refused: u64,
    socket_errors: u64,
    /// Other answers in the warm-up run before it.
    warmup_refused: u64,
    cpu: CpuUsage,
    /// After the service's runs: from the last POST until ClickHouse held every event.
    drain: Option<Duration>,
    /// After the service's runs: its group commits (see `spool_summary`).
    spool: Option<String>,
    /// With `INGEST_LOAD_INSTRUCTIONS=1`: the server's instructions per acknowledged event.
    instructions: Option<String>,
}

/// Who used the cores: the service, this process (ceiling server and generator), wrk,
/// ClickHouse, everything else, the hypervisor.
fn cpu_columns(cpu: &CpuUsage) -> String {
    let service = cpu.watched.first().copied().unwrap_or(0.0);
    let clickhouse: f64 = cpu.watched.iter().skip(1).sum();
    format!(
        "{:>7.2} {:>7.2} {:>5.2} {:>5.2} {:>5.2} {:>5.2} {:>5.2} {:>5.2}",
        service, cpu.own, cpu.children, clickhouse, cpu.other, cpu.irq, cpu.steal, cpu.idle
    )
}

const CPU_HEADER: &str = "service harness   wrk    ch other   irq steal  idle";

impl WrkFigures {
    fn header() -> String {
        format!(
            "{:<44} {:>10} {:>9} {:>7} {CPU_HEADER} {:>8}",
            "target", "acked ev/s", "202s", "refused", "drain"
        )
    }

    fn row(&self, name: &str) -> String {
        format!(
            "{:<44} {:>10.0} {:>9} {:>7} {} {:>8}",
            name,
            self.acknowledged_per_second,
            self.accepted,
            self.refused + self.socket_errors,
            cpu_columns(&self.cpu),
            self.drain
                .map(|d| format!("{:.2} s", d.as_secs_f64()))
                .unwrap_or_else(|| "-".to_string())
        )
    }
}

async fn measure(
    service: &ServiceProcess,
    databases: &Databases,
    ceiling_runtime: &Handle,
    wrk: &str,
    settings: &Settings,
) -> Result<(), String> {
    let client = reqwest::Client::new();
    let uri = service.events_uri();
    let bodies = event_bodies();
    let service_addr = address_of(&service.base_url)?;

    // One real acknowledgement first: its body is what the ceiling answers.
    let (status, body) =
        post_event(&client, &format!("{}{uri}", service.base_url), &bodies[0]).await?;
    if status != StatusCode::ACCEPTED {
        return Err(format!(
            "the service answered {status} to an event: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    // Every 202 this harness saw, warm-ups included: ClickHouse must end up with exactly these.
    let mut acknowledged: u64 = 1;
    let ceiling_addr = ceiling_runtime
        .spawn(start_ceiling(body.clone()))
        .await
        .map_err(|e| format!("the ceiling did not start: {e}"))??;
    let (ceiling_status, ceiling_body) =
        post_event(&client, &format!("http://{ceiling_addr}{uri}"), &bodies[0]).await?;
    if ceiling_status != StatusCode::ACCEPTED || ceiling_body != body {
        return Err(format!(
            "the ceiling answers {ceiling_status} {:?}, the service 202 {:?}",
            String::from_utf8_lossy(&ceiling_body),
            String::from_utf8_lossy(&body)
        ));
    }
    let script = TempFile::write(
        std::env::temp_dir().join(format!("videoapp-ingest-load-{}.lua", Uuid::new_v4())),
        &lua_script(&bodies, settings.event_ids),
    )?;
    let targets = [
        Target {
            name: "service: POST analytics, durable 202",
            url: format!("{}{uri}", service.base_url),
            addr: service_addr,
            is_service: true,
        },
        Target {
            name: "ceiling: bare axum, same 202 body",
            url: format!("http://{ceiling_addr}{uri}"),
            addr: ceiling_addr,
            is_service: false,
        },
    ];
    let clickhouse_pids = support::load::pids_named("clickhouse");
    let mut watched = vec![service.pid];
    watched.extend(&clickhouse_pids);

    println!();
    println!("ingest load run");
    println!(
        "  machine: {} cores ({}); the generators, the service and ClickHouse share them",
        cores(),
        cpu_model()
    );
    let overrides = support::batch_overrides();
    println!(
        "  service: {} serve (pid {}), {}, spool cap {} MiB; spool in {}",
        service.binary.display(),
        service.pid,
        if overrides.is_empty() {
            format!(
                "defaults: batches of {} rows or {} ms, spool commit delay {} µs",
                config::DEFAULT_BATCH_MAX_ROWS,
                config::DEFAULT_BATCH_MAX_AGE_MS,
                config::DEFAULT_SPOOL_COMMIT_DELAY_MICROS
            )
        } else {
            format!(
                "EXPERIMENT, not the defaults: {}",
                overrides
                    .iter()
                    .map(|(k, v)| format!("{k}={v}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        },
        config::DEFAULT_SPOOL_MAX_BYTES >> 20,
        databases.spool_dir.display()
    );
    println!(
        "  throughput: {wrk}, {} threads, {} keep-alive connections, loopback; per target and \
         round {} s warm-up, then {} s measured (+{TAIL_SECONDS} s tail without POSTs); {} \
         rounds, service then ceiling",
        settings.threads,
        settings.connections,
        settings.warmup_seconds,
        settings.seconds,
        settings.rounds
    );
    println!(
        "  request: POST {} ({} bytes of query), Content-Type {BEACON_CONTENT_TYPE}, one event \
         of {}-{} bytes, e.g. {}",
        support::EVENTS,
        uri.len() - support::EVENTS.len() - 1,
        bodies.iter().map(String::len).min().unwrap_or(0),
        bodies.iter().map(String::len).max().unwrap_or(0),
        bodies[0]
    );
    println!(
        "  202 body ({} bytes): {}",
        body.len(),
        String::from_utf8_lossy(&body)
    );
    if clickhouse_pids.is_empty() {
        println!("  (no ClickHouse process found on this machine: its CPU shows under 'other')");
    }
    // ClickHouse stands in for the warehouse, which production runs on a server of its own. Here
    // it shares the two cores, and as a daemon it has a scheduling group of its own, which Linux
    // gives the same share as the group of the service and the generators: each insert's parsing
    // and merging would pre-empt the service and show up as the service's latency. At nice 19 it
    // runs on what is left over (it still has to keep up: the drain check counts every event).
    let _clickhouse_nice = match support::load::AutogroupNice::set(
        &clickhouse_pids,
        settings.clickhouse_nice,
    ) {
        Ok(set) => {
            println!(
                "  ClickHouse's scheduling group at nice {} for this run (INGEST_LOAD_CLICKHOUSE_NICE; 0 = an equal share)",
                settings.clickhouse_nice
            );
            Some(set)
        }
        Err(e) => {
            println!("  ClickHouse's priority left as it is: {e}");
            None
        }
    };
    // The group's nice lowers ClickHouse's share, but its running thread still finishes its time
    // slice before a woken request thread gets the core; under SCHED_IDLE it yields at once.
    let _clickhouse_idle = if settings.clickhouse_idle && !clickhouse_pids.is_empty() {
        match support::load::IdlePolicy::set(&clickhouse_pids) {
            Ok(set) => {
                println!("  ClickHouse's threads under SCHED_IDLE for this run (INGEST_LOAD_CLICKHOUSE_IDLE=0: normal)");
                Some(set)
            }
            Err(e) => {
                println!("  ClickHouse's threads keep their policy: {e}");
                None
            }
        }
    } else {
        None
    };
    println!();
    let quiet = wait_for_quiet_machine(settings.quiet_wait).await;
    let table_dir = support::clickhouse_query(
        &client,
        &databases.clickhouse,
        "SELECT data_path FROM system.tables WHERE database = currentDatabase() AND name = 'events'",
    )
    .await?;
    let settled = match wait_for_settled_filesystem(Path::new(&table_dir), settings.settle_wait)
        .await
    {
        Ok(cost) => {
            println!(
                "  creating a file in the events table's directory costs {} (INGEST_LOAD_SETTLE_WAIT_SECONDS: how long to wait for under {})",
                format_latency(cost),
                format_latency(SETTLED_FILE_CREATE)
            );
            cost <= SETTLED_FILE_CREATE
        }
        Err(e) => {
            println!(
                "  the cost of creating a file in ClickHouse's table directory is unknown: {e}"
            );
            true
        }
    };
    println!();

    println!("  {}", WrkFigures::header());
    let mut rounds: Vec<[WrkFigures; 2]> = Vec::new();
    for round in 1..=settings.rounds {
        let mut pair: [WrkFigures; 2] = Default::default();
        for (i, target) in targets.iter().enumerate() {
            let perf = (round == 1 && target.is_service)
                .then_some(settings.perf.as_deref())
                .flatten();
            let figures = run_wrk(
                target,
                &script.path,
                &watched,
                settings,
                perf,
                service,
                &client,
                databases,
                &mut acknowledged,
            )
            .await?;
            println!("  {}", figures.row(&format!("#{round} {}", target.name)));
            if let Some(spool) = &figures.spool {
                println!("      {spool}");
            }
            if let Some(instructions) = &figures.instructions {
                println!("      {instructions}");
            }
            pair[i] = figures;
        }
        rounds.push(pair);
    }

    // Rounds where other work or the hypervisor took a real share of the cores are left out.
    let disturbed: Vec<bool> = rounds
        .iter()
        .map(|pair| pair.iter().any(|f| f.cpu.disturbed()))
        .collect();
    let clean: Vec<usize> = (0..rounds.len()).filter(|&i| !disturbed[i]).collect();
    let counted: Vec<usize> = if clean.is_empty() {
        (0..rounds.len()).collect()
    } else {
        clean.clone()
    };
    println!();
    if clean.is_empty() {
        println!(
            "  WARNING: every round was disturbed by other work (see 'other'/'steal'); the \
             figures below are not reliable"
        );
    } else if clean.len() < rounds.len() {
        println!(
            "  left out as disturbed (other work took over {DISTURBED_CORES:.2} cores): round(s) {}",
            (1..=rounds.len())
                .filter(|r| disturbed[r - 1])
                .map(|r| format!("#{r}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let column = |i: usize, f: fn(&WrkFigures) -> f64| -> f64 {
        median(counted.iter().map(|&r| f(&rounds[r][i])).collect())
    };
    let service_rate = column(0, |f| f.acknowledged_per_second);
    let ceiling_rate = column(1, |f| f.acknowledged_per_second);
    let ratios: Vec<f64> = counted
        .iter()
        .map(|&r| rounds[r][0].acknowledged_per_second / rounds[r][1].acknowledged_per_second)
        .collect();
    let ratio = median(ratios.clone());
    let drains: Vec<f64> = rounds
        .iter()
        .filter_map(|pair| pair[0].drain.map(|d| d.as_secs_f64()))
        .collect();
    let service_cores = column(0, |f| f.cpu.watched.first().copied().unwrap_or(0.0));
    let clickhouse_cores = column(0, |f| f.cpu.watched.iter().skip(1).sum());
    println!("  medians over {} round(s)", counted.len());
    println!("  service: {service_rate:.0} acknowledged events/s; ceiling: {ceiling_rate:.0}/s");
    println!(
        "  ratio service/ceiling: {:.1}% (median; by round: {}); target >= {:.0}%: {}",
        ratio * 100.0,
        ratios
            .iter()
            .map(|r| format!("{:.1}%", r * 100.0))
            .collect::<Vec<_>>()
            .join(", "),
        TARGET_RATIO * 100.0,
        if ratio >= TARGET_RATIO {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  service CPU {service_cores:.2} cores = {:.1} µs per event; ClickHouse {clickhouse_cores:.2} \
         cores = {:.1} µs per event",
        service_cores / service_rate * 1e6,
        clickhouse_cores / service_rate * 1e6
    );
    println!(
        "  drain (last POST -> every acknowledged event in ClickHouse): {} (max {:.2} s)",
        drains
            .iter()
            .map(|d| format!("{d:.2} s"))
            .collect::<Vec<_>>()
            .join(", "),
        drains.iter().copied().fold(0.0, f64::max)
    );
    println!(
        "  CPU columns are cores busy over the measured window (of {}): the service process, \
         this process (ceiling server; open-loop generator), wrk, ClickHouse, every other \
         process, interrupts and softirqs (loopback delivery), time stolen by the hypervisor, \
         and idle.",
        cores()
    );

    if settings.event_ids {
        // The open-loop generator replays fixed bytes, which would repeat every event id.
        println!();
        println!("  latency not measured with INGEST_LOAD_EVENT_IDS=1 (throughput only)");
        println!(
            "  end to end: ClickHouse holds exactly the {acknowledged} events the service \
             acknowledged, each with its own event id"
        );
        return Ok(());
    }

    // Latency at a fixed rate, open loop.
    let rate = settings.rate.unwrap_or(service_rate / 2.0);
    println!();
    println!(
        "  latency at a fixed rate: {rate:.0} requests/s ({}), open loop with coordinated-omission \
         correction (latency from each request's scheduled time), {} keep-alive connections, {} s \
         warm-up + {} s measured",
        if settings.rate.is_some() {
            "INGEST_LOAD_RATE"
        } else {
            "half the service's median rate"
        },
        settings.latency_connections,
        settings.warmup_seconds,
        settings.latency_seconds
    );
    let quiet = wait_for_quiet_machine(settings.quiet_wait).await && quiet;
    println!("  {}", latency_header());
    let mut latency_reports = Vec::new();
    for target in &targets {
        let requests = Arc::new(raw_requests(&uri, target.addr, &bodies));
        let warmup = Duration::from_secs(settings.warmup_seconds);
        let duration = Duration::from_secs(settings.latency_seconds);
        let start = Instant::now() + Duration::from_millis(500);
        let generator = OpenLoop {
            addr: target.addr,
            requests,
            rate,
            connections: settings.latency_connections as usize,
            start,
            warmup,
            duration,
        };
        let window = async {
            tokio::time::sleep_until((start + warmup).into()).await;
            let before = CpuSnapshot::take(&watched);
            tokio::time::sleep_until((start + warmup + duration).into()).await;
            before.zip(CpuSnapshot::take(&watched))
        };
        let spool_before = match target.is_service {
            true => Some(service.metrics(&client).await?),
            false => None,
        };
        let (report, cpu) = tokio::join!(generator.run(), window);
        let report = report?;
        let cpu = cpu.map(|(b, a)| b.until(&a)).unwrap_or_default();
        println!("  {}", latency_row(target.name, &report, &cpu));
        if target.is_service {
            acknowledged += report.all_with(202);
            let drain = drain(
                service,
                &client,
                databases,
                start + warmup + duration,
                Some(acknowledged),
            )
            .await?;
            println!(
                "    every acknowledged event in ClickHouse {:.2} s after the last POST ({} in all)",
                drain.as_secs_f64(),
                acknowledged
            );
            if let Some(before) = &spool_before {
                if let Some(spool) = spool_summary(before, &service.metrics(&client).await?) {
                    println!("    {spool}");
                }
            }
        }
        latency_reports.push((report, cpu));
    }
    let (service_latency, service_cpu) = &latency_reports[0];
    let p99 = service_latency.latency(0.99);
    println!(
        "  service p99 at {rate:.0}/s: {}; target < {}: {}. Service CPU {:.2} cores = {:.1} µs \
         per event at this rate. Pacer lag p99 {}, max {}.",
        format_latency(p99),
        format_latency(TARGET_P99),
        if p99 < TARGET_P99 { "met" } else { "NOT met" },
        service_cpu.watched.first().copied().unwrap_or(0.0),
        service_cpu.watched.first().copied().unwrap_or(0.0) / rate * 1e6,
        format_latency(service_latency.pacer_lag(0.99)),
        format_latency(service_latency.pacer_lag(1.0)),
    );
    println!(
        "  end to end: ClickHouse holds exactly the {acknowledged} events the service \
         acknowledged (202s counted by the generators = events_accepted_total = rows in \
         {}.events)",
        databases.clickhouse
    );
    if !quiet {
        println!("  WARNING: other load runs were on the machine; see the CPU columns");
    }
    if !settled {
        println!(
            "  WARNING: ClickHouse's file creation was still slow when the rounds began (above); \
             its inserts took more CPU than usual"
        );
    }

    let mut problems = Vec::new();
    for (round, pair) in rounds.iter().enumerate() {
        for (target, figures) in targets.iter().zip(pair) {
            let bad = figures.refused + figures.socket_errors + figures.warmup_refused;
            if bad > 0 {
                problems.push(format!(
                    "round {}: {}: {bad} requests not acknowledged (refused or failed)",
                    round + 1,
                    target.name
                ));
            }
        }
    }
    for (target, (report, _)) in targets.iter().zip(&latency_reports) {
        let not_202: u64 = report
            .all_by_status
            .iter()
            .filter(|(&status, _)| status != 202)
            .map(|(_, n)| n)
            .sum();
        if not_202 + report.errors > 0 {
            problems.push(format!(
                "latency run: {}: {not_202} answers other than 202, {} failed requests",
                target.name, report.errors
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// One target: warm-up, then the measured run with CPU accounting; for the service, the drain
/// into ClickHouse, measured from the last POST.
#[allow(clippy::too_many_arguments)]
async fn run_wrk(
    target: &Target,
    script: &Path,
    watched: &[u32],
    settings: &Settings,
    perf: Option<&Path>,
    service: &ServiceProcess,
    client: &reqwest::Client,
    databases: &Databases,
    acknowledged: &mut u64,
) -> Result<WrkFigures, String> {
    let wrk = |seconds: u64| Wrk {
        url: &target.url,
        threads: settings.threads,
        connections: settings.connections,
        seconds: seconds + TAIL_SECONDS,
        script: Some(script),
        script_args: vec![seconds.to_string()],
    };
    let warmup = wrk(settings.warmup_seconds).run().await?;
    let (_, warmup_accepted, warmup_refused) = script_counts(target, &warmup)?;
    if target.is_service {
        *acknowledged += warmup_accepted;
    }

    let spool_before = match target.is_service {
        true => Some(service.metrics(client).await?),
        false => None,
    };
    let started = Instant::now();
    let posts_end = started + Duration::from_secs(settings.seconds);
    let before = CpuSnapshot::take(watched);
    let window = async {
        tokio::time::sleep_until(posts_end.into()).await;
        CpuSnapshot::take(watched)
    };
    let profile = async {
        match perf {
            Some(path) => Some(record_profile(service.pid, path, settings.seconds).await),
            None => None,
        }
    };
    // The ceiling's server runs in this process; during the wrk runs nothing else here is busy.
    let server_pid = match target.is_service {
        true => service.pid,
        false => std::process::id(),
    };
    let counted = async {
        match settings.count_instructions {
            true => Some(count_instructions(server_pid, settings.seconds).await),
            false => None,
        }
    };
    // For the service, ClickHouse is watched from the last POST on, while wrk's tail runs.
    let drained = async {
        match target.is_service {
            true => Some(drain(service, client, databases, posts_end, None).await),
            false => None,
        }
    };
    let measured = wrk(settings.seconds);
    let (output, after, profiled, counted, drained) =
        tokio::join!(measured.run(), window, profile, counted, drained);
    let output = output?;
    if settings.verbose {
        for line in output.lines() {
            println!("      {line}");
        }
    }
    if let Some(result) = profiled {
        match result {
            Ok(path) => println!("    perf profile of the service written to {path}"),
            Err(e) => println!("    WARNING: perf: {e}"),
        }
    }
    let (_, accepted, refused) = script_counts(target, &output)?;
    let socket_errors = support::load::parse_wrk(&output)?.socket_errors;
    let mut figures = WrkFigures {
        acknowledged_per_second: accepted as f64 / settings.seconds as f64,
        accepted,
        refused,
        socket_errors,
        warmup_refused,
        cpu: before
            .zip(after)
            .map(|(b, a)| b.until(&a))
            .unwrap_or_default(),
        drain: None,
        spool: None,
        instructions: counted.map(|result| match result {
            Ok((user, kernel)) => {
                let per_event = |n: u64| n as f64 / accepted.max(1) as f64;
                format!(
                    "instructions per acknowledged event: {:.0} user + {:.0} kernel",
                    per_event(user),
                    per_event(kernel)
                )
            }
            Err(e) => format!("WARNING: perf stat: {e}"),
        }),
    };
    if let Some(first) = drained {
        *acknowledged += accepted;
        let first = first?;
        // Now that every answer is counted, the three counts must agree. If they do at once,
        // the drain ended when the watch above saw it; otherwise when they came to agree.
        let checking_from = posts_end.elapsed();
        let confirmed = drain(service, client, databases, posts_end, Some(*acknowledged)).await?;
        if let Some(before) = &spool_before {
            figures.spool = spool_summary(before, &service.metrics(client).await?);
        }
        figures.drain = Some(if confirmed < checking_from + DRAIN_POLL {
            first
        } else {
            confirmed
        });
    }
    Ok(figures)
}

/// `perf record` of `pid` for `seconds`, with DWARF call graphs (the release build has no frame
/// pointers, but its unwind tables suffice); returns the file written.
async fn record_profile(pid: u32, path: &Path, seconds: u64) -> Result<String, String> {
    let output = tokio::process::Command::new("perf")
        .args(["record", "-F", "299", "--call-graph", "dwarf,16384", "-o"])
        .arg(path)
        .args(["-p", &pid.to_string(), "--", "sleep", &seconds.to_string()])
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run perf: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    Ok(path.display().to_string())
}

/// `perf stat` of `pid` for `seconds`: instructions retired in user space and in the kernel.
/// Unlike CPU time, a count that other load on the machine barely moves.
async fn count_instructions(pid: u32, seconds: u64) -> Result<(u64, u64), String> {
    let output = tokio::process::Command::new("perf")
        .args(["stat", "-x", ",", "-e", "instructions:u,instructions:k"])
        .args(["-p", &pid.to_string(), "--", "sleep", &seconds.to_string()])
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run perf: {e}"))?;
    let report = String::from_utf8_lossy(&output.stderr);
    // CSV lines: value,unit,event,…
    let count = |event: &str| {
        report.lines().find_map(|line| {
            let mut fields = line.split(',');
            let value = fields.next()?.trim().parse::<u64>().ok()?;
            fields.nth(1).filter(|e| e.starts_with(event))?;
            Some(value)
        })
    };
    match (count("instructions:u"), count("instructions:k")) {
        (Some(user), Some(kernel)) => Ok((user, kernel)),
        _ => Err(report.trim().to_string()),
    }
}

/// The spool's group commits between two scrapes of the service's `/metrics` (warm-up and
/// tail included): how many records shared a sync, and how often the disk made a sync slow.
fn spool_summary(before: &str, after: &str) -> Option<String> {
    let delta = |name: &str| {
        Some(
            support::metric_value(after, name)?
                - support::metric_value(before, name).unwrap_or(0.0),
        )
    };
    let bucket = |le: &str| {
        delta(&format!(
            "spool_sync_duration_seconds_bucket{{le=\"{le}\"}}"
        ))
    };
    let syncs = delta("spool_sync_duration_seconds_count")?;
    let records = delta("spool_group_commit_records_sum")?;
    let seconds = delta("spool_sync_duration_seconds_sum")?;
    if syncs < 1.0 {
        return None;
    }
    Some(format!(
        "spool: {syncs:.0} syncs, {:.1} requests per sync, mean sync {:.0} µs, {:.0} syncs over 2.5 ms, {:.0} over 10 ms",
        records / syncs,
        seconds / syncs * 1e6,
        syncs - bucket("0.0025")?,
        syncs - bucket("0.01")?,
    ) + &handled_summary(&delta).unwrap_or_default())
}

/// How long the service itself took over its 202s (its HTTP layer's histogram, from the request
/// reaching the router to the response leaving it), and how long requests waited for the spool:
/// what of a client's latency is the service's.
fn handled_summary(delta: &dyn Fn(&str) -> Option<f64>) -> Option<String> {
    const ACCEPTED: &str = r#"method="POST",route="/apps/videoapp_sub/analytics",status="202""#;
    Some(format!(
        "\n      in the service: {}\n      waiting for the spool: {}",
        shares_over(
            delta,
            "http_request_duration_seconds",
            &format!("{ACCEPTED},")
        )?,
        shares_over(delta, "spool_append_wait_seconds", "")?,
    ))
}

/// "x% over 1 ms, … over 10 ms" of one histogram (and label set) between two scrapes; `labels`
/// is empty or ends with a comma.
fn shares_over(
    delta: &dyn Fn(&str) -> Option<f64>,
    histogram: &str,
    labels: &str,
) -> Option<String> {
    let count = delta(&match labels.trim_end_matches(',') {
        "" => format!("{histogram}_count"),
        labels => format!("{histogram}_count{{{labels}}}"),
    })?;
    let over = |le: &str| -> Option<f64> {
        let within = delta(&format!("{histogram}_bucket{{{labels}le=\"{le}\"}}"))?;
        Some(100.0 * (count - within) / count.max(1.0))
    };
    Some(format!(
        "{:.2}% over 1 ms, {:.2}% over 2.5 ms, {:.2}% over 5 ms, {:.3}% over 10 ms",
        over("0.001")?,
        over("0.0025")?,
        over("0.005")?,
        over("0.01")?,
    ))
}

/// Waits until ClickHouse holds exactly the events the service acknowledged
/// (`events_accepted_total`) and, when given, that this harness counted 202s for; returns how
/// long after `posts_end` (the last POST) that was. Fails when the counts still differ after
/// [`DRAIN_LIMIT`].
async fn drain(
    service: &ServiceProcess,
    client: &reqwest::Client,
    databases: &Databases,
    posts_end: Instant,
    acknowledged: Option<u64>,
) -> Result<Duration, String> {
    tokio::time::sleep_until(posts_end.into()).await;
    loop {
        let metrics = service.metrics(client).await?;
        let accepted = support::metric_value(&metrics, "events_accepted_total")
            .ok_or("the service's /metrics has no events_accepted_total")?
            as u64;
        let stored: u64 =
            support::clickhouse_query(client, &databases.clickhouse, "SELECT count() FROM events")
                .await?
                .parse()
                .map_err(|e| format!("ClickHouse count: {e}"))?;
        let waited = posts_end.elapsed();
        if stored == accepted && acknowledged.is_none_or(|a| a == accepted) {
            return Ok(waited);
        }
        if waited > DRAIN_LIMIT {
            let spooled = support::metric_value(&metrics, "spool_bytes").unwrap_or(f64::NAN);
            return Err(format!(
                "END TO END MISMATCH: {waited:.0?} after the last POST, ClickHouse holds \
                 {stored} events, the service counted {accepted} acknowledged \
                 (events_accepted_total) and the generators saw {} 202s; {spooled} bytes still \
                 spooled",
                acknowledged.map_or("(not yet counted)".to_string(), |a| a.to_string())
            ));
        }
        tokio::time::sleep(DRAIN_POLL).await;
    }
}

/// The Lua script's own counts: POSTs sent before the deadline, 202s, other answers to POSTs.
///
/// Every POST must have had its answer: for the service, a POST wrk gave up on may still have
/// been acknowledged and stored, and the end-to-end count would no longer be exact. The ceiling
/// stores nothing and its rate counts only 202s, so there a POST without an answer (wrk has
/// reported one socket read error now and then, sessions 5–7) is reported, not fatal.
fn script_counts(target: &Target, output: &str) -> Result<(u64, u64, u64), String> {
    let count = |label: &str| -> Result<u64, String> {
        value_after(output, label)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("the wrk script printed no '{label}':\n{output}"))
    };
    let posted = count("ingest_load posted")?;
    let accepted = count("ingest_load accepted")?;
    let refused = count("ingest_load refused")?;
    if accepted + refused != posted {
        let cut_off = format!(
            "wrk posted {posted} events but got {} answers to them: some were cut off",
            accepted + refused
        );
        if target.is_service {
            return Err(format!("{cut_off}. wrk's output:\n{output}"));
        }
        println!("    WARNING ({}): {cut_off}", target.name);
    }
    Ok((posted, accepted, refused))
}

async fn post_event(
    client: &reqwest::Client,
    url: &str,
    body: &str,
) -> Result<(StatusCode, Bytes), String> {
    let response = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, BEACON_CONTENT_TYPE)
        .body(body.to_string())
        .send()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    let status =
        StatusCode::from_u16(response.status().as_u16()).map_err(|e| format!("POST {url}: {e}"))?;
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("POST {url}: {e}"))?;
    Ok((status, body))
}

/// The ceiling: one POST route on the events path answering `body` as `application/json` with
/// 202, nothing else (no middleware, the request body is not even read by the handler). Serves
/// until its runtime ends; returns its address.
async fn start_ceiling(body: Bytes) -> Result<SocketAddr, String> {
    let router = Router::new().route(
        support::EVENTS,
        post(move || {
            let body = body.clone();
            async move {
                (
                    StatusCode::ACCEPTED,
                    [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
                    body,
                )
            }
        }),
    );
    let listener = TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| format!("ceiling listener: {e}"))?;
    let address = listener
        .local_addr()
        .map_err(|e| format!("ceiling listener: {e}"))?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(address)
}

fn address_of(base_url: &str) -> Result<SocketAddr, String> {
    base_url
        .trim_start_matches("http://")
        .parse()
        .map_err(|e| format!("{base_url}: {e}"))
}

/// Events as the widget loader's beacon sends them: mostly impressions, some views, over a
/// handful of widgets, 40 videos and 200 sessions, each with the browser's timestamp (the
/// harness's start, well inside the accepted window). Deterministic.
fn event_bodies() -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(0x1e57);
    let mut ids = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| Uuid::from_u128(rng.gen()).to_string())
            .collect()
    };
    let videos = ids(40);
    let widgets = ids(6);
    let sessions = ids(200);
    let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    (0..BODIES)
        .map(|_| {
            let event_type = if rng.gen_bool(0.75) {
                "impression"
            } else {
                "view"
            };
            json!({
                "eventType": event_type,
                "videoId": videos.choose(&mut rng).unwrap(),
                "widgetId": widgets.choose(&mut rng).unwrap(),
                "sessionId": sessions.choose(&mut rng).unwrap(),
                "timestamp": timestamp,
            })
            .to_string()
        })
        .collect()
}

/// The requests of the open-loop generator: the same bytes wrk's script sends.
fn raw_requests(uri: &str, addr: SocketAddr, bodies: &[String]) -> Vec<Vec<u8>> {
    bodies
        .iter()
        .map(|body| {
            format!(
                "POST {uri} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: {BEACON_CONTENT_TYPE}\r\n\
                 User-Agent: {USER_AGENT}\r\nAccept: */*\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            )
            .into_bytes()
        })
        .collect()
}

/// wrk's script: posts the bodies in turn until the measured seconds (its first argument) are
/// over, then sends only `GET` to the same path (405, no side effect) so nothing is in flight
/// when wrk exits; counts POSTs, 202s and other answers, and prints them at the end. With
/// `event_ids`, each POST's event gets an `eventId` of its own (wrk run, thread and counter),
/// built per request.
fn lua_script(bodies: &[String], event_ids: bool) -> String {
    let mut script = String::from(
        r#"-- Written by benches/ingest_load.rs for one run.
local ffi = require("ffi")
ffi.cdef[[
typedef struct { long tv_sec; long tv_nsec; } ingest_load_timespec;
int clock_gettime(int clock_id, ingest_load_timespec *tp);
]]
local clock = ffi.new("ingest_load_timespec")
local function now()
  ffi.C.clock_gettime(1, clock) -- CLOCK_MONOTONIC
  return tonumber(clock.tv_sec) + tonumber(clock.tv_nsec) * 1e-9
end

local bodies = {
"#,
    );
    for body in bodies {
        script.push_str("  [==[");
        script.push_str(body);
        script.push_str("]==],\n");
    }
    script.push_str(&format!(
        r#"}}
local threads = {{}}
local event_ids = {event_ids}

function setup(thread)
  table.insert(threads, thread)
  thread:set("thread_number", #threads)
  -- wrk calls request() once on its first thread to check the script, and never sends that one.
  thread:set("checked_by_wrk", #threads == 1)
end

function init(args)
  deadline = now() + tonumber(args[1])
  -- Each wrk run (warm-up, measured, every round) counts posts from zero: the microsecond it
  -- starts keeps its event ids apart from the other runs'.
  invocation = math.floor(now() * 1e6) % 4294967296
  posts = {{}}
  rests = {{}}
  post_headers = {{
    ["Content-Type"] = "{BEACON_CONTENT_TYPE}",
    ["User-Agent"] = "{USER_AGENT}",
    ["Accept"] = "*/*",
  }}
  for i, body in ipairs(bodies) do
    posts[i] = wrk.format("POST", nil, post_headers, body)
    rests[i] = string.sub(body, 2)
  end
  idle = wrk.format("GET", nil, {{}}, nil)
  next_post = 0
  posted = checked_by_wrk and -1 or 0
  accepted = 0
  refused = 0
  posting = true
end

function request()
  if posting and now() >= deadline then
    posting = false
  end
  if not posting then
    return idle
  end
  next_post = next_post % #posts + 1
  posted = posted + 1
  if event_ids then
    return wrk.format("POST", nil, post_headers, string.format(
      '{{"eventId":"%08x-%04x-4000-8000-%012x",%s', invocation, thread_number, posted, rests[next_post]))
  end
  return posts[next_post]
end

function response(status, headers, body)
  if status == 202 then
    accepted = accepted + 1
  elseif status ~= 405 then
    refused = refused + 1
  end
end

function done(summary, latency, requests)
  local p, a, r = 0, 0, 0
  for _, thread in ipairs(threads) do
    p = p + thread:get("posted")
    a = a + thread:get("accepted")
    r = r + thread:get("refused")
  end
  io.write(string.format("ingest_load posted %d\ningest_load accepted %d\ningest_load refused %d\n", p, a, r))
end
"#
    ));
    script
}

fn latency_header() -> String {
    format!(
        "{:<44} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {CPU_HEADER}",
        "target", "answered", "202s", "p50", "p90", "p99", "p99.9", "max"
    )
}

fn latency_row(name: &str, report: &OpenLoopReport, cpu: &CpuUsage) -> String {
    format!(
        "{:<44} {:>8} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {}",
        name,
        report.latencies_us.len(),
        report.measured_with(202),
        format_latency(report.latency(0.50)),
        format_latency(report.latency(0.90)),
        format_latency(report.latency(0.99)),
        format_latency(report.latency(0.999)),
        format_latency(report.latency(1.0)),
        cpu_columns(cpu)
    )
}

/// A file removed when dropped.
struct TempFile {
    path: PathBuf,
}

impl TempFile {
    fn write(path: PathBuf, contents: &str) -> Result<TempFile, String> {
        std::fs::write(&path, contents).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(TempFile { path })
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}
