//! Segment files: their names, the pre-allocation of new ones, recovery at start, and reading.
//!
//! A segment is `<sequence>-<batch uuid>.open` while the writer appends to it and `.log` once it
//! is sealed. New segments are prepared ahead of need on a thread of their own: created, filled
//! with zeros to their capacity (`SegmentSizing`: about a batch at the current rate), synced,
//! and their directory entry synced. Appending to such a file overwrites blocks that are already
//! allocated and within the file's size, so the writer's `fdatasync` only flushes data: no
//! journal commit, no wait on whatever else the file system is doing (ClickHouse's parts,
//! deleted segments). Creating a file and syncing its directory never happens on the path of a
//! request either.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use uuid::Uuid;

use super::record::{self, Payload};
use crate::ingest::event::SpoolEvent;

pub const OPEN_SUFFIX: &str = "open";
pub const SEALED_SUFFIX: &str = "log";

/// A sealed segment waiting for the shipper.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Segment {
    pub sequence: u64,
    /// The batch's identity in ClickHouse (`batch_id`), fixed when the segment was created.
    pub batch_id: Uuid,
    pub path: PathBuf,
}

/// `00000000000000000042-<uuid>.log` → (42, uuid, "log").
pub fn parse_name(path: &Path) -> Option<(u64, Uuid, &str)> {
    let suffix = path.extension()?.to_str()?;
    if suffix != OPEN_SUFFIX && suffix != SEALED_SUFFIX {
        return None;
    }
    let stem = path.file_stem()?.to_str()?;
    let (sequence, batch) = stem.split_once('-')?;
    Some((sequence.parse().ok()?, Uuid::parse_str(batch).ok()?, suffix))
}

/// Sealed segments, oldest first.
pub fn sealed_segments(dir: &Path) -> io::Result<Vec<Segment>> {
    let mut segments = Vec::new();
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if let Some((sequence, batch_id, SEALED_SUFFIX)) = parse_name(&path) {
            segments.push(Segment {
                sequence,
                batch_id,
                path,
            });
        }
    }
    segments.sort();
    Ok(segments)
}

/// What a segment holds: the records that decode, the payloads that do not, and the bytes that
/// are not records.
#[derive(Debug, Default)]
pub struct SegmentContents {
    pub events: Vec<SpoolEvent>,
    /// Records whose checksum holds but whose payload is not events: for the dead letters.
    pub undecodable: Vec<Vec<u8>>,
    /// Stretches where no record checks out, in order: damaged records (or, at the end of a
    /// segment an older release sealed without cutting, a torn write). Never the pre-allocated
    /// zeros after the last record.
    pub damaged: Vec<Damaged>,
}

/// Bytes of a segment that are not records, and where they were.
#[derive(Debug, PartialEq)]
pub struct Damaged {
    pub offset: usize,
    pub bytes: Vec<u8>,
}

/// Why a segment cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("cannot read the segment: {0}")]
    Io(#[from] io::Error),
    /// A newer release wrote it (before a rollback): it is set aside whole, for a release that
    /// reads the format.
    #[error(
        "the segment holds records of format {0}, which this release cannot read (it reads \
         formats JSON, 1 and {current})",
        current = record::FORMAT_VERSION
    )]
    UnknownFormat(u8),
}

pub fn read_segment(path: &Path) -> Result<SegmentContents, ReadError> {
    decode_segment(&fs::read(path)?)
}

fn decode_segment(data: &[u8]) -> Result<SegmentContents, ReadError> {
    let scanned = record::scan(data);
    let mut contents = SegmentContents::default();
    for payload in scanned.payloads {
        match record::decode(payload) {
            Payload::Events(events) => contents.events.extend(events),
            Payload::Undecodable => contents.undecodable.push(payload.to_vec()),
            Payload::UnknownFormat(version) => return Err(ReadError::UnknownFormat(version)),
        }
    }
    let tail = record::torn_bytes(data, scanned.end);
    let tail = (tail > 0).then_some(scanned.end..scanned.end + tail);
    contents.damaged = (scanned.damaged.into_iter().chain(tail))
        .map(|stretch| Damaged {
            offset: stretch.start,
            bytes: data[stretch].to_vec(),
        })
        .collect();
    Ok(contents)
}

/// At start, a segment a previous process left open: cut it after its last whole record and seal
/// it, or delete it when it holds no record (a prepared file never written to). What is cut off
/// (a torn last write: never acknowledged, since acknowledgement follows the sync) is first
/// copied to `dead/<name>.cut`, so that nothing on disk is destroyed unseen. A damaged record
/// before the last whole one stays in the sealed segment, whose shipping keeps it aside (see
/// `SegmentContents::damaged`). Returns the bytes kept.
pub fn recover_open(path: &Path, dead: &Path) -> io::Result<u64> {
    let data = match fs::read(path) {
        Ok(data) => data,
        // Only a process still shutting down deletes its spare segment under us.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let scanned = record::scan(&data);
    let end = scanned.end;
    let cut = record::torn_bytes(&data, end);
    if cut > 0 {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("segment");
        let kept = dead.join(format!("{name}.cut"));
        write_synced(&kept, &data[end..end + cut])?;
        tracing::warn!(path = %path.display(), bytes = cut, kept = %kept.display(), "cut unreadable bytes (a torn write) off the end of a spool segment");
    }
    if scanned.payloads.is_empty() {
        return match fs::remove_file(path) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
            _ => Ok(0),
        };
    }
    let file = OpenOptions::new().write(true).open(path)?;
    file.set_len(end as u64)?;
    file.sync_all()?;
    fs::rename(path, path.with_extension(SEALED_SUFFIX))?;
    Ok(end as u64)
}

/// Moves a sealed segment this release cannot read into `unreadable` (a directory of the
/// spool), where nothing ships it and nothing deletes it. Returns where it went.
pub fn set_aside(path: &Path, unreadable: &Path) -> io::Result<PathBuf> {
    let target = unreadable.join(path.file_name().unwrap_or_default());
    fs::rename(path, &target)?;
    sync_dir(unreadable)?;
    if let Some(spool) = path.parent() {
        sync_dir(spool)?;
    }
    Ok(target)
}

/// At start, moves back into the spool every set-aside segment this release reads (one of a
/// format that a newer release wrote, set aside by an older one during a rollback, or one that
/// could not be read for a while). Returns the highest sequence among those that stay.
pub fn restore_set_aside(spool: &Path, unreadable: &Path) -> io::Result<u64> {
    let mut highest = 0;
    for entry in fs::read_dir(unreadable)? {
        let path = entry?.path();
        let Some((sequence, _, SEALED_SUFFIX)) = parse_name(&path) else {
            continue;
        };
        match read_segment(&path) {
            Ok(_) => {
                let target = spool.join(path.file_name().unwrap_or_default());
                fs::rename(&path, &target)?;
                tracing::info!(path = %target.display(), "a segment set aside as unreadable is readable now and back in the spool");
            }
            Err(_) => highest = highest.max(sequence),
        }
    }
    sync_dir(unreadable)?;
    Ok(highest)
}

/// Writes a whole file and syncs it (dead letters, damaged bytes, bytes cut off at recovery).
pub fn write_synced(path: &Path, data: &[u8]) -> io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(data)?;
    file.sync_all()
}

pub fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// A new segment, ready for appends.
pub struct Prepared {
    pub file: File,
    pub path: PathBuf,
    /// Bytes pre-allocated; appends beyond still work, they just grow the file.
    pub capacity: u64,
}

/// How many bytes a new segment pre-allocates: one and a half times what a batch age holds at the
/// rate the last sealed segment was filled, between a floor (64 KiB) and a full batch of rows.
/// When the rate falls, the size halves per segment at most, so a pause does not leave the next
/// burst with tiny segments.
///
/// Pre-allocation is written (zeros, then synced), and every byte of it competes with the
/// writer's syncs for the disk. A fixed size for a full batch of rows would write megabytes a
/// second of zeros for a shop sending ten events a second; a fixed small one would seal many
/// small segments, and make many small inserts, at a high rate. The writer reports each sealed
/// segment; the preparer reads the size when it starts on the next file.
pub struct SegmentSizing {
    next: AtomicU64,
    min: u64,
    max: u64,
    batch_age: Duration,
}

impl SegmentSizing {
    /// Starts at `min`: the first segments of a burst fill up early, and their rate sizes the
    /// next ones.
    pub fn new(min: u64, max: u64, batch_age: Duration) -> SegmentSizing {
        let max = max.max(min);
        SegmentSizing {
            next: AtomicU64::new(min),
            min,
            max,
            batch_age,
        }
    }

    pub fn capacity(&self) -> u64 {
        self.next.load(Ordering::Relaxed)
    }

    /// A sealed segment held `bytes` written over `filled_in` (its first write to its sealing).
    pub fn observe(&self, bytes: u64, filled_in: Duration) {
        let age = self.batch_age.as_secs_f64();
        // A segment sealed before its batch age (full, or shutting down) tells the rate; one
        // sealed by age holds what a batch holds.
        let per_batch = if filled_in < self.batch_age {
            bytes as f64 * age / filled_in.as_secs_f64().max(0.001)
        } else {
            bytes as f64
        };
        let wanted = (per_batch * 1.5) as u64;
        let next = wanted.max(self.capacity() / 2).clamp(self.min, self.max);
        self.next.store(next, Ordering::Relaxed);
    }
}

/// Where the writer's segments come from: the next one, ready, and the sizing it reports to.
pub struct NextSegments {
    pub ready: flume::Receiver<io::Result<Prepared>>,
    pub sizing: Arc<SegmentSizing>,
}

/// Starts the thread that keeps the next segment ready. It stops once the receiver is dropped,
/// deleting the file it had prepared.
pub fn start_preparer(
    dir: PathBuf,
    first_sequence: u64,
    sizing: SegmentSizing,
) -> io::Result<NextSegments> {
    let sizing = Arc::new(sizing);
    let preparer_sizing = sizing.clone();
    // A rendezvous: one file waits, ready, in `send`, and the next is prepared once it is taken.
    let (ready, next) = flume::bounded(0);
    std::thread::Builder::new()
        .name("spool-preparer".into())
        .spawn(move || {
            let mut sequence = first_sequence;
            loop {
                let prepared = prepare(&dir, sequence, preparer_sizing.capacity());
                let failed = prepared.is_err();
                if let Err(e) = &prepared {
                    tracing::error!(error = %e, dir = %dir.display(), "cannot prepare a spool segment");
                }
                sequence += 1;
                if let Err(flume::SendError(unused)) = ready.send(prepared) {
                    if let Ok(unused) = unused {
                        let _ = fs::remove_file(unused.path);
                    }
                    return;
                }
                if failed {
                    // A full or broken disk: do not spin; the writer reports the error meanwhile.
                    std::thread::sleep(Duration::from_millis(200));
                }
            }
        })?;
    Ok(NextSegments {
        ready: next,
        sizing,
    })
}

fn prepare(dir: &Path, sequence: u64, capacity: u64) -> io::Result<Prepared> {
    static ZEROS: [u8; 64 * 1024] = [0; 64 * 1024];
    let path = dir.join(format!("{sequence:020}-{}.{OPEN_SUFFIX}", Uuid::now_v7()));
    let mut file = OpenOptions::new()
        .create_new(true)
        .read(true)
        .write(true)
        .open(&path)?;
    let written = (|| {
        let mut left = capacity;
        while left > 0 {
            let chunk = left.min(ZEROS.len() as u64) as usize;
            file.write_all(&ZEROS[..chunk])?;
            left -= chunk as u64;
        }
        file.sync_all()?;
        // The new name must survive a crash before any record in it is acknowledged.
        sync_dir(dir)
    })();
    match written {
        Ok(()) => Ok(Prepared {
            file,
            path,
            capacity,
        }),
        Err(e) => {
            let _ = fs::remove_file(&path);
            Err(e)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIN: u64 = 64 * 1024;
    const MAX: u64 = 20 * 1024 * 1024;

    fn sizing() -> SegmentSizing {
        SegmentSizing::new(MIN, MAX, Duration::from_secs(1))
    }

    #[test]
    fn a_segment_filled_early_sizes_the_next_for_a_whole_batch_age() {
        let sizing = sizing();
        assert_eq!(sizing.capacity(), MIN);
        // 64 KiB in 10 ms is 6.4 MiB a second; half again for growth.
        sizing.observe(MIN, Duration::from_millis(10));
        assert_eq!(sizing.capacity(), MIN * 100 * 3 / 2);
        // A faster rate still stops at the most a batch of rows needs.
        sizing.observe(MIN, Duration::from_micros(10));
        assert_eq!(sizing.capacity(), MAX);
    }

    #[test]
    fn a_segment_sealed_by_age_sizes_the_next_by_what_it_held() {
        let sizing = sizing();
        sizing.observe(1_000_000, Duration::from_secs(1));
        assert_eq!(sizing.capacity(), 1_500_000);
        sizing.observe(2_000_000, Duration::from_millis(1_100));
        assert_eq!(sizing.capacity(), 3_000_000);
    }

    #[test]
    fn when_the_rate_falls_segments_shrink_by_half_at_most_down_to_the_floor() {
        let sizing = sizing();
        sizing.observe(MAX, Duration::from_millis(1));
        assert_eq!(sizing.capacity(), MAX);
        // A quiet shop's segments end up small: no megabytes of zeros a second.
        let mut sizes = Vec::new();
        for _ in 0..10 {
            sizing.observe(3_000, Duration::from_millis(1_200));
            sizes.push(sizing.capacity());
        }
        assert_eq!(sizes[0], MAX / 2);
        assert_eq!(sizes[1], MAX / 4);
        assert_eq!(*sizes.last().unwrap(), MIN);
    }
}
