//! Event ingestion end to end beside a bare axum ceiling, driven by `wrk` and ingest_load.lua
//! (BENCHMARKS.md, "Ingest", and its commands for `BENCH_SERVICE_BIN` and `BENCH_CALLGRIND`).

mod support;

use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use axum::http::StatusCode;
use axum::routing::MethodFilter;
use futures::future::OptionFuture;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::json;
use uuid::Uuid;
use videoapp::config;

use support::helpers::{metric_value, signed};
use support::load::{self, median, setting, value_after, Cpu, CpuUsage, Measured};
use support::{Databases, Outcome, ServiceProcess, EVENTS, SHOP};

const SCRIPT: &str = include_str!("ingest_load.lua");
/// Under callgrind, no request at all after the measured seconds: a GET would count.
const QUIET_TAIL: &str = "function delay()\n  return now() >= deadline and 3600000 or 0\nend\n";

fn main() -> ExitCode {
    let Some(wrk) = load::preflight("ingest_load") else {
        return ExitCode::SUCCESS;
    };
    // The ceiling serves on this runtime, with as many workers as the service has.
    let run = async |databases: &Databases, url: &str| {
        let service = ServiceProcess::start_with(databases, url, &[]).await?;
        measure(&service, databases, &wrk).await?;
        let peak = service.peak_rss_kib() as f64 / 1024.0;
        println!("  service peak RSS (VmHWM): {peak:.1} MiB");
        Ok(())
    };
    support::on_fresh_databases(None, run)
}

async fn measure(service: &ServiceProcess, databases: &Databases, wrk: &str) -> Outcome {
    let seconds = setting("INGEST_LOAD_SECONDS", 15);
    let warmup = setting("INGEST_LOAD_WARMUP_SECONDS", 3);
    let connections = setting("INGEST_LOAD_CONNECTIONS", 256);
    let event_ids = setting("INGEST_LOAD_EVENT_IDS", 0) == 1;
    let where_who = setting("INGEST_LOAD_WHERE_WHO", 0) == 1;
    let holdout = setting("INGEST_LOAD_HOLDOUT", 0) == 1;
    let callgrind = service.callgrind.is_some();
    // Under callgrind, one round of the service alone, and a tail long enough for every answer.
    let rounds = setting("INGEST_LOAD_ROUNDS", 3);
    let (rounds, tail) = if callgrind { (1, 20) } else { (rounds, 1) };
    service.callgrind_control("--instr=on")?;
    let client = reqwest::Client::new();
    let bodies = event_bodies(where_who, holdout);
    let beacon = |url: &str| {
        let request = client.post(url).body(bodies[0].clone());
        request.header("content-type", "text/plain;charset=UTF-8")
    };
    // The loader's beacon as the app proxy forwards it; the signature covers only the query.
    let query = signed(SHOP, &[("logged_in_customer_id", "")]);
    let uri = format!("{EVENTS}?{query}");
    let route = (MethodFilter::POST, EVENTS, uri.as_str());
    let (urls, _) =
        load::beside_ceiling(&service.base_url, route, StatusCode::ACCEPTED, beacon).await?;
    // Every 202 seen, warm-ups included: ClickHouse must end up with exactly these.
    let mut acknowledged: u64 = 1;
    let dir = tempfile::tempdir()?;
    let (script, bodies_file) = (dir.path().join("script.lua"), dir.path().join("bodies"));
    let lua = SCRIPT.to_string() + if callgrind { QUIET_TAIL } else { "" };
    std::fs::write(&script, lua)?;
    std::fs::write(&bodies_file, bodies.join("\n"))?;
    let [script, bodies_file] = [script, bodies_file].map(|p| p.display().to_string());
    // wrk's output and the 202s it counted; a POST without its 202 breaks the end-to-end count.
    let run_wrk = async |t: usize, seconds: u64| {
        let (ids, bodies_file) = (event_ids.to_string(), bodies_file.clone());
        let script = [script.clone(), seconds.to_string(), bodies_file, ids];
        let output = load::wrk(&urls[t], connections, seconds + tail, &script).await?;
        let count = |label: &str| value_after(&output, label).and_then(|v| v.parse::<u64>().ok());
        let (posted, accepted) = (count("ingest_load posted"), count("ingest_load accepted"));
        let (Some(posted), Some(accepted)) = (posted, accepted) else {
            bail!("the wrk script printed no counts:\n{output}");
        };
        let problem = format!("wrk posted {posted} events, {accepted} were acknowledged");
        match (posted == accepted, t) {
            (true, _) => {}
            (false, 0) => bail!("{problem}:\n{output}"),
            (false, _) => println!("  WARNING (ceiling): {problem}"),
        }
        Ok((output, accepted))
    };
    let clickhouse = load::processes().filter(|s| s.comm.starts_with("clickhouse"));
    let watched = [vec![service.pid], clickhouse.map(|s| s.pid).collect()].concat();
    let service_name = "service (POST analytics, durable 202)";
    let names = [service_name, "ceiling (bare axum, same 202)"];
    let targets = if callgrind { &names[..1] } else { &names[..] };
    let experiment = |k: &str| k.starts_with("VIDEOAPP_BATCH_") || k.starts_with("VIDEOAPP_SPOOL_");
    let changed: Vec<_> = std::env::vars().filter(|(k, _)| experiment(k)).collect();
    let (cores, binary) = (load::cores(), service.binary.display());
    println!(
        "\ningest load run: {wrk}, {connections} connections, {cores} threads; {warmup} s \
         warm-up + {seconds} s per target, {rounds} rounds; {binary}: batches of {} rows or {} \
         ms, spool commit delay {} µs; event ids: {event_ids}; where and who: {where_who}; \
         holdout: {holdout}; changed: {changed:?}",
        config::DEFAULT_BATCH_MAX_ROWS,
        config::DEFAULT_BATCH_MAX_AGE_MS,
        config::DEFAULT_SPOOL_COMMIT_DELAY_MICROS,
    );
    let run = async |t: usize| {
        let is_service = t == 0;
        let (_, warmed) = run_wrk(t, warmup).await?;
        acknowledged += if is_service { warmed } else { 0 };
        let metrics_before = service.process.metrics().await;
        service.callgrind_control("--zero")?;
        let before = Cpu::take(&watched);
        let posts_end = Instant::now() + Duration::from_secs(seconds);
        // CPU over the posting seconds only, not the tail.
        let window = async {
            tokio::time::sleep_until(posts_end.into()).await;
            Cpu::take(&watched)
        };
        // ClickHouse watched from the last POST on (not under callgrind: scrapes would count).
        let watch = is_service && !callgrind;
        let drained = OptionFuture::from(watch.then(|| service.drained(posts_end, None)));
        let (measured, after, drained) = tokio::join!(run_wrk(t, seconds), window, drained);
        let (output, accepted) = measured?;
        let cpu = before.until(&after);
        let mut rest = format!("{:>5.2}", cpu.watched[1..].iter().sum::<f64>());
        service.callgrind_control("--dump")?;
        if is_service {
            acknowledged += accepted;
            // Every 202 is counted: the three counts must agree; at once, the watch saw the drain.
            let at_once = posts_end.elapsed() + Duration::from_millis(50);
            let exact = service.drained(posts_end, Some(acknowledged));
            let drained = match (exact.await?, drained) {
                (confirmed, Some(first)) if confirmed < at_once => first?,
                (confirmed, _) => confirmed,
            };
            let after = service.process.metrics().await;
            let delta = |name| {
                let [a, b] = [&after, &metrics_before].map(|m| metric_value(m, name, &[]));
                a.unwrap_or(0.0) - b.unwrap_or(0.0)
            };
            let per_sync = delta("spool_group_commit_records_sum")
                / delta("spool_sync_duration_seconds_count").max(1.0);
            rest += &format!(" {:>4.2} s {per_sync:>8.1}", drained.as_secs_f64());
        }
        if let Some(file) = &service.callgrind {
            // The totals of the dump callgrind just wrote, per acknowledged event.
            let dump = format!("{}.1", file.display());
            let text = std::fs::read_to_string(&dump).context(dump.clone())?;
            let total = |l: &str| l.strip_prefix("totals:")?.trim().parse::<u64>().ok();
            let total = text.lines().find_map(total);
            let total = total.with_context(|| format!("{dump}: no totals"))?;
            let per_event = total as f64 / accepted.max(1) as f64;
            rest += &format!(
                "\n  callgrind: {total} instructions in the measured window, {per_event:.0} per \
                 acknowledged event (`callgrind_annotate --inclusive=yes {dump}`)"
            );
        }
        let server = if is_service { cpu.watched[0] } else { cpu.own };
        let (measured, _) = Measured::parse(&output, server, cpu)?;
        let rate = accepted as f64 / seconds as f64;
        Ok((Measured { rate, ..measured }, rest))
    };
    let (results, counted) = load::rounds(targets, rounds, "   ch  drain req/sync", run).await?;
    if !callgrind {
        let per_event = |f: fn(&CpuUsage) -> f64| {
            let cores = median(counted.iter().map(|&r| f(&results[0][r].cpu)).collect());
            cores / median(counted.iter().map(|&r| results[0][r].rate).collect()) * 1e6
        };
        let service_cpu = per_event(|c| c.watched[0]);
        let clickhouse = per_event(|c| c.watched[1..].iter().sum());
        println!("  per acknowledged event: service CPU {service_cpu:.1} µs, ClickHouse {clickhouse:.1} µs");
    }
    let database = &databases.name;
    println!(
        "  end to end: ClickHouse holds exactly the {acknowledged} events the service acknowledged \
         (202s counted by wrk's script = events_accepted_total = rows in {database}.events)"
    );
    Ok(())
}

/// The loader's beacons: 75% impressions, 25% views, 6 widgets, 40 videos, 200 sessions, now;
/// `where_who` adds where and who; `holdout`, groups and a visit's `session` in 8 (10% held out).
fn event_bodies(where_who: bool, holdout: bool) -> Vec<String> {
    let mut rng = StdRng::seed_from_u64(0x1e57);
    let mut id = || Uuid::from_u128(rng.gen()).to_string();
    let mut ids = |n| (0..n).map(|_| id()).collect::<Vec<_>>();
    let (videos, widgets, sessions) = (ids(40), ids(6), ids(200));
    let timestamp = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    let body = |rng: &mut StdRng| {
        let kind = ["view", "impression"][usize::from(rng.gen_bool(0.75))];
        let [video, widget, session] = [&videos, &widgets, &sessions].map(|ids| ids.choose(rng));
        let mut event = json!({ "eventType": kind, "videoId": video, "widgetId": widget,
                                "sessionId": session, "timestamp": timestamp });
        if holdout && rng.gen_ratio(1, 8) {
            event = json!({ "eventType": "session", "sessionId": session, "timestamp": timestamp });
            event["group"] = json!(["exposed", "holdout"][usize::from(rng.gen_ratio(1, 10))]);
        } else if holdout {
            event["group"] = json!("exposed");
        }
        if where_who {
            event["placement"] = json!(["home", "product", "collection", "cart"].choose(rng));
            event["country"] = json!(["US", "DE", "FR", "GB", "CA"].choose(rng));
            event["source"] = json!(["direct", "search", "social", "email"].choose(rng));
        }
        event.to_string()
    };
    (0..256).map(|_| body(&mut rng)).collect()
}
