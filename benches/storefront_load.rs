//! contextual-widgets under load beside its ceiling, driven by `wrk`: the service in process,
//! seeded as for the criterion bench, answering a signed `location=home` request from a warm
//! cache; and a bare axum handler returning the service's own answer as a fixed body. Targets
//! alternate for a few rounds so that a disturbance hits both; medians and the median of the
//! per-round ratios are printed (rounds where other work took over 0.15 cores are left out).
//!
//! Settings: `STOREFRONT_LOAD_SECONDS` (15), `STOREFRONT_LOAD_WARMUP_SECONDS` (3),
//! `STOREFRONT_LOAD_ROUNDS` (3), `STOREFRONT_LOAD_CONNECTIONS` (64).

mod support;

use std::process::ExitCode;

use axum::body::Bytes;
use axum::http::StatusCode;
use axum::routing::MethodFilter;

use support::load::{self, setting, Cpu, Measured};
use support::BenchApp;

fn main() -> ExitCode {
    let wrk = match load::preflight("storefront_load") {
        Ok(wrk) => wrk,
        Err(code) => return code,
    };
    support::init_tracing();
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    let (databases, outcome) = runtime.block_on(async {
        let app = BenchApp::start().await;
        (app.databases.clone(), run(&app, &wrk).await)
    });
    drop(runtime);
    databases.drop_all();
    support::exit(outcome)
}

async fn run(app: &BenchApp, wrk: &str) -> Result<(), String> {
    let seconds = setting("STOREFRONT_LOAD_SECONDS", 15);
    let warmup = setting("STOREFRONT_LOAD_WARMUP_SECONDS", 3);
    let rounds = setting("STOREFRONT_LOAD_ROUNDS", 3);
    let connections = setting("STOREFRONT_LOAD_CONNECTIONS", 64);
    // Signed once, valid for an hour; the ceiling gets the same path and query.
    let uri = app.contextual_widgets_uri();
    let service_url = format!("{}{uri}", app.base_url);
    let body = fetch(&service_url).await?;
    let ceiling = load::ceiling(
        MethodFilter::GET,
        support::CONTEXTUAL_WIDGETS,
        StatusCode::OK,
        body.clone(),
    );
    let ceiling_url = format!("{}{uri}", ceiling.await?);
    if fetch(&ceiling_url).await? != body {
        return Err("the ceiling does not answer what the service answers".into());
    }
    let names = [
        "service (contextual-widgets, signed, warm cache)",
        "ceiling (bare axum, same body)",
    ];
    let urls = [service_url, ceiling_url];

    println!(
        "\nstorefront load run: {} cores, {wrk}, {connections} connections, {} threads; {warmup} s \
         warm-up + {seconds} s measured per target, {rounds} rounds; body {} bytes ({} widgets)",
        load::cores(),
        load::cores(),
        body.len(),
        support::WIDGETS_AT_HOME
    );
    println!("{}", load::header("wrk"));
    let mut results: Vec<Vec<Measured>> = vec![Vec::new(), Vec::new()];
    for round in 1..=rounds {
        for (t, url) in urls.iter().enumerate() {
            load::wrk(url, connections, warmup, None).await?;
            let before = Cpu::take(&[]);
            let output = load::wrk(url, connections, seconds, None).await?;
            let cpu = before.until(&Cpu::take(&[]));
            let (rate, p50, p99, errors) = load::parse_wrk(&output)?;
            if errors > 0 {
                return Err(format!(
                    "{errors} requests failed or were not 2xx:\n{output}"
                ));
            }
            let wrk_cores = format!("{:>5.2}", cpu.children);
            let measured = Measured {
                rate,
                p50,
                p99,
                server: cpu.own,
                cpu,
            };
            let name = format!("#{round} {}", names[t]);
            println!("{}", load::row(&name, &measured, &wrk_cores));
            results[t].push(measured);
        }
    }
    load::summary(&names, &results);
    Ok(())
}

async fn fetch(url: &str) -> Result<Bytes, String> {
    let response = reqwest::get(url)
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    match response.status() {
        reqwest::StatusCode::OK => response
            .bytes()
            .await
            .map_err(|e| format!("GET {url}: {e}")),
        status => Err(format!("GET {url} answered {status}")),
    }
}
