//! The shipper: sends sealed spool segments to ClickHouse, one segment per insert, and deletes a
//! segment only after ClickHouse acknowledged it.
//!
//! Exactly once: every row carries its segment's `batch_id`. A segment whose insert may have
//! landed without us seeing the acknowledgement (a timeout, a dropped connection, a crash —
//! every segment found at start counts as such) is first checked: the rows of that batch already
//! in ClickHouse are left out of the retry. A first attempt skips the check, so the common path
//! costs one insert.
//!
//! Once a segment is in, the (shop, local day) pairs it touched are recorded in Postgres
//! (`warehouse::changes`), so that no analytics answer cached before the insert is served after.
//!
//! Nothing in the spool stops shipping, and nothing acknowledged is deleted unseen: a segment
//! this release cannot read (a newer release's format, or a read that keeps failing) is moved to
//! `spool/unreadable/`, and the segments after it ship; the bytes of damaged records are copied to
//! `spool/dead/` before the segment they were in is deleted.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use backon::BackoffBuilder;
use chrono::NaiveDate;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::watch;
use uuid::Uuid;

use super::claims::Claims;
use super::event::SpoolEvent;
use super::redactions::Batch;
use super::spool::{
    read_segment, sealed_segments, set_aside, sync_dir, write_synced, Damaged, ReadError, Segment,
    Spool,
};
use crate::warehouse::changes;
use crate::warehouse::error::WarehouseError;
use crate::warehouse::rows::EventRow;
use crate::warehouse::Warehouse;

const LANDED_SQL: &str = include_str!("../../sql/10_ingest_landed_events.sql");

#[derive(Debug, Clone)]
pub struct ShipperConfig {
    /// Postgres, where the claims that count each event once are kept.
    pub database_url: SecretString,
    pub insert_timeout: Duration,
    pub min_backoff: Duration,
    pub max_backoff: Duration,
}

/// Why a segment did not ship.
#[derive(Debug, thiserror::Error)]
enum ShipError {
    /// ClickHouse or Postgres failed (retry) or ClickHouse refused the data (dead letters).
    #[error(transparent)]
    Warehouse(#[from] WarehouseError),
    /// The segment cannot be read: a newer release wrote it, or reading it failed.
    #[error(transparent)]
    Unreadable(ReadError),
}

fn transient(reason: impl Into<String>) -> ShipError {
    ShipError::Warehouse(WarehouseError::Transient(reason.into()))
}

/// What became of a segment.
enum Outcome {
    /// Shipped, or set aside: on to the next.
    Done,
    /// Shutdown reached its deadline (or began) while retrying.
    Paused,
}

pub struct Shipper {
    spool: Spool,
    warehouse: Warehouse,
    config: ShipperConfig,
    /// Batches that may have landed unseen.
    uncertain: HashSet<Uuid>,
    claims: Option<Claims>,
    /// When event ids older than their retention were last forgotten.
    forgotten_at: Option<Instant>,
}

/// How often the shipper deletes expired event-id claims.
const FORGET_INTERVAL: Duration = Duration::from_secs(600);
/// How long after the shipper gives up on an insert ClickHouse may still be writing it (a body it
/// has received whole is written to the end): an insert's shops count as being written for the
/// insert timeout and this. An estimate: nothing bounds ClickHouse's side.
const INSERT_AFTERLIFE: Duration = Duration::from_secs(60);
/// A segment whose reading fails this many times in a row is set aside (a passing failure, such
/// as too many open files, is retried first).
const READ_ATTEMPTS: u32 = 3;

impl Shipper {
    pub fn new(spool: Spool, warehouse: Warehouse, config: ShipperConfig) -> std::io::Result<Self> {
        // Whatever a previous process left behind may have been inserted before it died.
        let uncertain = sealed_segments(spool.dir())?
            .into_iter()
            .map(|s| s.batch_id)
            .collect();
        Ok(Shipper {
            spool,
            warehouse,
            config,
            uncertain,
            claims: None,
            forgotten_at: None,
        })
    }

    /// The claims' pool belongs to the runtime that uses it: made here, inside `run`.
    fn claims(&mut self) -> Result<&Claims, ShipError> {
        if self.claims.is_none() {
            let claims = Claims::connect_lazy(self.config.database_url.expose_secret())
                .map_err(|e| transient(format!("Postgres: {e}")))?;
            self.claims = Some(claims);
        }
        Ok(self.claims.as_ref().expect("set above"))
    }

    async fn forget_old_event_ids(&mut self) {
        if self
            .forgotten_at
            .is_some_and(|at| at.elapsed() < FORGET_INTERVAL)
        {
            return;
        }
        self.forgotten_at = Some(Instant::now());
        let Ok(claims) = self.claims() else { return };
        match claims.forget_old_event_ids().await {
            Ok(forgotten) => tracing::debug!(forgotten, "forgot expired event-id claims"),
            Err(e) => tracing::warn!(error = %e, "cannot delete expired event-id claims"),
        }
    }

    /// Once `schema_current` is true, ships until `stop` turns true and the spool is empty, or
    /// until `deadline` after `stop`.
    pub async fn run(
        mut self,
        mut schema_current: watch::Receiver<bool>,
        mut stop: watch::Receiver<bool>,
        grace: Duration,
    ) {
        // Nothing is inserted into an older schema: a migration that back-fills an aggregate
        // counts what `events` holds when it runs, so a row inserted between the creation of a
        // view and its back-fill would count twice. Stopped before, everything stays spooled.
        tokio::select! {
            current = schema_current.wait_for(|current| *current) => {
                if current.is_err() {
                    return; // the migrating task is gone: the process is ending
                }
            }
            _ = stop.wait_for(|stop| *stop) => return,
        }
        let sealed = self.spool.sealed();
        let mut deadline: Option<Instant> = None;
        loop {
            if stop.has_changed().is_err() {
                // The pipeline was dropped without a shutdown: the process is ending.
                return;
            }
            if deadline.is_none() && *stop.borrow() {
                deadline = Some(Instant::now() + grace);
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                tracing::warn!(
                    "shutdown grace period over; the rest stays spooled for the next start"
                );
                return;
            }
            let segments = match sealed_segments(self.spool.dir()) {
                Ok(segments) => segments,
                Err(e) => {
                    tracing::error!(error = %e, "cannot list the spool");
                    Vec::new()
                }
            };
            self.report_oldest(&segments);
            self.forget_old_event_ids().await;
            if segments.is_empty() {
                if deadline.is_some() {
                    return;
                }
                tokio::select! {
                    () = sealed.notified() => {}
                    changed = stop.changed() => {
                        if changed.is_err() {
                            return; // the pipeline is gone without a shutdown: nothing to wait for
                        }
                    }
                    () = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
                continue;
            }
            for segment in segments {
                match self.ship_with_retries(&segment, &mut stop, deadline).await {
                    Outcome::Done => {}
                    Outcome::Paused => break,
                }
            }
        }
    }

    fn report_oldest(&self, segments: &[Segment]) {
        // Since the oldest segment was last written (sealed): its first record is at most the
        // batch age older. (Its batch id's timestamp is when the segment was prepared, which may
        // be long before its first record.)
        let age = segments
            .first()
            .and_then(|s| std::fs::metadata(&s.path).ok())
            .and_then(|m| m.modified().ok())
            .and_then(|written| written.elapsed().ok())
            .unwrap_or_default();
        metrics::gauge!("spool_oldest_segment_age_seconds").set(age.as_secs_f64());
    }

    async fn ship_with_retries(
        &mut self,
        segment: &Segment,
        stop: &mut watch::Receiver<bool>,
        deadline: Option<Instant>,
    ) -> Outcome {
        let mut backoff = backon::ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_jitter()
            .without_max_times()
            .build();
        let mut failed_reads = 0;
        loop {
            match self.ship(segment).await {
                Ok(()) => return Outcome::Done,
                Err(ShipError::Unreadable(ReadError::Io(e)))
                    if e.kind() == std::io::ErrorKind::NotFound =>
                {
                    tracing::warn!(path = %segment.path.display(), "a spool segment is gone before it shipped");
                    return Outcome::Done;
                }
                Err(ShipError::Unreadable(error)) => {
                    failed_reads += 1;
                    let passing = matches!(error, ReadError::Io(_)) && failed_reads < READ_ATTEMPTS;
                    if !passing {
                        match self.set_aside(segment, &error) {
                            Ok(()) => return Outcome::Done,
                            Err(e) => {
                                tracing::error!(error = %e, path = %segment.path.display(), "cannot set aside an unreadable spool segment; will retry")
                            }
                        }
                    } else {
                        tracing::warn!(%error, path = %segment.path.display(), "cannot read a spool segment; will retry");
                    }
                    let delay = backoff.next().unwrap_or(self.config.max_backoff);
                    if !wait_to_retry(delay, stop, deadline).await {
                        return Outcome::Paused;
                    }
                }
                Err(ShipError::Warehouse(WarehouseError::Rejected(reason))) => {
                    self.dead_letter(segment, &reason);
                    // Its events never counted: a later copy of them must.
                    let released = match self.claims() {
                        Ok(claims) => claims
                            .release(segment.batch_id)
                            .await
                            .map_err(|e| e.to_string()),
                        Err(e) => Err(e.to_string()),
                    };
                    if let Err(error) = released {
                        tracing::warn!(%error, batch = %segment.batch_id, "cannot release the claims of a rejected batch");
                    }
                    return Outcome::Done;
                }
                Err(ShipError::Warehouse(WarehouseError::Transient(reason))) => {
                    metrics::counter!("clickhouse_insert_failures_total", "kind" => "transient")
                        .increment(1);
                    let delay = backoff.next().unwrap_or(self.config.max_backoff);
                    tracing::warn!(%reason, retry_in = ?delay, "ClickHouse insert failed; will retry");
                    if !wait_to_retry(delay, stop, deadline).await {
                        return Outcome::Paused;
                    }
                }
            }
        }
    }

    async fn ship(&mut self, segment: &Segment) -> Result<(), ShipError> {
        let contents = read_segment(&segment.path).map_err(ShipError::Unreadable)?;
        let mut events = contents.events;
        let mut redactable = Batch::of(segment.batch_id, &events);
        // Every (shop, day) of the segment, including those of events that had already landed:
        // a previous attempt may have inserted them and failed before it recorded the change.
        let mut days: Vec<(String, NaiveDate)> = events
            .iter()
            .map(|e| (e.shop.clone(), e.local_date))
            .collect();
        days.sort_unstable();
        days.dedup();
        let retry = self.uncertain.contains(&segment.batch_id);
        if retry && !events.is_empty() {
            let landed = self.landed(segment.batch_id, &events).await?;
            if !landed.is_empty() {
                tracing::info!(batch = %segment.batch_id, landed = landed.len(), "part of a retried batch had already landed");
            }
            events.retain(|e| !landed.contains(&e.event_id));
        }
        let db = self.claims()?.pool().clone();
        (redactable.drop_redacted(&db, &mut events).await)
            .map_err(|e| transient(format!("Postgres redactions: {e}")))?;
        // From here on a failure may leave claims, or rows, of this batch behind: the next
        // attempt looks for both.
        self.uncertain.insert(segment.batch_id);
        let (events, repeats) = self
            .claims()?
            .counted(segment.batch_id, events, retry)
            .await
            .map_err(|e| transient(format!("Postgres claims: {e}")))?;
        let days: Vec<(&str, NaiveDate)> = days.iter().map(|(s, d)| (s.as_str(), *d)).collect();
        let mut inserted = None;
        if !events.is_empty() {
            // Analytics caches keep nothing computed while the insert goes on (`changes`). Its
            // marks are its own: an earlier attempt at the batch that never returned may still
            // be writing, and keeps its marks until their lease runs out.
            let insert_id = Uuid::now_v7();
            let mut shops: Vec<&str> = days.iter().map(|(shop, _)| *shop).collect();
            shops.dedup();
            let lease = self.config.insert_timeout + INSERT_AFTERLIFE;
            changes::inserting(&db, insert_id, &shops, lease)
                .await
                .map_err(|e| transient(format!("Postgres analytics changes: {e}")))?;
            self.insert(segment.batch_id, &events).await?;
            inserted = Some(insert_id);
        }
        // Before the segment goes: a failure here retries the segment, which then finds its
        // rows landed and records the change again.
        redactable
            .landed(&db, &self.warehouse, inserted, &days)
            .await?;
        // Counted only once the batch is in, so a retried batch does not count them again.
        for (kind, count) in [("event_id", repeats.events), ("order_id", repeats.orders)] {
            if count > 0 {
                metrics::counter!("events_repeated_total", "kind" => kind).increment(count as u64);
            }
        }
        metrics::counter!("events_shipped_total").increment(events.len() as u64);
        metrics::histogram!("ingest_batch_rows").record(events.len() as f64);
        // What is not events is kept, durably, just before the segment goes: once, however
        // often the segment was retried, and a failure keeps the segment for another attempt.
        if !contents.undecodable.is_empty() {
            self.dead_letter_records(segment, &contents.undecodable)
                .map_err(|e| transient(format!("cannot keep undecodable spool records: {e}")))?;
        }
        if !contents.damaged.is_empty() {
            self.keep_damaged(segment, &contents.damaged).map_err(|e| {
                transient(format!("cannot keep the damaged bytes of a segment: {e}"))
            })?;
        }
        self.remove(segment);
        Ok(())
    }

    async fn insert(&mut self, batch_id: Uuid, events: &[SpoolEvent]) -> Result<(), ShipError> {
        let started = Instant::now();
        let attempt = async {
            let mut insert = self.warehouse.insert_events()?;
            for event in events {
                insert.write(&EventRow::new(batch_id, event)).await?;
            }
            insert.end().await
        };
        let result = tokio::time::timeout(self.config.insert_timeout, attempt).await;
        metrics::histogram!("clickhouse_insert_duration_seconds")
            .record(started.elapsed().as_secs_f64());
        match result {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(WarehouseError::from(e).into()),
            Err(_) => Err(WarehouseError::timed_out(self.config.insert_timeout).into()),
        }
    }

    async fn landed(
        &self,
        batch_id: Uuid,
        events: &[SpoolEvent],
    ) -> Result<HashSet<Uuid>, ShipError> {
        let shops = events.iter().map(|e| e.shop.as_str());
        let dates = events.iter().map(|e| e.local_date);
        let (Some(first_shop), Some(last_shop)) = (shops.clone().min(), shops.max()) else {
            return Ok(HashSet::new());
        };
        let (Some(first_date), Some(last_date)) = (dates.clone().min(), dates.max()) else {
            return Ok(HashSet::new());
        };
        let query = self
            .warehouse
            .client()
            .query(LANDED_SQL)
            .bind(batch_id.to_string())
            .bind(first_shop)
            .bind(last_shop)
            .bind(first_date.to_string())
            .bind(last_date.to_string())
            .fetch_all::<String>();
        let ids = tokio::time::timeout(self.config.insert_timeout, query)
            .await
            .map_err(|_| transient("landed-rows check timed out"))?
            .map_err(|e| transient(e.to_string()))?;
        Ok(ids
            .iter()
            .filter_map(|id| Uuid::parse_str(id).ok())
            .collect())
    }

    fn remove(&mut self, segment: &Segment) {
        let len = std::fs::metadata(&segment.path)
            .map(|m| m.len())
            .unwrap_or(0);
        match std::fs::remove_file(&segment.path) {
            Ok(()) => {
                self.spool.bytes().release(len);
                self.uncertain.remove(&segment.batch_id);
            }
            Err(e) => {
                tracing::error!(error = %e, path = %segment.path.display(), "cannot delete a shipped segment")
            }
        }
    }

    /// Moves a segment ClickHouse refuses out of the way, so later ones keep flowing.
    fn dead_letter(&mut self, segment: &Segment, reason: &str) {
        let dead = self.spool.dead_dir();
        let events = read_segment(&segment.path)
            .map(|c| c.events.len())
            .unwrap_or(0);
        let target = dead.join(segment.path.file_name().unwrap_or_default());
        let len = std::fs::metadata(&segment.path)
            .map(|m| m.len())
            .unwrap_or(0);
        match std::fs::rename(&segment.path, &target) {
            Ok(()) => {
                let _ = std::fs::write(target.with_extension("reason"), reason);
                self.spool.bytes().release(len);
                self.uncertain.remove(&segment.batch_id);
                metrics::counter!("events_dead_lettered_total").increment(events as u64);
                metrics::counter!("clickhouse_insert_failures_total", "kind" => "rejected")
                    .increment(1);
                tracing::error!(%reason, path = %target.display(), events, "ClickHouse rejected a batch; moved to dead letters");
            }
            Err(e) => tracing::error!(error = %e, "cannot move a rejected segment to dead letters"),
        }
    }

    /// Moves a segment this release cannot read to `unreadable/`, whole, so later ones keep
    /// flowing; a later start that reads it moves it back.
    fn set_aside(&mut self, segment: &Segment, error: &ReadError) -> std::io::Result<()> {
        let len = std::fs::metadata(&segment.path)
            .map(|m| m.len())
            .unwrap_or(0);
        let target = set_aside(&segment.path, &self.spool.unreadable_dir())?;
        self.spool.bytes().release(len);
        self.uncertain.remove(&segment.batch_id);
        metrics::counter!("spool_segments_unreadable_total").increment(1);
        tracing::error!(%error, path = %target.display(), "a spool segment this release cannot read was set aside; the rest ships");
        Ok(())
    }

    /// Copies the stretches of a segment that are not records to
    /// `dead/<segment>.<offset>.damaged`, durably, before the segment is deleted.
    fn keep_damaged(&self, segment: &Segment, damaged: &[Damaged]) -> std::io::Result<()> {
        let name = segment
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("segment");
        let dead = self.spool.dead_dir();
        for stretch in damaged {
            let target = dead.join(format!("{name}.{}.damaged", stretch.offset));
            write_synced(&target, &stretch.bytes)?;
        }
        sync_dir(&dead)?;
        let bytes: usize = damaged.iter().map(|d| d.bytes.len()).sum();
        metrics::counter!("spool_damaged_bytes_total").increment(bytes as u64);
        let offsets: Vec<usize> = damaged.iter().map(|d| d.offset).collect();
        tracing::error!(path = %segment.path.display(), bytes, ?offsets, dead = %dead.display(), "damaged records in a spool segment: the records around them shipped, their bytes are kept");
        Ok(())
    }

    /// Copies the records of a segment that are not events to `dead/<segment>.undecodable`,
    /// durably: a failure is an error, so the segment is retried rather than deleted.
    fn dead_letter_records(&self, segment: &Segment, payloads: &[Vec<u8>]) -> std::io::Result<()> {
        let name = segment
            .path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("segment");
        let target = self.spool.dead_dir().join(format!("{name}.undecodable"));
        let mut data = Vec::new();
        for payload in payloads {
            data.extend_from_slice(&super::spool::encode_record(payload));
        }
        write_synced(&target, &data)?;
        sync_dir(&self.spool.dead_dir())?;
        metrics::counter!("spool_records_dead_lettered_total").increment(payloads.len() as u64);
        tracing::error!(records = payloads.len(), path = %target.display(), "spool records that are not events were set aside");
        Ok(())
    }
}

/// Waits `delay` (cut short by the shutdown's deadline) before a retry; false when shipping should
/// pause instead: out of time, or shutdown just began (then run() sets the deadline).
async fn wait_to_retry(
    delay: Duration,
    stop: &mut watch::Receiver<bool>,
    deadline: Option<Instant>,
) -> bool {
    let wait = match deadline {
        Some(d) => delay.min(d.saturating_duration_since(Instant::now())),
        None => delay,
    };
    tokio::select! {
        () = tokio::time::sleep(wait) => {}
        changed = stop.changed() => {
            if changed.is_err() {
                return false;
            }
        }
    }
    !(deadline.is_some_and(|d| Instant::now() >= d) || (deadline.is_none() && *stop.borrow()))
}
