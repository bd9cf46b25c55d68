//! Event ingestion: validated events go to the durable local spool (the 202 waits for the
//! fsync), and a background shipper moves them to ClickHouse in batches.

pub mod claims;
pub mod event;
pub mod redactions;
pub mod shipper;
pub mod spool;

use std::time::Duration;

use tokio::sync::watch;

use crate::config::Config;
use crate::warehouse::Warehouse;
use event::TimeWindow;
use shipper::{Shipper, ShipperConfig};
use spool::{Spool, SpoolConfig};

#[derive(Clone)]
pub struct IngestConfig {
    pub spool: SpoolConfig,
    pub shipper: ShipperConfig,
    pub window: TimeWindow,
    /// What a 503 tells clients to wait when the spool is full.
    pub retry_after: Duration,
}

impl From<&Config> for IngestConfig {
    fn from(config: &Config) -> Self {
        let duration = |d: Duration| chrono::Duration::from_std(d).unwrap_or(chrono::Duration::MAX);
        IngestConfig {
            spool: SpoolConfig {
                dir: config.spool_dir.clone(),
                max_bytes: config.spool_max_bytes,
                batch_rows: config.batch_max_rows,
                batch_age: config.batch_max_age,
                commit_delay: config.spool_commit_delay,
            },
            shipper: ShipperConfig {
                database_url: config.database_url.clone(),
                insert_timeout: config.clickhouse_insert_timeout,
                min_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(10),
            },
            window: TimeWindow {
                max_future: duration(config.event_max_future),
                max_past: duration(config.event_max_past),
            },
            retry_after: Duration::from_secs(5),
        }
    }
}

/// What the event endpoint needs. Cheap to clone.
#[derive(Clone)]
pub struct Ingest {
    pub spool: Spool,
    pub window: TimeWindow,
    pub retry_after: Duration,
    /// `events_accepted_total`, resolved once (it is counted on every request).
    pub accepted: metrics::Counter,
}

/// The running pipeline: the handle for requests, and the shipper to stop at shutdown.
pub struct Pipeline {
    pub ingest: Ingest,
    stop: watch::Sender<bool>,
    shipper: std::thread::JoinHandle<()>,
}

impl Pipeline {
    /// Opens the spool (sealing what a previous process left open) and starts the shipper,
    /// which replays whatever is spooled once `schema_current` is true.
    pub async fn start(
        config: IngestConfig,
        warehouse: Warehouse,
        schema_current: watch::Receiver<bool>,
        grace: Duration,
    ) -> std::io::Result<Pipeline> {
        // Opening may wait for another process to let go of the spool, and reads and seals what
        // it left: file work that must not hold up an async worker.
        let (spool, shipper) = tokio::task::spawn_blocking(move || {
            let spool = Spool::open(config.spool)?;
            let shipper = Shipper::new(spool.clone(), warehouse, config.shipper)?;
            Ok::<_, std::io::Error>((spool, shipper))
        })
        .await
        .map_err(std::io::Error::other)??;
        let (stop, stopped) = watch::channel(false);
        // The shipper reads, decodes and deletes whole segments: on a thread and runtime of its
        // own, so that work never stalls the request workers.
        let shipper = std::thread::Builder::new()
            .name("spool-shipper".into())
            .spawn(move || {
                match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(shipper.run(schema_current, stopped, grace)),
                    Err(e) => tracing::error!(error = %e, "cannot start the shipper's runtime"),
                }
            })?;
        Ok(Pipeline {
            ingest: Ingest {
                spool,
                window: config.window,
                retry_after: config.retry_after,
                accepted: metrics::counter!("events_accepted_total"),
            },
            stop,
            shipper,
        })
    }

    /// Seals the active segment and lets the shipper send what it can within its grace period;
    /// the rest stays spooled for the next start.
    pub async fn shutdown(self) {
        self.ingest.spool.seal().await;
        let _ = self.stop.send(true);
        let shipper = self.shipper;
        let _ = tokio::task::spawn_blocking(move || shipper.join()).await;
    }
}
