//! The aggregates' quiet partitions are merged into one part each (`warehouse::compaction`), with
//! every sum as it was; partitions written within the quiet time are left as they are, unless
//! they are crowded and small.

use std::collections::HashMap;
use std::time::Duration;

use videoapp::warehouse::compaction::{
    crowded_partitions, merge_crowded, merge_quiet, quiet_partitions, Crowding, CROWDED,
};
use videoapp::warehouse::migrations::{apply, MIGRATIONS};
use videoapp::warehouse::{Warehouse, AGGREGATES};

use crate::support::*;

/// The aggregates' active parts per partition, as `table partition parts` lines.
async fn parts(database: &str) -> Vec<String> {
    let tables = AGGREGATES.map(|t| format!("'{t}'")).join(", ");
    let sql = format!(
        "SELECT table, partition_id, count() FROM system.parts \
         WHERE database = currentDatabase() AND active AND table IN ({tables}) \
         GROUP BY table, partition_id ORDER BY table, partition_id"
    );
    let parts = clickhouse_query(database, &sql).await;
    parts.lines().map(String::from).collect()
}

/// The schema, and three inserts of events over three months (January to March 2026): three
/// parts in each partition of every aggregate. ClickHouse leaves three small parts as they are.
async fn warehouse_in_three_parts() -> (Warehouse, String) {
    let warehouse = fresh_warehouse();
    apply(&warehouse, MIGRATIONS).await.unwrap();
    let database = warehouse.database().to_string();
    for first in [0, 1_000, 2_000] {
        clickhouse_query(&database, &insert_events(first, 1_000)).await;
    }
    (warehouse, database)
}

#[tokio::test]
async fn quiet_partitions_of_the_aggregates_are_merged_into_one_part_with_every_sum_kept() {
    // Arrange
    let (warehouse, database) = warehouse_in_three_parts().await;
    let before = parts(&database).await;
    for table in AGGREGATES {
        let split = |l: &String| l.starts_with(&format!("{table}\t")) && !l.ends_with("\t1");
        assert!(
            before.iter().any(split),
            "{table} starts in parts: {before:?}"
        );
    }

    // Act
    let merged = merge_quiet(&warehouse, Duration::ZERO).await.unwrap();

    // Assert
    let after = parts(&database).await;
    assert!(after.iter().all(|l| l.ends_with("\t1")), "{after:?}");
    assert_eq!(after.len(), before.len(), "{after:?}");
    assert_eq!(
        merged,
        before.iter().filter(|l| !l.ends_with("\t1")).count()
    );
    assert_every_aggregate_equals_its_recount(&database).await;
    let left = quiet_partitions(&warehouse, Duration::ZERO).await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn a_partition_written_within_the_quiet_time_is_left_as_it_is() {
    // Arrange: every partition in parts; then, four seconds on, January's written again.
    let (warehouse, database) = warehouse_in_three_parts().await;
    let age = format!(
        "SELECT now() - max(modification_time) FROM system.parts \
         WHERE database = '{database}' AND active"
    );
    let age = &age;
    let database_name = &database;
    eventually(
        "every part is four seconds old",
        Duration::from_secs(30),
        move || async move {
            let seconds: i64 = clickhouse_query(database_name, age).await.parse().unwrap();
            (seconds >= 4).then_some(()).ok_or(seconds)
        },
    )
    .await;
    let january = "INSERT INTO events SELECT * FROM events WHERE local_date = toDate('2026-01-20')";
    clickhouse_query(&database, january).await;

    // Act: quiet for two seconds (a part's time is in whole seconds).
    merge_quiet(&warehouse, Duration::from_secs(2))
        .await
        .unwrap();

    // Assert: the insert wrote January's partition of the tables partitioned by month, and
    // 2026's of those partitioned by year; February and March are merged.
    let after = parts(&database).await;
    let of = |table: &str, id: &str| {
        let line = after
            .iter()
            .find(|l| l.starts_with(&format!("{table}\t{id}\t")));
        line.unwrap_or_else(|| panic!("{table} {id}: {after:?}"))
            .clone()
    };
    for table in ["video_daily", "widget_daily"] {
        assert_eq!(of(table, "202601"), format!("{table}\t202601\t4"));
        assert_eq!(of(table, "202602"), format!("{table}\t202602\t1"));
        assert_eq!(of(table, "202603"), format!("{table}\t202603\t1"));
    }
    for table in [
        "video_monthly",
        "video_yearly",
        "widget_monthly",
        "shop_daily",
        "video_daily_by_video",
    ] {
        assert_eq!(of(table, "2026"), format!("{table}\t2026\t4"));
    }
    assert_every_aggregate_equals_its_recount(&database).await;
}

#[tokio::test]
async fn a_crowded_partition_is_merged_while_it_is_written_at_most_once_per_period_if_small() {
    // Arrange: every partition in three parts, written just now.
    let (warehouse, database) = warehouse_in_three_parts().await;
    let tables = AGGREGATES.map(|t| format!("'{t}'")).join(", ");
    let rows = format!(
        "SELECT max(rows) FROM (SELECT sum(rows) AS rows FROM system.parts \
         WHERE database = currentDatabase() AND active AND table IN ({tables}) \
         GROUP BY table, partition_id)"
    );
    let largest: u64 = clickhouse_query(&database, &rows).await.parse().unwrap();
    let every = Duration::from_secs(3600);
    let mut last = HashMap::new();

    // Act: first only partitions smaller than the largest, then all of them.
    let smaller = Crowding {
        rows_at_most: largest - 1,
        ..CROWDED
    };
    let first = merge_crowded(&warehouse, smaller, every, &mut last).await;
    let left = crowded_partitions(&warehouse, CROWDED).await.unwrap();
    let second = merge_crowded(&warehouse, CROWDED, every, &mut last).await;

    // Assert: the largest was left the first time, merged the second; none was quiet.
    assert!(first.unwrap() > 0);
    assert!(!left.is_empty(), "the largest partition was left");
    assert_eq!(second.unwrap(), left.len());
    let after = parts(&database).await;
    assert!(after.iter().all(|l| l.ends_with("\t1")), "{after:?}");
    assert_every_aggregate_equals_its_recount(&database).await;

    // Act: January crowded again within the period.
    let january = "INSERT INTO events SELECT * FROM events WHERE local_date = toDate('2026-01-20')";
    for _ in 0..2 {
        clickhouse_query(&database, january).await;
    }
    let again = merge_crowded(&warehouse, CROWDED, every, &mut last).await;

    // Assert: merged within the period, so left as it is.
    assert_eq!(again.unwrap(), 0);
    let crowded = crowded_partitions(&warehouse, CROWDED).await.unwrap();
    assert!(crowded
        .iter()
        .any(|p| p.table == "video_daily" && p.id == "202601"));
    assert_every_aggregate_equals_its_recount(&database).await;
}

/// The service itself: once its schema is current, it looks every minute (here every two
/// seconds, its quiet time, which the settings' parser would refuse below a minute) and merges
/// what has been quiet that long.
#[tokio::test]
async fn the_service_merges_its_quiet_partitions_by_itself() {
    // Arrange
    let app = spawn_app_with(|s| s.compaction_quiet = Duration::from_secs(2)).await;
    let database = app.clickhouse_database.clone();
    for first in [0, 1_000, 2_000] {
        clickhouse_query(&database, &insert_events(first, 1_000)).await;
    }
    let before = parts(&database).await;
    assert!(before.iter().any(|l| !l.ends_with("\t1")), "{before:?}");

    // Act: wait for a pass two seconds after the inserts.
    let database_name = &database;
    let after = eventually(
        "every partition is in one part",
        Duration::from_secs(60),
        move || async move {
            let after = parts(database_name).await;
            match after.iter().any(|l| !l.ends_with("\t1")) {
                true => Err(after),
                false => Ok(after),
            }
        },
    )
    .await;

    // Assert
    assert_eq!(after.len(), before.len(), "{after:?}");
    assert_every_aggregate_equals_its_recount(&database).await;
}

/// Every table of the schema that holds a shop's rows is known to the service: merged when quiet
/// (`AGGREGATES`) and emptied when the shop is deleted (`shop_tables`). A new aggregate left out
/// would keep a deleted shop's numbers for ever.
#[tokio::test]
async fn every_table_that_holds_a_shops_rows_is_merged_when_quiet_and_deleted_with_the_shop() {
    // Arrange
    let warehouse = fresh_warehouse();
    apply(&warehouse, MIGRATIONS).await.unwrap();

    // Act
    let sql = "SELECT name FROM system.tables \
               WHERE database = currentDatabase() AND engine LIKE '%MergeTree' \
               AND name IN (SELECT table FROM system.columns \
                            WHERE database = currentDatabase() AND name = 'shop_domain') \
               ORDER BY name";
    let tables = clickhouse_query(warehouse.database(), sql).await;

    // Assert
    let mut known: Vec<&str> = videoapp::warehouse::privacy::shop_tables().collect();
    known.sort_unstable();
    assert_eq!(tables.lines().collect::<Vec<_>>(), known);
    let events = known.iter().filter(|t| !AGGREGATES.contains(t));
    assert_eq!(events.collect::<Vec<_>>(), [&"events"]);
}
