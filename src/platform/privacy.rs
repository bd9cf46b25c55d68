//! The platform's mandatory privacy requests, as webhook work: a customer's data request (a
//! report of their events, kept for the merchant), a customer's redaction (their raw events and
//! reports deleted; the aggregates hold no personal data and stay), and a shop's redaction
//! (everything of the shop deleted, in ClickHouse and in Postgres).
//!
//! An event is a customer's when the platform's signed `logged_in_customer_id` bound it to them;
//! what a browser says in an event's body binds nothing. A redaction is recorded
//! (`ingest::redactions`) before anything is deleted, so that events received before it and still
//! on their way are dropped by the shipper, or deleted after they land.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use crate::catalog::domain::ShopDomain;
use crate::ingest::redactions;
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
    /// The customer's events when the request was worked on, oldest first: those the platform's
    /// signed customer id bound to them.
    #[schema(value_type = Vec<Object>)]
    pub events: Vec<ReportedEvent>,
}

/// Reports the customer's events, under the request's id (a request worked on again replaces its
/// report). A request the customer's (or the shop's) redaction came after has nothing left to
/// report, and its report would keep the customer's id past the redaction: none is written.
pub async fn report(
    db: &PgPool,
    warehouse: &Warehouse,
    shop: &ShopDomain,
    (customer, data_request_id, requested_at): (&Customer, &str, DateTime<Utc>),
) -> Result<(), String> {
    let write = async {
        let mut tx = db.begin().await.map_err(postgres)?;
        let (shop, number) = (shop.as_str(), customer.number());
        // Locked until the report is written: a redaction recorded after deletes it, and one
        // whose reports' deletion runs meanwhile waits for it ([`lock_reports`]).
        if redactions::redacted_since(&mut tx, shop, number, requested_at)
            .await
            .map_err(postgres)?
        {
            return tx.commit().await.map_err(postgres);
        }
        // Read under the lock, not before: a redaction recorded earlier has deleted the events
        // it covers before it deletes reports, and that deletion waits for this one to commit.
        // Read before, the events of a redaction racing this request would outlive it here.
        let events = held::customer_events(warehouse, shop, customer)
            .await
            .map_err(|e| format!("ClickHouse: {e}"))?;
        sqlx::query(
            "INSERT INTO privacy_reports \
                 (shop_domain, data_request_id, customer_id, requested_at, events) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (shop_domain, data_request_id) DO UPDATE \
             SET events = EXCLUDED.events, reported_at = now()",
        )
        .bind(shop)
        .bind(data_request_id)
        .bind(number)
        .bind(requested_at)
        .bind(sqlx::types::Json(events))
        .execute(&mut *tx)
        .await
        .map_err(postgres)?;
        tx.commit().await.map_err(postgres)
    };
    write.await
}

fn postgres(e: sqlx::Error) -> String {
    format!("Postgres: {e}")
}

/// Before a redaction deletes reports: waits for any report being written (which holds the
/// redactions in SHARE mode, [`redactions::redacted_since`]) to commit, so that it is deleted
/// too, and keeps new ones from starting until this transaction ends.
async fn lock_reports(tx: &mut sqlx::Transaction<'_, sqlx::Postgres>) -> Result<(), sqlx::Error> {
    sqlx::query("LOCK TABLE redacted_customers IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut **tx)
        .await
        .map(drop)
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

/// Deletes the customer's data: the raw events received until the request arrived (theirs, and
/// their named orders'), their reports, and the finished deliveries that name them. `delivery` is
/// the request's own (its id and when it arrived), which stays until it is marked done.
///
/// The redaction is recorded first: from then on the shipper drops the events it covers, and
/// deletes those of a batch that was going in meanwhile, so that the deletion here, made after
/// the record, and the shipper's between them leave none.
pub async fn redact_customer(
    db: &PgPool,
    warehouse: &Warehouse,
    shop: &ShopDomain,
    customer: &Customer,
    (delivery, asked_at): (&str, DateTime<Utc>),
) -> Result<(), String> {
    let until = redactions::record_customer(db, shop.as_str(), customer, asked_at)
        .await
        .map_err(postgres)?;
    held::redact_customer(warehouse, shop.as_str(), customer, until)
        .await
        .map_err(|e| format!("ClickHouse: {e}"))?;
    let erase = async {
        let mut tx = db.begin().await?;
        lock_reports(&mut tx).await?;
        sqlx::query("DELETE FROM privacy_reports WHERE shop_domain = $1 AND customer_id = $2")
            .bind(shop.as_str())
            .bind(customer.number())
            .execute(&mut *tx)
            .await?;
        super::work::erase_customer(&mut *tx, shop.as_str(), customer.number(), delivery).await?;
        tx.commit().await
    };
    erase.await.map_err(postgres)
}

/// Deletes everything of the shop: the redaction is recorded (so that the shipper drops the
/// shop's events still on their way, writes nothing of it in Postgres, and deletes again rows of
/// a batch that was going in); then ClickHouse (a failure there leaves Postgres as it was, and
/// the request is tried again); then every Postgres row in one transaction, each module deleting
/// from its own tables. `delivery` is the request's own delivery (its id and when it arrived),
/// which stays until it is marked done.
pub async fn redact_shop(
    db: &PgPool,
    warehouse: &Warehouse,
    shop: &ShopDomain,
    (delivery, asked_at): (&str, DateTime<Utc>),
) -> Result<(), String> {
    // The platform asks for a shop's redaction 48 hours after its uninstall, and never for a shop
    // that is installed. Its headers are not signed, so a captured delivery sent again with a new
    // id and time passes the checks at the edge: for an installed shop it erases nothing.
    match crate::catalog::shops::get(db, shop).await {
        Ok(_) => {
            metrics::counter!("webhooks_ignored_total", "reason" => "shop_installed").increment(1);
            tracing::warn!(%shop, "a shop redaction for an installed shop was ignored");
            return Ok(());
        }
        Err(crate::catalog::CatalogError::ShopNotFound) => {}
        Err(e) => return Err(format!("Postgres: {e}")),
    }
    redactions::record_shop(db, shop.as_str(), asked_at)
        .await
        .map_err(postgres)?;
    held::redact_shop(warehouse, shop.as_str())
        .await
        .map_err(|e| format!("ClickHouse: {e}"))?;
    let erase = async {
        let mut tx = db.begin().await?;
        lock_reports(&mut tx).await?;
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
    erase.await.map_err(postgres)
}
