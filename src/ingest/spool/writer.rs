//! The one thread that appends to the active segment: group commit.
//!
//! Requests hand it their encoded record and wait. It takes everything waiting at that moment,
//! writes it with one `pwrite`, calls `fdatasync` once, and only then acknowledges all of them.
//! Under load (the last group had company) it first lets the group gather until its first request
//! has waited the commit delay: a sync costs the same for 2 records as for 40, and each one is a
//! chance to meet one of the disk's multi-millisecond flush stalls.
//! It seals the segment (trims the unused zeros, renames it to `.log`, wakes the shipper) once it
//! holds enough rows, is old enough, or the next group would not fit; the next segment is already
//! prepared. Sealing needs no sync: every record in it already is durable, and a crash before the
//! rename is on disk leaves an `.open` file that the next start seals.

use std::fs;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use metrics::Histogram;
use tokio::sync::{oneshot, Notify};

use super::lock::DirLock;
use super::segment::{NextSegments, Prepared, SEALED_SUFFIX};
use super::{SpoolBytes, SpoolConfig};

/// One request's record, and where to report that it is durable.
pub struct Append {
    pub record: Vec<u8>,
    pub rows: usize,
    /// When the request handed it over: its wait for durability is measured from here.
    pub queued: Instant,
    pub done: oneshot::Sender<Result<(), Arc<io::Error>>>,
}

pub enum Command {
    Append(Append),
    /// Seal the active segment now (shutdown), then confirm.
    Seal(oneshot::Sender<()>),
}

/// At most this many requests share one write and sync.
const MAX_GROUP: usize = 4096;

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
    groups_written: Arc<AtomicU64>,
    active: Option<Active>,
    metrics: WriterMetrics,
    busy: bool,
    commit_delay: Duration,
}

struct WriterMetrics {
    group_records: Histogram,
    sync_seconds: Histogram,
    append_wait_seconds: Histogram,
}

impl Writer {
    /// Seals by `config`'s batch rows and age, gathers for its commit delay.
    pub fn new(
        lock: DirLock,
        config: &SpoolConfig,
        next: NextSegments,
        bytes: Arc<SpoolBytes>,
        sealed: Arc<Notify>,
        groups_written: Arc<AtomicU64>,
    ) -> Writer {
        Writer {
            _lock: lock,
            batch_rows: config.batch_rows.max(1),
            batch_age: config.batch_age,
            next,
            bytes,
            sealed,
            groups_written,
            active: None,
            busy: false,
            commit_delay: config.commit_delay,
            metrics: WriterMetrics {
                group_records: metrics::histogram!("spool_group_commit_records"),
                sync_seconds: metrics::histogram!("spool_sync_duration_seconds"),
                append_wait_seconds: metrics::histogram!("spool_append_wait_seconds"),
            },
        }
    }

    pub fn run(mut self, commands: flume::Receiver<Command>) {
        let mut pending = Vec::with_capacity(MAX_GROUP);
        loop {
            let wait = match &self.active {
                Some(active) => self.batch_age.saturating_sub(active.first_write.elapsed()),
                None => Duration::from_secs(3600),
            };
            match commands.recv_timeout(wait) {
                Ok(first) => {
                    pending.push(first);
                    // Group commit: everything already waiting shares this write and sync.
                    pending.extend(commands.try_iter().take(MAX_GROUP - 1));
                    if self.busy && !self.commit_delay.is_zero() && pending.len() < MAX_GROUP {
                        self.gather(&commands, &mut pending);
                    }
                    self.busy = pending.len() > 1;
                    self.handle(&mut pending);
                }
                Err(flume::RecvTimeoutError::Timeout) => self.seal_if_due(),
                Err(flume::RecvTimeoutError::Disconnected) => {
                    self.seal();
                    return;
                }
            }
        }
    }

    /// Under load, lets more requests join the group: one sleep until the group's first request
    /// has waited `commit_delay`, then everything that arrived meanwhile. One sleep instead of
    /// short naps that stop at the first one nobody arrived in: each nap was two context
    /// switches, and under full load the naps ended groups that a core's burst of answers had
    /// merely paused (BENCHMARKS.md, Ingest).
    fn gather(&self, commands: &flume::Receiver<Command>, pending: &mut Vec<Command>) {
        let first_queued = pending.iter().find_map(|command| match command {
            Command::Append(append) => Some(append.queued),
            Command::Seal(_) => None,
        });
        let Some(first_queued) = first_queued else {
            return;
        };
        let waited = first_queued.elapsed();
        if waited < self.commit_delay {
            std::thread::sleep(self.commit_delay - waited);
        }
        let room = MAX_GROUP.saturating_sub(pending.len());
        pending.extend(commands.try_iter().take(room));
    }

    fn handle(&mut self, commands: &mut Vec<Command>) {
        let mut appends = Vec::with_capacity(commands.len());
        let mut seal_requests = Vec::new();
        for command in commands.drain(..) {
            match command {
                Command::Append(append) => appends.push(append),
                Command::Seal(done) => seal_requests.push(done),
            }
        }
        if !appends.is_empty() {
            let result = self.write(&appends).map_err(Arc::new);
            if let Err(e) = &result {
                tracing::error!(error = %e, "spool write failed");
            }
            let acknowledged = Instant::now();
            for append in appends {
                self.metrics.append_wait_seconds.record(
                    acknowledged
                        .saturating_duration_since(append.queued)
                        .as_secs_f64(),
                );
                let _ = append.done.send(result.clone());
            }
        }
        self.seal_if_due();
        if !seal_requests.is_empty() {
            self.seal();
            for done in seal_requests {
                let _ = done.send(());
            }
        }
    }

    fn write(&mut self, appends: &[Append]) -> io::Result<()> {
        let mut group = Vec::with_capacity(appends.iter().map(|a| a.record.len()).sum());
        let mut rows = 0;
        for append in appends {
            group.extend_from_slice(&append.record);
            rows += append.rows;
        }
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
            .write_all_at(&group, active.len)
            .and_then(|()| active.prepared.file.sync_data());
        self.metrics
            .sync_seconds
            .record(started.elapsed().as_secs_f64());
        self.metrics.group_records.record(appends.len() as f64);
        self.groups_written.fetch_add(1, Ordering::Relaxed);
        match result {
            Ok(()) => {
                active.len += written;
                active.rows += rows;
                self.bytes.add(written);
                Ok(())
            }
            Err(e) => {
                // Nothing of this group was acknowledged, but some of it may be on disk: a crash
                // now must not bring it back (its clients got a 503 and will retry). Zeros over
                // the whole group, made durable, leave no record of it for reading to find (it
                // finds records past damage, so zeroing its first header would not do); then
                // seal what was acknowledged and start the next group in a fresh segment.
                let end = active.len;
                let ended = active
                    .prepared
                    .file
                    .write_all_at(&vec![0; group.len()], end)
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
