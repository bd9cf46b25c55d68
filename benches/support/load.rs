//! What the load harnesses share: running `wrk`, CPU accounting from /proc (who used the cores
//! during a measured window), waiting for other engineers' load runs to finish, medians and
//! formatting.

use std::path::Path;
use std::time::{Duration, Instant};

/// Linux's USER_HZ, the unit of /proc CPU times (100 on every supported architecture).
pub const TICKS_PER_SECOND: f64 = 100.0;

/// Other processes or steal above this many cores make a round not comparable.
pub const DISTURBED_CORES: f64 = 0.15;

/// Command lines of other load runs on this machine (see BENCHMARKS.md): a timed run waits until
/// none is left that is not its own.
pub const FOREIGN_LOAD_PATTERNS: [&str; 4] =
    ["storefront_load", "analytics_scale", "ingest_load", "wrk "];

pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

pub fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".to_string())
}

/// `wrk`'s version line, or `None` when it is not installed.
/// What every load run checks first: it only runs under `cargo bench` (under `cargo test` it
/// says it is skipped), and it needs `wrk`. Returns wrk's version, or the exit code to end with.
pub fn preflight(bench: &str) -> Result<String, std::process::ExitCode> {
    if !std::env::args().any(|arg| arg == "--bench") {
        println!("skipped: load run is for cargo bench");
        return Err(std::process::ExitCode::SUCCESS);
    }
    wrk_version().ok_or_else(|| {
        eprintln!(
            "error: the load generator `wrk` is not installed. Install it with \
             `apt-get install wrk` (Debian), then run `cargo bench --bench {bench}` again."
        );
        std::process::ExitCode::from(2)
    })
}

pub fn wrk_version() -> Option<String> {
    // `wrk -v` prints its banner and usage, and exits non-zero: only "not found" matters.
    let output = std::process::Command::new("wrk").arg("-v").output().ok()?;
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    Some(
        text.lines()
            .find(|l| l.starts_with("wrk "))
            .map(|l| l.split(" Copyright").next().unwrap_or(l).trim().to_string())
            .unwrap_or_else(|| "wrk (unknown version)".to_string()),
    )
}

/// One `wrk` invocation.
pub struct Wrk<'a> {
    pub url: &'a str,
    pub threads: u64,
    pub connections: u64,
    pub seconds: u64,
    /// A Lua script (`-s`), and the arguments after `--` that its `init(args)` receives.
    pub script: Option<&'a Path>,
    pub script_args: Vec<String>,
}

impl Wrk<'_> {
    /// Runs wrk to completion and returns its standard output.
    pub async fn run(&self) -> Result<String, String> {
        let mut command = tokio::process::Command::new("wrk");
        command
            .arg(format!("-t{}", self.threads))
            .arg(format!("-c{}", self.connections))
            .arg(format!("-d{}s", self.seconds))
            .arg("--timeout")
            .arg("10s")
            .arg("--latency");
        if let Some(script) = self.script {
            command.arg("-s").arg(script);
        }
        command.arg(self.url);
        if !self.script_args.is_empty() {
            command.arg("--").args(&self.script_args);
        }
        command.kill_on_drop(true);
        let limit = Duration::from_secs(self.seconds + 30);
        let output = tokio::time::timeout(limit, command.output())
            .await
            .map_err(|_| format!("wrk did not finish within {limit:?}"))?
            .map_err(|e| format!("cannot run wrk: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "wrk failed ({}): {}",
                output.status,
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if !stdout.contains("Requests/sec:") {
            return Err(format!(
                "unexpected wrk output:\n{stdout}{}",
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        Ok(stdout)
    }
}

/// What every wrk run prints.
#[derive(Clone, Copy, Debug, Default)]
pub struct WrkSummary {
    pub requests_per_second: f64,
    pub p50: Duration,
    pub p99: Duration,
    pub non_2xx: u64,
    pub socket_errors: u64,
}

/// The trimmed rest of the first line of `output` that starts (after indentation) with `label`.
pub fn value_after<'a>(output: &'a str, label: &str) -> Option<&'a str> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix(label))
        .map(str::trim)
}

pub fn parse_wrk(output: &str) -> Result<WrkSummary, String> {
    let requests_per_second: f64 = value_after(output, "Requests/sec:")
        .and_then(|v| v.parse().ok())
        .ok_or("wrk printed no Requests/sec")?;
    let percentile = |p: &str| -> Result<Duration, String> {
        value_after(output, p)
            .and_then(parse_duration)
            .ok_or_else(|| format!("wrk printed no {p} latency"))
    };
    let non_2xx: u64 = value_after(output, "Non-2xx or 3xx responses:")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    // "Socket errors: connect 0, read 0, write 0, timeout 0"
    let socket_errors: u64 = value_after(output, "Socket errors:")
        .map(|v| {
            v.split(',')
                .filter_map(|part| part.split_whitespace().nth(1)?.parse::<u64>().ok())
                .sum()
        })
        .unwrap_or(0);
    Ok(WrkSummary {
        requests_per_second,
        p50: percentile("50%")?,
        p99: percentile("99%")?,
        non_2xx,
        socket_errors,
    })
}

/// wrk's durations: `635.91us`, `1.04ms`, `2.00s`, `1.50m`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let split = text.find(|c: char| c.is_ascii_alphabetic())?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.trim().parse().ok()?;
    let seconds = match unit.trim() {
        "us" => number / 1e6,
        "ms" => number / 1e3,
        "s" => number,
        "m" => number * 60.0,
        "h" => number * 3600.0,
        _ => return None,
    };
    Some(Duration::from_secs_f64(seconds))
}

pub fn format_latency(d: Duration) -> String {
    let micros = d.as_secs_f64() * 1e6;
    if micros < 1000.0 {
        format!("{micros:.0} µs")
    } else {
        format!("{:.2} ms", micros / 1000.0)
    }
}

pub fn median(mut values: Vec<f64>) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let mid = values.len() / 2;
    if values.len() % 2 == 1 {
        values[mid]
    } else {
        (values[mid - 1] + values[mid]) / 2.0
    }
}

/// CPU accounting from /proc (Linux): this process, its reaped children (wrk), the given other
/// processes, and the machine.
pub struct CpuSnapshot {
    at: Instant,
    own_ticks: f64,
    children_ticks: f64,
    minor_faults: f64,
    /// utime + stime of each watched process (0 once it is gone).
    watched_ticks: Vec<f64>,
    machine_busy_ticks: f64,
    machine_steal_ticks: f64,
    machine_irq_ticks: f64,
    machine_idle_ticks: f64,
}

/// Cores busy between two snapshots.
#[derive(Clone, Debug, Default)]
pub struct CpuUsage {
    pub seconds: f64,
    /// This process.
    pub own: f64,
    /// Its children that exited in between (wrk).
    pub children: f64,
    /// Each watched process, in the order given.
    pub watched: Vec<f64>,
    /// Every other process on the machine.
    pub other: f64,
    /// Time taken by the hypervisor.
    pub steal: f64,
    /// Interrupt and softirq time (loopback TCP delivery runs there): nobody's in particular.
    pub irq: f64,
    /// Idle and I/O wait: what nobody used.
    pub idle: f64,
    /// Minor page faults of this process.
    pub minor_faults: f64,
}

/// Fields of `/proc/<pid>/stat` after the parenthesised command name, from field 3 (state) on.
fn stat_fields(pid: &str) -> Option<Vec<f64>> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    Some(
        stat[stat.rfind(')')? + 2..]
            .split_whitespace()
            .map(|f| f.parse().unwrap_or(0.0))
            .collect(),
    )
}

impl CpuSnapshot {
    pub fn take(watched: &[u32]) -> Option<CpuSnapshot> {
        let fields = stat_fields("self")?;
        // minflt is field 10, utime 14, stime 15, cutime 16, cstime 17.
        let field = |n: usize| fields.get(n - 3).copied();
        let watched_ticks = watched
            .iter()
            .map(|pid| {
                stat_fields(&pid.to_string()).map_or(0.0, |f| {
                    f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0)
                })
            })
            .collect();
        let machine = std::fs::read_to_string("/proc/stat").ok()?;
        // cpu  user nice system idle iowait irq softirq steal guest guest_nice
        let cpu: Vec<f64> = machine
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .map(|f| f.parse().unwrap_or(0.0))
            .collect();
        let cpu_field = |n: usize| cpu.get(n).copied().unwrap_or(0.0);
        Some(CpuSnapshot {
            at: Instant::now(),
            own_ticks: field(14)? + field(15)?,
            // Children that exited (cutime, cstime) and those still running (wrk in the middle
            // of its run): a window may end before the generator does.
            children_ticks: field(16)? + field(17)? + live_children_ticks(watched),
            minor_faults: field(10)?,
            watched_ticks,
            // Process time only: interrupt time (loopback delivery runs there) is nobody's.
            machine_busy_ticks: cpu_field(0) + cpu_field(1) + cpu_field(2),
            machine_steal_ticks: cpu_field(7),
            machine_irq_ticks: cpu_field(5) + cpu_field(6),
            machine_idle_ticks: cpu_field(3) + cpu_field(4),
        })
    }

    /// What was used from `self` to `later`.
    pub fn until(&self, later: &CpuSnapshot) -> CpuUsage {
        let seconds = later.at.duration_since(self.at).as_secs_f64().max(1e-9);
        let cores = |before: f64, after: f64| (after - before) / TICKS_PER_SECOND / seconds;
        let own = cores(self.own_ticks, later.own_ticks);
        let children = cores(self.children_ticks, later.children_ticks);
        let watched: Vec<f64> = self
            .watched_ticks
            .iter()
            .zip(&later.watched_ticks)
            .map(|(&b, &a)| cores(b, a).max(0.0))
            .collect();
        let busy = cores(self.machine_busy_ticks, later.machine_busy_ticks);
        CpuUsage {
            seconds,
            own,
            children,
            other: (busy - own - children - watched.iter().sum::<f64>()).max(0.0),
            watched,
            steal: cores(self.machine_steal_ticks, later.machine_steal_ticks),
            irq: cores(self.machine_irq_ticks, later.machine_irq_ticks),
            idle: cores(self.machine_idle_ticks, later.machine_idle_ticks),
            minor_faults: later.minor_faults - self.minor_faults,
        }
    }
}

impl CpuUsage {
    pub fn disturbed(&self) -> bool {
        self.other > DISTURBED_CORES || self.steal > DISTURBED_CORES
    }
}

/// utime + stime of this process's running children, apart from the watched ones (a service
/// this process started).
fn live_children_ticks(watched: &[u32]) -> f64 {
    let own = std::process::id() as f64;
    numbered_entries("/proc")
        .into_iter()
        .filter(|pid| !watched.contains(pid))
        .filter_map(|pid| stat_fields(&pid.to_string()))
        .filter(|f| f.get(1) == Some(&own))
        .map(|f| f.get(11).copied().unwrap_or(0.0) + f.get(12).copied().unwrap_or(0.0))
        .sum()
}

/// Cores busy on the machine, apart from this process and its children, over `window`.
pub async fn busy_elsewhere(window: Duration) -> Option<f64> {
    let before = CpuSnapshot::take(&[])?;
    tokio::time::sleep(window).await;
    let after = CpuSnapshot::take(&[])?;
    let usage = before.until(&after);
    Some(usage.other + usage.steal)
}

/// Processes whose `comm` starts with `prefix` (e.g. `clickhouse`).
pub fn pids_named(prefix: &str) -> Vec<u32> {
    numbered_entries("/proc")
        .into_iter()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|comm| comm.trim().starts_with(prefix))
        })
        .collect()
}

/// The entries of a `/proc` directory that are numbers (process or thread ids); none if it
/// cannot be read (the process is gone).
pub fn numbered_entries(dir: &str) -> Vec<u32> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

fn parent_of(pid: u32) -> Option<u32> {
    // ppid is field 4.
    stat_fields(&pid.to_string())?
        .get(1)
        .map(|&ppid| ppid as u32)
}

/// Other load runs on the machine (their command lines), leaving out this process, its
/// ancestors (the `cargo bench` and shell that started it) and its children.
pub fn foreign_load() -> Vec<String> {
    let own = std::process::id();
    let mut ancestors = Vec::new();
    let mut pid = own;
    while let Some(parent) = parent_of(pid).filter(|&p| p > 1) {
        ancestors.push(parent);
        pid = parent;
    }
    numbered_entries("/proc")
        .into_iter()
        .filter(|&pid| pid != own && !ancestors.contains(&pid) && parent_of(pid) != Some(own))
        .filter_map(|pid| {
            let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let line = String::from_utf8_lossy(&raw).replace('\0', " ");
            FOREIGN_LOAD_PATTERNS
                .iter()
                .any(|p| line.contains(p))
                .then(|| format!("{pid} {}", line.trim()))
        })
        .collect()
}

/// Waits (up to `limit`) until no other load run is on the machine and the rest of the machine
/// is idle (other processes below [`DISTURBED_CORES`] over 3 s: builds and test runs do not
/// show in a process list). Returns false when it gave up; says what it waits for.
pub async fn wait_for_quiet_machine(limit: Duration) -> bool {
    let started = Instant::now();
    let mut told = false;
    loop {
        let mut foreign = foreign_load();
        if foreign.is_empty() {
            let busy = busy_elsewhere(Duration::from_secs(3)).await.unwrap_or(0.0);
            if busy > DISTURBED_CORES {
                let busiest = busiest_processes(3);
                foreign.push(if busiest.is_empty() {
                    format!("(other processes keep {busy:.2} cores busy)")
                } else {
                    format!(
                        "(other processes keep {busy:.2} cores busy; running now: {})",
                        busiest.join(", ")
                    )
                });
            }
        }
        if foreign.is_empty() {
            if told {
                println!(
                    "  machine quiet after {:.0} s of waiting",
                    started.elapsed().as_secs_f64()
                );
            }
            return true;
        }
        if started.elapsed() >= limit {
            println!("  WARNING: other load runs still present after {limit:?}; measuring anyway:");
            for line in &foreign {
                println!("    {}", truncate(line, 160));
            }
            return false;
        }
        if !told {
            println!("  waiting for other load runs to finish:");
            for line in &foreign {
                println!("    {}", truncate(line, 160));
            }
            told = true;
        }
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
}

/// Creating a file costs at most this much on a settled filesystem (10–40 µs on this machine).
pub const SETTLED_FILE_CREATE: Duration = Duration::from_micros(100);
const PROBE_FILES: u32 = 32;

/// The mean cost of creating an empty file in a new directory under `dir`, which the probe then
/// removes. The directory is named `tmp_…`, which ClickHouse treats as its own temporary data (and
/// clears should a crash leave it).
pub fn file_create_cost(dir: &Path) -> std::io::Result<Duration> {
    let probe = dir.join(format!("tmp_bench_probe_{}", std::process::id()));
    std::fs::create_dir(&probe)?;
    let started = Instant::now();
    let created = (0..PROBE_FILES)
        .try_for_each(|n| std::fs::File::create(probe.join(n.to_string())).map(drop));
    let cost = started.elapsed() / PROBE_FILES;
    let _ = std::fs::remove_dir_all(&probe);
    created.map(|()| cost)
}

/// Waits (up to `limit`) until creating a file in `dir` is cheap again, and returns what it last
/// cost, or why it could not be measured.
///
/// ext4 without a journal (this machine's root filesystem) does not reuse an inode freed in the
/// last 60 s, or 360 s while its inode table block is still dirty: every file created meanwhile
/// first looks up each such inode in its group (`recently_deleted`). After the thousands of files
/// of a dropped database (the previous run's, or the test suite's) that is ≈ 1 ms per file for
/// minutes, and ClickHouse creates ≈ 100 files per insert: a perf profile of a service round
/// right after another run had ClickHouse's insert thread at 15% of the two cores, two thirds of
/// it in that lookup, against 5% after a quiet spell. The ceiling rounds create no files.
pub async fn wait_for_settled_filesystem(dir: &Path, limit: Duration) -> Result<Duration, String> {
    let started = Instant::now();
    let mut told = false;
    loop {
        let cost = file_create_cost(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        if cost <= SETTLED_FILE_CREATE {
            if told {
                println!(
                    "  filesystem settled after {:.0} s of waiting",
                    started.elapsed().as_secs_f64()
                );
            }
            return Ok(cost);
        }
        if started.elapsed() >= limit {
            println!(
                "  WARNING: creating a file in {} still costs {} after {limit:?}; measuring anyway",
                dir.display(),
                format_latency(cost)
            );
            return Ok(cost);
        }
        if !told {
            println!(
                "  waiting for the filesystem to settle: creating a file in {} costs {} (settled: \
                 under {}; inodes freed in the last minutes are skipped one by one)",
                dir.display(),
                format_latency(cost),
                format_latency(SETTLED_FILE_CREATE)
            );
            told = true;
        }
        tokio::time::sleep(Duration::from_secs(10)).await;
    }
}

fn truncate(text: &str, chars: usize) -> String {
    if text.chars().count() <= chars {
        text.to_string()
    } else {
        text.chars().take(chars).collect::<String>() + "…"
    }
}

/// The command names of the running processes (state R) with the most CPU time, for messages.
fn busiest_processes(n: usize) -> Vec<String> {
    let mut running: Vec<(f64, String)> = numbered_entries("/proc")
        .into_iter()
        .filter(|&pid| pid != std::process::id())
        .filter_map(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let name = &stat[stat.find('(')? + 1..stat.rfind(')')?];
            let rest: Vec<&str> = stat[stat.rfind(')')? + 2..].split_whitespace().collect();
            // State is field 3, utime 14, stime 15.
            if rest.first() != Some(&"R") {
                return None;
            }
            let ticks = rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?;
            Some((ticks, name.to_string()))
        })
        .collect();
    running.sort_by(|a, b| b.0.total_cmp(&a.0));
    running.into_iter().take(n).map(|(_, name)| name).collect()
}

/// The nice value of the scheduling groups (`/proc/<pid>/autogroup`) of some processes, for the
/// length of a run; the previous values come back when this is dropped.
///
/// Linux puts each session in a group of its own (autogroup) and shares the cores between groups
/// first: a plain `nice` on a process only counts within its group. A server started as a daemon
/// (ClickHouse here) has a group of its own, so only the group's nice lowers its share.
pub struct AutogroupNice {
    previous: Vec<(u32, i32)>,
}

impl AutogroupNice {
    /// Sets each group once (a server's processes usually share one), restoring what it had
    /// already changed if a write fails.
    pub fn set(pids: &[u32], nice: i32) -> Result<AutogroupNice, String> {
        let mut set = AutogroupNice {
            previous: Vec::new(),
        };
        let mut groups = Vec::new();
        for &pid in pids {
            let path = format!("/proc/{pid}/autogroup");
            // "/autogroup-17 nice 0"
            let current = std::fs::read_to_string(&path)
                .map_err(|e| format!("cannot read {path} (no autogroup scheduling?): {e}"))?;
            let mut fields = current.split_whitespace();
            let (Some(group), Some(before)) = (
                fields.next(),
                fields.last().and_then(|n| n.parse::<i32>().ok()),
            ) else {
                return Err(format!("cannot read {path}: {current:?}"));
            };
            if groups.iter().any(|g: &String| g == group) {
                continue;
            }
            groups.push(group.to_string());
            std::fs::write(&path, nice.to_string())
                .map_err(|e| format!("cannot write {path}: {e}"))?;
            set.previous.push((pid, before));
        }
        Ok(set)
    }
}

impl Drop for AutogroupNice {
    fn drop(&mut self) {
        for (pid, nice) in self.previous.iter().rev() {
            let _ = std::fs::write(format!("/proc/{pid}/autogroup"), nice.to_string());
        }
    }
}

/// Every thread of some processes under `SCHED_IDLE` for the length of a run; dropping this puts
/// every thread they have then (new ones inherit the policy) back under `SCHED_OTHER`.
///
/// A nice value only lowers a process's share of the cores; a thread of it that is running still
/// keeps its core for the rest of its time slice when a request's thread wakes up (milliseconds
/// while ClickHouse parses an insert, BENCHMARKS.md › Ingest). Linux lets any normal thread that
/// wakes pre-empt an idle-policy thread at once.
pub struct IdlePolicy {
    pids: Vec<u32>,
}

impl IdlePolicy {
    pub fn set(pids: &[u32]) -> Result<IdlePolicy, String> {
        let set = IdlePolicy {
            pids: pids.to_vec(),
        };
        // Twice: a thread started while the first pass ran may have inherited the old policy.
        for _ in 0..2 {
            for &pid in pids {
                for thread in threads_of(pid) {
                    set_policy(thread, libc::SCHED_IDLE).map_err(|e| {
                        format!("cannot set thread {thread} of {pid} to SCHED_IDLE: {e}")
                    })?;
                }
            }
        }
        Ok(set)
    }
}

impl Drop for IdlePolicy {
    fn drop(&mut self) {
        for &pid in &self.pids {
            for thread in threads_of(pid) {
                let _ = set_policy(thread, libc::SCHED_OTHER);
            }
        }
    }
}

fn threads_of(pid: u32) -> Vec<u32> {
    numbered_entries(&format!("/proc/{pid}/task"))
}

fn set_policy(thread: u32, policy: libc::c_int) -> std::io::Result<()> {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: the kernel only reads the parameter struct, which lives across the call.
    if unsafe { libc::sched_setscheduler(thread as libc::pid_t, policy, &param) } == 0 {
        Ok(())
    } else {
        let e = std::io::Error::last_os_error();
        // A thread that exited since the listing is no error.
        if e.raw_os_error() == Some(libc::ESRCH) {
            Ok(())
        } else {
            Err(e)
        }
    }
}
