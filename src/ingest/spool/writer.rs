//! The one thread that appends to the active segment: group commit.
//!
//! Requests copy their encoded record into the open group (one shared buffer, [`GroupQueue`])
//! and wait for that group's completion. The writer takes the whole group at once, writes it with
//! one `pwrite`, calls `fdatasync` once, and only then completes it: one wake-up for every request
//! of the group, and no allocation, channel message or oneshot per request.
//! Under load (the last group had company) it first gathers a little longer, at most the commit
//! delay, while requests keep arriving: a sync costs the same for 2 records as for 40, and each
//! one is a chance to meet one of the disk's multi-millisecond flush stalls.
//! It seals the segment (trims the unused zeros, renames it to `.log`, wakes the shipper) once it
//! holds enough rows, is old enough, or the next group would not fit; the next segment is already
//! prepared. Sealing needs no sync: every record in it already is durable, and a crash before the
//! rename is on disk leaves an `.open` file that the next start seals.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use metrics::Histogram;
use tokio::sync::{oneshot, Notify};

use super::lock::DirLock;
use super::record::HEADER_BYTES;
use super::segment::{NextSegments, Prepared, SEALED_SUFFIX};
use super::SpoolBytes;
use crate::scheduling;

/// A gathering group stops growing at this many requests.
const MAX_GROUP: usize = 4096;
/// Requests wait for the open group to be taken before they add to it past this many bytes: a
/// disk that stalls holds back requests, not memory.
pub const MAX_PENDING_BYTES: usize = 64 * 1024 * 1024;
/// The writer keeps its spare group buffer for reuse up to this size.
const KEPT_BUFFER_BYTES: usize = 4 * 1024 * 1024;
/// One wait for more requests to join a group (the kernel adds its timer slack, ≈ 50 µs).
const GATHER_NAP: Duration = Duration::from_micros(50);
/// The time slice this thread asks for: the kernel's shortest, so that it pre-empts on wake-up.
const WAKE_UP_SLICE: Duration = Duration::from_micros(100);

/// How one group ended, for every request in it.
pub struct GroupDone {
    result: OnceLock<Result<(), String>>,
    notify: Notify,
}

impl GroupDone {
    fn new() -> Arc<GroupDone> {
        Arc::new(GroupDone {
            result: OnceLock::new(),
            notify: Notify::new(),
        })
    }

    fn complete(&self, result: Result<(), String>) {
        let _ = self.result.set(result);
        self.notify.notify_waiters();
    }

    /// Waits until the writer has completed this group.
    pub async fn wait(&self) -> Result<(), String> {
        loop {
            // Registered before the check: a completion in between still wakes this waiter.
            let notified = self.notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if let Some(result) = self.result.get() {
                return result.clone();
            }
            notified.await;
        }
    }
}

/// The open group, shared by the requests that add to it and the writer that takes it.
struct Pending {
    /// The group's records, one after the other, as they go to disk.
    records: Vec<u8>,
    rows: usize,
    requests: usize,
    done: Arc<GroupDone>,
    seal_requests: Vec<oneshot::Sender<()>>,
    /// Every handle of the spool is gone: write what is left, seal, stop.
    closed: bool,
    /// The writer sleeps on `work`; requests only signal it then (a signal is a system call).
    writer_waiting: bool,
}

pub struct GroupQueue {
    pending: Mutex<Pending>,
    work: Condvar,
    max_pending_bytes: usize,
}

/// Why a record was not added.
pub enum AddError {
    Closed,
    /// Spool bytes already on disk: the cap would be passed.
    Full(u64),
}

impl GroupQueue {
    /// `max_pending_bytes`: [`MAX_PENDING_BYTES`] but in tests.
    pub fn new(max_pending_bytes: usize) -> Arc<GroupQueue> {
        Arc::new(GroupQueue {
            max_pending_bytes,
            pending: Mutex::new(Pending {
                records: Vec::new(),
                rows: 0,
                requests: 0,
                done: GroupDone::new(),
                seal_requests: Vec::new(),
                closed: false,
                writer_waiting: false,
            }),
            work: Condvar::new(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Pending> {
        // Nothing panics while holding the lock; a poisoned one still holds consistent data.
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds one request's record to the open group and returns that group's completion, or
    /// `Err(group)` when the open group already holds its bound of bytes (wait for that group and
    /// try again). `used` and `max_bytes` are the spool's synced bytes and its cap; the records
    /// waiting in the group count against the cap too.
    pub fn add(
        &self,
        record: &[u8],
        rows: usize,
        used: u64,
        max_bytes: u64,
    ) -> Result<Result<Arc<GroupDone>, Arc<GroupDone>>, AddError> {
        let mut pending = self.lock();
        if pending.closed {
            return Err(AddError::Closed);
        }
        if pending.records.len() >= self.max_pending_bytes {
            return Ok(Err(pending.done.clone()));
        }
        if used + (pending.records.len() + record.len()) as u64 > max_bytes {
            return Err(AddError::Full(used));
        }
        pending.records.extend_from_slice(record);
        pending.rows += rows;
        pending.requests += 1;
        let done = pending.done.clone();
        let wake = pending.writer_waiting;
        pending.writer_waiting = false;
        drop(pending);
        if wake {
            self.work.notify_one();
        }
        Ok(Ok(done))
    }

    /// Asks the writer to seal the active segment (shutdown); `done` fires once it has.
    pub fn request_seal(&self, done: oneshot::Sender<()>) -> Result<(), AddError> {
        let mut pending = self.lock();
        if pending.closed {
            return Err(AddError::Closed);
        }
        pending.seal_requests.push(done);
        drop(pending);
        self.work.notify_one();
        Ok(())
    }

    /// No more records will come (the spool's last handle is gone).
    pub fn close(&self) {
        self.lock().closed = true;
        self.work.notify_one();
    }
}

/// What the writer takes from the queue in one go.
struct Group {
    records: Vec<u8>,
    rows: usize,
    requests: usize,
    done: Arc<GroupDone>,
    seal_requests: Vec<oneshot::Sender<()>>,
    closed: bool,
}

struct Active {
    prepared: Prepared,
    len: u64,
    rows: usize,
    first_write: Instant,
}

pub struct Writer {
    /// Held for as long as this thread appends; dropped when it stops.
    _lock: DirLock,
    batch_rows: usize,
    batch_age: Duration,
    next: NextSegments,
    bytes: Arc<SpoolBytes>,
    sealed: Arc<Notify>,
    active: Option<Active>,
    metrics: WriterMetrics,
    busy: bool,
    commit_delay: Duration,
    /// The buffer the requests fill while this thread writes the previous one.
    spare: Vec<u8>,
}

struct WriterMetrics {
    group_records: Histogram,
    sync_seconds: Histogram,
}

impl Writer {
    pub fn new(
        lock: DirLock,
        batch_rows: usize,
        batch_age: Duration,
        commit_delay: Duration,
        next: NextSegments,
        bytes: Arc<SpoolBytes>,
        sealed: Arc<Notify>,
    ) -> Writer {
        Writer {
            _lock: lock,
            batch_rows: batch_rows.max(1),
            batch_age,
            next,
            bytes,
            sealed,
            active: None,
            busy: false,
            commit_delay,
            spare: Vec::new(),
            metrics: WriterMetrics {
                group_records: metrics::histogram!("spool_group_commit_records"),
                sync_seconds: metrics::histogram!("spool_sync_duration_seconds"),
            },
        }
    }

    pub fn run(mut self, queue: Arc<GroupQueue>) {
        // Every request of a group waits for this thread to be scheduled after its sync; on a
        // busy core that took up to a scheduler tick (4 ms) per group (BENCHMARKS.md, Ingest).
        if let Err(e) = scheduling::request_short_slice(WAKE_UP_SLICE) {
            tracing::info!(error = %e, "the spool writer keeps the default time slice");
        }
        loop {
            if !self.wait_for_work(&queue) {
                continue;
            }
            // Group commit: everything added meanwhile shares this write and sync. Under load
            // (the last group had company) gather a little longer first.
            if self.busy && !self.commit_delay.is_zero() {
                self.gather(&queue);
            }
            let group = self.take(&queue);
            self.busy = group.requests > 1;
            if group.requests > 0 {
                let result = self
                    .write(&group.records, group.rows)
                    .map_err(|e| e.to_string());
                if let Err(e) = &result {
                    tracing::error!(error = %e, "spool write failed");
                }
                self.metrics.group_records.record(group.requests as f64);
                group.done.complete(result);
            }
            self.spare = group.records;
            self.spare.clear();
            if self.spare.capacity() > KEPT_BUFFER_BYTES {
                // After a burst: do not hold on to its megabytes.
                self.spare = Vec::new();
            }
            self.seal_if_due();
            if !group.seal_requests.is_empty() {
                self.seal();
                for done in group.seal_requests {
                    let _ = done.send(());
                }
            }
            if group.closed {
                self.seal();
                return;
            }
        }
    }

    /// Sleeps until there is a group, a seal request or the close; seals by age meanwhile.
    /// Returns false after sealing by age (the caller looks again).
    fn wait_for_work(&mut self, queue: &GroupQueue) -> bool {
        let mut pending = queue.lock();
        while pending.requests == 0 && pending.seal_requests.is_empty() && !pending.closed {
            let wait = match &self.active {
                Some(active) => self.batch_age.saturating_sub(active.first_write.elapsed()),
                None => Duration::from_secs(3600),
            };
            if wait.is_zero() {
                drop(pending);
                self.seal_if_due();
                return false;
            }
            pending.writer_waiting = true;
            pending = queue
                .work
                .wait_timeout(pending, wait)
                .unwrap_or_else(|e| e.into_inner())
                .0;
            pending.writer_waiting = false;
        }
        true
    }

    /// Waits a little for more requests to join the group, in short naps (no wake-up per
    /// arrival) for as long as requests keep arriving, at most `commit_delay` in all.
    fn gather(&self, queue: &GroupQueue) {
        let started = Instant::now();
        let mut seen = queue.lock().requests;
        while seen < MAX_GROUP && started.elapsed() < self.commit_delay {
            std::thread::sleep(GATHER_NAP);
            let now = queue.lock().requests;
            if now == seen {
                break;
            }
            seen = now;
        }
    }

    /// Takes the open group and leaves an empty one (this thread's spare buffer) in its place.
    fn take(&mut self, queue: &GroupQueue) -> Group {
        let mut pending = queue.lock();
        let records = std::mem::replace(&mut pending.records, std::mem::take(&mut self.spare));
        let requests = std::mem::take(&mut pending.requests);
        let done = if requests > 0 {
            std::mem::replace(&mut pending.done, GroupDone::new())
        } else {
            pending.done.clone()
        };
        Group {
            records,
            rows: std::mem::take(&mut pending.rows),
            requests,
            done,
            seal_requests: std::mem::take(&mut pending.seal_requests),
            closed: pending.closed,
        }
    }

    fn write(&mut self, group: &[u8], rows: usize) -> io::Result<()> {
        let written = group.len() as u64;
        // A group that does not fit goes to a fresh segment (where it may grow the file).
        if self
            .active
            .as_ref()
            .is_some_and(|a| a.len > 0 && a.len + written > a.prepared.capacity)
        {
            self.seal();
        }
        if self.active.is_none() {
            let prepared = self.next.ready.recv().map_err(|_| {
                io::Error::other("the thread that prepares spool segments has stopped")
            })??;
            self.active = Some(Active {
                prepared,
                len: 0,
                rows: 0,
                first_write: Instant::now(),
            });
        }
        let active = self.active.as_mut().expect("just ensured");
        let started = Instant::now();
        let result = active
            .prepared
            .file
            .write_all_at(group, active.len)
            .and_then(|()| active.prepared.file.sync_data());
        self.metrics
            .sync_seconds
            .record(started.elapsed().as_secs_f64());
        match result {
            Ok(()) => {
                active.len += written;
                active.rows += rows;
                self.bytes.add(written);
                Ok(())
            }
            Err(e) => {
                // Nothing of this group was acknowledged, but some of it may be on disk: a crash
                // now must not bring it back (its clients got a 503 and will retry). A durable
                // zero length where the group began ends the segment's data there; then seal
                // what was acknowledged and start the next group in a fresh segment.
                let end = active.len;
                let ended = active
                    .prepared
                    .file
                    .write_all_at(&[0; HEADER_BYTES], end)
                    .and_then(|()| active.prepared.file.sync_data());
                if let Err(e) = ended {
                    tracing::error!(error = %e, path = %active.prepared.path.display(), "cannot mark the end of a spool segment after a failed write");
                }
                self.seal();
                Err(e)
            }
        }
    }

    fn seal_if_due(&mut self) {
        let due = self.active.as_ref().is_some_and(|a| {
            a.rows >= self.batch_rows || a.first_write.elapsed() >= self.batch_age
        });
        if due {
            self.seal();
        }
    }

    fn seal(&mut self) {
        let Some(active) = self.active.take() else {
            return;
        };
        let path = &active.prepared.path;
        if active.len == 0 {
            let _ = fs::remove_file(path);
            return;
        }
        // Trimming the zeros keeps sealed segments at their size on disk; neither step is synced
        // (see the module comment).
        let result = active
            .prepared
            .file
            .set_len(active.len)
            .and_then(|()| fs::rename(path, path.with_extension(SEALED_SUFFIX)));
        self.next
            .sizing
            .observe(active.len, active.first_write.elapsed());
        match result {
            Ok(()) => self.sealed.notify_one(),
            // The records are on disk in the `.open` file; the next start seals it.
            Err(e) => {
                tracing::error!(error = %e, path = %path.display(), "sealing a spool segment failed")
            }
        }
    }
}
