//! The aggregates' quiet partitions are merged into one part each (`warehouse::compaction`), with
//! every sum as it was, and partitions written within the quiet time are left as they are.

use std::time::Duration;

use videoapp::warehouse::compaction::{merge_quiet, quiet_partitions};
use videoapp::warehouse::migrations::{apply, MIGRATIONS};

use crate::helpers::*;

/// Every aggregate, with its keys as held and as recounted from the events.
fn aggregates() -> [(&'static str, &'static str, String); 6] {
    let month = |id| format!("shop_domain, toStartOfMonth(local_date) AS month, {id}");
    [
        (
            "video_daily",
            "shop_domain, local_date, video_id",
            String::new(),
        ),
        (
            "widget_daily",
            "shop_domain, local_date, widget_id",
            String::new(),
        ),
        (
            "video_monthly",
            "shop_domain, month, video_id",
            month("video_id"),
        ),
        (
            "widget_monthly",
            "shop_domain, month, widget_id",
            month("widget_id"),
        ),
        ("shop_daily", "shop_domain, local_date", String::new()),
        (
            "video_daily_by_video",
            "shop_domain, video_id, local_date",
            String::new(),
        ),
    ]
}

/// Active parts per table and partition, as `table partition parts` lines.
async fn parts(database: &str) -> String {
    clickhouse_query(
        database,
        "SELECT table, partition_id, count() FROM system.parts \
         WHERE database = currentDatabase() AND active \
         GROUP BY table, partition_id ORDER BY table, partition_id",
    )
    .await
}

/// Three inserts of events over three months: three parts in each partition of every table.
async fn warehouse_in_three_parts() -> (videoapp::warehouse::Warehouse, String) {
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
    for (table, ..) in aggregates() {
        assert!(
            before
                .lines()
                .any(|l| l.starts_with(&format!("{table}\t")) && l.ends_with("\t3")),
            "{table} starts in three parts: {before}"
        );
    }

    // Act
    let merged = merge_quiet(&warehouse, Duration::ZERO).await.unwrap();

    // Assert: each aggregate partition in one part, the raw events untouched, every sum kept.
    let after = parts(&database).await;
    for line in after.lines() {
        let [table, partition, count] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("{line}")
        };
        let expected = if table == "events" { "3" } else { "1" };
        if table != "schema_migrations" {
            assert_eq!(count, expected, "{table} {partition}: {after}");
        }
    }
    let aggregate_partitions = before
        .lines()
        .filter(|l| !l.starts_with("events\t") && !l.starts_with("schema_migrations\t"))
        .filter(|l| !l.ends_with("\t1"))
        .count();
    assert_eq!(merged, aggregate_partitions, "{before}");
    for (table, keys, event_keys) in aggregates() {
        let event_keys = if event_keys.is_empty() {
            keys.to_string()
        } else {
            event_keys
        };
        let [held, recount] = aggregate_and_recount(&database, table, keys, &event_keys).await;
        assert!(recount.lines().count() >= 12, "{table}: {recount}");
        assert_eq!(held, recount, "{table}");
    }
    assert!(quiet_partitions(&warehouse, Duration::ZERO)
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn partitions_written_within_the_quiet_time_are_left_to_clickhouse() {
    // Arrange
    let (warehouse, database) = warehouse_in_three_parts().await;
    let before = parts(&database).await;

    // Act
    let merged = merge_quiet(&warehouse, Duration::from_secs(3600))
        .await
        .unwrap();

    // Assert
    assert_eq!(merged, 0);
    assert_eq!(parts(&database).await, before);
}
