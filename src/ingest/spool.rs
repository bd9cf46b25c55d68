//! The durable spool: an append-only, segmented log on local disk.
//!
//! Every record is `[len: u32 LE][crc32: u32 LE][payload]`, the payload one request's events as
//! JSON. One writer thread owns the active segment; requests hand it their record and wait, and
//! it writes everything that is waiting, then calls `fdatasync` once for all of them (group
//! commit) before acknowledging any. A segment is sealed (renamed from `.open` to `.log`) when
//! it holds enough rows or its first record is old enough: a sealed segment is one batch for the
//! shipper, which deletes it only after ClickHouse acknowledged its rows.
//!
//! After a crash the last record of an `.open` segment may be torn; the reader stops at the first
//! record whose length or checksum does not hold, and nothing after it was ever acknowledged
//! (acknowledgement follows the fsync, and a restarted writer never appends to an old segment).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{oneshot, Notify};
use uuid::Uuid;

use super::event::SpoolEvent;

const OPEN_SUFFIX: &str = "open";
const SEALED_SUFFIX: &str = "log";
const HEADER_BYTES: usize = 8;
/// A record larger than this cannot come from a valid request (64 KiB body cap); a length field
/// above it is a torn or corrupt header.
const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;

#[derive(Debug, Clone)]
pub struct SpoolConfig {
    pub dir: PathBuf,
    /// Past this many bytes on disk, appends are refused (the caller sheds load with 503).
    pub max_bytes: u64,
    /// A segment is sealed once it holds this many events…
    pub batch_rows: usize,
    /// …or its first record is this old.
    pub batch_age: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum SpoolError {
    #[error("the spool is full ({0} bytes)")]
    Full(u64),
    #[error("the spool is closed")]
    Closed,
    #[error("spool write failed: {0}")]
    Io(String),
}

/// One request's record, and where to report that it is durable.
struct Append {
    record: Vec<u8>,
    rows: usize,
    done: oneshot::Sender<Result<(), String>>,
}

enum Command {
    Append(Append),
    /// Seal the active segment now (shutdown), then confirm.
    Seal(oneshot::Sender<()>),
}

/// Handle for appending. Cheap to clone.
#[derive(Clone)]
pub struct Spool {
    commands: flume::Sender<Command>,
    bytes: Arc<AtomicU64>,
    max_bytes: u64,
    sealed: Arc<Notify>,
    dir: PathBuf,
}

/// A sealed segment waiting for the shipper.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Segment {
    pub sequence: u64,
    /// The batch's identity in ClickHouse (`batch_id`), fixed when the segment was created.
    pub batch_id: Uuid,
    pub path: PathBuf,
}

impl Spool {
    /// Opens (or creates) the spool directory, seals segments a previous process left open, and
    /// starts the writer thread.
    pub fn open(config: SpoolConfig) -> io::Result<Spool> {
        fs::create_dir_all(&config.dir)?;
        fs::create_dir_all(config.dir.join("dead"))?;
        let mut next_sequence = 1;
        let mut bytes = 0;
        for entry in fs::read_dir(&config.dir)? {
            let path = entry?.path();
            let Some((sequence, _, suffix)) = parse_name(&path) else {
                continue;
            };
            next_sequence = next_sequence.max(sequence + 1);
            bytes += fs::metadata(&path)?.len();
            if suffix == OPEN_SUFFIX {
                fs::rename(&path, path.with_extension(SEALED_SUFFIX))?;
            }
        }
        sync_dir(&config.dir)?;
        let bytes = Arc::new(AtomicU64::new(bytes));
        metrics::gauge!("spool_bytes").set(bytes.load(Ordering::Relaxed) as f64);
        // Bounded: a burst waits for the disk rather than growing memory without limit.
        let (commands, receiver) = flume::bounded(4096);
        let sealed = Arc::new(Notify::new());
        let writer = Writer {
            dir: config.dir.clone(),
            batch_rows: config.batch_rows.max(1),
            batch_age: config.batch_age,
            next_sequence,
            active: None,
            bytes: bytes.clone(),
            sealed: sealed.clone(),
        };
        std::thread::Builder::new()
            .name("spool-writer".into())
            .spawn(move || writer.run(receiver))?;
        Ok(Spool {
            commands,
            bytes,
            max_bytes: config.max_bytes,
            sealed,
            dir: config.dir,
        })
    }

    /// Appends one request's events and returns once they are on disk (fsynced).
    pub async fn append(&self, events: &[SpoolEvent]) -> Result<(), SpoolError> {
        let payload = serde_json::to_vec(events).map_err(|e| SpoolError::Io(e.to_string()))?;
        let record = encode_record(&payload);
        let used = self.bytes.load(Ordering::Relaxed);
        if used + record.len() as u64 > self.max_bytes {
            return Err(SpoolError::Full(used));
        }
        let (done, wait) = oneshot::channel();
        let command = Command::Append(Append {
            record,
            rows: events.len(),
            done,
        });
        self.commands
            .send_async(command)
            .await
            .map_err(|_| SpoolError::Closed)?;
        match wait.await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(SpoolError::Io(e)),
            Err(_) => Err(SpoolError::Closed),
        }
    }

    /// Seals the active segment so the shipper can take everything (shutdown).
    pub async fn seal(&self) {
        let (done, wait) = oneshot::channel();
        if self.commands.send_async(Command::Seal(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    pub fn bytes(&self) -> &Arc<AtomicU64> {
        &self.bytes
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Wakes when a segment is sealed.
    pub fn sealed(&self) -> Arc<Notify> {
        self.sealed.clone()
    }
}

pub fn encode_record(payload: &[u8]) -> Vec<u8> {
    let mut record = Vec::with_capacity(HEADER_BYTES + payload.len());
    record.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    record.extend_from_slice(&crc32fast::hash(payload).to_le_bytes());
    record.extend_from_slice(payload);
    record
}

/// `00000000000000000042-<uuid>.log` → (42, uuid, "log").
fn parse_name(path: &Path) -> Option<(u64, Uuid, &str)> {
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
    /// Bytes after the last whole record (a torn write, never acknowledged).
    pub torn_bytes: usize,
}

pub fn read_segment(path: &Path) -> io::Result<SegmentContents> {
    let data = fs::read(path)?;
    let mut contents = SegmentContents::default();
    let mut offset = 0;
    while offset < data.len() {
        let Some(header) = data.get(offset..offset + HEADER_BYTES) else {
            break;
        };
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if len > MAX_RECORD_BYTES {
            break;
        }
        let Some(payload) = data.get(offset + HEADER_BYTES..offset + HEADER_BYTES + len) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        match serde_json::from_slice::<Vec<SpoolEvent>>(payload) {
            Ok(events) => contents.events.extend(events),
            Err(_) => contents.undecodable.push(payload.to_vec()),
        }
        offset += HEADER_BYTES + len;
    }
    contents.torn_bytes = data.len() - offset;
    Ok(contents)
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

struct Active {
    file: File,
    path: PathBuf,
    len: u64,
    rows: usize,
    first_write: Instant,
}

struct Writer {
    dir: PathBuf,
    batch_rows: usize,
    batch_age: Duration,
    next_sequence: u64,
    active: Option<Active>,
    bytes: Arc<AtomicU64>,
    sealed: Arc<Notify>,
}

impl Writer {
    fn run(mut self, commands: flume::Receiver<Command>) {
        loop {
            let wait = match &self.active {
                Some(active) => self.batch_age.saturating_sub(active.first_write.elapsed()),
                None => Duration::from_secs(3600),
            };
            match commands.recv_timeout(wait) {
                Ok(first) => {
                    let mut pending = vec![first];
                    // Group commit: everything already waiting shares this write and fsync.
                    while pending.len() < 4096 {
                        match commands.try_recv() {
                            Ok(command) => pending.push(command),
                            Err(_) => break,
                        }
                    }
                    self.handle(pending);
                }
                Err(flume::RecvTimeoutError::Timeout) => self.seal_if_due(),
                Err(flume::RecvTimeoutError::Disconnected) => {
                    self.seal();
                    return;
                }
            }
        }
    }

    fn handle(&mut self, commands: Vec<Command>) {
        let mut appends = Vec::new();
        let mut seal_requests = Vec::new();
        for command in commands {
            match command {
                Command::Append(append) => appends.push(append),
                Command::Seal(done) => seal_requests.push(done),
            }
        }
        if !appends.is_empty() {
            let result = self.write(&appends).map_err(|e| e.to_string());
            if let Err(e) = &result {
                tracing::error!(error = %e, "spool write failed");
            }
            for append in appends {
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
        if self.active.is_none() {
            self.active = Some(self.create()?);
        }
        let active = self.active.as_mut().expect("just created");
        let before = active.len;
        let mut rows = 0;
        // One write for the whole group, then one fdatasync.
        let mut group = Vec::with_capacity(appends.iter().map(|a| a.record.len()).sum());
        for append in appends {
            group.extend_from_slice(&append.record);
            rows += append.rows;
        }
        let written = group.len() as u64;
        let result = active
            .file
            .write_all(&group)
            .and_then(|()| active.file.sync_data());
        match result {
            Ok(()) => {
                active.len += written;
                active.rows += rows;
                let total = self.bytes.fetch_add(written, Ordering::Relaxed) + written;
                metrics::gauge!("spool_bytes").set(total as f64);
                Ok(())
            }
            Err(e) => {
                // Nothing of this group was acknowledged: cut it off so the segment stays whole.
                let _ = active.file.set_len(before);
                Err(e)
            }
        }
    }

    fn create(&mut self) -> io::Result<Active> {
        let name = format!(
            "{:020}-{}.{OPEN_SUFFIX}",
            self.next_sequence,
            Uuid::now_v7()
        );
        self.next_sequence += 1;
        let path = self.dir.join(name);
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)?;
        // The new name must survive a crash before any record in it is acknowledged.
        sync_dir(&self.dir)?;
        Ok(Active {
            file,
            path,
            len: 0,
            rows: 0,
            first_write: Instant::now(),
        })
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
        let sealed = active.path.with_extension(SEALED_SUFFIX);
        let result = active
            .file
            .sync_all()
            .and_then(|()| fs::rename(&active.path, &sealed))
            .and_then(|()| sync_dir(&self.dir));
        match result {
            Ok(()) => self.sealed.notify_one(),
            // The records are on disk in the `.open` file; the next start seals it.
            Err(e) => {
                tracing::error!(error = %e, path = %active.path.display(), "sealing a spool segment failed")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::event::EventType;

    fn event(n: i64) -> SpoolEvent {
        SpoolEvent {
            event_id: Uuid::now_v7(),
            shop: "s.myshopify.com".into(),
            local_date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
            event_time: n,
            received_at: n,
            timestamp_replaced: false,
            event_type: EventType::View,
            attribution: None,
            video_id: "v".into(),
            widget_id: String::new(),
            session_id: String::new(),
            customer_id: String::new(),
            product_id: String::new(),
            order_id: String::new(),
            revenue_e4: 0,
            currency: String::new(),
        }
    }

    fn temp_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("videoapp-spool-test-{}", Uuid::new_v4()));
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_torn_last_record_is_ignored_and_everything_before_it_is_read() {
        let dir = temp_dir();
        let path = dir.join(format!("{:020}-{}.log", 1, Uuid::now_v7()));
        let first = encode_record(&serde_json::to_vec(&vec![event(1), event(2)]).unwrap());
        let second = encode_record(&serde_json::to_vec(&vec![event(3)]).unwrap());
        let mut data = [first.clone(), second.clone()].concat();
        fs::write(&path, &data).unwrap();
        assert_eq!(read_segment(&path).unwrap().events.len(), 3);

        // Every possible tear of the second record leaves exactly the first.
        for cut in 1..second.len() {
            data.truncate(first.len() + cut);
            fs::write(&path, &data).unwrap();
            let contents = read_segment(&path).unwrap();
            assert_eq!(contents.events.len(), 2, "cut at {cut}");
            assert_eq!(contents.torn_bytes, cut);
            data = [first.clone(), second.clone()].concat();
        }

        // A flipped bit in the payload fails the checksum.
        let mut corrupt = [first.clone(), second.clone()].concat();
        let last = corrupt.len() - 2;
        corrupt[last] ^= 0x01;
        fs::write(&path, &corrupt).unwrap();
        assert_eq!(read_segment(&path).unwrap().events.len(), 2);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_record_with_a_good_checksum_but_no_events_is_set_aside() {
        let dir = temp_dir();
        let path = dir.join(format!("{:020}-{}.log", 1, Uuid::now_v7()));
        let good = encode_record(&serde_json::to_vec(&vec![event(1)]).unwrap());
        let garbage = encode_record(b"{\"not\": \"events\"}");
        fs::write(&path, [garbage, good].concat()).unwrap();
        let contents = read_segment(&path).unwrap();
        assert_eq!(contents.events.len(), 1);
        assert_eq!(contents.undecodable.len(), 1);
        fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn appends_are_sealed_by_rows_and_by_age_and_open_segments_are_sealed_on_reopen() {
        let dir = temp_dir();
        let config = SpoolConfig {
            dir: dir.clone(),
            max_bytes: 1 << 30,
            batch_rows: 3,
            batch_age: Duration::from_millis(200),
        };
        let spool = Spool::open(config.clone()).unwrap();
        spool.append(&[event(1), event(2)]).await.unwrap();
        spool.append(&[event(3)]).await.unwrap();
        // Three rows: sealed by size (right after the acknowledgement, by the writer thread).
        let started = Instant::now();
        while sealed_segments(&dir).unwrap().is_empty() {
            assert!(
                started.elapsed() < Duration::from_secs(1),
                "not sealed by size"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(sealed_segments(&dir).unwrap().len(), 1);
        spool.append(&[event(4)]).await.unwrap();
        assert_eq!(sealed_segments(&dir).unwrap().len(), 1);
        tokio::time::sleep(Duration::from_millis(400)).await;
        // One row, but old enough: sealed by age.
        let segments = sealed_segments(&dir).unwrap();
        assert_eq!(segments.len(), 2);
        let total: usize = segments
            .iter()
            .map(|s| read_segment(&s.path).unwrap().events.len())
            .sum();
        assert_eq!(total, 4);
        assert!(segments[0].sequence < segments[1].sequence);

        // A segment left open by a crash is sealed by the next start.
        let leftover = dir.join(format!("{:020}-{}.open", 99, Uuid::now_v7()));
        fs::write(
            &leftover,
            encode_record(&serde_json::to_vec(&vec![event(5)]).unwrap()),
        )
        .unwrap();
        drop(spool);
        let _reopened = Spool::open(config).unwrap();
        assert_eq!(sealed_segments(&dir).unwrap().len(), 3);
        fs::remove_dir_all(dir).unwrap();
    }

    #[tokio::test]
    async fn appends_past_the_cap_are_refused() {
        let dir = temp_dir();
        let spool = Spool::open(SpoolConfig {
            dir: dir.clone(),
            max_bytes: 600,
            batch_rows: 1000,
            batch_age: Duration::from_secs(60),
        })
        .unwrap();
        spool.append(&[event(1)]).await.unwrap();
        let mut refused = false;
        for _ in 0..10 {
            if let Err(SpoolError::Full(_)) = spool.append(&[event(2)]).await {
                refused = true;
                break;
            }
        }
        assert!(refused);
        fs::remove_dir_all(dir).unwrap();
    }
}
