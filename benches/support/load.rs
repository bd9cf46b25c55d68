//! What the load runs share: `wrk`, a bare axum ceiling, the cores used (procfs), and rounds.

use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::{on, MethodFilter};
use procfs::process::{Process, Stat};
use procfs::{CurrentSI, KernelStats};

use super::Outcome;

/// Other processes or hypervisor steal above this many cores make a round not comparable.
pub const DISTURBED_CORES: f64 = 0.15;

/// Whether this is `cargo bench`: under `cargo test` a `what` run only says it is skipped.
pub fn benching(what: &str) -> bool {
    let benching = std::env::args().any(|arg| arg == "--bench");
    if !benching {
        println!("skipped: {what} run is for cargo bench");
    }
    benching
}

/// A load run needs `cargo bench` and `wrk`: wrk's version, or none under `cargo test`.
pub fn preflight(bench: &str) -> Option<String> {
    let install = "`wrk` is missing: `apt-get install wrk`, then `cargo bench --bench";
    // `wrk -v` prints its banner and exits non-zero: only "not found" matters.
    let output = benching("load").then(|| std::process::Command::new("wrk").arg("-v").output());
    let output = output?.unwrap_or_else(|_| super::fail(format!("{install} {bench}`")));
    let banner = String::from_utf8_lossy(&output.stdout);
    let version = banner.split(" Copyright").next().unwrap_or("wrk");
    Some(version.trim().to_string())
}

/// A whole number from the environment, or `default`.
pub fn setting(name: &str, default: u64) -> u64 {
    let raw = std::env::var(name).unwrap_or_else(|_| default.to_string());
    let wrong = || super::fail(format!("{name}={raw} is not a whole number"));
    raw.trim().parse().unwrap_or_else(|_| wrong())
}

pub fn cores() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// The status and body of one request.
pub async fn answer(request: reqwest::RequestBuilder) -> Outcome<(StatusCode, Bytes)> {
    let response = request.send().await?;
    Ok((response.status(), response.bytes().await?))
}

/// The URLs of `uri` on the service and on a ceiling whose `method` at `path` sends the service's
/// answer to `request` (the same bytes, the request unread, no middleware), both checked.
pub async fn beside_ceiling(
    service: &str,
    (method, path, uri): (MethodFilter, &str, &str),
    expected: StatusCode,
    request: impl Fn(&str) -> reqwest::RequestBuilder,
) -> Outcome<([String; 2], Bytes)> {
    let service_url = format!("{service}{uri}");
    let (status, body) = answer(request(&service_url)).await?;
    let as_expected = status == expected;
    ensure!(as_expected, "the service answered {status}: {body:?}");
    let (json, bytes) = (HeaderValue::from_static("application/json"), body.clone());
    let answer_with =
        move || std::future::ready((status, [(CONTENT_TYPE, json.clone())], bytes.clone()));
    let router = axum::Router::new().route(path, on(method, answer_with));
    let ceiling_url = format!("{}{uri}", serve(router).await?);
    let same = answer(request(&ceiling_url)).await? == (status, body.clone());
    ensure!(same, "the ceiling does not answer what the service answers");
    Ok(([service_url, ceiling_url], body))
}

/// Serves `router` on a free loopback port until the process ends; returns `http://ADDRESS`.
pub async fn serve(router: axum::Router) -> Outcome<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let address = listener.local_addr()?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(format!("http://{address}"))
}

/// One `wrk` run over `cores()` threads; `script`: none, or its path and arguments.
pub async fn wrk(url: &str, connections: u64, seconds: u64, script: &[String]) -> Outcome<String> {
    let mut command = tokio::process::Command::new("wrk");
    let (threads, connections) = (format!("-t{}", cores()), format!("-c{connections}"));
    command.args([threads, connections, format!("-d{seconds}s")]);
    command.args(["--timeout", "10s", "--latency"]);
    match script {
        [script, arguments @ ..] => command.args(["-s", script, url, "--"]).args(arguments),
        [] => command.arg(url),
    };
    let output = command.kill_on_drop(true).output().await;
    let output = output.context("cannot run wrk")?;
    let [stdout, stderr] = [&output.stdout, &output.stderr].map(|b| String::from_utf8_lossy(b));
    let ok = output.status.success() && stdout.contains("Requests/sec:");
    ensure!(ok, "wrk failed ({}):\n{stdout}{stderr}", output.status);
    Ok(stdout.into_owned())
}

/// A warm-up run of wrk, then the measured one with the cores used; a request failed or not 2xx/3xx
/// fails it.
pub async fn warm_and_measure(
    url: &str,
    connections: u64,
    [warmup, seconds]: [u64; 2],
    script: &[String],
    (watched, server): (&[i32], impl Fn(&CpuUsage) -> f64),
) -> Outcome<Measured> {
    wrk(url, connections, warmup, script).await?;
    let before = Cpu::take(watched);
    let output = wrk(url, connections, seconds, script).await?;
    let cpu = before.until(&Cpu::take(watched));
    let (measured, n) = Measured::parse(&output, server(&cpu), cpu)?;
    ensure!(n == 0, "{n} requests failed or were not 2xx:\n{output}");
    Ok(measured)
}

/// The trimmed rest of the first line of `output` that starts (after indentation) with `label`.
pub fn value_after<'a>(output: &'a str, label: &str) -> Option<&'a str> {
    let rest = output.lines().find_map(|l| l.trim().strip_prefix(label));
    rest.map(str::trim)
}

/// wrk's durations (`635.91us`, `1.04ms`, `2.00s`) in seconds.
fn parse_seconds(text: &str) -> Option<f64> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let units = [("us", 1e-6), ("ms", 1e-3), ("s", 1.0)];
    let (_, scale) = units
        .into_iter()
        .find(|(unit, _)| *unit == &text[split..])?;
    Some(text[..split].trim().parse::<f64>().ok()? * scale)
}

pub fn format_latency(seconds: f64) -> String {
    match seconds * 1e6 {
        micros if micros < 1000.0 => format!("{micros:.0} µs"),
        micros => format!("{:.2} ms", micros / 1000.0),
    }
}

pub fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// The `p`th percentile (nearest rank) of `values`; zero when there are none.
pub fn percentile(values: &[Duration], p: f64) -> Duration {
    let mut sorted = values.to_vec();
    sorted.sort();
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    let index = rank.clamp(1, sorted.len().max(1)) - 1;
    sorted.get(index).copied().unwrap_or_default()
}

/// CPU ticks at one moment: this process, its children (wrk, running or exited), the machine's
/// busy and stolen time, then each watched process.
pub struct Cpu(Instant, Vec<u64>);

/// Cores busy between two [`Cpu`] readings.
#[derive(Clone, Debug, Default)]
pub struct CpuUsage {
    pub own: f64,
    pub children: f64,
    pub watched: Vec<f64>,
    /// Every other process, and time the hypervisor took.
    pub other: f64,
    pub steal: f64,
}

impl Cpu {
    pub fn take(watched: &[i32]) -> Cpu {
        let ticks = |s: &Stat| s.utime + s.stime;
        let me = Process::myself().and_then(|p| p.stat()).ok();
        let (own, exited) = (me.as_ref()).map_or((0, 0), |s| (ticks(s), s.cutime + s.cstime));
        let pid = me.map(|m| m.pid);
        let running = processes().filter(|s| Some(s.ppid) == pid);
        let total = KernelStats::current().map(|k| k.total);
        let children = exited as u64 + running.map(|s| ticks(&s)).sum::<u64>();
        let busy = total.as_ref().map_or(0, |t| t.user + t.nice + t.system);
        let steal = total.map_or(0, |t| t.steal.unwrap_or(0));
        let mut all = vec![own, children, busy, steal];
        let stat = |pid| Process::new(pid).and_then(|p| p.stat());
        let busy = |pid: &i32| stat(*pid).map_or(0, |s| ticks(&s));
        all.extend(watched.iter().map(busy));
        Cpu(Instant::now(), all)
    }

    pub fn until(&self, later: &Cpu) -> CpuUsage {
        let seconds = later.0.duration_since(self.0).as_secs_f64().max(1e-9);
        let per_second = procfs::ticks_per_second() as f64 * seconds;
        let cores: Vec<f64> = (self.1.iter().zip(&later.1))
            .map(|(b, a)| a.saturating_sub(*b) as f64 / per_second)
            .collect();
        let watched = cores[4..].to_vec();
        let other = cores[2] - cores[0] - cores[1] - watched.iter().sum::<f64>();
        CpuUsage {
            own: cores[0],
            children: cores[1],
            other: other.max(0.0),
            steal: cores[3],
            watched,
        }
    }
}

/// Every process's `stat`.
pub fn processes() -> impl Iterator<Item = Stat> {
    let all = procfs::process::all_processes().into_iter().flatten();
    all.filter_map(|p| p.ok()?.stat().ok())
}

/// One run of one target: requests (or events) per second, latency in seconds, cores used.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub rate: f64,
    pub p50: f64,
    pub p99: f64,
    pub server: f64,
    pub cpu: CpuUsage,
}

impl Measured {
    /// wrk's `output` with the cores used, and its answers not 2xx/3xx plus its socket errors.
    pub fn parse(output: &str, server: f64, cpu: CpuUsage) -> Outcome<(Measured, u64)> {
        let rate = value_after(output, "Requests/sec:").and_then(|v| v.parse().ok());
        let latency = |p| value_after(output, p).and_then(parse_seconds);
        let sockets = value_after(output, "Socket errors:").unwrap_or_default();
        let sockets = sockets.split(',');
        let errors = sockets.filter_map(|part| part.split_whitespace().nth(1)?.parse::<u64>().ok());
        let non_2xx = value_after(output, "Non-2xx or 3xx responses:").and_then(|v| v.parse().ok());
        let errors = errors.chain(non_2xx).sum();
        let (Some(rate), Some(p50), Some(p99)) = (rate, latency("50%"), latency("99%")) else {
            bail!("unexpected wrk output:\n{output}");
        };
        let measured = Measured {
            rate,
            p50,
            p99,
            server,
            cpu,
        };
        Ok((measured, errors))
    }
}

/// `rounds` rounds of `measure` on each target in turn (a disturbance hits both), a row each with
/// what `measure` adds under `rest`; then medians over undisturbed rounds and the first target's
/// ratio to the second. Returns the results by target and the rounds counted.
pub async fn rounds(
    names: &[&str],
    rounds: u64,
    rest: &str,
    mut measure: impl AsyncFnMut(usize) -> Outcome<(Measured, String)>,
) -> Outcome<(Vec<Vec<Measured>>, Vec<usize>)> {
    let header = ["target", "rate", "p50", "p99", "server", "other"];
    let [target, rate, p50, p99, server, other] = header;
    println!("  {target:<52} {rate:>8} {p50:>9} {p99:>9} {server:>6} {other:>6} {rest}");
    let mut results = vec![Vec::new(); names.len()];
    for round in 1..=rounds {
        for (t, name) in names.iter().enumerate() {
            let (m, rest) = measure(t).await?;
            let [p50, p99] = [m.p50, m.p99].map(format_latency);
            let (name, other) = (format!("#{round} {name}"), m.cpu.other + m.cpu.steal);
            let (rate, server) = (m.rate, m.server);
            println!(
                "  {name:<52} {rate:>8.0} {p50:>9} {p99:>9} {server:>6.2} {other:>6.2} {rest}"
            );
            results[t].push(m);
        }
    }
    if results.len() < 2 {
        return Ok((results, Vec::new()));
    }
    let busy = |m: &Measured| m.cpu.other.max(m.cpu.steal) > DISTURBED_CORES;
    let disturbed = |r: &usize| results.iter().any(|t| busy(&t[*r]));
    let clean: Vec<usize> = (0..rounds as usize).filter(|r| !disturbed(r)).collect();
    let (counted, note) = match clean.is_empty() {
        true => ((0..rounds as usize).collect(), "DISTURBED: in every round"),
        false => (clean, "left out: any round in which"),
    };
    let numbers: Vec<usize> = counted.iter().map(|r| r + 1).collect();
    println!(
        "  medians over rounds {numbers:?} ({note} other work took over {DISTURBED_CORES} cores):"
    );
    for (t, name) in names.iter().enumerate() {
        let column =
            |f: fn(&Measured) -> f64| median(counted.iter().map(|&r| f(&results[t][r])).collect());
        let [p50, p99] = [column(|m| m.p50), column(|m| m.p99)].map(format_latency);
        let (rate, server) = (column(|m| m.rate), column(|m| m.server));
        println!("    {name}: {rate:.0}/s, p50 {p50}, p99 {p99}, server {server:.2} cores");
    }
    let ratio = |r: &usize| 100.0 * results[0][*r].rate / results[1][*r].rate;
    let ratios: Vec<f64> = counted.iter().map(ratio).collect();
    let by_round: Vec<String> = ratios.iter().map(|r| format!("{r:.1}%")).collect();
    let (ratio, by_round, [first, second]) =
        (median(ratios), by_round.join(", "), [names[0], names[1]]);
    println!("  ratio {first} / {second}: {ratio:.1}% (median; by round {by_round})");
    Ok((results, counted))
}
