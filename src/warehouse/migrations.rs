//! The ClickHouse schema migration runner: creates the database, then applies the numbered files
//! of `clickhouse/` that the ledger does not list yet, in order, recording each.

use clickhouse::sql::Identifier;
use sqlx::{Connection, PgPool};

use super::cluster::{Cluster, Column, Step, UnknownShape, LOCAL_SUFFIX};
use super::Warehouse;

pub struct Migration {
    pub version: u32,
    pub name: &'static str,
    pub sql: &'static str,
}

/// A migration from its version and its file in `clickhouse/`.
macro_rules! migration {
    ($version:literal, $name:literal) => {
        Migration {
            version: $version,
            name: $name,
            sql: include_str!(concat!("../../clickhouse/", $name)),
        }
    };
}

/// The files of `clickhouse/`, in order. A unit test checks this list against the directory.
pub const MIGRATIONS: &[Migration] = &[
    migration!(1, "0001_events.sql"),
    migration!(2, "0002_daily_views.sql"),
    migration!(3, "0003_monthly_views.sql"),
    migration!(4, "0004_video_monthly_backfill.sql"),
    migration!(5, "0005_widget_monthly_backfill.sql"),
    migration!(6, "0006_event_products.sql"),
    migration!(7, "0007_attribution.sql"),
    migration!(8, "0008_video_daily_attribution_backfill.sql"),
    migration!(9, "0009_widget_daily_attribution_backfill.sql"),
    migration!(10, "0010_video_monthly_attribution_backfill.sql"),
    migration!(11, "0011_widget_monthly_attribution_backfill.sql"),
    migration!(12, "0012_shop_daily_backfill.sql"),
    migration!(13, "0013_video_daily_by_video_backfill.sql"),
    migration!(14, "0014_video_yearly.sql"),
    migration!(15, "0015_video_yearly_backfill.sql"),
    migration!(16, "0016_watching_and_dimensions.sql"),
    migration!(17, "0017_shop_daily_by_dimension_backfill.sql"),
    migration!(18, "0018_widget_daily_by_dimension_backfill.sql"),
    migration!(19, "0019_video_daily_by_dimension_backfill.sql"),
    migration!(20, "0020_video_monthly_by_dimension_backfill.sql"),
    migration!(21, "0021_video_yearly_by_dimension_backfill.sql"),
    migration!(22, "0022_shop_daily_by_dimensions_backfill.sql"),
    migration!(23, "0023_video_daily_by_dimensions_backfill.sql"),
    migration!(24, "0024_widget_daily_by_dimensions_backfill.sql"),
    migration!(25, "0025_holdout.sql"),
];

const LEDGER_CREATE_SQL: &str = include_str!("../../sql/00_ledger_create.sql");
const LEDGER_APPLIED_SQL: &str = include_str!("../../sql/01_ledger_applied.sql");
const LEDGER_RECORD_SQL: &str = include_str!("../../sql/02_ledger_record.sql");
const COLUMN_EXISTS_SQL: &str = include_str!("../../sql/04_column_exists.sql");
const CLUSTER_NODES_SQL: &str = include_str!("../../sql/05_cluster_nodes.sql");
const TABLE_COLUMNS_SQL: &str = include_str!("../../sql/06_table_columns.sql");
const TABLE_EXISTS_SQL: &str = include_str!("../../sql/07_table_exists.sql");

#[derive(Debug, thiserror::Error)]
pub enum MigrationError {
    #[error("ClickHouse: {0}")]
    ClickHouse(#[from] clickhouse::error::Error),
    #[error("Postgres (the migration lock): {0}")]
    Lock(#[from] sqlx::Error),
    #[error("Postgres (recording that every shop's numbers changed): {0}")]
    Versions(sqlx::Error),
    #[error("ClickHouse knows no cluster named {0:?} (CLICKHOUSE_CLUSTER): see remote_servers in the servers' configuration")]
    NoSuchCluster(String),
    #[error(transparent)]
    NoClusterForm(#[from] UnknownShape),
    #[error("ClickHouse migration {name}, statement {index}: {source}")]
    Statement {
        name: &'static str,
        index: usize,
        source: clickhouse::error::Error,
    },
}

/// The statements of one file: split at `;` that ends a line, comment-only lines dropped.
pub fn statements(sql: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    for line in sql.lines() {
        if line.trim_start().starts_with("--") {
            continue;
        }
        let trimmed = line.trim_end();
        if let Some(body) = trimmed.strip_suffix(';') {
            current.push_str(body);
            push_statement(&mut out, &mut current);
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    push_statement(&mut out, &mut current);
    out
}

fn push_statement(out: &mut Vec<String>, current: &mut String) {
    let statement = current.trim();
    if !statement.is_empty() {
        out.push(statement.to_string());
    }
    current.clear();
}

/// The table and column of `ALTER TABLE t [ON CLUSTER c] ADD COLUMN x …` (`t` without its
/// database). 18.16 knows no `IF NOT EXISTS` for a column, so the runner asks whether it exists:
/// a file interrupted after such a statement can then be applied again, like every other
/// statement here.
fn added_column(statement: &str) -> Option<(&str, &str)> {
    let mut words: Vec<&str> = statement.split_whitespace().take(9).collect();
    if words.len() > 5
        && words[3].eq_ignore_ascii_case("ON")
        && words[4].eq_ignore_ascii_case("CLUSTER")
    {
        words.drain(3..6);
    }
    match words.get(..6)? {
        [alter, table_kw, table, add, column_kw, column]
            if alter.eq_ignore_ascii_case("ALTER")
                && table_kw.eq_ignore_ascii_case("TABLE")
                && add.eq_ignore_ascii_case("ADD")
                && column_kw.eq_ignore_ascii_case("COLUMN") =>
        {
            let table = table.rsplit_once('.').map_or(*table, |(_, name)| name);
            Some((table, *column))
        }
        _ => None,
    }
}

async fn column_exists(
    warehouse: &Warehouse,
    table: &str,
    column: &str,
) -> Result<bool, clickhouse::error::Error> {
    let found: u64 = warehouse
        .client()
        .query(COLUMN_EXISTS_SQL)
        .bind(warehouse.database())
        .bind(table)
        .bind(column)
        .fetch_one()
        .await?;
    Ok(found > 0)
}

/// The Postgres advisory lock under which [`apply_exclusively`] runs.
pub const LOCK_KEY: i64 = 0x7669_6465_6f61_7070; // "videoapp"

/// [`apply`], one process at a time among all that share the catalog database (every instance
/// of the service, `videoapp migrate`): the ledger is read under the lock, so a back-fill, which
/// would count its rows again if run twice, runs once.
pub async fn apply_exclusively(
    pool: &PgPool,
    warehouse: &Warehouse,
    migrations: &[Migration],
) -> Result<Vec<u32>, MigrationError> {
    // A connection of its own, closed at the end: closing releases the lock whatever happened.
    let mut connection = pool.acquire().await?.detach();
    sqlx::query("SELECT pg_advisory_lock($1)")
        .bind(LOCK_KEY)
        .execute(&mut connection)
        .await?;
    let mut applied = apply(warehouse, migrations).await;
    // A migration may have rewritten aggregates (a back-fill): answers cached before it are
    // stale. Recorded under the lock, so no instance serves from the old schema's numbers after.
    if applied.as_ref().is_ok_and(|versions| !versions.is_empty()) {
        if let Err(e) = crate::catalog::shops::every_number_may_have_changed(&mut connection).await
        {
            applied = Err(MigrationError::Versions(e));
        }
    }
    if let Err(e) = connection.close().await {
        tracing::warn!(error = %e, "closing the migration lock's connection failed");
    }
    applied
}

/// Applies `migrations` that are not yet recorded. Safe to run again: every statement is
/// `IF NOT EXISTS` (and a column is added only if missing), and the ledger is read with
/// `DISTINCT`. Not safe beside another run: see [`apply_exclusively`].
pub async fn apply(
    warehouse: &Warehouse,
    migrations: &[Migration],
) -> Result<Vec<u32>, MigrationError> {
    let client = warehouse.client();
    // On a cluster each DDL statement waits for every node: made once, so that an instance
    // starting while a node is down (with nothing to migrate) does not wait on it.
    if warehouse.cluster().is_none() || !ledger_exists(warehouse).await? {
        create_database(warehouse).await?;
        for (_, step) in file_steps(warehouse.cluster(), LEDGER_CREATE_SQL)? {
            run(warehouse, &step).await?;
        }
    }
    let applied: Vec<u32> = client.query(LEDGER_APPLIED_SQL).fetch_all().await?;
    let mut newly_applied = Vec::new();
    for migration in migrations {
        if applied.contains(&migration.version) {
            continue;
        }
        for (index, step) in file_steps(warehouse.cluster(), migration.sql)? {
            if let Step::Sql(sql) = &step {
                if let Some((table, column)) = added_column(sql) {
                    if column_exists(warehouse, table, column).await? {
                        continue;
                    }
                }
            }
            run(warehouse, &step)
                .await
                .map_err(|source| MigrationError::Statement {
                    name: migration.name,
                    index: index + 1,
                    source,
                })?;
        }
        client
            .query(LEDGER_RECORD_SQL)
            .bind(migration.version)
            .bind(migration.name)
            .execute()
            .await?;
        tracing::info!(
            version = migration.version,
            name = migration.name,
            "applied ClickHouse migration"
        );
        newly_applied.push(migration.version);
    }
    Ok(newly_applied)
}

/// Whether the node the service talks to holds the migration ledger.
async fn ledger_exists(warehouse: &Warehouse) -> Result<bool, clickhouse::error::Error> {
    let found: u64 = warehouse
        .server
        .query(TABLE_EXISTS_SQL)
        .bind(warehouse.database())
        .bind("schema_migrations")
        .fetch_one()
        .await?;
    Ok(found > 0)
}

/// The service's database, on every node of the cluster if there is one (which must exist).
async fn create_database(warehouse: &Warehouse) -> Result<(), MigrationError> {
    let Some(cluster) = warehouse.cluster() else {
        warehouse
            .server
            .query("CREATE DATABASE IF NOT EXISTS ?")
            .bind(Identifier(warehouse.database()))
            .execute()
            .await?;
        return Ok(());
    };
    let nodes: u64 = warehouse
        .server
        .query(CLUSTER_NODES_SQL)
        .bind(&cluster.name)
        .fetch_one()
        .await?;
    if nodes == 0 {
        return Err(MigrationError::NoSuchCluster(cluster.name.clone()));
    }
    warehouse
        .server
        .query(&cluster.create_database())
        .execute()
        .await?;
    Ok(())
}

/// Runs one step of a migration.
async fn run(warehouse: &Warehouse, step: &Step) -> Result<(), clickhouse::error::Error> {
    let client = warehouse.client();
    let statements = match (step, warehouse.cluster()) {
        (Step::Sql(sql), _) => vec![sql.clone()],
        (Step::Distributed(name), Some(cluster)) => {
            let local = format!("{name}{LOCAL_SUFFIX}");
            let columns: Vec<Column> = client
                .query(TABLE_COLUMNS_SQL)
                .bind(warehouse.database())
                .bind(&local)
                .fetch_all()
                .await?;
            cluster.distributed(name, &columns).into()
        }
        (Step::Distributed(_), None) => unreachable!("only a cluster form has Distributed steps"),
    };
    for sql in statements {
        // `?` is the crate's bind marker; schema files have no parameters, so escape it.
        client.query(&sql.replace('?', "??")).execute().await?;
    }
    Ok(())
}

/// The statements of the ledger and of every migration, by file, as [`apply`] runs them on one
/// server (`None`) or on `cluster`.
pub fn schema(cluster: Option<&Cluster>) -> Result<Vec<(&'static str, Vec<Step>)>, UnknownShape> {
    let ledger = ("schema_migrations (the ledger)", LEDGER_CREATE_SQL);
    let files = std::iter::once(ledger).chain(MIGRATIONS.iter().map(|m| (m.name, m.sql)));
    files
        .map(|(name, sql)| {
            let steps = file_steps(cluster, sql)?;
            Ok((name, steps.into_iter().map(|(_, step)| step).collect()))
        })
        .collect()
}

/// The steps of one file, each with the index of its statement: the statements themselves on
/// one server, their cluster form on `cluster`. A `Distributed` table altered several times in
/// a file is made again once, after its last change: each time, instances that use it meanwhile
/// see it missing.
fn file_steps(cluster: Option<&Cluster>, sql: &str) -> Result<Vec<(usize, Step)>, UnknownShape> {
    let mut steps = Vec::new();
    for (index, statement) in statements(sql).into_iter().enumerate() {
        match cluster {
            None => steps.push((index, Step::Sql(statement))),
            Some(cluster) => {
                let rewritten = cluster.rewrite(&statement)?;
                steps.extend(rewritten.into_iter().map(|step| (index, step)));
            }
        }
    }
    let remade_later = |at: usize, table: &str| {
        steps[at + 1..]
            .iter()
            .any(|(_, later)| matches!(later, Step::Distributed(t) if t == table))
    };
    let keep: Vec<bool> = (0..steps.len())
        .map(|at| !matches!(&steps[at].1, Step::Distributed(t) if remade_later(at, t)))
        .collect();
    Ok(steps
        .into_iter()
        .zip(keep)
        .filter_map(|(step, keep)| keep.then_some(step))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_split_at_line_final_semicolons_and_skip_comments() {
        let sql = "-- a comment; not a statement\nCREATE TABLE a (x UInt8)\nENGINE = Memory;\n\nSELECT ';'\n;\nSELECT 2";
        assert_eq!(
            statements(sql),
            vec![
                "CREATE TABLE a (x UInt8)\nENGINE = Memory",
                "SELECT ';'",
                "SELECT 2"
            ]
        );
    }

    #[test]
    fn added_columns_are_recognised_in_any_case_and_layout() {
        assert_eq!(
            added_column("ALTER TABLE events ADD COLUMN product_ids Array(String)"),
            Some(("events", "product_ids"))
        );
        assert_eq!(
            added_column("alter table events\n    add column x UInt8 AFTER y"),
            Some(("events", "x"))
        );
        assert_eq!(
            added_column("ALTER TABLE db.events_local ON CLUSTER c ADD COLUMN x UInt8"),
            Some(("events_local", "x"))
        );
        assert_eq!(added_column("ALTER TABLE events DROP COLUMN x"), None);
        assert_eq!(added_column("ALTER TABLE events"), None);
        assert_eq!(added_column("CREATE TABLE IF NOT EXISTS t (x UInt8)"), None);
    }

    #[test]
    fn a_distributed_table_altered_several_times_in_a_file_is_made_again_once() {
        let cluster = Cluster {
            name: "c".into(),
            database: "d".into(),
        };
        let sql = "ALTER TABLE t ADD COLUMN a UInt8;\nALTER TABLE t ADD COLUMN b UInt8;\nALTER TABLE u ADD COLUMN a UInt8;";
        let steps: Vec<(usize, Step)> = file_steps(Some(&cluster), sql).unwrap();
        let sql = |text: &str| Step::Sql(text.to_string());
        assert_eq!(
            steps,
            vec![
                (
                    0,
                    sql("ALTER TABLE d.t_local ON CLUSTER c ADD COLUMN a UInt8")
                ),
                (
                    1,
                    sql("ALTER TABLE d.t_local ON CLUSTER c ADD COLUMN b UInt8")
                ),
                (1, Step::Distributed("t".into())),
                (
                    2,
                    sql("ALTER TABLE d.u_local ON CLUSTER c ADD COLUMN a UInt8")
                ),
                (2, Step::Distributed("u".into())),
            ]
        );
    }

    #[test]
    fn the_migration_list_matches_the_clickhouse_directory() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/clickhouse");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|name| name.ends_with(".sql"))
            .collect();
        files.sort();
        let listed: Vec<&str> = MIGRATIONS.iter().map(|m| m.name).collect();
        assert_eq!(
            files, listed,
            "every clickhouse/*.sql must be listed in MIGRATIONS, in order"
        );
        for (i, m) in MIGRATIONS.iter().enumerate() {
            assert_eq!(m.version as usize, i + 1, "{} is out of sequence", m.name);
            assert!(
                m.name.starts_with(&format!("{:04}_", m.version)),
                "{}",
                m.name
            );
        }
    }
}
