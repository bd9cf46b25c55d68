//! Queries on the test ClickHouse server, and events and aggregates arranged in it directly.

use super::*;
use std::time::Duration;

/// Runs a query on the test ClickHouse server and returns its TSV output, trimmed.
pub async fn clickhouse_query(database: &str, sql: &str) -> String {
    let client = reqwest::Client::new();
    let output = try_clickhouse_query(&client, database, sql).await;
    output.unwrap_or_else(|e| panic!("{e}"))
}

/// [`clickhouse_query`] on `client`, saying what failed instead of panicking.
pub async fn try_clickhouse_query(
    client: &reqwest::Client,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let server = match database.starts_with(CLUSTER_DATABASE_PREFIX) {
        true => cluster_urls().swap_remove(0),
        false => clickhouse_url(),
    };
    try_clickhouse_query_on(client, &server, database, sql).await
}

/// `sql` in `database` on the ClickHouse server at `server`: its trimmed text, or why not.
pub async fn try_clickhouse_query_on(
    client: &reqwest::Client,
    server: &str,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let url = format!("{server}/?database={database}");
    let request = client.post(url).timeout(Duration::from_secs(600));
    let sent = request.body(sql.to_string()).send().await;
    let response = sent.map_err(|e| {
        format!("ClickHouse is not reachable ({e}); set VIDEOAPP_TEST_CLICKHOUSE_URL")
    })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    match status.is_success() {
        true => Ok(text.trim().to_string()),
        false => Err(format!("ClickHouse: {sql}: {status}: {}", text.trim())),
    }
}

/// A warehouse handle on `database` of the ClickHouse server (or cluster) at `url`, as the
/// default user.
pub fn warehouse_on(
    url: &str,
    database: &str,
    cluster: Option<&str>,
) -> videoapp::warehouse::Warehouse {
    videoapp::warehouse::Warehouse::new(&videoapp::config::ClickHouseConfig {
        url: url.to_string(),
        database: database.to_string(),
        user: "default".to_string(),
        password: Default::default(),
        cluster: cluster.map(String::from),
    })
}

/// The schema the service's migrations make, made once per test run in a database of its own:
/// its name, and the statements that make each of its tables (tables before the views that
/// write to them, each naming that database).
static SCHEMA: tokio::sync::OnceCell<(String, Vec<String>)> = tokio::sync::OnceCell::const_new();

/// Makes `database` on the test ClickHouse server in the migrations' current schema, with their
/// ledger full, as the service leaves a database it migrated. The migration runner makes the
/// schema once per run; each test's database is copied from it, table by table, which takes a
/// fraction of the time of its two hundred statements. (The runner itself is tested on fresh
/// databases: `clickhouse_migrations`.)
pub async fn migrated_clickhouse_database(database: &str) {
    let (schema, creates) = SCHEMA
        .get_or_init(|| async {
            let warehouse = fresh_warehouse();
            let migrations = videoapp::warehouse::migrations::MIGRATIONS;
            videoapp::warehouse::migrations::apply(&warehouse, migrations)
                .await
                .expect("the ClickHouse migrations apply to a fresh database");
            let schema = warehouse.database().to_string();
            let tables = format!(
                "SELECT create_table_query FROM system.tables WHERE database = '{schema}' \
                 ORDER BY engine = 'MaterializedView', name FORMAT JSONEachRow"
            );
            let answer = clickhouse_query("default", &tables).await;
            let creates = (answer.lines())
                .map(|line| {
                    let row: serde_json::Value = serde_json::from_str(line).expect("a row of JSON");
                    row["create_table_query"]
                        .as_str()
                        .expect("a statement")
                        .to_string()
                })
                .collect();
            (schema, creates)
        })
        .await;
    clickhouse_query("default", &format!("CREATE DATABASE {database}")).await;
    for create in creates {
        let create = create.replace(&format!("{schema}."), &format!("{database}."));
        clickhouse_query("default", &create).await;
    }
    let ledger = format!(
        "INSERT INTO {database}.schema_migrations SELECT * FROM {schema}.schema_migrations"
    );
    clickhouse_query("default", &ledger).await;
}

/// A warehouse handle on a fresh database of the test ClickHouse server (created by the
/// migration runner).
pub fn fresh_warehouse() -> videoapp::warehouse::Warehouse {
    warehouse_on(&clickhouse_url(), &fresh_clickhouse_database(), None)
}

/// `n` events from `first`: two shops, three videos and none, two widgets and none, every type
/// and attribution, over 45 days across three months, with revenue on carts too (which counts
/// nowhere: revenue is the orders'), in the columns of the schema before events said where, on
/// what and from where.
pub fn insert_events(first: u64, n: u64) -> String {
    events_insert(first, n, false)
}

/// [`insert_events`] in today's columns: watches too, every placement, device and source, a few
/// countries, and events that say none of them.
pub fn insert_watching_events(first: u64, n: u64) -> String {
    events_insert(first, n, true)
}

fn events_insert(first: u64, n: u64, watching: bool) -> String {
    let (columns, values, kinds) = match watching {
        false => ("", "", 5),
        true => (
            ", placement, device, country, source, watched_ms, max_percent",
            ", ['', 'home', 'product', 'collection', 'page', 'cart', 'other'][1 + number % 7], \
             ['', 'mobile', 'tablet', 'desktop'][1 + intDiv(number, 3) % 4], \
             ['', 'US', 'FR', 'ZZ'][1 + intDiv(number, 5) % 4], \
             ['', 'direct', 'search', 'social', 'email', 'paid', 'referral'][1 + intDiv(number, 2) % 7], \
             if(number % 6 = 5, (number * 37) % 90000, 0), if(number % 6 = 5, (number * 13) % 101, 0)",
            6,
        ),
    };
    format!(
        "INSERT INTO events (event_id, batch_id, shop_domain, local_date, event_time, received_at, \
         timestamp_replaced, event_type, attribution, video_id, widget_id, session_id, customer_id, \
         product_id, order_id, revenue_e4, currency{columns}) \
         SELECT toUUID('00000000-0000-0000-0000-000000000000'), \
           toUUID('00000000-0000-0000-0000-000000000000'), \
           if(number % 3 = 0, 'b.myshopify.com', 'a.myshopify.com'), \
           toDate('2026-01-20') + number % 45, now(), now(), 0, \
           ['impression', 'view', 'click', 'add_to_cart', 'checkout_completed', 'watch'][1 + number % {kinds}], \
           ['none', 'direct', 'influenced', 'direct', 'none', 'influenced', 'none'][1 + number % 7], \
           ['v0', 'v1', 'v2', ''][1 + number % 4], ['w0', 'w1', ''][1 + intDiv(number, 2) % 3], \
           '', '', '', '', (number * 7919) % 1000000, 'EUR'{values} \
         FROM system.numbers WHERE number >= {first} LIMIT {n}"
    )
}

/// How `events` is read to recount an aggregate of one dimension at a time: each event once
/// under each of its four dimensions.
pub const BY_DIMENSION: &str =
    " ARRAY JOIN ['placement', 'device', 'country', 'source'] AS dimension, \
     [toString(placement), toString(device), country, toString(source)] AS value";

/// The sums an aggregate holds per key, and the same recounted from `events` (read with
/// `reading` after `FROM events`), as TSV.
pub async fn aggregate_and_recount(
    database: &str,
    table: &str,
    keys: &str,
    event_keys: &str,
    reading: &str,
) -> [String; 2] {
    let held = clickhouse_query(
        database,
        &format!(
            "SELECT {keys}, sum(impressions), sum(views), sum(clicks), sum(add_to_cart), \
             sum(orders), sum(revenue_e4), sum(direct_add_to_cart), sum(direct_orders), \
             sum(direct_revenue_e4), sum(influenced_add_to_cart), sum(influenced_orders), \
             sum(influenced_revenue_e4), sum(watched_ms_sum), sum(watches), sum(reached_25), \
             sum(reached_50), sum(reached_75), sum(reached_95), sum(reached_100) \
             FROM {table} GROUP BY {keys} ORDER BY {keys}"
        ),
    )
    .await;
    let cart = "event_type = 'add_to_cart'";
    let order = "event_type = 'checkout_completed'";
    let watch = "event_type = 'watch'";
    let reached = [25, 50, 75, 95, 100].map(|p| format!("countIf({watch} AND max_percent >= {p})"));
    let reached = reached.join(", ");
    let recount = clickhouse_query(
        database,
        &format!(
            "SELECT {event_keys}, countIf(event_type = 'impression'), countIf(event_type = 'view'), \
             countIf(event_type = 'click'), countIf({cart}), countIf({order}), \
             sumIf(revenue_e4, {order}), \
             countIf({cart} AND attribution = 'direct'), countIf({order} AND attribution = 'direct'), \
             sumIf(revenue_e4, {order} AND attribution = 'direct'), \
             countIf({cart} AND attribution = 'influenced'), \
             countIf({order} AND attribution = 'influenced'), \
             sumIf(revenue_e4, {order} AND attribution = 'influenced'), \
             sumIf(watched_ms, {watch}), countIf({watch}), {reached} \
             FROM events{reading} GROUP BY {keys} ORDER BY {keys}"
        ),
    )
    .await;
    [held, recount]
}

/// Every aggregate of `database` holds what a recount of its `events` gives, key by key.
pub async fn assert_every_aggregate_equals_its_recount(database: &str) {
    let month = "toStartOfMonth(local_date) AS month";
    let aggregates = [
        ("video_daily", "shop_domain, local_date, video_id", None),
        ("widget_daily", "shop_domain, local_date, widget_id", None),
        (
            "video_monthly",
            "shop_domain, month, video_id",
            Some(format!("shop_domain, {month}, video_id")),
        ),
        (
            "video_yearly",
            "shop_domain, year, video_id",
            Some("shop_domain, toStartOfYear(local_date) AS year, video_id".to_string()),
        ),
        (
            "widget_monthly",
            "shop_domain, month, widget_id",
            Some(format!("shop_domain, {month}, widget_id")),
        ),
        ("shop_daily", "shop_domain, local_date", None),
        (
            "video_daily_by_video",
            "shop_domain, video_id, local_date",
            None,
        ),
        (
            "shop_daily_by_dimension",
            "shop_domain, dimension, value, local_date",
            None,
        ),
        (
            "widget_daily_by_dimension",
            "shop_domain, dimension, value, local_date, widget_id",
            None,
        ),
        (
            "video_daily_by_dimension",
            "shop_domain, dimension, value, local_date, video_id",
            None,
        ),
        (
            "video_monthly_by_dimension",
            "shop_domain, dimension, value, month, video_id",
            Some(format!("shop_domain, dimension, value, {month}, video_id")),
        ),
        (
            "video_yearly_by_dimension",
            "shop_domain, dimension, value, year, video_id",
            Some(
                "shop_domain, dimension, value, toStartOfYear(local_date) AS year, video_id".into(),
            ),
        ),
        (
            "shop_daily_by_dimensions",
            "shop_domain, local_date, placement, device, country, source",
            None,
        ),
        (
            "video_daily_by_dimensions",
            "shop_domain, video_id, local_date, placement, device, country, source",
            None,
        ),
        (
            "widget_daily_by_dimensions",
            "shop_domain, widget_id, local_date, placement, device, country, source",
            None,
        ),
    ];
    for (table, keys, event_keys) in aggregates {
        let event_keys = event_keys.unwrap_or_else(|| keys.to_string());
        let reading = if table.ends_with("_by_dimension") {
            BY_DIMENSION
        } else {
            ""
        };
        let [held, recount] =
            aggregate_and_recount(database, table, keys, &event_keys, reading).await;
        // Both shops, with four videos (one of them none) or a year's days, at the least.
        assert!(recount.lines().count() >= 8, "{table}: {recount}");
        assert_eq!(held, recount, "{table}");
    }
}
