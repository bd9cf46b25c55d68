//! Load run of contextual-widgets beside its ceiling, in one run:
//!
//! 1. the real service, seeded like the criterion bench (50 widgets, 20 on the home page, 500
//!    videos), answering a signed `location=home` request from a warm cache;
//! 2. a bare axum server whose one GET handler returns a fixed `application/json` body of exactly
//!    the same length (the service's own answer, fetched first): the ceiling on this machine.
//!
//! Both are driven by `wrk` with the same settings, on loopback, alternately for a few rounds
//! (service, ceiling, service, ceiling, …) so that a disturbance hits both; the medians and the
//! median of the per-round ratios are printed. `wrk` runs on the same cores as the servers: the
//! CPU columns say who used what (this process, wrk, anything else on the machine, hypervisor
//! steal), so a run disturbed by other work shows it.
//!
//! `cargo bench --bench storefront_load`. Without `--bench` (so under `cargo test`) it only says
//! it skipped. Settings: `STOREFRONT_LOAD_SECONDS` (15), `STOREFRONT_LOAD_WARMUP_SECONDS` (3),
//! `STOREFRONT_LOAD_ROUNDS` (3), `STOREFRONT_LOAD_CONNECTIONS` (64), `STOREFRONT_LOAD_THREADS`
//! (wrk threads, default the number of cores), `STOREFRONT_LOAD_VERBOSE=1` (print wrk's own
//! output), and `STOREFRONT_LOAD_DIAGNOSE=1`, which adds a third target: the bare handler again,
//! but building its body afresh per request the way the service does (a new `Vec`, grown while
//! the widgets are appended), to show what producing a fresh body costs under load.

mod support;

use std::process::ExitCode;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::http::HeaderValue;
use axum::routing::get;
use axum::Router;
use tokio::net::TcpListener;
use tokio::runtime::Runtime;

use support::load::{
    cores, cpu_model, format_latency, median, parse_wrk, preflight, CpuSnapshot, Wrk,
    DISTURBED_CORES,
};
use support::BenchApp;

/// The issue's target: the service serves at least this share of the ceiling's requests/s.
const TARGET_RATIO: f64 = 0.60;

fn main() -> ExitCode {
    let wrk = match preflight("storefront_load") {
        Ok(wrk) => wrk,
        Err(code) => return code,
    };
    let load = match LoadSettings::from_env() {
        Ok(load) => load,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    support::init_tracing();
    let runtime = Runtime::new().expect("a tokio runtime");
    let (databases, outcome) = runtime.block_on(async {
        let app = BenchApp::start().await;
        let databases = app.databases.clone();
        (databases, run(&app, &wrk, &load).await)
    });
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

struct LoadSettings {
    seconds: u64,
    warmup_seconds: u64,
    rounds: u64,
    connections: u64,
    threads: u64,
    verbose: bool,
    diagnose: bool,
}

impl LoadSettings {
    fn from_env() -> Result<LoadSettings, String> {
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
        Ok(LoadSettings {
            seconds: read("STOREFRONT_LOAD_SECONDS", 15)?,
            warmup_seconds: read("STOREFRONT_LOAD_WARMUP_SECONDS", 3)?,
            rounds: read("STOREFRONT_LOAD_ROUNDS", 3)?,
            connections: read("STOREFRONT_LOAD_CONNECTIONS", 64)?,
            threads: read("STOREFRONT_LOAD_THREADS", cores() as u64)?,
            verbose: flag("STOREFRONT_LOAD_VERBOSE"),
            diagnose: flag("STOREFRONT_LOAD_DIAGNOSE"),
        })
    }
}

struct Target {
    name: &'static str,
    url: String,
    rounds: Vec<Figures>,
}

async fn run(app: &BenchApp, wrk: &str, load: &LoadSettings) -> Result<(), String> {
    // Signed once, valid for an hour: far longer than the run.
    let uri = app.contextual_widgets_uri();
    let service_url = format!("{}{uri}", app.base_url);
    let body = fetch(&service_url).await?;
    // Same path and query, so every server reads the same request bytes.
    let ceiling_url = format!(
        "{}{uri}",
        start_ceiling(body.clone(), BodyMode::Shared).await?
    );
    let ceiling_body = fetch(&ceiling_url).await?;
    if ceiling_body != body {
        return Err(format!(
            "the ceiling answers {} bytes, the service {}",
            ceiling_body.len(),
            body.len()
        ));
    }
    let mut targets = vec![
        Target {
            name: "service: contextual-widgets (signed, warm cache)",
            url: service_url,
            rounds: Vec::new(),
        },
        Target {
            name: "ceiling: bare axum, same-size fixed body",
            url: ceiling_url,
            rounds: Vec::new(),
        },
    ];
    if load.diagnose {
        let base = start_ceiling(body.clone(), BodyMode::FreshPerRequest).await?;
        targets.push(Target {
            name: "diagnostic: bare axum, body built per request",
            url: format!("{base}{uri}"),
            rounds: Vec::new(),
        });
    }

    println!();
    println!("storefront load run");
    println!(
        "  machine: {} cores ({}); wrk shares them with the servers",
        cores(),
        cpu_model()
    );
    println!(
        "  generator: {wrk}, {} threads, {} keep-alive connections, loopback; per target and \
         round {} s warm-up, then {} s measured; {} rounds, targets alternating",
        load.threads, load.connections, load.warmup_seconds, load.seconds, load.rounds
    );
    println!(
        "  body: {} bytes of application/json (contextual-widgets, location=home, {} widgets)",
        body.len(),
        support::WIDGETS_AT_HOME
    );
    println!();
    println!("  {}", Figures::header());
    for round in 1..=load.rounds {
        for target in &mut targets {
            let figures = measure(&target.url, load).await?;
            println!("  {}", figures.row(&format!("#{round} {}", target.name)));
            target.rounds.push(figures);
        }
    }

    // A round where other processes or the hypervisor took a real share of the cores compares
    // nothing useful: leave it out of the summary when undisturbed rounds exist.
    let disturbed: Vec<bool> = (0..targets[0].rounds.len())
        .map(|i| targets.iter().any(|t| t.rounds[i].disturbed()))
        .collect();
    let clean: Vec<usize> = (0..disturbed.len()).filter(|&i| !disturbed[i]).collect();
    let counted: Vec<usize> = if clean.is_empty() {
        (0..disturbed.len()).collect()
    } else {
        clean.clone()
    };
    let pick =
        |rounds: &[Figures]| -> Vec<Figures> { counted.iter().map(|&i| rounds[i]).collect() };
    println!();
    if clean.is_empty() {
        println!(
            "  WARNING: every round was disturbed by other work (see 'other'/'steal'); the \
             figures below are not reliable"
        );
    } else if clean.len() < disturbed.len() {
        println!(
            "  left out as disturbed (other work took over {:.2} cores): round(s) {}",
            DISTURBED_CORES,
            (1..=disturbed.len())
                .filter(|r| disturbed[r - 1])
                .map(|r| format!("#{r}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    println!("  medians over {} round(s)", counted.len());
    println!("  {}", Figures::header());
    for target in &targets {
        println!(
            "  {}",
            Figures::median(&pick(&target.rounds)).row(target.name)
        );
    }
    let ratio_to_ceiling = |target: &Target| -> Vec<f64> {
        counted
            .iter()
            .map(|&i| {
                target.rounds[i].requests_per_second / targets[1].rounds[i].requests_per_second
            })
            .collect()
    };
    let ratios = ratio_to_ceiling(&targets[0]);
    let ratio = median(ratios.clone());
    println!();
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
    if let Some(diagnostic) = targets.get(2) {
        println!(
            "  diagnostic/ceiling: {:.1}% (median): the cost of a fresh {}-byte body per request",
            median(ratio_to_ceiling(diagnostic)) * 100.0,
            body.len()
        );
    }
    println!(
        "  CPU columns are cores busy over the measured window (of {}): this process (the \
         servers), wrk, every other process, and time stolen by the hypervisor.",
        cores()
    );
    let errors: u64 = targets
        .iter()
        .flat_map(|t| &t.rounds)
        .map(|f| f.errors)
        .sum();
    if errors > 0 {
        return Err(format!(
            "{errors} requests failed or were not 2xx (run with STOREFRONT_LOAD_VERBOSE=1)"
        ));
    }
    Ok(())
}

async fn fetch(url: &str) -> Result<Bytes, String> {
    let response = reqwest::get(url)
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("GET {url}: {e}"))?;
    if status != reqwest::StatusCode::OK {
        return Err(format!(
            "GET {url} answered {status}: {}",
            String::from_utf8_lossy(&body)
        ));
    }
    Ok(body)
}

#[derive(Clone, Copy)]
enum BodyMode {
    /// The same `Bytes` every time (reference-counted, never copied): the ceiling.
    Shared,
    /// A new buffer per request, grown as the service's JSON writer grows it (from 128 bytes,
    /// doubling, one widget-sized piece at a time): the diagnostic.
    FreshPerRequest,
}

/// About one rendered widget of the bench shop (10 videos with their products).
const PIECE_BYTES: usize = 14_000;

/// The ceiling: one GET route answering `body` as `application/json`, nothing else (no
/// middleware). Serves until the process ends; returns its base URL.
async fn start_ceiling(body: Bytes, mode: BodyMode) -> Result<String, String> {
    let router = Router::new().route(
        support::CONTEXTUAL_WIDGETS,
        get(move || {
            let body = match mode {
                BodyMode::Shared => body.clone(),
                BodyMode::FreshPerRequest => {
                    let mut fresh = Vec::with_capacity(128);
                    for piece in body.chunks(PIECE_BYTES) {
                        fresh.extend_from_slice(piece);
                    }
                    Bytes::from(fresh)
                }
            };
            async move {
                (
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
    Ok(format!("http://{address}"))
}

#[derive(Clone, Copy, Default)]
struct Figures {
    requests_per_second: f64,
    p50: Duration,
    p99: Duration,
    /// Cores busy over the measured window: this process (the servers), wrk, every other
    /// process on the machine, and hypervisor steal.
    server_cpu: f64,
    wrk_cpu: f64,
    other_cpu: f64,
    steal: f64,
    /// Minor page faults of this process per request.
    faults_per_request: f64,
    /// Non-2xx/3xx answers plus socket errors.
    errors: u64,
}

impl Figures {
    fn disturbed(&self) -> bool {
        self.other_cpu > DISTURBED_CORES || self.steal > DISTURBED_CORES
    }

    fn header() -> String {
        format!(
            "{:<50} {:>8} {:>9} {:>9} {:>6} {:>6} {:>6} {:>6} {:>8} {:>6}",
            "target",
            "req/s",
            "p50",
            "p99",
            "server",
            "wrk",
            "other",
            "steal",
            "faults/r",
            "errors"
        )
    }

    fn row(&self, name: &str) -> String {
        format!(
            "{:<50} {:>8.0} {:>9} {:>9} {:>6.2} {:>6.2} {:>6.2} {:>6.2} {:>8.1} {:>6}",
            name,
            self.requests_per_second,
            format_latency(self.p50),
            format_latency(self.p99),
            self.server_cpu,
            self.wrk_cpu,
            self.other_cpu,
            self.steal,
            self.faults_per_request,
            self.errors
        )
    }

    /// Each column's median on its own.
    fn median(rounds: &[Figures]) -> Figures {
        let column = |f: fn(&Figures) -> f64| median(rounds.iter().map(f).collect());
        Figures {
            requests_per_second: column(|f| f.requests_per_second),
            p50: Duration::from_secs_f64(column(|f| f.p50.as_secs_f64())),
            p99: Duration::from_secs_f64(column(|f| f.p99.as_secs_f64())),
            server_cpu: column(|f| f.server_cpu),
            wrk_cpu: column(|f| f.wrk_cpu),
            other_cpu: column(|f| f.other_cpu),
            steal: column(|f| f.steal),
            faults_per_request: column(|f| f.faults_per_request),
            errors: rounds.iter().map(|f| f.errors).sum(),
        }
    }
}

async fn measure(url: &str, load: &LoadSettings) -> Result<Figures, String> {
    let wrk = |seconds: u64| Wrk {
        url,
        threads: load.threads,
        connections: load.connections,
        seconds,
        script: None,
        script_args: Vec::new(),
    };
    wrk(load.warmup_seconds).run().await?;
    let before = CpuSnapshot::take(&[]);
    let output = wrk(load.seconds).run().await?;
    let after = CpuSnapshot::take(&[]);
    if load.verbose {
        for line in output.lines() {
            println!("      {line}");
        }
    }
    let summary = parse_wrk(&output)?;
    let mut figures = Figures {
        requests_per_second: summary.requests_per_second,
        p50: summary.p50,
        p99: summary.p99,
        errors: summary.non_2xx + summary.socket_errors,
        ..Figures::default()
    };
    if let (Some(before), Some(after)) = (before, after) {
        let usage = before.until(&after);
        figures.server_cpu = usage.own;
        figures.wrk_cpu = usage.children;
        figures.other_cpu = usage.other;
        figures.steal = usage.steal;
        figures.faults_per_request =
            usage.minor_faults / (figures.requests_per_second * usage.seconds).max(1.0);
    }
    Ok(figures)
}
