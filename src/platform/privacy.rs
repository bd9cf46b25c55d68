//! The platform's mandatory privacy requests, as webhook work: a customer's data request (a
//! report of every event held for them, kept for the merchant), a customer's redaction (their
//! raw events deleted; the aggregates hold no personal data and stay), and a shop's redaction
//! (everything of the shop deleted, in ClickHouse and in Postgres).

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::catalog::domain::ShopDomain;
use crate::warehouse::privacy::{self as held, Customer, ReportedEvent};
use crate::warehouse::{changes, Warehouse};

/// A data request's report, as the admin API shows it.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct PrivacyReport {
    pub data_request_id: String,
    /// The customer's id as the platform sent it (a number).
    pub customer_id: String,
    pub requested_at: DateTime<Utc>,
    pub reported_at: DateTime<Utc>,
    /// Every event held for the customer when the request was worked on, oldest first.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<ReportedEvent>,
}

/// Reports every event held for `customer`, under the request's id (a request worked on again
/// replaces its report).
pub async fn report(
    db: &PgPool,
    warehouse: &Warehouse,
    shop: &ShopDomain,
    (customer, data_request_id, requested_at): (&Customer, &str, DateTime<Utc>),
) -> Result<(), String> {
    let events = held::customer_events(warehouse, shop.as_str(), customer)
        .await
        .map_err(|e| format!("ClickHouse: {e}"))?;
    let customer_id = customer.ids.first().cloned().unwrap_or_default();
    sqlx::query(
        "INSERT INTO privacy_reports \
             (shop_domain, data_request_id, customer_id, requested_at, events) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (shop_domain, data_request_id) DO UPDATE \
         SET events = EXCLUDED.events, reported_at = now()",
    )
    .bind(shop.as_str())
    .bind(data_request_id)
    .bind(customer_id)
    .bind(requested_at)
    .bind(sqlx::types::Json(events))
    .execute(db)
    .await
    .map_err(|e| format!("Postgres: {e}"))?;
    Ok(())
}

/// The shop's data request reports, newest request first. Kept after an uninstall, until the
/// shop's redaction.
pub async fn reports(db: &PgPool, shop: &ShopDomain) -> Result<Vec<PrivacyReport>, sqlx::Error> {
    type Row = (
        String,
        String,
        DateTime<Utc>,
        DateTime<Utc>,
        sqlx::types::Json<Vec<ReportedEvent>>,
    );
    let rows: Vec<Row> = sqlx::query_as(
        "SELECT data_request_id, customer_id, requested_at, reported_at, events \
         FROM privacy_reports WHERE shop_domain = $1 \
         ORDER BY requested_at DESC, data_request_id",
    )
    .bind(shop.as_str())
    .fetch_all(db)
    .await?;
    Ok(rows
        .into_iter()
        .map(
            |(data_request_id, customer_id, requested_at, reported_at, events)| PrivacyReport {
                data_request_id,
                customer_id,
                requested_at,
                reported_at,
                events: events.0,
            },
        )
        .collect())
}

/// Deletes the customer's raw events.
pub async fn redact_customer(
    warehouse: &Warehouse,
    shop: &ShopDomain,
    customer: &Customer,
) -> Result<(), String> {
    held::redact_customer(warehouse, shop.as_str(), customer)
        .await
        .map_err(|e| format!("ClickHouse: {e}"))
}

/// Deletes everything of the shop: ClickHouse first (a failure there leaves Postgres as it was,
/// and the request is tried again), then every Postgres row in one transaction, each module
/// deleting from its own tables. `delivery` is the request's own delivery, which stays until it
/// is marked done.
pub async fn redact_shop(
    db: &PgPool,
    warehouse: &Warehouse,
    shop: &ShopDomain,
    delivery: &str,
) -> Result<(), String> {
    held::redact_shop(warehouse, shop.as_str())
        .await
        .map_err(|e| format!("ClickHouse: {e}"))?;
    let erase = async {
        let mut tx = db.begin().await?;
        crate::catalog::shops::erase(&mut tx, shop).await?;
        crate::ingest::claims::erase_shop(&mut tx, shop.as_str()).await?;
        changes::erase_shop(&mut *tx, shop.as_str()).await?;
        super::work::erase_shop(&mut *tx, shop.as_str(), delivery).await?;
        sqlx::query("DELETE FROM privacy_reports WHERE shop_domain = $1")
            .bind(shop.as_str())
            .execute(&mut *tx)
            .await?;
        tx.commit().await
    };
    erase
        .await
        .map_err(|e: sqlx::Error| format!("Postgres: {e}"))
}
