use videoapp::warehouse::migrations::{apply, Migration, MigrationError};
use videoapp::warehouse::Warehouse;

use crate::support::*;

const FIRST: Migration = Migration {
    version: 1,
    name: "0001_first.sql",
    sql: "-- two statements in one file\n\
          CREATE TABLE IF NOT EXISTS first (x UInt8) ENGINE = MergeTree ORDER BY x;\n\
          CREATE TABLE IF NOT EXISTS second (y String) ENGINE = MergeTree ORDER BY y;\n",
};
const SECOND: Migration = Migration {
    version: 2,
    name: "0002_second.sql",
    sql: "CREATE TABLE IF NOT EXISTS third (z UInt16) ENGINE = MergeTree ORDER BY z",
};

/// A Postgres database with the service's schema, as the migration lock and the shops'
/// analytics versions need.
async fn migrated_postgres() -> sqlx::PgPool {
    let pool = sqlx::PgPool::connect(&fresh_database().await)
        .await
        .unwrap();
    videoapp::db::migrate(&pool).await.unwrap();
    pool
}

async fn table_exists(warehouse: &Warehouse, table: &str) -> bool {
    let exists: u8 = warehouse
        .client()
        .query(&format!("EXISTS TABLE {table}"))
        .fetch_one()
        .await
        .unwrap();
    exists == 1
}

async fn ledger(warehouse: &Warehouse) -> Vec<(u32, String)> {
    warehouse
        .client()
        .query("SELECT version, name FROM schema_migrations ORDER BY version")
        .fetch_all()
        .await
        .unwrap()
}

#[tokio::test]
async fn the_runner_creates_the_database_and_applies_each_file_once_in_order() {
    let warehouse = fresh_warehouse();

    assert_eq!(apply(&warehouse, &[FIRST]).await.unwrap(), vec![1]);
    assert!(table_exists(&warehouse, "first").await);
    assert!(table_exists(&warehouse, "second").await);

    // Running again applies only what is new, and records it.
    assert_eq!(apply(&warehouse, &[FIRST, SECOND]).await.unwrap(), vec![2]);
    assert_eq!(
        apply(&warehouse, &[FIRST, SECOND]).await.unwrap(),
        Vec::<u32>::new()
    );
    assert!(table_exists(&warehouse, "third").await);
    assert_eq!(
        ledger(&warehouse).await,
        vec![
            (1, "0001_first.sql".to_string()),
            (2, "0002_second.sql".to_string())
        ]
    );
}

/// 18.16 has no `ADD COLUMN IF NOT EXISTS`: a file that added its column but was not recorded
/// (the process died in between) still applies again, and the column is added once.
#[tokio::test]
async fn a_column_added_before_an_interruption_is_not_added_again() {
    let warehouse = fresh_warehouse();
    let add = Migration {
        version: 2,
        name: "0002_add.sql",
        sql: "ALTER TABLE first ADD COLUMN extra Array(String) AFTER x;\n\
              CREATE TABLE IF NOT EXISTS after_add (x UInt8) ENGINE = MergeTree ORDER BY x;\n",
    };
    apply(&warehouse, &[FIRST]).await.unwrap();
    // The interrupted run: the column is there, the rest of the file and its record are not.
    warehouse
        .client()
        .query("ALTER TABLE first ADD COLUMN extra Array(String) AFTER x")
        .execute()
        .await
        .unwrap();

    assert_eq!(apply(&warehouse, &[FIRST, add]).await.unwrap(), vec![2]);
    assert!(table_exists(&warehouse, "after_add").await);
    let columns: Vec<String> = warehouse
        .client()
        .query("SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'first'")
        .fetch_all()
        .await
        .unwrap();
    assert_eq!(columns, ["x", "extra"]);
}

#[tokio::test]
async fn a_failing_migration_names_its_file_and_is_not_recorded() {
    let warehouse = fresh_warehouse();
    let broken = Migration {
        version: 2,
        name: "0002_broken.sql",
        sql: "CREATE TABLE IF NOT EXISTS ok (x UInt8) ENGINE = MergeTree ORDER BY x;\nCREATE TABLE broken (",
    };

    let err = apply(&warehouse, &[FIRST, broken]).await.unwrap_err();

    assert!(
        matches!(
            err,
            MigrationError::Statement {
                name: "0002_broken.sql",
                index: 2,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(
        ledger(&warehouse).await,
        vec![(1, "0001_first.sql".to_string())]
    );
}

#[tokio::test]
async fn the_service_applies_its_own_schema_at_start() {
    let app = spawn_app().await;
    let warehouse = warehouse_on(&clickhouse_url(), &app.clickhouse_database, None);
    let recorded = ledger(&warehouse).await;
    let expected: Vec<(u32, String)> = videoapp::warehouse::migrations::MIGRATIONS
        .iter()
        .map(|m| (m.version, m.name.to_string()))
        .collect();
    assert_eq!(recorded, expected);
}

/// ClickHouse down when the service starts: the catalog and the storefront run without it, the
/// schema is applied in the background once it answers, and events acknowledged meanwhile land.
#[tokio::test]
async fn the_schema_is_applied_once_clickhouse_answers_after_a_start_without_it() {
    use crate::support::fault_proxy::{FaultProxy, Mode};
    use std::time::Duration;

    let proxy = FaultProxy::start(&clickhouse_url()).await;
    proxy.set(Mode::Down);
    let url = proxy.url.clone();
    let app = spawn_app_with(move |s| s.clickhouse_url = Some(url.parse().unwrap())).await;
    app.create_shop("late.myshopify.com").await;
    let event = serde_json::json!({ "eventType": "view", "videoId": "v" });
    let response = app.post_events("late.myshopify.com", &event).await;
    assert_eq!(response.status(), reqwest::StatusCode::ACCEPTED);

    proxy.set(Mode::Up);
    let database = &app.clickhouse_database;
    eventually(
        "the schema was applied and the event landed",
        Duration::from_secs(30),
        move || async move {
            let landed = reqwest::Client::new()
                .post(format!("{}/?database={database}", clickhouse_url()))
                .body("SELECT count() FROM events")
                .send()
                .await
                .unwrap();
            let status = landed.status();
            let text = landed.text().await.unwrap();
            match status.is_success() && text.trim() == "1" {
                true => Ok(()),
                false => Err((status, text)),
            }
        },
    )
    .await;
}

/// Upgrading a warehouse that holds events: the attribution columns and the aggregates added since
/// (the dimensions' too) are filled from the events already there (each counted once), and events
/// inserted after the upgrade land in every aggregate through the views.
#[tokio::test]
async fn the_attribution_migration_back_fills_what_the_aggregates_held_and_counts_what_follows() {
    // Arrange: the schema before attribution, with events in it.
    let warehouse = fresh_warehouse();
    let all = videoapp::warehouse::migrations::MIGRATIONS;
    let before = all.iter().position(|m| m.version == 7).unwrap();
    apply(&warehouse, &all[..before]).await.unwrap();
    let database = warehouse.database().to_string();
    clickhouse_query(&database, &insert_events(0, 2_000)).await;

    // Act: upgrade, then ingest more, as events are today.
    apply(&warehouse, all).await.unwrap();
    clickhouse_query(&database, &insert_watching_events(2_000, 1_000)).await;

    // Assert
    assert_every_aggregate_equals_its_recount(&database).await;
}

/// How many connections to the service's database wait for the migrations' lock.
async fn runs_waiting_on_the_lock(db: &sqlx::PgPool) -> i64 {
    // An advisory lock on a bigint key shows its high half as `classid`, its low half as `objid`.
    sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks \
         WHERE locktype = 'advisory' AND NOT granted AND objsubid = 1 \
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
         AND (classid::bigint << 32 | objid::bigint) = $1",
    )
    .bind(videoapp::warehouse::migrations::LOCK_KEY)
    .fetch_one(db)
    .await
    .unwrap()
}

/// The shipper inserts nothing while the schema is behind (a back-fill still to run would count
/// the rows again), and ships what was accepted meanwhile once the migrations went through.
#[tokio::test]
async fn events_accepted_while_the_schema_is_behind_are_shipped_once_it_is_current() {
    use std::time::Duration;

    // Arrange: the whole schema, but a ledger that claims every file but the last and cannot
    // record more (a view), so every run of the migrations fails. (The last file, applied again
    // on its own schema, changes nothing; an older back-fill would insert into tables that have
    // since gained columns.)
    let warehouse = fresh_warehouse();
    let all = videoapp::warehouse::migrations::MIGRATIONS;
    apply(&warehouse, all).await.unwrap();
    let behind = all.len() - 1;
    let database = warehouse.database().to_string();
    clickhouse_query(&database, "DROP TABLE schema_migrations").await;
    clickhouse_query(
        &database,
        &format!(
            "CREATE VIEW schema_migrations AS SELECT toUInt32(number + 1) AS version, \
             '' AS name, now() AS applied_at FROM system.numbers LIMIT {behind}"
        ),
    )
    .await;
    let database_url = fresh_database().await;
    let settings = test_settings(&database_url, &database);
    let app = spawn_with_settings(settings, database_url, database.clone()).await;
    app.create_shop("behind.myshopify.com").await;
    let event = serde_json::json!({ "eventType": "view", "videoId": "v" });

    // Act: an event is accepted while the migrations keep failing.
    let response = app.post_events("behind.myshopify.com", &event).await;
    assert_eq!(response.status(), reqwest::StatusCode::ACCEPTED);
    let landed = async || clickhouse_query(&database, "SELECT count() FROM events").await;

    // Assert: held back for as long as the schema is behind. Its batch is sealed (it would ship
    // at once otherwise); then, with the migrations' lock held here, a later run of them waits on
    // it, so every run until then has failed, and the event has not landed.
    let spool = &app.spool_dir;
    eventually(
        "the event's batch is sealed",
        Duration::from_secs(10),
        move || async move {
            let sealed = videoapp::ingest::spool::sealed_segments(spool).map(|s| s.len());
            sealed
                .as_ref()
                .is_ok_and(|n| *n > 0)
                .then_some(())
                .ok_or(sealed)
        },
    )
    .await;
    let mut lock = <sqlx::PgConnection as sqlx::Connection>::connect(&app.database_url)
        .await
        .unwrap();
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(videoapp::warehouse::migrations::LOCK_KEY)
        .execute(&mut lock)
        .await
        .unwrap();
    let db = &app.db;
    eventually(
        "a run of the migrations waits on their lock",
        Duration::from_secs(60),
        move || async move {
            let waiting = runs_waiting_on_the_lock(db).await;
            (waiting > 0).then_some(()).ok_or(waiting)
        },
    )
    .await;
    assert_eq!(landed().await.trim(), "0");
    assert!(spooled_segments(spool) > 0, "the event waits in the spool");

    // The ledger can record again: the waiting run of the migrations succeeds, and the event
    // ships. The view becomes a table while the lock is held, so that no run of them finds no
    // ledger in between (and makes one of its own).
    clickhouse_query(&database, "DROP TABLE schema_migrations").await;
    clickhouse_query(
        &database,
        &format!(
            "CREATE TABLE schema_migrations ENGINE = MergeTree ORDER BY version AS \
             SELECT toUInt32(number + 1) AS version, '' AS name, now() AS applied_at \
             FROM system.numbers LIMIT {behind}"
        ),
    )
    .await;
    sqlx::Connection::close(lock).await.unwrap();
    let landed = &landed;
    eventually(
        "the event landed once the schema was current",
        Duration::from_secs(60),
        move || async move {
            let count = landed().await;
            (count.trim() == "1").then_some(()).ok_or(count)
        },
    )
    .await;
}

/// Instances that start together migrate one at a time: the back-fills run once, so nothing is
/// counted twice.
#[tokio::test]
async fn instances_migrating_at_once_back_fill_each_row_once() {
    use videoapp::warehouse::migrations::apply_exclusively;

    // Arrange: the schema before attribution, with events in it; three "instances".
    let warehouse = fresh_warehouse();
    let all = videoapp::warehouse::migrations::MIGRATIONS;
    let before = all.iter().position(|m| m.version == 7).unwrap();
    apply(&warehouse, &all[..before]).await.unwrap();
    let database = warehouse.database().to_string();
    clickhouse_query(&database, &insert_events(0, 2_000)).await;
    let pool = migrated_postgres().await;

    // Act
    let (a, b, c) = tokio::join!(
        apply_exclusively(&pool, &warehouse, all),
        apply_exclusively(&pool, &warehouse, all),
        apply_exclusively(&pool, &warehouse, all),
    );

    // Assert: one of them applied the files, the others found them applied.
    let mut applied: Vec<usize> = [a, b, c].into_iter().map(|r| r.unwrap().len()).collect();
    applied.sort();
    assert_eq!(applied, [0, 0, all.len() - before]);
    for (table, keys) in [
        ("video_daily", "shop_domain, local_date, video_id"),
        ("shop_daily", "shop_domain, local_date"),
    ] {
        let [held, recount] = aggregate_and_recount(&database, table, keys, keys, "").await;
        assert_eq!(held, recount, "{table}");
    }
}

/// A migration may rewrite aggregates, so every shop's analytics version moves when one applies
/// (cached answers computed before it are not served after), and only then.
#[tokio::test]
async fn applying_a_migration_moves_every_shops_analytics_version() {
    use videoapp::warehouse::migrations::apply_exclusively;

    // Arrange
    let warehouse = fresh_warehouse();
    let pool = migrated_postgres().await;
    for shop in ["one.myshopify.com", "two.myshopify.com"] {
        sqlx::query("INSERT INTO shops (domain, name) VALUES ($1, $1)")
            .bind(shop)
            .execute(&pool)
            .await
            .unwrap();
    }
    let versions = async || -> Vec<i64> {
        sqlx::query_scalar("SELECT analytics_version FROM shops ORDER BY domain")
            .fetch_all(&pool)
            .await
            .unwrap()
    };
    apply_exclusively(&pool, &warehouse, &[FIRST])
        .await
        .unwrap();
    let before = versions().await;

    // Act
    let nothing_new = apply_exclusively(&pool, &warehouse, &[FIRST])
        .await
        .unwrap();
    let after_nothing = versions().await;
    let second = apply_exclusively(&pool, &warehouse, &[FIRST, SECOND])
        .await
        .unwrap();

    // Assert
    assert!(nothing_new.is_empty());
    assert_eq!(after_nothing, before, "nothing applied, nothing moved");
    assert_eq!(second, [2]);
    let moved: Vec<i64> = before.iter().map(|v| v + 1).collect();
    assert_eq!(versions().await, moved);
}
