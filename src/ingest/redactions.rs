//! Redactions and the events still on their way to ClickHouse.
//!
//! A privacy request deletes what ClickHouse holds when its deletion runs, but events received
//! before the request may still be in a spool, or in an insert that has not returned. So a
//! redaction is first recorded here, in Postgres (`redacted_customers`, `redacted_shops`), and
//! only then carried out; and for every batch the shipper:
//!
//! 1. before the insert, drops the events a recorded redaction covers ([`Batch::drop_redacted`]);
//! 2. once the insert has returned, reads the redactions again ([`Batch::landed`]). A redaction
//!    recorded since step 1 may have made its ClickHouse deletion before the batch's rows landed
//!    (a mutation leaves rows that come after it alone): the shipper deletes the batch's covered
//!    rows itself. A redaction this reading does not see is recorded after it, so after the rows
//!    landed, and its own deletion, which follows its record, removes them. No covered row stays.
//! 3. in the same reading, records the batch's days (`warehouse::changes`) and takes back its
//!    claims, leaving out the shops a redaction covers, under a SHARE lock of `redacted_shops`
//!    (which a shop's redaction writes): the redaction is recorded either before that (and the
//!    batch writes nothing of the shop) or after it (and the Postgres deletion that follows the
//!    record removes what the batch wrote).
//!
//! A redaction covers the events received until its request arrived: what a customer, or a shop
//! that installs the app again, does after it is new data. Events carry their instance's clock
//! and requests Postgres's, hence an allowance ([`CLOCKS_APART`]).

use std::collections::HashMap;
use std::time::Duration;

use chrono::{DateTime, NaiveDate, Utc};
use sqlx::{PgExecutor, PgPool, Postgres, Transaction};
use uuid::Uuid;

use super::claims;
use super::event::SpoolEvent;
use crate::warehouse::error::WarehouseError;
use crate::warehouse::privacy::{self as held, Customer};
use crate::warehouse::{changes, Warehouse};

/// How far an instance's clock may be ahead of Postgres's: an event received this long after a
/// redaction's time (by its instance's clock) still counts as received before it.
pub const CLOCKS_APART: Duration = Duration::from_secs(60);

/// The Unix second until which a redaction recorded at `redacted_at` covers events.
fn covered_until(redacted_at: DateTime<Utc>) -> i64 {
    let allowance = i64::try_from(CLOCKS_APART.as_secs()).unwrap_or(i64::MAX);
    redacted_at.timestamp().saturating_add(allowance)
}

/// Records the customer's redaction, asked for at `asked_at` (when its request arrived: a retry
/// covers what the first attempt covered), before anything is deleted; the Unix second until
/// which it covers events. Recorded again (another request), the later time stands and the ids
/// add up.
pub async fn record_customer(
    db: &PgPool,
    shop: &str,
    customer: &Customer,
    asked_at: DateTime<Utc>,
) -> Result<i64, sqlx::Error> {
    let redacted_at: DateTime<Utc> = sqlx::query_scalar(
        "INSERT INTO redacted_customers \
             (shop_domain, customer_id, customer_ids, order_ids, redacted_at) \
         VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (shop_domain, customer_id) DO UPDATE SET \
             customer_ids = ARRAY(SELECT DISTINCT unnest( \
                 redacted_customers.customer_ids || EXCLUDED.customer_ids)), \
             order_ids = ARRAY(SELECT DISTINCT unnest( \
                 redacted_customers.order_ids || EXCLUDED.order_ids)), \
             redacted_at = greatest(redacted_customers.redacted_at, EXCLUDED.redacted_at) \
         RETURNING redacted_at",
    )
    .bind(shop)
    .bind(customer.number())
    .bind(&customer.ids)
    .bind(&customer.order_ids)
    .bind(asked_at)
    .fetch_one(db)
    .await?;
    Ok(covered_until(redacted_at))
}

/// Records the shop's redaction, asked for at `asked_at`, before anything is deleted. It covers
/// its customers' redactions, which go.
pub async fn record_shop(
    db: &PgPool,
    shop: &str,
    asked_at: DateTime<Utc>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH customers AS (DELETE FROM redacted_customers WHERE shop_domain = $1) \
         INSERT INTO redacted_shops (shop_domain, redacted_at) VALUES ($1, $2) \
         ON CONFLICT (shop_domain) DO UPDATE \
         SET redacted_at = greatest(redacted_shops.redacted_at, EXCLUDED.redacted_at)",
    )
    .bind(shop)
    .bind(asked_at)
    .execute(db)
    .await?;
    Ok(())
}

/// How long a redaction's record is kept: the platform's own deadline for carrying out a
/// redaction (30 days). Its only use is to catch events received before it that are still on
/// their way, and a spool holds events that long only if ClickHouse was away for a month. Past
/// it, nothing of the shop or the customer is kept, not even the record that it was redacted.
pub const REDACTIONS_KEPT: Duration = Duration::from_secs(30 * 24 * 3600);

/// Deletes the records of redactions asked for more than `kept` ago; how many.
pub async fn forget_older_than(db: &PgPool, kept: Duration) -> Result<u64, sqlx::Error> {
    let forgotten = sqlx::query(
        "WITH shops AS ( \
             DELETE FROM redacted_shops \
             WHERE redacted_at < now() - make_interval(secs => $1) RETURNING 1), \
         customers AS ( \
             DELETE FROM redacted_customers \
             WHERE redacted_at < now() - make_interval(secs => $1) RETURNING 1) \
         SELECT (SELECT count(*) FROM shops) + (SELECT count(*) FROM customers)",
    )
    .bind(kept.as_secs_f64())
    .fetch_one(db)
    .await
    .map(|row| sqlx::Row::get::<i64, _>(&row, 0))?;
    Ok(u64::try_from(forgotten).unwrap_or(0))
}

/// Whether the customer, or the shop, was redacted at or after `since`. Locks the redactions
/// until `tx` ends, so that none is recorded between this answer and what the caller writes on
/// it: a redaction recorded after the caller's write deletes it.
pub async fn redacted_since(
    tx: &mut Transaction<'_, Postgres>,
    shop: &str,
    customer: &str,
    since: DateTime<Utc>,
) -> Result<bool, sqlx::Error> {
    sqlx::query("LOCK TABLE redacted_customers, redacted_shops IN SHARE MODE")
        .execute(&mut **tx)
        .await?;
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM redacted_customers \
                        WHERE shop_domain = $1 AND customer_id = $2 AND redacted_at >= $3) \
             OR EXISTS (SELECT 1 FROM redacted_shops \
                        WHERE shop_domain = $1 AND redacted_at >= $3)",
    )
    .bind(shop)
    .bind(customer)
    .bind(since)
    .fetch_one(&mut **tx)
    .await
}

/// A customer's redaction as a batch reads it.
#[derive(Debug, PartialEq)]
struct CustomerRedaction {
    shop: String,
    customer_ids: Vec<String>,
    order_ids: Vec<String>,
    until: i64,
}

impl CustomerRedaction {
    fn covers(&self, event: &SpoolEvent) -> bool {
        let named = |ids: &[String], id: &str| !id.is_empty() && ids.iter().any(|i| i == id);
        event.shop == self.shop
            && event.received_at <= self.until
            && (named(&self.customer_ids, &event.customer_id)
                || named(&self.order_ids, &event.order_id))
    }
}

/// The recorded redactions that concern a batch.
#[derive(Debug, Default)]
struct Redactions {
    /// Each redacted shop's Unix second until which its events are covered.
    shops: HashMap<String, i64>,
    customers: Vec<CustomerRedaction>,
}

impl Redactions {
    fn covers(&self, event: &SpoolEvent) -> bool {
        let shop = self.shops.get(&event.shop);
        shop.is_some_and(|until| event.received_at <= *until)
            || self.customers.iter().any(|c| c.covers(event))
    }
}

/// A batch's events as far as redactions go: its shops, customers and orders, with when their
/// events were received.
pub struct Batch {
    id: Uuid,
    events: usize,
    /// Each shop's first and last receive times.
    shops: HashMap<String, (i64, i64)>,
    /// By shop, each customer id's and each order id's first receive time.
    customers: HashMap<String, HashMap<String, i64>>,
    orders: HashMap<String, HashMap<String, i64>>,
    /// What the drop before the insert applied.
    dropped_by: Option<Redactions>,
    /// Whether events were left out before the drop (rows of the batch that had landed).
    landed_before: bool,
}

impl Batch {
    /// Of every event of the batch `id`, before any is left out.
    pub fn of(id: Uuid, events: &[SpoolEvent]) -> Batch {
        let mut batch = Batch {
            id,
            events: events.len(),
            shops: HashMap::new(),
            customers: HashMap::new(),
            orders: HashMap::new(),
            dropped_by: None,
            landed_before: false,
        };
        for event in events {
            let at = event.received_at;
            match batch.shops.get_mut(&event.shop) {
                Some((first, last)) => (*first, *last) = ((*first).min(at), (*last).max(at)),
                None => {
                    batch.shops.insert(event.shop.clone(), (at, at));
                }
            }
            received(&mut batch.customers, &event.shop, &event.customer_id, at);
            received(&mut batch.orders, &event.shop, &event.order_id, at);
        }
        batch
    }

    /// The recorded redactions of the batch's shops, customers and orders.
    async fn read<'e>(&self, executor: impl PgExecutor<'e>) -> Result<Redactions, sqlx::Error> {
        let shops: Vec<&str> = self.shops.keys().map(String::as_str).collect();
        let ids = |by_shop: &HashMap<String, HashMap<String, i64>>| -> Vec<String> {
            by_shop
                .values()
                .flat_map(|ids| ids.keys().cloned())
                .collect()
        };
        type Row = (
            String,
            Option<Vec<String>>,
            Option<Vec<String>>,
            DateTime<Utc>,
        );
        let rows: Vec<Row> = sqlx::query_as(
            "SELECT shop_domain, NULL::text[], NULL::text[], redacted_at \
             FROM redacted_shops WHERE shop_domain = ANY($1) \
             UNION ALL \
             SELECT shop_domain, customer_ids, order_ids, redacted_at \
             FROM redacted_customers \
             WHERE shop_domain = ANY($1) AND (customer_ids && $2 OR order_ids && $3)",
        )
        .bind(&shops)
        .bind(ids(&self.customers))
        .bind(ids(&self.orders))
        .fetch_all(executor)
        .await?;
        let mut redactions = Redactions::default();
        for (shop, customer_ids, order_ids, redacted_at) in rows {
            let until = covered_until(redacted_at);
            match (customer_ids, order_ids) {
                (Some(mut customer_ids), Some(mut order_ids)) => {
                    // Sorted, so that two readings of one redaction are equal.
                    customer_ids.sort_unstable();
                    order_ids.sort_unstable();
                    redactions.customers.push(CustomerRedaction {
                        shop,
                        customer_ids,
                        order_ids,
                        until,
                    })
                }
                _ => {
                    redactions.shops.insert(shop, until);
                }
            }
        }
        Ok(redactions)
    }

    /// Leaves out of `events` (the batch's, less those that had landed) the ones a recorded
    /// redaction covers, before they are claimed or inserted; how many.
    pub async fn drop_redacted(
        &mut self,
        db: &PgPool,
        events: &mut Vec<SpoolEvent>,
    ) -> Result<usize, sqlx::Error> {
        let redactions = self.read(db).await?;
        let before = events.len();
        events.retain(|event| !redactions.covers(event));
        self.landed_before = before < self.events;
        self.dropped_by = Some(redactions);
        let dropped = before - events.len();
        if dropped > 0 {
            metrics::counter!("events_redacted_total").increment(dropped as u64);
        }
        Ok(dropped)
    }

    /// Once the batch is in ClickHouse (`inserted` the insert that put it there and returned,
    /// `None` if it had landed before): records its `days` and takes back its marks, as
    /// [`changes::days_landed`] does, less what redactions recorded meanwhile cover, and deletes
    /// the batch's rows such a redaction covers (see the module's documentation for the order).
    pub async fn landed(
        &self,
        db: &PgPool,
        warehouse: &Warehouse,
        inserted: Option<Uuid>,
        days: &[(&str, NaiveDate)],
    ) -> Result<(), WarehouseError> {
        let postgres =
            |e: sqlx::Error| WarehouseError::Transient(format!("Postgres analytics changes: {e}"));
        let mut tx = db.begin().await.map_err(postgres)?;
        sqlx::query("LOCK TABLE redacted_shops IN SHARE MODE")
            .execute(&mut *tx)
            .await
            .map_err(postgres)?;
        let redactions = self.read(&mut *tx).await.map_err(postgres)?;
        // Shops every event of which in this batch is covered: nothing of them is recorded.
        let gone: Vec<&str> = (self.shops.iter())
            .filter(|(shop, (_, last))| redactions.shops.get(*shop).is_some_and(|u| last <= u))
            .map(|(shop, _)| shop.as_str())
            .collect();
        let days: Vec<(&str, NaiveDate)> = (days.iter().copied())
            .filter(|(shop, _)| !gone.contains(shop))
            .collect();
        changes::days_landed(&mut *tx, inserted, &days)
            .await
            .map_err(postgres)?;
        if !gone.is_empty() {
            claims::erase_batch(&mut tx, self.id, &gone)
                .await
                .map_err(postgres)?;
        }
        tx.commit().await.map_err(postgres)?;
        self.delete_covered_rows(warehouse, &redactions).await
    }

    /// Deletes the rows of the batch that `now` covers, unless the drop before the insert had
    /// applied the same redaction to every event of the batch (none of those rows went in).
    async fn delete_covered_rows(
        &self,
        warehouse: &Warehouse,
        now: &Redactions,
    ) -> Result<(), WarehouseError> {
        let applied = self.dropped_by.as_ref().filter(|_| !self.landed_before);
        let failed = |e: WarehouseError| {
            WarehouseError::Transient(format!("deleting redacted rows in ClickHouse: {e}"))
        };
        for (shop, until) in &now.shops {
            let new = applied.is_none_or(|applied| applied.shops.get(shop) != Some(until));
            let covered = (self.shops.get(shop)).is_some_and(|(first, _)| first <= until);
            if new && covered {
                // The aggregates do not know their rows' batches: the shop goes again.
                tracing::info!(batch = %self.id, shop, "a batch went in while its shop was redacted; deleting the shop's rows again");
                held::redact_shop(warehouse, shop).await.map_err(failed)?;
            }
        }
        for redaction in &now.customers {
            let new = applied.is_none_or(|applied| !applied.customers.contains(redaction));
            if new && self.has_any_of(redaction) {
                tracing::info!(batch = %self.id, shop = redaction.shop, "a batch went in while a customer was redacted; deleting their rows of it");
                let customer = Customer {
                    ids: redaction.customer_ids.clone(),
                    order_ids: redaction.order_ids.clone(),
                };
                let (shop, until) = (&redaction.shop, redaction.until);
                held::redact_customer_in_batch(warehouse, self.id, shop, &customer, until)
                    .await
                    .map_err(failed)?;
            }
        }
        Ok(())
    }

    /// Whether an event of the batch may be one the redaction covers.
    fn has_any_of(&self, redaction: &CustomerRedaction) -> bool {
        let received_before = |by_shop: &HashMap<String, HashMap<String, i64>>, ids: &[String]| {
            by_shop.get(&redaction.shop).is_some_and(|received| {
                ids.iter()
                    .filter_map(|id| received.get(id))
                    .any(|first| *first <= redaction.until)
            })
        };
        received_before(&self.customers, &redaction.customer_ids)
            || received_before(&self.orders, &redaction.order_ids)
    }
}

/// Notes that `id` (if any) of `shop` was received at `at`, keeping the earliest time.
fn received(by_shop: &mut HashMap<String, HashMap<String, i64>>, shop: &str, id: &str, at: i64) {
    if id.is_empty() {
        return;
    }
    if let Some(received) = by_shop.get_mut(shop) {
        match received.get_mut(id) {
            Some(first) => *first = (*first).min(at),
            None => {
                received.insert(id.to_string(), at);
            }
        }
        return;
    }
    let received = HashMap::from([(id.to_string(), at)]);
    by_shop.insert(shop.to_string(), received);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::event::EventType;

    fn event(shop: &str, customer: &str, order: &str, received_at: i64) -> SpoolEvent {
        SpoolEvent {
            event_id: Uuid::now_v7(),
            client_event_id: false,
            shop: shop.into(),
            local_date: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            event_time: received_at,
            received_at,
            timestamp_replaced: false,
            event_type: EventType::View,
            attribution: None,
            video_id: String::new(),
            widget_id: String::new(),
            session_id: String::new(),
            customer_id: customer.into(),
            product_id: String::new(),
            order_id: order.into(),
            revenue_e4: 0,
            currency: String::new(),
            product_ids: Vec::new(),
            placement: None,
            device: None,
            country: None,
            source: None,
            watched_ms: 0,
            max_percent: 0,
            group: None,
        }
    }

    #[test]
    fn a_redaction_covers_its_shops_or_its_customers_events_received_until_it() {
        let redactions = Redactions {
            shops: HashMap::from([("gone.myshopify.com".to_string(), 100)]),
            customers: vec![CustomerRedaction {
                shop: "s.myshopify.com".into(),
                customer_ids: vec!["42".into(), "gid://shopify/Customer/42".into()],
                order_ids: vec!["9001".into()],
                until: 100,
            }],
        };
        let covered = |e: &SpoolEvent| redactions.covers(e);
        assert!(covered(&event("gone.myshopify.com", "", "", 100)));
        assert!(!covered(&event("gone.myshopify.com", "", "", 101)));
        assert!(covered(&event("s.myshopify.com", "42", "", 50)));
        assert!(covered(&event("s.myshopify.com", "", "9001", 50)));
        assert!(!covered(&event("s.myshopify.com", "42", "", 101)));
        assert!(!covered(&event("s.myshopify.com", "43", "", 50)));
        assert!(!covered(&event("s.myshopify.com", "", "", 50)));
        assert!(!covered(&event("other.myshopify.com", "42", "9001", 50)));
    }

    #[test]
    fn a_batch_knows_when_each_shop_customer_and_order_was_first_seen() {
        let batch = Batch::of(
            Uuid::now_v7(),
            &[
                event("s.myshopify.com", "42", "", 30),
                event("s.myshopify.com", "42", "7", 10),
                event("s.myshopify.com", "", "", 50),
            ],
        );
        assert_eq!(batch.shops["s.myshopify.com"], (10, 50));
        assert_eq!(batch.customers["s.myshopify.com"]["42"], 10);
        assert_eq!(batch.orders["s.myshopify.com"]["7"], 10);
        let redaction = |customer: &str, until| CustomerRedaction {
            shop: "s.myshopify.com".into(),
            customer_ids: vec![customer.into()],
            order_ids: Vec::new(),
            until,
        };
        assert!(batch.has_any_of(&redaction("42", 10)));
        assert!(!batch.has_any_of(&redaction("42", 9)));
        assert!(!batch.has_any_of(&redaction("43", 100)));
    }
}
