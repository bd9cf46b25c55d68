//! An open-loop load generator with coordinated-omission correction, for latency at a fixed
//! rate (what `wrk2` or `oha -q … --latency-correction` do).
//!
//! Request `i` is scheduled at `start + i / rate`, whatever the server does, and handed to
//! whichever of the keep-alive connections is free first. A request's latency runs from its
//! *scheduled* time to the end of its response: when the server falls behind and every
//! connection is busy, requests wait in the queue and that wait is counted, as a user arriving
//! on time would see it.
//!
//! Everything runs on one thread, a current-thread runtime: the connections, and the pacer that
//! releases requests as they fall due. The pacer wakes on a `timerfd` ticking every [`TICK`]
//! (tokio's own timers tick in milliseconds) and releases every request due by then; the report
//! says how late requests were released, so the generator's own imprecision is visible. An
//! earlier pacer ran on a thread of its own and slept until each request's time: every request
//! then cost a cross-thread wake-up of the connections' thread, and on this two-core machine the
//! generator took more CPU than the bare server it measures, CPU the server under test then
//! lacked.
//!
//! The connections speak minimal HTTP/1.1 over tokio's `TcpStream`: fixed request bytes out,
//! status line, headers and a `Content-Length` body in. Anything else (chunked bodies, malformed
//! answers) counts as an error. Every request scheduled is waited for, so a run ends with no
//! request in flight.

use std::collections::BTreeMap;
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::unix::AsyncFd;
use tokio::io::Interest;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long after the last scheduled request the run waits for answers before giving up.
const ANSWER_LIMIT: Duration = Duration::from_secs(30);
/// How often the pacer releases the requests that have fallen due: at most this late, plus
/// whatever the thread's own scheduling adds.
pub const TICK: Duration = Duration::from_micros(200);

pub struct OpenLoop {
    pub addr: SocketAddr,
    /// Complete HTTP/1.1 requests (keep-alive), sent in turn.
    pub requests: Arc<Vec<Vec<u8>>>,
    /// Requests per second.
    pub rate: f64,
    pub connections: usize,
    /// When the first request is scheduled; connections are opened before it.
    pub start: Instant,
    /// Scheduled but not measured.
    pub warmup: Duration,
    /// Scheduled and measured, after the warm-up.
    pub duration: Duration,
}

#[derive(Debug, Default)]
pub struct OpenLoopReport {
    /// Requests scheduled in the measured window.
    pub scheduled: u64,
    /// Answers in the measured window, by status.
    pub by_status: BTreeMap<u16, u64>,
    /// Answers over the whole run (warm-up included), by status.
    pub all_by_status: BTreeMap<u16, u64>,
    /// Requests that got no parsable answer (connection errors); each also costs a reconnect.
    pub errors: u64,
    /// Latency of every measured request from its scheduled time, in µs, sorted.
    pub latencies_us: Vec<u64>,
    /// How late the pacer released each measured request, in µs, sorted.
    pub pacer_lag_us: Vec<u64>,
}

impl OpenLoopReport {
    /// The `q` quantile (0..=1) of the measured latencies.
    pub fn latency(&self, q: f64) -> Duration {
        Duration::from_micros(quantile(&self.latencies_us, q))
    }

    pub fn pacer_lag(&self, q: f64) -> Duration {
        Duration::from_micros(quantile(&self.pacer_lag_us, q))
    }

    pub fn measured_with(&self, status: u16) -> u64 {
        self.by_status.get(&status).copied().unwrap_or(0)
    }

    pub fn all_with(&self, status: u16) -> u64 {
        self.all_by_status.get(&status).copied().unwrap_or(0)
    }
}

fn quantile(sorted: &[u64], q: f64) -> u64 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl OpenLoop {
    /// Runs the schedule to its end on threads of its own and waits for every answer.
    pub async fn run(self) -> Result<OpenLoopReport, String> {
        tokio::task::spawn_blocking(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| format!("generator runtime: {e}"))?
                .block_on(self.drive())
        })
        .await
        .map_err(|e| format!("the generator failed: {e}"))?
    }

    async fn drive(self) -> Result<OpenLoopReport, String> {
        if self.rate <= 0.0 || self.requests.is_empty() || self.connections == 0 {
            return Err("the open-loop generator needs a rate, requests and connections".into());
        }
        let mut streams = Vec::with_capacity(self.connections);
        for _ in 0..self.connections {
            streams.push(
                connect(self.addr)
                    .await
                    .map_err(|e| format!("connect {}: {e}", self.addr))?,
            );
        }
        let measure_from = self.start + self.warmup;
        let total = ((self.warmup + self.duration).as_secs_f64() * self.rate).round() as u64;
        let (schedule, queue) = flume::unbounded::<(Instant, u64)>();
        let ticker = Ticker::new(TICK).map_err(|e| format!("the pacer's timer: {e}"))?;
        let pacer = tokio::spawn(pace(
            ticker,
            schedule,
            self.start,
            self.rate,
            total,
            measure_from,
        ));
        let tasks: Vec<_> = streams
            .into_iter()
            .map(|stream| {
                tokio::spawn(connection(
                    stream,
                    self.addr,
                    queue.clone(),
                    self.requests.clone(),
                    measure_from,
                ))
            })
            .collect();
        drop(queue);
        let give_up = self.start + self.warmup + self.duration + ANSWER_LIMIT;
        let mut report = OpenLoopReport::default();
        let mut unfinished = 0;
        for task in tasks {
            match tokio::time::timeout_at(give_up.into(), task).await {
                Ok(Ok(stats)) => {
                    report.latencies_us.extend(stats.latencies_us);
                    for (status, n) in stats.by_status {
                        *report.by_status.entry(status).or_default() += n;
                    }
                    for (status, n) in stats.all_by_status {
                        *report.all_by_status.entry(status).or_default() += n;
                    }
                    report.errors += stats.errors;
                }
                Ok(Err(e)) => return Err(format!("a generator connection failed: {e}")),
                Err(_) => unfinished += 1,
            }
        }
        let (scheduled, lags) = pacer
            .await
            .map_err(|e| format!("the pacer failed: {e}"))?
            .map_err(|e| format!("the pacer's timer failed: {e}"))?;
        if unfinished > 0 {
            return Err(format!(
                "{unfinished} connection(s) still waited for answers {ANSWER_LIMIT:?} after the \
                 last scheduled request"
            ));
        }
        report.scheduled = scheduled;
        report.pacer_lag_us = lags;
        report.pacer_lag_us.sort_unstable();
        report.latencies_us.sort_unstable();
        Ok(report)
    }
}

/// Releases request `i` once `start + i / rate` has passed, all that fell due at each tick.
/// Returns how many were scheduled in the measured window, and how late each of those was
/// released (µs).
async fn pace(
    ticker: Ticker,
    schedule: flume::Sender<(Instant, u64)>,
    start: Instant,
    rate: f64,
    total: u64,
    measure_from: Instant,
) -> io::Result<(u64, Vec<u64>)> {
    let mut lags = Vec::with_capacity(total as usize);
    let mut next = 0;
    while next < total {
        ticker.tick().await?;
        let now = Instant::now();
        while next < total {
            let at = start + Duration::from_secs_f64(next as f64 / rate);
            if at > now {
                break;
            }
            if at >= measure_from {
                lags.push(now.duration_since(at).as_micros() as u64);
            }
            if schedule.send((at, next)).is_err() {
                return Ok((lags.len() as u64, lags));
            }
            next += 1;
        }
    }
    Ok((lags.len() as u64, lags))
}

/// A periodic `timerfd`, registered with the runtime: microsecond ticks without a thread of its
/// own.
struct Ticker {
    timer: AsyncFd<OwnedFd>,
}

impl Ticker {
    fn new(period: Duration) -> io::Result<Ticker> {
        // SAFETY: timerfd_create takes only flags; a non-negative result is a new descriptor we own.
        let fd = unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just created and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let every = libc::timespec {
            tv_sec: period.as_secs() as libc::time_t,
            tv_nsec: period.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: every,
            it_value: every,
        };
        // SAFETY: a valid descriptor and a valid, initialised itimerspec; no old value wanted.
        if unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the descriptor is valid and open, and the OwnedFd inside keeps it so for as
        // long as the AsyncFd lives.
        let timer = unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) }?;
        Ok(Ticker { timer })
    }

    /// Waits for the next tick (at once if ticks passed since the last call).
    async fn tick(&self) -> io::Result<()> {
        loop {
            let mut ready = self.timer.readable().await?;
            let read = ready.try_io(|timer| {
                let mut expirations = [0u8; 8];
                // SAFETY: reads at most 8 bytes into an 8-byte buffer.
                let n =
                    unsafe { libc::read(timer.as_raw_fd(), expirations.as_mut_ptr().cast(), 8) };
                if n < 0 {
                    Err(io::Error::last_os_error())
                } else {
                    Ok(())
                }
            });
            if let Ok(result) = read {
                return result;
            }
        }
    }
}

async fn connect(addr: SocketAddr) -> io::Result<TcpStream> {
    let stream = TcpStream::connect(addr).await?;
    stream.set_nodelay(true)?;
    Ok(stream)
}

#[derive(Default)]
struct ConnectionStats {
    latencies_us: Vec<u64>,
    by_status: BTreeMap<u16, u64>,
    all_by_status: BTreeMap<u16, u64>,
    errors: u64,
}

async fn connection(
    mut stream: TcpStream,
    addr: SocketAddr,
    queue: flume::Receiver<(Instant, u64)>,
    requests: Arc<Vec<Vec<u8>>>,
    measure_from: Instant,
) -> ConnectionStats {
    let mut stats = ConnectionStats::default();
    let mut buffer = Vec::with_capacity(4096);
    while let Ok((scheduled, index)) = queue.recv_async().await {
        let request = &requests[index as usize % requests.len()];
        match exchange(&mut stream, request, &mut buffer).await {
            Ok((status, close)) => {
                let done = Instant::now();
                *stats.all_by_status.entry(status).or_default() += 1;
                if scheduled >= measure_from {
                    *stats.by_status.entry(status).or_default() += 1;
                    stats
                        .latencies_us
                        .push(done.duration_since(scheduled).as_micros() as u64);
                }
                if close {
                    if let Ok(fresh) = connect(addr).await {
                        stream = fresh;
                    }
                }
            }
            Err(_) => {
                stats.errors += 1;
                if let Ok(fresh) = connect(addr).await {
                    stream = fresh;
                }
            }
        }
    }
    stats
}

/// Sends one request and reads its answer: the status, and whether the server closes.
async fn exchange(
    stream: &mut TcpStream,
    request: &[u8],
    buffer: &mut Vec<u8>,
) -> io::Result<(u16, bool)> {
    let invalid = |what: &str| io::Error::new(io::ErrorKind::InvalidData, what.to_string());
    stream.write_all(request).await?;
    buffer.clear();
    loop {
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = std::str::from_utf8(&buffer[..end]).map_err(|_| invalid("head"))?;
            let mut lines = head.split("\r\n");
            let status: u16 = lines
                .next()
                .and_then(|l| l.split(' ').nth(1))
                .and_then(|s| s.parse().ok())
                .ok_or_else(|| invalid("status line"))?;
            let mut length = 0usize;
            let mut close = false;
            for line in lines {
                let Some((name, value)) = line.split_once(':') else {
                    continue;
                };
                let value = value.trim();
                if name.eq_ignore_ascii_case("content-length") {
                    length = value.parse().map_err(|_| invalid("content-length"))?;
                } else if name.eq_ignore_ascii_case("transfer-encoding") {
                    return Err(invalid("chunked answers are not supported"));
                } else if name.eq_ignore_ascii_case("connection") {
                    close = value.eq_ignore_ascii_case("close");
                }
            }
            let total = end + 4 + length;
            while buffer.len() < total {
                if stream.read_buf(buffer).await? == 0 {
                    return Err(io::ErrorKind::UnexpectedEof.into());
                }
            }
            if buffer.len() > total {
                return Err(invalid("bytes after the answer"));
            }
            return Ok((status, close));
        }
        if stream.read_buf(buffer).await? == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
    }
}
