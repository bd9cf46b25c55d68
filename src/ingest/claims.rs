//! Counted once: a client that retries sends the same `eventId` again, and a reloaded
//! thank-you page sends the same order again. Before a spool batch goes to ClickHouse, the
//! shipper claims, in Postgres, each client-chosen event id and each order id of the batch for
//! that batch. An id that another batch holds was counted already: its event is left out. A
//! batch that is retried (after a timeout, a crash) finds its own claims and keeps the same
//! events, so the claims never lose an event that the retry must still insert.
//!
//! Postgres, not ClickHouse, because the claim must be atomic across instances: two instances
//! that received the same event race on the primary key, and exactly one wins.

use std::collections::HashSet;
use std::hash::Hash;
use std::time::Duration;

use sqlx::postgres::{PgArguments, PgPoolOptions, PgRow};
use sqlx::query::QueryAs;
use sqlx::{FromRow, PgPool, Postgres};
use uuid::Uuid;

use super::event::{EventType, SpoolEvent};

/// How long an event id is remembered after its claim.
pub const EVENT_ID_RETENTION: Duration = Duration::from_secs(24 * 60 * 60);

/// Events of one batch that were counted before, by why.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Repeats {
    /// An event id seen before (in this batch or another one).
    pub events: usize,
    /// An order already counted.
    pub orders: usize,
}

#[derive(Clone)]
pub struct Claims {
    db: PgPool,
}

impl Claims {
    /// A small pool of its own, connected on first use: the shipper runs on its own runtime,
    /// and connections belong to the runtime that opened them.
    pub fn connect_lazy(database_url: &str) -> Result<Claims, sqlx::Error> {
        let db = PgPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(Duration::from_secs(10))
            .connect_lazy(database_url)?;
        Ok(Claims { db })
    }

    /// The pool, for the shipper's other Postgres writes.
    pub fn pool(&self) -> &PgPool {
        &self.db
    }

    /// The events of `batch_id` that count: those whose claims this batch holds, each event id
    /// once. Keeps the order of `events`. `retry`: this batch may have claimed before (an
    /// earlier attempt failed after its claims, or a previous process left the batch behind), so
    /// the claims it already holds are looked up too; a first attempt can hold none.
    pub async fn counted(
        &self,
        batch_id: Uuid,
        events: Vec<SpoolEvent>,
        retry: bool,
    ) -> Result<(Vec<SpoolEvent>, Repeats), sqlx::Error> {
        let mut repeats = Repeats::default();

        // A batch may itself hold an event twice (a retry that reached this instance before
        // the first was shipped): the first one stands for both.
        let mut events = events;
        let mut seen = HashSet::new();
        repeats.events += drop_unless(&mut events, |e| {
            !e.client_event_id || seen.insert((e.shop.clone(), e.event_id))
        });

        let (shops, ids): (Vec<&str>, Vec<Uuid>) = events
            .iter()
            .filter(|e| e.client_event_id)
            .map(|e| (e.shop.as_str(), e.event_id))
            .unzip();
        if !ids.is_empty() {
            let sql = if retry {
                CLAIM_OR_FIND_EVENTS_SQL
            } else {
                CLAIM_EVENTS_SQL
            };
            let query = sqlx::query_as(sql).bind(&shops).bind(&ids);
            let owned: HashSet<(String, Uuid)> = self.owned(query, batch_id).await?;
            repeats.events += drop_unless(&mut events, |e| {
                !e.client_event_id || owned.contains(&(e.shop.clone(), e.event_id))
            });
        }

        let orders: Vec<(&str, &str, Uuid)> = events
            .iter()
            .filter(|e| e.event_type == EventType::CheckoutCompleted && !e.order_id.is_empty())
            .map(|e| (e.shop.as_str(), e.order_id.as_str(), e.event_id))
            .collect();
        if !orders.is_empty() {
            let shops: Vec<&str> = orders.iter().map(|o| o.0).collect();
            let order_ids: Vec<&str> = orders.iter().map(|o| o.1).collect();
            let event_ids: Vec<Uuid> = orders.iter().map(|o| o.2).collect();
            let sql = if retry {
                CLAIM_OR_FIND_ORDERS_SQL
            } else {
                CLAIM_ORDERS_SQL
            };
            let query = sqlx::query_as(sql)
                .bind(&shops)
                .bind(&order_ids)
                .bind(&event_ids);
            let owned: HashSet<(String, String, Uuid)> = self.owned(query, batch_id).await?;
            repeats.orders += drop_unless(&mut events, |e| {
                e.event_type != EventType::CheckoutCompleted
                    || e.order_id.is_empty()
                    || owned.contains(&(e.shop.clone(), e.order_id.clone(), e.event_id))
            });
        }
        Ok((events, repeats))
    }

    /// Runs a claim query with the batch id bound last; the keys it returns are the ones this
    /// batch owns.
    async fn owned<'q, T>(
        &self,
        query: QueryAs<'q, Postgres, T, PgArguments>,
        batch_id: Uuid,
    ) -> Result<HashSet<T>, sqlx::Error>
    where
        T: for<'r> FromRow<'r, PgRow> + Eq + Hash + Send + Unpin,
    {
        let rows = query.bind(batch_id).fetch_all(&self.db).await?;
        Ok(rows.into_iter().collect())
    }

    /// Gives up the claims of a batch that will never reach ClickHouse (ClickHouse refused its
    /// data), so that a later copy of those events still counts.
    pub async fn release(&self, batch_id: Uuid) -> Result<(), sqlx::Error> {
        sqlx::query("DELETE FROM event_claims WHERE batch_id = $1")
            .bind(batch_id)
            .execute(&self.db)
            .await?;
        sqlx::query("DELETE FROM order_claims WHERE batch_id = $1")
            .bind(batch_id)
            .execute(&self.db)
            .await?;
        Ok(())
    }

    /// Forgets event ids claimed longer ago than [`EVENT_ID_RETENTION`]. Order claims stay.
    pub async fn forget_old_event_ids(&self) -> Result<u64, sqlx::Error> {
        let done = sqlx::query("DELETE FROM event_claims WHERE claimed_at < now() - $1::interval")
            .bind(format!("{} seconds", EVENT_ID_RETENTION.as_secs()))
            .execute(&self.db)
            .await?;
        Ok(done.rows_affected())
    }
}

/// Claims each `(shop, event id)` for the batch; returns the pairs it claimed.
const CLAIM_EVENTS_SQL: &str = "
INSERT INTO event_claims (shop_domain, event_id, batch_id)
SELECT shop_domain, event_id, $3 FROM unnest($1::text[], $2::uuid[]) AS b(shop_domain, event_id)
ON CONFLICT (shop_domain, event_id) DO NOTHING
RETURNING shop_domain, event_id";

/// The same, and the pairs the batch claimed on an earlier attempt. (The second part reads the
/// table as it was before this statement, so a pair is never returned twice.)
const CLAIM_OR_FIND_EVENTS_SQL: &str = "
WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::uuid[]) AS b(shop_domain, event_id)
), claimed AS (
    INSERT INTO event_claims (shop_domain, event_id, batch_id)
    SELECT shop_domain, event_id, $3 FROM batch
    ON CONFLICT (shop_domain, event_id) DO NOTHING
    RETURNING shop_domain, event_id
)
SELECT shop_domain, event_id FROM claimed
UNION ALL
SELECT c.shop_domain, c.event_id
FROM event_claims c JOIN batch b USING (shop_domain, event_id)
WHERE c.batch_id = $3";

/// Claims each `(shop, order id)` for the event of the batch that carries it.
const CLAIM_ORDERS_SQL: &str = "
INSERT INTO order_claims (shop_domain, order_id, event_id, batch_id)
SELECT shop_domain, order_id, event_id, $4
FROM unnest($1::text[], $2::text[], $3::uuid[]) AS b(shop_domain, order_id, event_id)
ON CONFLICT (shop_domain, order_id) DO NOTHING
RETURNING shop_domain, order_id, event_id";

/// The same, and the orders the batch claimed on an earlier attempt.
const CLAIM_OR_FIND_ORDERS_SQL: &str = "
WITH batch AS (
    SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[]) AS b(shop_domain, order_id, event_id)
), claimed AS (
    INSERT INTO order_claims (shop_domain, order_id, event_id, batch_id)
    SELECT shop_domain, order_id, event_id, $4 FROM batch
    ON CONFLICT (shop_domain, order_id) DO NOTHING
    RETURNING shop_domain, order_id, event_id
)
SELECT shop_domain, order_id, event_id FROM claimed
UNION ALL
SELECT c.shop_domain, c.order_id, c.event_id
FROM order_claims c JOIN batch b USING (shop_domain, order_id, event_id)
WHERE c.batch_id = $4";

/// Keeps the events `keep` accepts; returns how many it dropped.
fn drop_unless(events: &mut Vec<SpoolEvent>, keep: impl FnMut(&SpoolEvent) -> bool) -> usize {
    let before = events.len();
    events.retain(keep);
    before - events.len()
}

/// Deletes the shop's claims (its redaction): its events and orders are gone with it.
pub async fn erase_shop(
    tx: &mut sqlx::Transaction<'_, Postgres>,
    shop: &str,
) -> Result<(), sqlx::Error> {
    for table in ["event_claims", "order_claims"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE shop_domain = $1"))
            .bind(shop)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}

/// Deletes a batch's claims of these shops: redacted while the batch went in, nothing of them
/// stays (`ingest::redactions`).
pub async fn erase_batch(
    tx: &mut sqlx::Transaction<'_, Postgres>,
    batch_id: Uuid,
    shops: &[&str],
) -> Result<(), sqlx::Error> {
    for table in ["event_claims", "order_claims"] {
        let sql = format!("DELETE FROM {table} WHERE batch_id = $1 AND shop_domain = ANY($2)");
        sqlx::query(&sql)
            .bind(batch_id)
            .bind(shops)
            .execute(&mut **tx)
            .await?;
    }
    Ok(())
}
