//! contextual-widgets under load beside its ceiling, driven by `wrk`: the service in process,
//! seeded as for the criterion bench, answering a signed `location=home` request from a warm
//! cache, and a bare axum handler returning the service's own answer. Settings:
//! `STOREFRONT_LOAD_SECONDS` (15), `STOREFRONT_LOAD_WARMUP_SECONDS` (3), `STOREFRONT_LOAD_ROUNDS`
//! (3), `STOREFRONT_LOAD_CONNECTIONS` (64).

mod support;

use std::process::ExitCode;

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
    let uri = app.contextual_widgets_uri();
    let route = (MethodFilter::GET, support::CONTEXTUAL_WIDGETS, uri.as_str());
    let client = reqwest::Client::new();
    let (urls, body) =
        load::beside_ceiling(&app.base_url, route, StatusCode::OK, |url| client.get(url)).await?;
    println!(
        "\nstorefront load run: {wrk}, {connections} connections, {} threads; {warmup} s warm-up \
         + {seconds} s measured per target, {rounds} rounds; body {} bytes ({} widgets)",
        load::cores(),
        body.len(),
        support::catalog::WIDGETS_AT_HOME
    );
    let names = [
        "service (contextual-widgets, signed, warm cache)",
        "ceiling (bare axum, same body)",
    ];
    let measure = async |t: usize| {
        load::wrk(&urls[t], connections, warmup, None).await?;
        let before = Cpu::take(&[]);
        let output = load::wrk(&urls[t], connections, seconds, None).await?;
        let cpu = before.until(&Cpu::take(&[]));
        let (rate, _, _, errors) = load::parse_wrk(&output)?;
        if errors > 0 {
            return Err(format!(
                "{errors} requests failed or were not 2xx:\n{output}"
            ));
        }
        let wrk_cores = format!("{:>5.2}", cpu.children);
        Ok((Measured::new(&output, rate, cpu.own, cpu)?, wrk_cores))
    };
    load::rounds(&names, rounds, "wrk", measure).await.map(drop)
}
