//! The shipper: sends sealed spool segments to ClickHouse, one segment per insert, and deletes a
//! segment only after ClickHouse acknowledged it.
//!
//! Exactly once: every row carries its segment's `batch_id`. A segment whose insert may have
//! landed without us seeing the acknowledgement (a timeout, a dropped connection, a crash —
//! every segment found at start counts as such) is first checked: the rows of that batch already
//! in ClickHouse are left out of the retry. A first attempt skips the check, so the common path
//! costs one insert.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use backon::BackoffBuilder;
use clickhouse::Row;
use secrecy::{ExposeSecret, SecretString};
use serde::Serialize;
use tokio::sync::watch;
use uuid::Uuid;

use super::claims::Claims;
use super::event::{Attribution, SpoolEvent};
use super::spool::{read_segment, sealed_segments, write_synced, Segment, Spool};
use crate::warehouse::Warehouse;

const LANDED_SQL: &str = include_str!("../../sql/10_ingest_landed_events.sql");

/// One row of `events`, in the column order of `clickhouse/0001_events.sql`.
#[derive(Row, Serialize)]
pub(crate) struct EventRow<'a> {
    #[serde(with = "clickhouse::serde::uuid")]
    event_id: Uuid,
    #[serde(with = "clickhouse::serde::uuid")]
    batch_id: Uuid,
    shop_domain: &'a str,
    /// Days since 1970-01-01.
    local_date: u16,
    event_time: u32,
    received_at: u32,
    timestamp_replaced: u8,
    event_type: i8,
    attribution: i8,
    video_id: &'a str,
    widget_id: &'a str,
    session_id: &'a str,
    customer_id: &'a str,
    product_id: &'a str,
    order_id: &'a str,
    revenue_e4: i64,
    currency: &'a str,
    product_ids: &'a [String],
}

impl<'a> EventRow<'a> {
    pub(crate) fn new(batch_id: Uuid, e: &'a SpoolEvent) -> Self {
        let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date");
        EventRow {
            event_id: e.event_id,
            batch_id,
            shop_domain: &e.shop,
            local_date: (e.local_date - epoch)
                .num_days()
                .clamp(0, i64::from(u16::MAX)) as u16,
            event_time: e.event_time.clamp(0, i64::from(u32::MAX)) as u32,
            received_at: e.received_at.clamp(0, i64::from(u32::MAX)) as u32,
            timestamp_replaced: u8::from(e.timestamp_replaced),
            event_type: e.event_type.code(),
            attribution: Attribution::code(e.attribution),
            video_id: &e.video_id,
            widget_id: &e.widget_id,
            session_id: &e.session_id,
            customer_id: &e.customer_id,
            product_id: &e.product_id,
            order_id: &e.order_id,
            revenue_e4: e.revenue_e4,
            currency: &e.currency,
            product_ids: &e.product_ids,
        }
    }
}

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
    /// Worth retrying: ClickHouse unreachable, overloaded, timed out.
    #[error("transient: {0}")]
    Transient(String),
    /// ClickHouse refuses the data itself; retrying cannot help.
    #[error("rejected: {0}")]
    Rejected(String),
}

/// ClickHouse exception codes that mean "this data is bad", not "try later".
const DATA_ERROR_CODES: &[u32] = &[6, 26, 27, 32, 33, 38, 41, 53, 69, 70, 72, 117, 131];

fn classify(error: &clickhouse::error::Error) -> ShipError {
    let text = error.to_string();
    if let clickhouse::error::Error::BadResponse(message) = error {
        let code = message
            .split("Code: ")
            .nth(1)
            .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|digits| digits.parse::<u32>().ok());
        if code.is_some_and(|c| DATA_ERROR_CODES.contains(&c)) {
            return ShipError::Rejected(text);
        }
    }
    ShipError::Transient(text)
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
                .map_err(|e| ShipError::Transient(format!("Postgres: {e}")))?;
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

    /// Ships until `stop` turns true and the spool is empty, or until `deadline` after `stop`.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>, grace: Duration) {
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
                if !self.ship_with_retries(&segment, &mut stop, deadline).await {
                    break;
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

    /// Returns false when shipping should pause (shutdown deadline reached).
    async fn ship_with_retries(
        &mut self,
        segment: &Segment,
        stop: &mut watch::Receiver<bool>,
        deadline: Option<Instant>,
    ) -> bool {
        let mut backoff = backon::ExponentialBuilder::default()
            .with_min_delay(self.config.min_backoff)
            .with_max_delay(self.config.max_backoff)
            .with_jitter()
            .without_max_times()
            .build();
        loop {
            match self.ship(segment).await {
                Ok(()) => return true,
                Err(ShipError::Rejected(reason)) => {
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
                    return true;
                }
                Err(ShipError::Transient(reason)) => {
                    metrics::counter!("clickhouse_insert_failures_total", "kind" => "transient")
                        .increment(1);
                    let delay = backoff.next().unwrap_or(self.config.max_backoff);
                    tracing::warn!(%reason, retry_in = ?delay, "ClickHouse insert failed; will retry");
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
                    if deadline.is_some_and(|d| Instant::now() >= d)
                        || (deadline.is_none() && *stop.borrow())
                    {
                        // Either out of time, or shutdown just began: let run() set the deadline.
                        return false;
                    }
                }
            }
        }
    }

    async fn ship(&mut self, segment: &Segment) -> Result<(), ShipError> {
        let contents =
            read_segment(&segment.path).map_err(|e| ShipError::Transient(e.to_string()))?;
        if !contents.undecodable.is_empty() {
            self.dead_letter_records(segment, &contents.undecodable);
        }
        if contents.torn_bytes > 0 {
            tracing::warn!(path = %segment.path.display(), bytes = contents.torn_bytes, "ignored a torn record at the end of a spool segment");
        }
        let mut events = contents.events;
        let retry = self.uncertain.contains(&segment.batch_id);
        if retry && !events.is_empty() {
            let landed = self.landed(segment.batch_id, &events).await?;
            if !landed.is_empty() {
                tracing::info!(batch = %segment.batch_id, landed = landed.len(), "part of a retried batch had already landed");
            }
            events.retain(|e| !landed.contains(&e.event_id));
        }
        // From here on a failure may leave claims, or rows, of this batch behind: the next
        // attempt looks for both.
        self.uncertain.insert(segment.batch_id);
        let (events, repeats) = self
            .claims()?
            .counted(segment.batch_id, events, retry)
            .await
            .map_err(|e| ShipError::Transient(format!("Postgres claims: {e}")))?;
        if !events.is_empty() {
            self.insert(segment.batch_id, &events).await?;
        }
        // Counted only once the batch is in, so a retried batch does not count them again.
        for (kind, count) in [("event_id", repeats.events), ("order_id", repeats.orders)] {
            if count > 0 {
                metrics::counter!("events_repeated_total", "kind" => kind).increment(count as u64);
            }
        }
        metrics::counter!("events_shipped_total").increment(events.len() as u64);
        metrics::histogram!("ingest_batch_rows").record(events.len() as f64);
        self.remove(segment);
        Ok(())
    }

    async fn insert(&mut self, batch_id: Uuid, events: &[SpoolEvent]) -> Result<(), ShipError> {
        let started = Instant::now();
        let attempt = async {
            let mut insert = self.warehouse.client().insert::<EventRow<'_>>("events")?;
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
            Ok(Err(e)) => Err(classify(&e)),
            Err(_) => Err(ShipError::Transient(format!(
                "no answer within {:?}",
                self.config.insert_timeout
            ))),
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
            .map_err(|_| ShipError::Transient("landed-rows check timed out".into()))?
            .map_err(|e| ShipError::Transient(e.to_string()))?;
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

    fn dead_letter_records(&self, segment: &Segment, payloads: &[Vec<u8>]) {
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
        if let Err(e) = write_synced(&target, &data) {
            tracing::error!(error = %e, "cannot write undecodable spool records to dead letters");
        }
        metrics::counter!("spool_records_dead_lettered_total").increment(payloads.len() as u64);
        tracing::error!(records = payloads.len(), path = %target.display(), "spool records that are not events were set aside");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_errors_are_rejections_and_everything_else_is_transient() {
        let bad = clickhouse::error::Error::BadResponse(
            "Code: 27, e.displayText() = DB::Exception: Cannot parse input".into(),
        );
        assert!(matches!(classify(&bad), ShipError::Rejected(_)));
        let new_format = clickhouse::error::Error::BadResponse(
            "Code: 131. DB::Exception: Too large string size. (TOO_LARGE_STRING_SIZE)".into(),
        );
        assert!(matches!(classify(&new_format), ShipError::Rejected(_)));
        let overloaded = clickhouse::error::Error::BadResponse(
            "Code: 202. DB::Exception: Too many simultaneous queries".into(),
        );
        assert!(matches!(classify(&overloaded), ShipError::Transient(_)));
        assert!(matches!(
            classify(&clickhouse::error::Error::TimedOut),
            ShipError::Transient(_)
        ));
    }
}
