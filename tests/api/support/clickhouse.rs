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

/// A warehouse handle on a fresh database of the test ClickHouse server (created by the
/// migration runner).
pub fn fresh_warehouse() -> videoapp::warehouse::Warehouse {
    warehouse_on(&clickhouse_url(), &fresh_clickhouse_database(), None)
}

/// `n` events from `first`: two shops, three videos and none, two widgets and none, every type
/// and attribution, over 45 days across three months, with revenue on carts too (which counts
/// nowhere: revenue is the orders').
pub fn insert_events(first: u64, n: u64) -> String {
    format!(
        "INSERT INTO events (event_id, batch_id, shop_domain, local_date, event_time, received_at, \
         timestamp_replaced, event_type, attribution, video_id, widget_id, session_id, customer_id, \
         product_id, order_id, revenue_e4, currency) \
         SELECT toUUID('00000000-0000-0000-0000-000000000000'), \
           toUUID('00000000-0000-0000-0000-000000000000'), \
           if(number % 3 = 0, 'b.myshopify.com', 'a.myshopify.com'), \
           toDate('2026-01-20') + number % 45, now(), now(), 0, \
           ['impression', 'view', 'click', 'add_to_cart', 'checkout_completed'][1 + number % 5], \
           ['none', 'direct', 'influenced', 'direct', 'none', 'influenced', 'none'][1 + number % 7], \
           ['v0', 'v1', 'v2', ''][1 + number % 4], ['w0', 'w1', ''][1 + intDiv(number, 2) % 3], \
           '', '', '', '', (number * 7919) % 1000000, 'EUR' \
         FROM system.numbers WHERE number >= {first} LIMIT {n}"
    )
}

/// The sums an aggregate holds per key, and the same recounted from `events`, as TSV.
pub async fn aggregate_and_recount(
    database: &str,
    table: &str,
    keys: &str,
    event_keys: &str,
) -> [String; 2] {
    let held = clickhouse_query(
        database,
        &format!(
            "SELECT {keys}, sum(impressions), sum(views), sum(clicks), sum(add_to_cart), \
             sum(orders), sum(revenue_e4), sum(direct_add_to_cart), sum(direct_orders), \
             sum(direct_revenue_e4), sum(influenced_add_to_cart), sum(influenced_orders), \
             sum(influenced_revenue_e4) FROM {table} GROUP BY {keys} ORDER BY {keys}"
        ),
    )
    .await;
    let cart = "event_type = 'add_to_cart'";
    let order = "event_type = 'checkout_completed'";
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
             sumIf(revenue_e4, {order} AND attribution = 'influenced') \
             FROM events GROUP BY {keys} ORDER BY {keys}"
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
    ];
    for (table, keys, event_keys) in aggregates {
        let event_keys = event_keys.unwrap_or_else(|| keys.to_string());
        let [held, recount] = aggregate_and_recount(database, table, keys, &event_keys).await;
        // Both shops, with four videos (one of them none) or a year's days, at the least.
        assert!(recount.lines().count() >= 8, "{table}: {recount}");
        assert_eq!(held, recount, "{table}");
    }
}
