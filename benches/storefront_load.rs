//! contextual-widgets under load beside a bare axum ceiling returning the same bytes, driven by
//! `wrk` (BENCHMARKS.md, "Storefront").

mod support;

use std::process::ExitCode;

use axum::http::StatusCode;
use axum::routing::MethodFilter;

use support::load::{self, setting, CpuUsage};
use support::{BenchApp, Databases, Outcome};

fn main() -> ExitCode {
    let Some(wrk) = load::preflight("storefront_load") else {
        return ExitCode::SUCCESS;
    };
    videoapp::telemetry::init_tracing(videoapp::config::LogFormat::Human);
    let run = async |databases: &Databases, url: &str| {
        run(&BenchApp::start(databases, url).await, &wrk).await
    };
    support::on_fresh_databases(None, run)
}

async fn run(app: &BenchApp, wrk: &str) -> Outcome {
    let seconds = setting("STOREFRONT_LOAD_SECONDS", 15);
    let warmup = setting("STOREFRONT_LOAD_WARMUP_SECONDS", 3);
    let rounds = setting("STOREFRONT_LOAD_ROUNDS", 3);
    let connections = setting("STOREFRONT_LOAD_CONNECTIONS", 64);
    let uri = format!("{}?{}", support::CONTEXTUAL_WIDGETS, support::home_query());
    let route = (MethodFilter::GET, support::CONTEXTUAL_WIDGETS, uri.as_str());
    let client = reqwest::Client::new();
    let (urls, body) =
        load::beside_ceiling(&app.base_url, route, StatusCode::OK, |url| client.get(url)).await?;
    let (cores, bytes, widgets) = (load::cores(), body.len(), support::catalog::WIDGETS_AT_HOME);
    println!(
        "\nstorefront load run: {wrk}, {connections} connections, {cores} threads; {warmup} s \
         warm-up + {seconds} s measured per target, {rounds} rounds; body {bytes} bytes ({widgets} \
         widgets)"
    );
    let service = "service (contextual-widgets, signed, warm cache)";
    let names = [service, "ceiling (bare axum, same body)"];
    let measure = async |t: usize| {
        // The service runs in this process: its cores are this process's.
        let cores = (&[][..], |cpu: &CpuUsage| cpu.own);
        let times = [warmup, seconds];
        let m = load::warm_and_measure(&urls[t], connections, times, &[], cores).await?;
        let wrk_cores = format!("{:>5.2}", m.cpu.children);
        Ok((m, wrk_cores))
    };
    load::rounds(&names, rounds, "wrk", measure).await.map(drop)
}
