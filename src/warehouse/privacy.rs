//! The privacy requests' ClickHouse side: the raw events of one customer, deleting them, and
//! deleting everything of a shop. Deletions are mutations, which ClickHouse runs after the
//! statement returns: each function waits until they are done, so that a request marked done has
//! had its effect. A mutation changes the rows there are when it is made, not those an insert
//! still writing adds after: `ingest::redactions` covers those.

use std::time::{Duration, Instant};

use chrono::{DateTime, Utc};
use clickhouse::Row;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::cluster::{Step, LOCAL_SUFFIX};
use super::error::WarehouseError;
use super::migrations::statements;
use super::{Warehouse, AGGREGATES};

const EVENTS_SQL: &str = include_str!("../../sql/31_privacy_customer_events.sql");
const REDACT_CUSTOMER_SQL: &str = include_str!("../../sql/32_privacy_customer_redact.sql");
const REDACT_CUSTOMER_IN_BATCH_SQL: &str =
    include_str!("../../sql/38_privacy_customer_redact_in_batch.sql");
const REDACT_SHOP_SQL: &str = include_str!("../../sql/33_privacy_shop_redact.sql");
const MUTATIONS_SQL: &str = include_str!("../../sql/34_mutations_running.sql");
const CLUSTER_MUTATIONS_SQL: &str = include_str!("../../sql/35_mutations_running_on_cluster.sql");

/// Every table that holds rows of a shop: the raw events and each aggregate.
pub fn shop_tables() -> impl Iterator<Item = &'static str> {
    std::iter::once("events").chain(AGGREGATES)
}

/// A deletion not done after this is a failure, and the request is tried again later.
const MUTATION_WAIT: Duration = Duration::from_secs(60);

/// One customer, in every form events carry their ids: the customer's own (their number first),
/// and their orders'.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Customer {
    pub ids: Vec<String>,
    pub order_ids: Vec<String>,
}

impl Customer {
    /// The customer's number: the form the platform signs (`logged_in_customer_id`), and so the
    /// only one an event is bound to them by.
    pub fn number(&self) -> &str {
        self.ids.first().map_or("", String::as_str)
    }
}

#[derive(Row, Deserialize)]
struct HeldEvent {
    #[serde(with = "clickhouse::serde::uuid")]
    event_id: Uuid,
    event_time: u32,
    event_type: String,
    attribution: String,
    video_id: String,
    widget_id: String,
    session_id: String,
    customer_id: String,
    product_id: String,
    order_id: String,
    revenue_e4: i64,
    currency: String,
}

/// A raw event as a data request's report shows it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ReportedEvent {
    pub event_id: Uuid,
    pub event_time: DateTime<Utc>,
    pub event_type: String,
    pub attribution: String,
    pub video_id: String,
    pub widget_id: String,
    pub session_id: String,
    pub customer_id: String,
    pub product_id: String,
    pub order_id: String,
    /// Exact, as sent.
    pub revenue: String,
    pub currency: String,
}

impl From<HeldEvent> for ReportedEvent {
    fn from(e: HeldEvent) -> Self {
        ReportedEvent {
            event_id: e.event_id,
            event_time: DateTime::from_timestamp(i64::from(e.event_time), 0).unwrap_or_default(),
            event_type: e.event_type,
            attribution: e.attribution,
            video_id: e.video_id,
            widget_id: e.widget_id,
            session_id: e.session_id,
            customer_id: e.customer_id,
            product_id: e.product_id,
            order_id: e.order_id,
            revenue: Decimal::new(e.revenue_e4, 4).normalize().to_string(),
            currency: e.currency,
        }
    }
}

/// The customer's events: those bound to them by the platform's signed id, oldest first.
pub async fn customer_events(
    w: &Warehouse,
    shop: &str,
    c: &Customer,
) -> Result<Vec<ReportedEvent>, WarehouseError> {
    let query = w.client().query(EVENTS_SQL).bind(shop).bind(c.number());
    let held: Vec<HeldEvent> = query.fetch_all().await?;
    Ok(held.into_iter().map(ReportedEvent::from).collect())
}

/// Deletes the customer's raw events received until `until` (Unix seconds): theirs by any form of
/// their id, and those of the orders named with them; waits until they are gone.
pub async fn redact_customer(
    w: &Warehouse,
    shop: &str,
    c: &Customer,
    until: i64,
) -> Result<(), WarehouseError> {
    let sql = deletion(w, REDACT_CUSTOMER_SQL);
    let query = w.client().query(&sql).bind(shop).bind(&c.ids);
    query.bind(&c.order_ids).bind(until).execute().await?;
    mutations_done(w, "events").await
}

/// [`redact_customer`] within the rows of one spool batch (`batch_id`).
pub async fn redact_customer_in_batch(
    w: &Warehouse,
    batch_id: Uuid,
    shop: &str,
    c: &Customer,
    until: i64,
) -> Result<(), WarehouseError> {
    let sql = deletion(w, REDACT_CUSTOMER_IN_BATCH_SQL);
    let query = w.client().query(&sql).bind(batch_id.to_string()).bind(shop);
    let query = query.bind(&c.ids).bind(&c.order_ids).bind(until);
    query.execute().await?;
    mutations_done(w, "events").await
}

/// Deletes every row of the shop, raw and aggregate, and waits until they are gone.
pub async fn redact_shop(w: &Warehouse, shop: &str) -> Result<(), WarehouseError> {
    for table in shop_tables() {
        // The table is the first `?`: one of ours, named in the text before the cluster form is
        // made of it.
        let sql = deletion(w, &REDACT_SHOP_SQL.replacen('?', table, 1));
        w.client().query(&sql).bind(shop).execute().await?;
    }
    for table in shop_tables() {
        mutations_done(w, table).await?;
    }
    Ok(())
}

/// A deletion written for one server, as it runs: on a cluster, on every shard's node tables.
fn deletion(w: &Warehouse, sql: &str) -> String {
    let Some(cluster) = w.cluster() else {
        return sql.to_string();
    };
    let statement = statements(sql).concat();
    match cluster.rewrite(&statement).as_deref() {
        Ok([Step::Sql(on_nodes)]) => on_nodes.clone(),
        other => unreachable!("a deletion is one statement on the node tables: {other:?}"),
    }
}

/// Deletions in `table` not done yet: on a cluster, on a replica of any shard.
async fn mutations_running(w: &Warehouse, table: &str) -> Result<u64, WarehouseError> {
    let query = match w.cluster() {
        None => w.client().query(MUTATIONS_SQL).bind(table),
        Some(cluster) => w
            .client()
            .query(CLUSTER_MUTATIONS_SQL)
            .bind(&cluster.name)
            .bind(w.database())
            .bind(format!("{table}{LOCAL_SUFFIX}")),
    };
    Ok(query.fetch_one().await?)
}

async fn mutations_done(w: &Warehouse, table: &str) -> Result<(), WarehouseError> {
    let started = Instant::now();
    loop {
        let running = mutations_running(w, table).await?;
        if running == 0 {
            return Ok(());
        }
        if started.elapsed() > MUTATION_WAIT {
            return Err(WarehouseError::Transient(format!(
                "deletions in {table} still running after {MUTATION_WAIT:?}"
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
