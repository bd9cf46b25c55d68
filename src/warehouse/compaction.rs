//! Merging the aggregates' quiet partitions into one part each.
//!
//! A `SummingMergeTree` sums the rows of a key only when it merges parts, and ClickHouse's
//! background merges stop short of one part per partition: its merge selector leaves parts of
//! unequal size alone for good. A closed month of `video_daily` held in six parts keeps up to six
//! rows per video and day, and every query over that month reads them all: on a shop of 10,000
//! videos, a year's list read 47% more rows than one part per partition holds.
//!
//! So the service merges each partition of an aggregate that nothing has written (an insert, a
//! merge, a deletion) for a while (`quiet`): a past month or year, which only a late event or a
//! deletion touches again, and which is then merged again once quiet. A partition still receiving
//! events (this month's, this year's) is left to ClickHouse. Current ClickHouse offers the same as
//! a table setting (`min_age_to_force_merge_seconds`); 18.16 has not, and this runs on both.
//!
//! Every instance does it; two merging one partition at once cost a merge, never a number. A
//! merge sums rows and changes no total, so no kept answer goes stale.
//!
//! Not on a cluster: 18.16 cannot tell one shard's parts from another's through the `cluster()`
//! table function (no shard number, and one host name for nodes on one machine), so a partition
//! held in one part on each shard would look unmerged forever. There, the node tables are left to
//! ClickHouse's merges, or to the table setting above on current ClickHouse.

use std::time::{Duration, Instant};

use super::error::WarehouseError;
use super::privacy::SHOP_TABLES;
use super::Warehouse;

const QUIET_PARTITIONS_SQL: &str = include_str!("../../sql/36_compaction_quiet_partitions.sql");
const MERGE_PARTITION_SQL: &str = include_str!("../../sql/37_compaction_merge_partition.sql");

/// How often the partitions are looked over.
const EVERY: Duration = Duration::from_secs(60);

/// The aggregates: every table that holds a shop's rows except the raw events, which no answer
/// reads and whose rewrite would cost the most.
fn aggregates() -> impl Iterator<Item = &'static str> {
    SHOP_TABLES.into_iter().filter(|table| *table != "events")
}

/// A partition of one table, by id.
#[derive(Debug, Clone, PartialEq, Eq, clickhouse::Row, serde::Deserialize)]
pub struct Partition {
    pub table: String,
    pub partition_id: String,
}

/// The aggregates' partitions held in more than one part that nothing has written for `quiet`.
pub async fn quiet_partitions(
    warehouse: &Warehouse,
    quiet: Duration,
) -> Result<Vec<Partition>, WarehouseError> {
    let tables: Vec<&str> = aggregates().collect();
    let query = warehouse.client().query(QUIET_PARTITIONS_SQL);
    let query = query.bind(tables).bind(quiet.as_secs());
    Ok(query.fetch_all().await?)
}

/// Merges one partition of an aggregate into one part.
pub async fn merge(warehouse: &Warehouse, partition: &Partition) -> Result<(), WarehouseError> {
    // The table reaches the text only as one of ours.
    let Some(table) = aggregates().find(|t| *t == partition.table) else {
        return Err(WarehouseError::Transient(format!(
            "{} is not an aggregate",
            partition.table
        )));
    };
    let sql = MERGE_PARTITION_SQL.replacen('?', table, 1);
    let statement = warehouse.client().query(&sql).bind(&partition.partition_id);
    statement.execute().await?;
    metrics::counter!("warehouse_partitions_merged_total", "table" => table).increment(1);
    Ok(())
}

/// Merges every partition [`quiet_partitions`] names, one after another; returns how many.
pub async fn merge_quiet(warehouse: &Warehouse, quiet: Duration) -> Result<usize, WarehouseError> {
    let partitions = quiet_partitions(warehouse, quiet).await?;
    for partition in &partitions {
        let started = Instant::now();
        merge(warehouse, partition).await?;
        tracing::info!(
            table = %partition.table,
            partition = %partition.partition_id,
            elapsed_ms = started.elapsed().as_millis() as u64,
            "merged a quiet partition into one part"
        );
    }
    Ok(partitions.len())
}

/// Merges the aggregates' partitions quiet for `quiet`, now and every minute, until the process
/// ends; nothing on a cluster (see above). A failure (ClickHouse away) is logged and tried again.
pub fn spawn(warehouse: Warehouse, quiet: Duration) {
    if warehouse.cluster().is_some() {
        return;
    }
    tokio::spawn(async move {
        let mut ticks = tokio::time::interval(EVERY);
        ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            ticks.tick().await;
            if let Err(e) = merge_quiet(&warehouse, quiet).await {
                tracing::warn!(error = %e, "cannot merge the aggregates' quiet partitions; trying again in a minute");
            }
        }
    });
}
