//! Event ingestion end to end beside its ceiling, driven by `wrk`: `videoapp serve` as its own
//! process (the binary cargo builds for this target) on fresh databases with the production
//! defaults, its 202 meaning the event is fsynced in the spool; and a bare axum handler in this
//! process answering the same 202. One Lua script posts signed beacons (one event each, 256
//! bodies in turn) over 256 keep-alive connections (a durable 202 waits for a flush: few
//! connections would leave the service idle); after the measured seconds it only sends `GET`s
//! (405) so that no POST is cut off when wrk exits. ClickHouse must then hold exactly the events
//! the service acknowledged and the script counted; the drain is how long that took.
//!
//! Settings: `INGEST_LOAD_SECONDS` (15), `INGEST_LOAD_WARMUP_SECONDS` (3), `INGEST_LOAD_ROUNDS`
//! (3), `INGEST_LOAD_CONNECTIONS` (256), `INGEST_LOAD_EVENT_IDS=1` (each event with an `eventId`
//! of its own, which the shipper claims in Postgres); `BENCH_SERVICE_BIN` (another build of the
//! service), `BENCH_CALLGRIND=FILE` (the service alone under callgrind: instructions per event).

mod support;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::http::StatusCode;
use axum::routing::MethodFilter;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::json;
use uuid::Uuid;
use videoapp::config;

use support::helpers::metric_value;
use support::load::{self, median, setting, value_after, Cpu, CpuUsage, Measured};
use support::{Databases, ServiceProcess};

/// After the measured seconds, the script sends only GETs this long, so every POST is answered.
const TAIL_SECONDS: u64 = 1;
const DRAIN_LIMIT: Duration = Duration::from_secs(120);
const DRAIN_POLL: Duration = Duration::from_millis(50);
/// wrk's script; under callgrind followed by [`QUIET_TAIL`].
const SCRIPT: &str = include_str!("ingest_load.lua");
/// After the measured seconds, no request at all: a GET would count in the instructions.
const QUIET_TAIL: &str = "function delay()\n  return now() >= deadline and 3600000 or 0\nend\n";

fn main() -> ExitCode {
    let wrk = match load::preflight("ingest_load") {
        Ok(wrk) => wrk,
        Err(code) => return code,
    };
    // The ceiling serves on this runtime: as many workers as the service has, and the harness
    // itself only waits for wrk meanwhile.
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, outcome) = runtime.block_on(async {
        let (databases, database_url) = Databases::create().await;
        let outcome = async {
            let service = ServiceProcess::start(&databases, &database_url).await?;
            measure(&service, &databases, &wrk).await?;
            let peak = service.peak_rss_kib().unwrap_or(0) as f64 / 1024.0;
            println!("  service peak RSS (VmHWM): {peak:.1} MiB");
            Ok(())
        };
        (databases.clone(), outcome.await)
    });
    drop(runtime);
    databases.drop_all();
    support::exit(outcome)
}

async fn measure(service: &ServiceProcess, databases: &Databases, wrk: &str) -> Result<(), String> {
    let seconds = setting("INGEST_LOAD_SECONDS", 15);
    let warmup = setting("INGEST_LOAD_WARMUP_SECONDS", 3);
    let connections = setting("INGEST_LOAD_CONNECTIONS", 256);
    let event_ids = setting("INGEST_LOAD_EVENT_IDS", 0) == 1;
    let callgrind = service.callgrind.is_some();
    // Under callgrind, one round of the service alone; answers take up to seconds there, and a
    // longer tail lets every POST get its answer.
    let (rounds, tail) = match callgrind {
        true => (1, 20),
        false => (setting("INGEST_LOAD_ROUNDS", 3), TAIL_SECONDS),
    };
    if callgrind {
        service.callgrind_control("--instr=on")?;
    }
    let client = reqwest::Client::new();
    let bodies = event_bodies();
    // As the script and `navigator.sendBeacon` send it.
    let beacon = |url: &str| {
        let request = client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "text/plain;charset=UTF-8");
        request.body(bodies[0].clone())
    };
    let uri = service.events_uri();
    let route = (MethodFilter::POST, support::EVENTS, uri.as_str());
    let (urls, _) =
        load::beside_ceiling(&service.base_url, route, StatusCode::ACCEPTED, beacon).await?;
    // Every 202 seen, warm-ups included: ClickHouse must end up with exactly these.
    let mut acknowledged: u64 = 1;
    let script = Script::write(&bodies, event_ids, callgrind).map_err(|e| e.to_string())?;
    let mut watched = vec![service.pid];
    watched.extend(load::pids_named("clickhouse"));
    let names = [
        "service (POST analytics, durable 202)",
        "ceiling (bare axum, same 202)",
    ];
    let targets = if callgrind { &names[..1] } else { &names[..] };

    println!(
        "\ningest load run: {wrk}, {connections} connections, {} threads; {warmup} s warm-up + \
         {seconds} s per target, {rounds} rounds; {}: batches of {} rows or {} ms, spool commit \
         delay {} µs; event ids: {event_ids}; changed: {:?}",
        load::cores(),
        service.binary.display(),
        config::DEFAULT_BATCH_MAX_ROWS,
        config::DEFAULT_BATCH_MAX_AGE_MS,
        config::DEFAULT_SPOOL_COMMIT_DELAY_MICROS,
        std::env::vars()
            .filter(|(k, _)| k.starts_with("VIDEOAPP_BATCH_") || k.starts_with("VIDEOAPP_SPOOL_"))
            .collect::<Vec<_>>(),
    );
    let run = async |t: usize| {
        let is_service = t == 0;
        let (_, warmed) = run_wrk(&urls[t], connections, warmup, tail, &script, is_service).await?;
        acknowledged += if is_service { warmed } else { 0 };
        let metrics_before = service.metrics(&client).await?;
        if callgrind {
            service.callgrind_control("--zero")?;
        }
        let before = Cpu::take(&watched);
        let posts_end = Instant::now() + Duration::from_secs(seconds);
        // CPU over the posting seconds only, not the tail.
        let window = async {
            tokio::time::sleep_until(posts_end.into()).await;
            Cpu::take(&watched)
        };
        // For the service, ClickHouse is watched from the last POST on, while the tail runs (not
        // under callgrind: the scrapes would count).
        let watch = is_service && !callgrind;
        let drained = async {
            match watch {
                true => Some(drain(service, &client, databases, posts_end, None).await),
                false => None,
            }
        };
        let measured = run_wrk(&urls[t], connections, seconds, tail, &script, is_service);
        let (measured, after, drained) = tokio::join!(measured, window, drained);
        let (output, accepted) = measured?;
        let cpu = before.until(&after);
        let mut rest = format!("{:>5.2}", cpu.watched[1..].iter().sum::<f64>());
        if callgrind {
            service.callgrind_control("--dump")?;
        }
        if is_service {
            acknowledged += accepted;
            // Every 202 is counted now: the three counts must agree. If they do at once, the
            // drain ended when the watch above saw it.
            let checking_from = posts_end.elapsed();
            let exact = drain(service, &client, databases, posts_end, Some(acknowledged));
            let drained = match (exact.await?, drained) {
                (confirmed, Some(first)) if confirmed < checking_from + DRAIN_POLL => first?,
                (confirmed, _) => confirmed,
            };
            let after = service.metrics(&client).await?;
            let delta = |name| {
                metric_value(&after, name, &[]).unwrap_or(0.0)
                    - metric_value(&metrics_before, name, &[]).unwrap_or(0.0)
            };
            let per_sync = delta("spool_group_commit_records_sum")
                / delta("spool_sync_duration_seconds_count").max(1.0);
            rest += &format!(" {:>4.2} s {per_sync:>8.1}", drained.as_secs_f64());
        }
        if callgrind {
            rest += &callgrind_per_event(service, accepted)?;
        }
        let server = if is_service { cpu.watched[0] } else { cpu.own };
        let rate = accepted as f64 / seconds as f64;
        Ok((Measured::new(&output, rate, server, cpu)?, rest))
    };
    let (results, counted) = load::rounds(targets, rounds, "   ch  drain req/sync", run).await?;
    if !callgrind {
        let per_event = |f: fn(&CpuUsage) -> f64| {
            let cores = median(counted.iter().map(|&r| f(&results[0][r].cpu)).collect());
            cores / median(counted.iter().map(|&r| results[0][r].rate).collect()) * 1e6
        };
        let service_cpu = per_event(|c| c.watched[0]);
        let clickhouse = per_event(|c| c.watched[1..].iter().sum());
        println!(
            "  per acknowledged event: service CPU {service_cpu:.1} µs, ClickHouse {clickhouse:.1} µs"
        );
    }
    println!(
        "  end to end: ClickHouse holds exactly the {acknowledged} events the service acknowledged \
         (202s counted by wrk's script = events_accepted_total = rows in {}.events)",
        databases.name
    );
    Ok(())
}

/// wrk's script and the file of bodies it posts, in a directory of their own (removed when
/// dropped).
struct Script {
    dir: PathBuf,
    event_ids: bool,
}

impl Script {
    fn write(bodies: &[String], event_ids: bool, quiet_tail: bool) -> std::io::Result<Script> {
        let dir = std::env::temp_dir().join(format!("ingest-load-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir)?;
        let script = SCRIPT.to_string() + if quiet_tail { QUIET_TAIL } else { "" };
        std::fs::write(dir.join("script.lua"), script)?;
        std::fs::write(dir.join("bodies"), bodies.join("\n"))?;
        Ok(Script { dir, event_ids })
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One wrk run of the Lua script: wrk's output and the 202s the script counted. A POST without
/// its 202 fails a service run (the end-to-end count would no longer be exact); in a ceiling run
/// it is only reported.
async fn run_wrk(
    url: &str,
    connections: u64,
    seconds: u64,
    tail: u64,
    script: &Script,
    is_service: bool,
) -> Result<(String, u64), String> {
    let bodies = script.dir.join("bodies").display().to_string();
    let arguments = [seconds.to_string(), bodies, script.event_ids.to_string()];
    let lua = Some((script.dir.join("script.lua"), &arguments[..]));
    let output = load::wrk(url, connections, seconds + tail, lua).await?;
    let count = |label: &str| {
        let value = value_after(&output, label).and_then(|v| v.parse::<u64>().ok());
        value.ok_or_else(|| format!("the wrk script printed no '{label}':\n{output}"))
    };
    let (posted, accepted) = (count("ingest_load posted")?, count("ingest_load accepted")?);
    if posted != accepted {
        let problem = format!("wrk posted {posted} events, {accepted} were acknowledged");
        match is_service {
            true => return Err(format!("{problem}:\n{output}")),
            false => println!("  WARNING (ceiling): {problem}"),
        }
    }
    Ok((output, accepted))
}

/// Waits until ClickHouse holds as many events as the service counted (`events_accepted_total`)
/// and, when given, as `acknowledged`; returns how long after `posts_end` that was.
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
        let accepted = metric_value(&metrics, "events_accepted_total", &[]).unwrap_or(0.0) as u64;
        let count = support::helpers::try_clickhouse_query(
            client,
            &databases.name,
            "SELECT count() FROM events",
        );
        let stored: u64 = count
            .await?
            .parse()
            .map_err(|e| format!("ClickHouse count: {e}"))?;
        let waited = posts_end.elapsed();
        if stored == accepted && acknowledged.is_none_or(|a| a == accepted) {
            return Ok(waited);
        }
        if waited > DRAIN_LIMIT {
            return Err(format!(
                "END TO END MISMATCH after {waited:.0?}: ClickHouse holds {stored} events, the \
                 service counted {accepted}, wrk's script saw {acknowledged:?} 202s"
            ));
        }
        tokio::time::sleep(DRAIN_POLL).await;
    }
}

/// The totals of the dump callgrind just wrote (`FILE.1`) per acknowledged event.
fn callgrind_per_event(service: &ServiceProcess, accepted: u64) -> Result<String, String> {
    let file = service.callgrind.as_ref().expect("under callgrind");
    let dump = format!("{}.1", file.display());
    let text = std::fs::read_to_string(&dump).map_err(|e| format!("{dump}: {e}"))?;
    let totals = text
        .lines()
        .find_map(|l| l.strip_prefix("totals:")?.trim().parse().ok());
    let total: u64 = totals.ok_or_else(|| format!("{dump}: no totals"))?;
    let per_event = total as f64 / accepted.max(1) as f64;
    Ok(format!(
        "\n  callgrind: {total} instructions in the measured window, {per_event:.0} per \
         acknowledged event (`callgrind_annotate --inclusive=yes {dump}`)"
    ))
}

/// Beacons as the widget loader sends them: 75% impressions, 25% views, over 6 widgets, 40 videos
/// and 200 sessions, timestamped now. Deterministic apart from the timestamp.
fn event_bodies() -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(0x1e57);
    let mut ids = |n: usize| -> Vec<String> {
        (0..n)
            .map(|_| Uuid::from_u128(rng.gen()).to_string())
            .collect()
    };
    let (videos, widgets, sessions) = (ids(40), ids(6), ids(200));
    let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    (0..256)
        .map(|_| {
            json!({
                "eventType": if rng.gen_bool(0.75) { "impression" } else { "view" },
                "videoId": videos.choose(&mut rng).unwrap(),
                "widgetId": widgets.choose(&mut rng).unwrap(),
                "sessionId": sessions.choose(&mut rng).unwrap(),
                "timestamp": timestamp,
            })
            .to_string()
        })
        .collect()
}
