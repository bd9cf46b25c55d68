//! Segment files: their names, the pre-allocation of new ones, recovery at start, and reading.
//!
//! A segment is `<sequence>-<batch uuid>.open` while the writer appends to it and `.log` once it
//! is sealed. New segments are prepared ahead of need on a thread of their own: created, filled
//! with zeros to their capacity, synced, and their directory entry synced. Appending to such a
//! file overwrites blocks that are already allocated and within the file's size, so the
//! writer's `fdatasync` only flushes data: no journal commit, no wait on whatever else the file
//! system is doing (ClickHouse's parts, deleted segments). Creating a file and syncing its
//! directory never happens on the path of a request either.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use uuid::Uuid;

use super::record;
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

/// What a segment holds: the records that decode, and the payloads that do not.
#[derive(Debug, Default)]
pub struct SegmentContents {
    pub events: Vec<SpoolEvent>,
    /// Records whose checksum holds but whose payload is not events: for the dead letters.
    pub undecodable: Vec<Vec<u8>>,
    /// Bytes after the last whole record that are not pre-allocated zeros (a torn write, never
    /// acknowledged).
    pub torn_bytes: usize,
}

pub fn read_segment(path: &Path) -> io::Result<SegmentContents> {
    let data = fs::read(path)?;
    let (payloads, end) = record::scan(&data);
    let mut contents = SegmentContents::default();
    for payload in payloads {
        match record::decode_events(payload) {
            Some(events) => contents.events.extend(events),
            None => contents.undecodable.push(payload.to_vec()),
        }
    }
    contents.torn_bytes = record::torn_bytes(&data, end);
    Ok(contents)
}

/// At start, a segment a previous process left open: cut it to its whole records and seal it, or
/// delete it when it holds nothing (a prepared file never written to). Whatever is cut off (a
/// torn last write, or anything after a record that does not check out) is first copied to
/// `dead/<name>.cut`, so that nothing on disk is destroyed unseen. Returns the bytes kept.
pub fn recover_open(path: &Path, dead: &Path) -> io::Result<u64> {
    let data = match fs::read(path) {
        Ok(data) => data,
        // Only a process still shutting down deletes its spare segment under us.
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let (payloads, end) = record::scan(&data);
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
    if payloads.is_empty() {
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

/// Writes a whole file and syncs it (dead letters, bytes cut off at recovery).
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

/// Starts the thread that keeps the next segment ready. It stops once the receiver is dropped,
/// deleting the file it had prepared.
pub fn start_preparer(
    dir: PathBuf,
    first_sequence: u64,
    capacity: u64,
) -> io::Result<flume::Receiver<io::Result<Prepared>>> {
    // A rendezvous: one file waits, ready, in `send`, and the next is prepared once it is taken.
    let (ready, next) = flume::bounded(0);
    std::thread::Builder::new()
        .name("spool-preparer".into())
        .spawn(move || {
            crate::ingest::yield_cpu_to_requests();
            let mut sequence = first_sequence;
            loop {
                let prepared = prepare(&dir, sequence, capacity);
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
    Ok(next)
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
