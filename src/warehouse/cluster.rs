//! The schema on a ClickHouse cluster (`CLICKHOUSE_CLUSTER`): the statements of `clickhouse/`,
//! written for one server, rewritten into what does the same on every node.
//!
//! - A table with a `shop_domain` column becomes `<name>_local`, a `Replicated*MergeTree` on every
//!   node (replicas of a shard share its ZooKeeper path), and `<name>`, a `Distributed` table over
//!   them that sends each row to the shard of its shop. Since every such table shards by the same
//!   key, a shop's raw events and all its aggregates live on one shard, and a materialized view
//!   (reading `events_local`, writing `<aggregate>_local`) never needs another node.
//! - A table without `shop_domain` (the migration ledger) is replicated whole to every node.
//! - Every query of the service reads and writes the unsuffixed names, which are the
//!   `Distributed` tables here and the tables themselves on one server: one text serves both.
//!
//! DDL runs `ON CLUSTER`, so each statement waits until every node has applied it. Names are
//! qualified with the database: a node runs distributed DDL in its own default database.

/// What every sharded table is sharded by: its shop.
pub const SHARDING_KEY: &str = "cityHash64(shop_domain)";

/// The suffix of the tables that hold a node's own rows.
pub const LOCAL_SUFFIX: &str = "_local";

/// One step of a statement's cluster form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A statement to run as it is.
    Sql(String),
    /// (Re)make the `Distributed` table `name` over `name_local` with the node table's columns
    /// as they are now: see [`Cluster::distributed`].
    Distributed(String),
}

impl std::fmt::Display for Step {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Step::Sql(sql) => f.write_str(sql),
            Step::Distributed(name) => write!(
                f,
                "-- the Distributed table {name} over {name}{LOCAL_SUFFIX}, with its columns as they are now"
            ),
        }
    }
}

/// A column of a node table, as `system.columns` describes it.
#[derive(Debug, Clone, PartialEq, Eq, clickhouse::Row, serde::Deserialize)]
pub struct Column {
    pub name: String,
    #[serde(rename = "type")]
    pub type_: String,
    /// '', DEFAULT, MATERIALIZED or ALIAS.
    pub default_kind: String,
    pub default_expression: String,
}

/// Where a cluster's tables are: its name and the service's database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    pub name: String,
    pub database: String,
}

/// A migration statement of a shape the rewrite does not know (a new kind of migration must
/// teach it here first, or the cluster would silently differ from a single server).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no cluster form for a statement that begins {0:?}")]
pub struct UnknownShape(pub String);

impl Cluster {
    /// `CREATE DATABASE` on every node.
    pub fn create_database(&self) -> String {
        format!(
            "CREATE DATABASE IF NOT EXISTS {} ON CLUSTER {}",
            self.database, self.name
        )
    }

    /// `DROP DATABASE` on every node.
    pub fn drop_database(&self) -> String {
        format!(
            "DROP DATABASE IF EXISTS {} ON CLUSTER {}",
            self.database, self.name
        )
    }

    /// The statements that do on the cluster what `statement` does on one server.
    pub fn rewrite(&self, statement: &str) -> Result<Vec<Step>, UnknownShape> {
        let words: Vec<&str> = statement.split_whitespace().take(6).collect();
        let upper: Vec<String> = words.iter().map(|w| w.to_ascii_uppercase()).collect();
        let upper: Vec<&str> = upper.iter().map(String::as_str).collect();
        match upper.as_slice() {
            ["CREATE", "TABLE", "IF", "NOT", "EXISTS", ..] => {
                self.create_table(statement, words[5])
            }
            ["CREATE", "MATERIALIZED", "VIEW", "IF", "NOT", "EXISTS"] => {
                self.create_view(statement)
            }
            ["ALTER", "TABLE", ..] => Ok(self.alter_table(statement, words[2])),
            ["DROP", "TABLE", "IF", "EXISTS", ..] => Ok(self.drop_table(words[4])),
            // Through the Distributed tables, synchronously: rows reach the shard of their shop.
            ["INSERT", "INTO", ..] => Ok(vec![Step::Sql(statement.to_string())]),
            _ => Err(UnknownShape(words.join(" "))),
        }
    }

    fn qualified(&self, table: &str) -> String {
        format!("{}.{}", self.database, table)
    }

    fn local(&self, table: &str) -> String {
        self.qualified(&format!("{table}{LOCAL_SUFFIX}"))
    }

    /// `CREATE TABLE IF NOT EXISTS name (columns) ENGINE = Engine …`.
    fn create_table(&self, statement: &str, name: &str) -> Result<Vec<Step>, UnknownShape> {
        let unknown = || UnknownShape(statement.chars().take(60).collect());
        let body = statement
            .find('(')
            .map(|at| &statement[at..])
            .ok_or_else(unknown)?;
        let engine_at = body.find("ENGINE = ").ok_or_else(unknown)? + "ENGINE = ".len();
        let (columns, engine_and_rest) = body.split_at(engine_at);
        let engine_end = engine_and_rest
            .find(|c: char| !c.is_ascii_alphanumeric())
            .unwrap_or(engine_and_rest.len());
        let (engine, rest) = engine_and_rest.split_at(engine_end);
        if !engine.ends_with("MergeTree") || rest.trim_start().starts_with('(') {
            return Err(unknown());
        }
        let sharded = columns
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .any(|word| word == "shop_domain");
        if !sharded {
            // Every node holds all of it: one ZooKeeper path for the whole cluster.
            let path = format!("/clickhouse/tables/all/{}/{name}", self.database);
            return Ok(vec![Step::Sql(format!(
                "CREATE TABLE IF NOT EXISTS {} ON CLUSTER {} {columns}Replicated{engine}('{path}', '{{shard}}-{{replica}}'){rest}",
                self.qualified(name),
                self.name,
            ))]);
        }
        let path = format!(
            "/clickhouse/tables/{{shard}}/{}/{name}{LOCAL_SUFFIX}",
            self.database
        );
        Ok(vec![
            Step::Sql(format!(
                "CREATE TABLE IF NOT EXISTS {} ON CLUSTER {} {columns}Replicated{engine}('{path}', '{{replica}}'){rest}",
                self.local(name),
                self.name,
            )),
            Step::Distributed(name.to_string()),
        ])
    }

    /// `CREATE MATERIALIZED VIEW IF NOT EXISTS view TO target AS SELECT … FROM source …`: on
    /// every node, from the node's own source rows into its own target table.
    fn create_view(&self, statement: &str) -> Result<Vec<Step>, UnknownShape> {
        let unknown = || UnknownShape(statement.chars().take(60).collect());
        let words: Vec<&str> = statement.split_whitespace().take(10).collect();
        let [.., view, to, target, as_] = words[..] else {
            return Err(unknown());
        };
        if words.len() != 10 || !to.eq_ignore_ascii_case("TO") || !as_.eq_ignore_ascii_case("AS") {
            return Err(unknown());
        }
        let select_at = end_of(statement, as_);
        let select = local_sources(&statement[select_at..], |source| self.local(source))
            .ok_or_else(unknown)?;
        Ok(vec![Step::Sql(format!(
            "CREATE MATERIALIZED VIEW IF NOT EXISTS {} ON CLUSTER {} TO {} AS{select}",
            self.qualified(view),
            self.name,
            self.local(target),
        ))])
    }

    /// `ALTER TABLE name …`: a column is added to the node tables, and the `Distributed` table
    /// (whose columns are its own) made again over them, since 18.16 alters on a cluster only
    /// replicated tables; a mutation (`DELETE`, `UPDATE`) changes the node tables.
    fn alter_table(&self, statement: &str, name: &str) -> Vec<Step> {
        let rest = &statement[end_of(statement, name)..];
        let first = rest.split_whitespace().next().unwrap_or_default();
        let on_nodes = Step::Sql(format!(
            "ALTER TABLE {} ON CLUSTER {}{rest}",
            self.local(name),
            self.name
        ));
        if first.eq_ignore_ascii_case("DELETE") || first.eq_ignore_ascii_case("UPDATE") {
            return vec![on_nodes];
        }
        vec![on_nodes, Step::Distributed(name.to_string())]
    }

    /// The statements that (re)make the `Distributed` table `name` over `name_local`, whose
    /// columns are `columns`. A `MATERIALIZED` column is an `ALIAS` there: computed when read,
    /// never sent. (18.16 refuses a row that carries a value for a node table's `MATERIALIZED`
    /// column, and a `Distributed` table that had one would send it.)
    pub fn distributed(&self, name: &str, columns: &[Column]) -> [String; 2] {
        let columns: Vec<String> = columns
            .iter()
            .map(|c| match c.default_kind.as_str() {
                "" => format!("{} {}", c.name, c.type_),
                "MATERIALIZED" => format!("{} {} ALIAS {}", c.name, c.type_, c.default_expression),
                kind => format!("{} {} {kind} {}", c.name, c.type_, c.default_expression),
            })
            .collect();
        [
            format!(
                "DROP TABLE IF EXISTS {} ON CLUSTER {}",
                self.qualified(name),
                self.name
            ),
            format!(
                "CREATE TABLE {} ON CLUSTER {} ({}) ENGINE = Distributed({}, {}, {name}{LOCAL_SUFFIX}, {SHARDING_KEY})",
                self.qualified(name),
                self.name,
                columns.join(", "),
                self.name,
                self.database,
            ),
        ]
    }

    /// `DROP TABLE IF EXISTS name`: whichever of its cluster forms exist (a view has one).
    fn drop_table(&self, name: &str) -> Vec<Step> {
        [self.qualified(name), self.local(name)]
            .into_iter()
            .map(|table| {
                Step::Sql(format!(
                    "DROP TABLE IF EXISTS {table} ON CLUSTER {}",
                    self.name
                ))
            })
            .collect()
    }
}

/// The offset just past `word`, a slice of `statement`.
fn end_of(statement: &str, word: &str) -> usize {
    word.as_ptr() as usize - statement.as_ptr() as usize + word.len()
}

/// `select` with the table after each `FROM` replaced by `local(table)`; `None` for a select
/// this cannot rewrite safely: a `JOIN` (its table would be read across nodes; an `ARRAY JOIN`
/// reads no table and is kept), or a `FROM` not followed by a plain table name (a subquery, a
/// qualified name).
fn local_sources(select: &str, local: impl Fn(&str) -> String) -> Option<String> {
    let without_array_joins = select
        .to_ascii_uppercase()
        .replace("ARRAY JOIN", "ARRAY_JOIN");
    if find_word(&without_array_joins, "JOIN").is_some() {
        return None;
    }
    let mut out = String::with_capacity(select.len() + 64);
    let mut rest = select;
    while let Some(at) = find_word(rest, "FROM") {
        let after = &rest[at + "FROM".len()..];
        let name_start = after.len() - after.trim_start().len();
        let name_len = after[name_start..]
            .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
            .unwrap_or(after.len() - name_start);
        let next = after[name_start + name_len..].chars().next();
        if name_len == 0 || next == Some('.') {
            return None;
        }
        out.push_str(&rest[..at + "FROM".len()]);
        out.push_str(&after[..name_start]);
        out.push_str(&local(&after[name_start..name_start + name_len]));
        rest = &after[name_start + name_len..];
    }
    out.push_str(rest);
    Some(out)
}

/// Where `word` stands alone in `text` (any case).
fn find_word(text: &str, word: &str) -> Option<usize> {
    let upper = text.to_ascii_uppercase();
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut from = 0;
    while let Some(found) = upper[from..].find(word) {
        let at = from + found;
        let before = upper[..at].chars().next_back();
        let after = upper[at + word.len()..].chars().next();
        if !before.is_some_and(is_name) && !after.is_some_and(is_name) {
            return Some(at);
        }
        from = at + word.len();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::warehouse::migrations::{statements, MIGRATIONS};

    fn sql(text: &str) -> Step {
        Step::Sql(text.to_string())
    }

    fn cluster() -> Cluster {
        Cluster {
            name: "videoapp".into(),
            database: "shop_data".into(),
        }
    }

    #[test]
    fn a_table_of_shops_becomes_replicated_node_tables_under_a_distributed_one() {
        let statement = "CREATE TABLE IF NOT EXISTS video_daily\n(\n    shop_domain String,\n    views UInt64\n)\nENGINE = SummingMergeTree\nPARTITION BY toYYYYMM(local_date)\nORDER BY (shop_domain, video_id)";
        assert_eq!(
            cluster().rewrite(statement).unwrap(),
            vec![
                sql("CREATE TABLE IF NOT EXISTS shop_data.video_daily_local ON CLUSTER videoapp (\n    shop_domain String,\n    views UInt64\n)\nENGINE = ReplicatedSummingMergeTree('/clickhouse/tables/{shard}/shop_data/video_daily_local', '{replica}')\nPARTITION BY toYYYYMM(local_date)\nORDER BY (shop_domain, video_id)"),
                Step::Distributed("video_daily".into()),
            ]
        );
    }

    #[test]
    fn a_table_without_shops_is_replicated_whole_to_every_node() {
        let statement = "CREATE TABLE IF NOT EXISTS schema_migrations\n(\n    version UInt32\n)\nENGINE = MergeTree\nORDER BY version";
        assert_eq!(
            cluster().rewrite(statement).unwrap(),
            vec![sql("CREATE TABLE IF NOT EXISTS shop_data.schema_migrations ON CLUSTER videoapp (\n    version UInt32\n)\nENGINE = ReplicatedMergeTree('/clickhouse/tables/all/shop_data/schema_migrations', '{shard}-{replica}')\nORDER BY version")]
        );
    }

    #[test]
    fn a_view_reads_and_writes_the_nodes_own_tables() {
        let statement = "CREATE MATERIALIZED VIEW IF NOT EXISTS video_daily_mv TO video_daily AS\nSELECT shop_domain, count() AS views\nFROM events\nWHERE event_type != 'view_from'\nGROUP BY shop_domain";
        assert_eq!(
            cluster().rewrite(statement).unwrap(),
            vec![sql("CREATE MATERIALIZED VIEW IF NOT EXISTS shop_data.video_daily_mv ON CLUSTER videoapp TO shop_data.video_daily_local AS\nSELECT shop_domain, count() AS views\nFROM shop_data.events_local\nWHERE event_type != 'view_from'\nGROUP BY shop_domain")]
        );
    }

    #[test]
    fn a_column_is_added_to_the_nodes_and_seen_through_the_distributed_table_and_a_mutation_changes_the_nodes(
    ) {
        assert_eq!(
            cluster()
                .rewrite("ALTER TABLE events ADD COLUMN x UInt8 AFTER y")
                .unwrap(),
            vec![
                sql("ALTER TABLE shop_data.events_local ON CLUSTER videoapp ADD COLUMN x UInt8 AFTER y"),
                Step::Distributed("events".into()),
            ]
        );
        assert_eq!(
            cluster()
                .rewrite("ALTER TABLE events DELETE WHERE shop_domain = ?")
                .unwrap(),
            vec![sql("ALTER TABLE shop_data.events_local ON CLUSTER videoapp DELETE WHERE shop_domain = ?")]
        );
    }

    #[test]
    fn drops_reach_every_node_and_inserts_go_through_the_distributed_tables() {
        assert_eq!(
            cluster()
                .rewrite("DROP TABLE IF EXISTS video_daily_mv")
                .unwrap(),
            vec![
                sql("DROP TABLE IF EXISTS shop_data.video_daily_mv ON CLUSTER videoapp"),
                sql("DROP TABLE IF EXISTS shop_data.video_daily_mv_local ON CLUSTER videoapp"),
            ]
        );
        let insert = "INSERT INTO video_daily SELECT * FROM events";
        assert_eq!(cluster().rewrite(insert).unwrap(), vec![sql(insert)]);
    }

    #[test]
    fn a_distributed_table_reads_a_materialized_column_as_an_alias_and_never_sends_it() {
        let column = |name: &str, kind: &str, expression: &str| Column {
            name: name.into(),
            type_: "Int64".into(),
            default_kind: kind.into(),
            default_expression: expression.into(),
        };
        let columns = [
            column("revenue_e4", "", ""),
            column("order_revenue_e4", "MATERIALIZED", "if(x, revenue_e4, 0)"),
            column("fee", "DEFAULT", "0"),
        ];
        assert_eq!(
            cluster().distributed("events", &columns),
            [
                "DROP TABLE IF EXISTS shop_data.events ON CLUSTER videoapp".to_string(),
                "CREATE TABLE shop_data.events ON CLUSTER videoapp (revenue_e4 Int64, order_revenue_e4 Int64 ALIAS if(x, revenue_e4, 0), fee Int64 DEFAULT 0) ENGINE = Distributed(videoapp, shop_data, events_local, cityHash64(shop_domain))".to_string(),
            ]
        );
    }

    /// An `ARRAY JOIN` reads the row's own arrays, no table: the view reads its node's events.
    #[test]
    fn a_view_with_an_array_join_reads_the_nodes_own_events() {
        let view = "CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS SELECT d, count() AS n \
                    FROM events ARRAY JOIN ['a', 'b'] AS d GROUP BY d";
        assert_eq!(
            cluster().rewrite(view).unwrap(),
            [sql("CREATE MATERIALIZED VIEW IF NOT EXISTS shop_data.v ON CLUSTER videoapp TO shop_data.t_local AS SELECT d, count() AS n FROM shop_data.events_local ARRAY JOIN ['a', 'b'] AS d GROUP BY d")]
        );
    }

    #[test]
    fn a_statement_of_an_unknown_shape_is_refused() {
        assert!(cluster().rewrite("RENAME TABLE a TO b").is_err());
        for select in [
            "SELECT x FROM (SELECT x FROM events)",
            "SELECT x FROM other.events",
            "SELECT x FROM events AS e JOIN videos AS v ON e.id = v.id",
            "SELECT x FROM events ARRAY JOIN a AS y JOIN videos AS v ON x = v.id",
        ] {
            let view = format!("CREATE MATERIALIZED VIEW IF NOT EXISTS v TO t AS {select}");
            assert!(cluster().rewrite(&view).is_err(), "{select}");
        }
        assert!(cluster()
            .rewrite("CREATE TABLE IF NOT EXISTS t (shop_domain String) ENGINE = Memory")
            .is_err());
        assert!(cluster()
            .rewrite(
                "CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = ReplacingMergeTree(x) ORDER BY x"
            )
            .is_err());
    }

    #[test]
    fn every_migration_has_a_cluster_form() {
        for migration in MIGRATIONS {
            for statement in statements(migration.sql) {
                let rewritten = cluster().rewrite(&statement);
                assert!(rewritten.is_ok(), "{}: {rewritten:?}", migration.name);
                for step in rewritten.unwrap() {
                    let Step::Sql(sql) = step else { continue };
                    if !sql.starts_with("INSERT") {
                        assert!(sql.contains(" ON CLUSTER videoapp"), "{sql}");
                    }
                    // No view may read or write another node's rows.
                    if sql.starts_with("CREATE MATERIALIZED VIEW") {
                        assert!(!sql.contains("FROM events\n"), "{sql}");
                        assert!(sql.contains("FROM shop_data.events_local"), "{sql}");
                    }
                }
            }
        }
    }
}
