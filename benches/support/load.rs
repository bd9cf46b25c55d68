//! What the load runs share: `wrk` (Debian's package) and its output, a bare axum ceiling, who
//! used the cores during a measured window (from /proc), and the table of rounds with its medians.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::routing::{on, MethodFilter};

/// Other processes or hypervisor steal above this many cores make a round not comparable.
pub const DISTURBED_CORES: f64 = 0.15;
/// Linux's USER_HZ, the unit of /proc CPU times.
const TICKS_PER_SECOND: f64 = 100.0;

/// Whether this is `cargo bench`: under `cargo test` a `what` run only says it is skipped.
pub fn benching(what: &str) -> bool {
    let benching = std::env::args().any(|arg| arg == "--bench");
    if !benching {
        println!("skipped: {what} run is for cargo bench");
    }
    benching
}

/// A load run needs `cargo bench` and `wrk`. Returns wrk's version line, or the exit code to end
/// with.
pub fn preflight(bench: &str) -> Result<String, ExitCode> {
    if !benching("load") {
        return Err(ExitCode::SUCCESS);
    }
    // `wrk -v` prints its banner and exits non-zero: only "not found" matters.
    let Ok(output) = std::process::Command::new("wrk").arg("-v").output() else {
        eprintln!(
            "error: `wrk` is missing: `apt-get install wrk`, then `cargo bench --bench {bench}`"
        );
        return Err(ExitCode::from(2));
    };
    let banner = String::from_utf8_lossy(&output.stdout);
    let version = banner.split(" Copyright").next().unwrap_or("wrk");
    Ok(version.trim().to_string())
}

/// A whole number from the environment, or `default`.
pub fn setting(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(raw) => raw
            .trim()
            .parse()
            .unwrap_or_else(|_| super::fail(format!("{name}={raw} is not a whole number"))),
        Err(_) => default,
    }
}

/// The ceiling: one route, `method` at `path`, answering `status` with `body` as JSON (the same
/// reference-counted bytes every time; the request is not even read), no middleware. Serves on a
/// free loopback port until the process ends; returns its base URL.
pub async fn ceiling(
    method: MethodFilter,
    path: &str,
    status: StatusCode,
    body: Bytes,
) -> Result<String, String> {
    let json = HeaderValue::from_static("application/json");
    let answer = move || {
        let (body, json) = (body.clone(), json.clone());
        async move { (status, [(CONTENT_TYPE, json)], body) }
    };
    let router = axum::Router::new().route(path, on(method, answer));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    tokio::spawn(async move { axum::serve(listener, router).await });
    Ok(format!("http://{address}"))
}

pub fn cores() -> u64 {
    std::thread::available_parallelism().map_or(1, |n| n.get() as u64)
}

/// One `wrk` run: `connections` keep-alive connections over `cores()` threads.
pub async fn wrk(
    url: &str,
    connections: u64,
    seconds: u64,
    script: Option<(&Path, &str)>,
) -> Result<String, String> {
    let mut command = tokio::process::Command::new("wrk");
    command
        .arg(format!("-t{}", cores()))
        .arg(format!("-c{connections}"))
        .arg(format!("-d{seconds}s"))
        .args(["--timeout", "10s", "--latency"]);
    if let Some((script, _)) = script {
        command.arg("-s").arg(script);
    }
    command.arg(url);
    if let Some((_, argument)) = script {
        command.args(["--", argument]);
    }
    let output = command
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|e| format!("cannot run wrk: {e}"))?;
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    if !output.status.success() || !stdout.contains("Requests/sec:") {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("wrk failed ({}):\n{stdout}{stderr}", output.status));
    }
    Ok(stdout)
}

/// The trimmed rest of the first line of `output` that starts (after indentation) with `label`.
pub fn value_after<'a>(output: &'a str, label: &str) -> Option<&'a str> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .map(str::trim)
}

/// What every wrk run prints: requests/s, p50, p99, and answers that were not 2xx/3xx plus
/// socket errors.
pub fn parse_wrk(output: &str) -> Result<(f64, Duration, Duration, u64), String> {
    let rate = value_after(output, "Requests/sec:").and_then(|v| v.parse().ok());
    let latency = |p| value_after(output, p).and_then(parse_duration);
    let errors = value_after(output, "Non-2xx or 3xx responses:")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        // "Socket errors: connect 0, read 0, write 0, timeout 0"
        + value_after(output, "Socket errors:").map_or(0, |v| {
            v.split(',')
                .filter_map(|part| part.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum()
        });
    match (rate, latency("50%"), latency("99%")) {
        (Some(rate), Some(p50), Some(p99)) => Ok((rate, p50, p99, errors)),
        _ => Err(format!("unexpected wrk output:\n{output}")),
    }
}

/// wrk's durations: `635.91us`, `1.04ms`, `2.00s`.
fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let number: f64 = text[..split].trim().parse().ok()?;
    let scale = match &text[split..] {
        "us" => 1e-6,
        "ms" => 1e-3,
        "s" => 1.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(number * scale))
}

pub fn format_latency(d: Duration) -> String {
    match d.as_secs_f64() * 1e6 {
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

/// CPU ticks from /proc at one moment: this process, its exited children (wrk), the machine's
/// busy and stolen time, then each watched process.
pub struct Cpu {
    at: Instant,
    ticks: Vec<f64>,
}

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

/// Whitespace-separated numbers of `text` after its first `skip` fields.
fn numbers(text: &str, skip: usize) -> Vec<f64> {
    let numbers = text.split_whitespace().skip(skip);
    numbers.map(|f| f.parse().unwrap_or(0.0)).collect()
}

/// utime + stime of a process (fields 14 and 15 of its stat), with `children` cutime + cstime
/// (16 and 17).
fn process_ticks(pid: &str, children: bool) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The fields after the command, which may hold spaces, start at the third.
    let fields = numbers(stat.rsplit(')').next().unwrap_or_default(), 0);
    let first = if children { 16 } else { 14 } - 3;
    fields.iter().skip(first).take(2).sum()
}

impl Cpu {
    pub fn take(watched: &[u32]) -> Cpu {
        let machine = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        // cpu  user nice system idle iowait irq softirq steal
        let cpu = numbers(machine.lines().next().unwrap_or_default(), 1);
        let field = |n: usize| cpu.get(n).copied().unwrap_or(0.0);
        let mut ticks = vec![
            process_ticks("self", false),
            process_ticks("self", true),
            field(0) + field(1) + field(2),
            field(7),
        ];
        ticks.extend(
            watched
                .iter()
                .map(|pid| process_ticks(&pid.to_string(), false)),
        );
        Cpu {
            at: Instant::now(),
            ticks,
        }
    }

    pub fn until(&self, later: &Cpu) -> CpuUsage {
        let seconds = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let cores: Vec<f64> = (self.ticks.iter().zip(&later.ticks))
            .map(|(b, a)| ((a - b) / TICKS_PER_SECOND / seconds).max(0.0))
            .collect();
        let watched = cores[4..].to_vec();
        CpuUsage {
            own: cores[0],
            children: cores[1],
            other: (cores[2] - cores[0] - cores[1] - watched.iter().sum::<f64>()).max(0.0),
            steal: cores[3],
            watched,
        }
    }
}

/// One measured run of one target: requests (or acknowledged events) per second, latency, and
/// who used the cores.
#[derive(Clone, Debug, Default)]
pub struct Measured {
    pub rate: f64,
    pub p50: Duration,
    pub p99: Duration,
    /// Cores the server under test used.
    pub server: f64,
    pub cpu: CpuUsage,
}

/// The table's header and one row a run: the target, its rate, p50, p99, server cores, other
/// cores (steal included), then the bench's own `rest`.
pub fn header(rest: &str) -> String {
    let [target, rate, p50, p99, server, other] =
        ["target", "rate", "p50", "p99", "server", "other"];
    format!("  {target:<52} {rate:>8} {p50:>9} {p99:>9} {server:>6} {other:>6} {rest}")
}

pub fn row(name: &str, m: &Measured, rest: &str) -> String {
    format!(
        "  {name:<52} {:>8.0} {:>9} {:>9} {:>6.2} {:>6.2} {rest}",
        m.rate,
        format_latency(m.p50),
        format_latency(m.p99),
        m.server,
        m.cpu.other + m.cpu.steal,
    )
}

/// Prints each target's medians over the undisturbed rounds (every round if none is) and the
/// median of the per-round ratios of the first target to the second; returns the rounds counted.
pub fn summary(names: &[&str], results: &[Vec<Measured>]) -> Vec<usize> {
    let disturbed = |m: &Measured| m.cpu.other.max(m.cpu.steal) > DISTURBED_CORES;
    let rounds = 0..results[0].len();
    let clean: Vec<usize> = (rounds.clone())
        .filter(|&r| !results.iter().any(|t| disturbed(&t[r])))
        .collect();
    let (counted, note) = match clean.is_empty() {
        true => (rounds.collect::<Vec<_>>(), "DISTURBED: in every round"),
        false => (clean, "left out: any round in which"),
    };
    let numbers: Vec<usize> = counted.iter().map(|r| r + 1).collect();
    println!(
        "  medians over rounds {numbers:?} ({note} other work took over {DISTURBED_CORES} cores):"
    );
    let column = |t: usize, f: fn(&Measured) -> f64| {
        median(counted.iter().map(|&r| f(&results[t][r])).collect())
    };
    let latency =
        |t, f: fn(&Measured) -> f64| format_latency(Duration::from_secs_f64(column(t, f)));
    for (t, name) in names.iter().enumerate() {
        println!(
            "    {name}: {:.0}/s, p50 {}, p99 {}, server {:.2} cores",
            column(t, |m| m.rate),
            latency(t, |m| m.p50.as_secs_f64()),
            latency(t, |m| m.p99.as_secs_f64()),
            column(t, |m| m.server),
        );
    }
    let ratios: Vec<f64> = counted
        .iter()
        .map(|&r| 100.0 * results[0][r].rate / results[1][r].rate)
        .collect();
    let by_round: Vec<String> = ratios.iter().map(|r| format!("{r:.1}%")).collect();
    println!(
        "  ratio {} / {}: {:.1}% (median; by round {})",
        names[0],
        names[1],
        median(ratios),
        by_round.join(", ")
    );
    counted
}
