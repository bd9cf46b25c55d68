//! Merging the aggregates' quiet partitions into one part each.
//!
//! A `SummingMergeTree` sums the rows of a key only when it merges parts, and ClickHouse's
//! background merges stop short of one part per partition: its merge selector leaves parts of
//! unequal size alone for good. A closed month of `video_daily` held in six parts keeps up to six
//! rows per video and day, and every query over that month reads them all: on a shop of 10,000
//! videos, a year's list read 47% more rows than one part per partition holds.
//!
//! So the service merges each partition of an aggregate that nothing has written (an insert, a
//! merge, a deletion) for `quiet`, on any shop: a past month or year, which only a late event
//! touches again (and is then merged again once quiet), and a current one after `quiet` without
//! events from any shop. Partitions written within `quiet` are left to ClickHouse, and so are
//! tables with a deletion still running. Current ClickHouse has a table setting of this kind
//! (`min_age_to_force_merge_seconds`); 18.16 has not, and this runs on both.
//!
//! A partition still being written is merged too while it is small and crowded ([`CROWDED`]:
//! more than two parts, ten million rows at most), once per `quiet` at most. This year's
//! partition of a yearly aggregate holds a row per video (and value) in each of its parts, and a
//! list over a year reads every one of them: after a day of heavy writing, the eight parts of
//! `video_yearly_by_dimension` made a filtered list 1.3 times as slow as the plain one, one part
//! as fast (BENCHMARKS.md, "Analytics at scale"). After the merge, new parts hold only the videos
//! seen since. At 100 M events of one shop, that table held 1.7 million rows in eight parts and
//! the filtered lists took 1.4 to 1.5 times as long as the plain one; merged, 1.02 to 1.04.
//! Rewriting ten million rows takes about 20 s of one core (half a million rows a second), under
//! 1% of a core once an hour; a larger partition, shared by many shops, is left to ClickHouse.
//!
//! One instance at a time looks (a Postgres advisory lock; the others skip the pass), so a
//! partition is rewritten once. A merge sums rows and changes no total: no kept answer goes stale.
//!
//! Not on a cluster: 18.16 cannot tell one shard's parts from another's through the `cluster()`
//! table function (no shard number, and one host name for nodes on one machine), so a partition
//! held in one part on each shard would look unmerged for ever.

use std::collections::HashMap;
use std::future::Future;
use std::time::{Duration, Instant};

use sqlx::PgPool;
use tokio::sync::watch;

use super::error::WarehouseError;
use super::{Warehouse, AGGREGATES};

const PARTITIONS_TO_MERGE_SQL: &str =
    include_str!("../../sql/36_compaction_partitions_to_merge.sql");
const MERGE_PARTITION_SQL: &str = include_str!("../../sql/37_compaction_merge_partition.sql");

/// When a partition is crowded: held in more parts than `more_parts_than`, and small enough to
/// rewrite at `rows_at_most` rows.
#[derive(Clone, Copy, Debug)]
pub struct Crowding {
    pub more_parts_than: u64,
    pub rows_at_most: u64,
}

/// What the service merges while it is written (see the module's text).
pub const CROWDED: Crowding = Crowding {
    more_parts_than: 2,
    rows_at_most: 10_000_000,
};

/// How often the partitions are looked over.
const EVERY: Duration = Duration::from_secs(60);
/// The advisory lock one pass holds, among every instance sharing the catalog database.
const LOCK_KEY: i64 = 0x7669_6465_6f6d_7267; // "videomrg"

/// A partition of one aggregate, by id.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Partition {
    pub table: &'static str,
    pub id: String,
}

#[derive(clickhouse::Row, serde::Deserialize)]
struct PartitionRow {
    table: String,
    partition_id: String,
}

/// The aggregates' partitions held in more than one part that nothing has written for `quiet`,
/// in tables with no deletion running.
pub async fn quiet_partitions(
    warehouse: &Warehouse,
    quiet: Duration,
) -> Result<Vec<Partition>, WarehouseError> {
    let any_size = Crowding {
        more_parts_than: 1,
        rows_at_most: u64::MAX,
    };
    partitions_to_merge(warehouse, any_size, quiet).await
}

/// The aggregates' partitions that are `crowding`, written or not, in tables with no deletion
/// running.
pub async fn crowded_partitions(
    warehouse: &Warehouse,
    crowding: Crowding,
) -> Result<Vec<Partition>, WarehouseError> {
    partitions_to_merge(warehouse, crowding, Duration::ZERO).await
}

/// The aggregates' partitions that are `crowding` and that nothing has written for `quiet`, in
/// tables with no deletion running.
async fn partitions_to_merge(
    warehouse: &Warehouse,
    crowding: Crowding,
    quiet: Duration,
) -> Result<Vec<Partition>, WarehouseError> {
    let query = warehouse.client().query(PARTITIONS_TO_MERGE_SQL);
    // A slice, which binds as an array; a fixed-size array would bind as a tuple.
    let query = query.bind(&AGGREGATES[..]).bind(crowding.more_parts_than);
    let query = query.bind(crowding.rows_at_most).bind(quiet.as_secs());
    let rows: Vec<PartitionRow> = query.fetch_all().await?;
    // The query names only tables of the list it was given.
    let partitions = rows.into_iter().filter_map(|row| {
        let table = AGGREGATES.into_iter().find(|t| *t == row.table)?;
        Some(Partition {
            table,
            id: row.partition_id,
        })
    });
    Ok(partitions.collect())
}

/// Merges one partition of an aggregate into one part. A merge ClickHouse would skip (parts
/// already merging, a deletion started since, too little disk) is an error, not a success.
pub async fn merge(warehouse: &Warehouse, partition: &Partition) -> Result<(), WarehouseError> {
    let sql = MERGE_PARTITION_SQL.replacen('?', partition.table, 1);
    let statement = warehouse.client().query(&sql).bind(&partition.id);
    let statement = statement.with_option("optimize_throw_if_noop", "1");
    statement.execute().await?;
    let table = partition.table;
    metrics::counter!("warehouse_partitions_merged_total", "table" => table).increment(1);
    Ok(())
}

/// Merges every partition [`quiet_partitions`] names, one after another; returns how many
/// merged. One that cannot be merged is logged and left for the next pass.
pub async fn merge_quiet(warehouse: &Warehouse, quiet: Duration) -> Result<usize, WarehouseError> {
    let mut merged = 0;
    for partition in quiet_partitions(warehouse, quiet).await? {
        merged += usize::from(merge_logged(warehouse, &partition, Why::Quiet).await);
    }
    Ok(merged)
}

/// Merges every partition [`crowded_partitions`] names (`crowding`) that this instance has not
/// merged within `every` (by `last`, which it updates); returns how many merged. ClickHouse often
/// merges some of such a partition's parts itself, and then skips ours: that is left for the next
/// pass.
pub async fn merge_crowded(
    warehouse: &Warehouse,
    crowding: Crowding,
    every: Duration,
    last: &mut HashMap<Partition, Instant>,
) -> Result<usize, WarehouseError> {
    last.retain(|_, at| at.elapsed() < every);
    let mut merged = 0;
    for partition in crowded_partitions(warehouse, crowding).await? {
        if last.contains_key(&partition) {
            continue;
        }
        if merge_logged(warehouse, &partition, Why::Crowded).await {
            merged += 1;
            last.insert(partition, Instant::now());
        }
    }
    Ok(merged)
}

/// Why a partition is merged.
#[derive(Clone, Copy, Debug)]
enum Why {
    Quiet,
    Crowded,
}

/// [`merge`], logged: whether it merged.
async fn merge_logged(warehouse: &Warehouse, partition: &Partition, why: Why) -> bool {
    let (table, id) = (partition.table, &partition.id);
    let started = Instant::now();
    match merge(warehouse, partition).await {
        Ok(()) => {
            let elapsed_ms = started.elapsed().as_millis() as u64;
            tracing::info!(table, partition = %id, ?why, elapsed_ms, "merged a partition");
            true
        }
        // A partition being written is often being merged by ClickHouse too.
        Err(e) if matches!(why, Why::Crowded) => {
            tracing::debug!(table, partition = %id, error = %e, "cannot merge a partition yet");
            false
        }
        Err(e) => {
            tracing::warn!(table, partition = %id, error = %e, "cannot merge a partition");
            false
        }
    }
}

/// Once the schema is current, merges the aggregates' partitions quiet for `quiet` every minute
/// (or every `quiet`, when shorter), and each crowded one at most once per `quiet`, until the
/// process ends, in one instance at a time; nothing on a cluster (see above). A pass that fails
/// (ClickHouse or Postgres away) is logged once until one succeeds again.
pub fn spawn(
    warehouse: Warehouse,
    db: PgPool,
    mut schema_current: watch::Receiver<bool>,
    quiet: Duration,
) {
    if warehouse.cluster().is_some() {
        return;
    }
    tokio::spawn(async move {
        if schema_current.wait_for(|current| *current).await.is_err() {
            return;
        }
        let mut ticks = tokio::time::interval(EVERY.min(quiet));
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (mut failing, mut crowded) = (false, HashMap::new());
        loop {
            ticks.tick().await;
            let pass = async {
                let quiet_ones = merge_quiet(&warehouse, quiet).await?;
                Ok(quiet_ones + merge_crowded(&warehouse, CROWDED, quiet, &mut crowded).await?)
            };
            match exclusively(&db, pass).await {
                Ok(_) => failing = false,
                Err(e) if !failing => {
                    failing = true;
                    let what = "cannot look for quiet partitions; trying every minute";
                    tracing::warn!(error = %e, "{what}");
                }
                Err(e) => tracing::debug!(error = %e, "cannot look for quiet partitions"),
            }
        }
    });
}

/// `pass` under the advisory lock, or nothing when another instance holds it.
async fn exclusively(
    db: &PgPool,
    pass: impl Future<Output = Result<usize, WarehouseError>>,
) -> Result<usize, WarehouseError> {
    let transient = |e: sqlx::Error| WarehouseError::Transient(format!("Postgres: {e}"));
    // A connection of its own, closed at the end: closing releases the lock whatever happened.
    let mut connection = db.acquire().await.map_err(transient)?.detach();
    let locked: bool = sqlx::query_scalar("SELECT pg_try_advisory_lock($1)")
        .bind(LOCK_KEY)
        .fetch_one(&mut connection)
        .await
        .map_err(transient)?;
    let outcome = if locked { pass.await } else { Ok(0) };
    if let Err(e) = sqlx::Connection::close(connection).await {
        tracing::warn!(error = %e, "closing the merge lock's connection failed");
    }
    outcome
}
