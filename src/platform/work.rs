//! Webhook work: deliveries recorded in Postgres (`webhook_deliveries`) and done by a worker in
//! each instance, after the delivery was answered.
//!
//! A worker takes due deliveries in batches, leasing them (their next attempt moves past the
//! lease), so instances share the work without doing a delivery twice at once, and a delivery
//! whose worker died is taken again when its lease ends. Product changes of one shop in a batch
//! are applied as one catalog write, so a burst of product webhooks costs a few transactions.
//! A failed delivery is retried with exponential backoff, and given up after its last attempt.
//! Deliveries whose work ended longer ago than the retention are deleted by the worker, every
//! few minutes, and so are the records of redactions past theirs (`ingest::redactions`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use backon::BackoffBuilder;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use tokio::sync::Notify;

use super::topics::{
    Topic, Work, COLLECTIONS_TOPIC, HOLDOUT_TOPIC, IMPORT_TOPIC, INSTALL_TOPICS, PIXEL_TOPIC,
};
use super::{credentials, install, privacy, Platform};
use crate::catalog::cache::CatalogCache;
use crate::catalog::domain::ShopDomain;
use crate::catalog::products::{self, PlatformChange};
use crate::catalog::{shops, CatalogError};
use crate::ingest::redactions;
use crate::warehouse::Warehouse;

/// Deliveries taken at once.
const BATCH: i64 = 500;
/// How long a taken delivery is the taker's; work on a batch takes far less.
const LEASE: Duration = Duration::from_secs(60);
/// With nothing signalled, the worker looks for due deliveries (retries, other instances'
/// deliveries, those left by a crash) this often.
const POLL: Duration = Duration::from_secs(1);
/// Attempts before a delivery is given up: with the backoff below, about a day.
const MAX_ATTEMPTS: i32 = 30;
/// How often a worker deletes deliveries past the retention: rows wait at most this long past it.
const PRUNE_EVERY: Duration = Duration::from_secs(600);
/// Rows deleted by one statement, so that pruning a long backlog never holds one long
/// transaction over the table the requests write to.
const PRUNE_BATCH: i64 = 10_000;

/// Records a delivery; `false` if its id was recorded before (the delivery came again).
pub async fn record(
    db: &PgPool,
    webhook_id: &str,
    shop: &ShopDomain,
    topic: Topic,
    work: &Work,
) -> Result<bool, sqlx::Error> {
    insert(db, webhook_id, shop, topic.as_str(), work).await
}

/// Records the work of an install, each piece retried on its own: the pixel's activation, then
/// the import of the shop's collections, then of its products.
pub async fn record_install(db: &PgPool, shop: &ShopDomain) -> Result<(), sqlx::Error> {
    let work = [
        (PIXEL_TOPIC, Work::ActivatePixel),
        (COLLECTIONS_TOPIC, Work::ImportCollections { after: None }),
        (IMPORT_TOPIC, Work::ImportProducts { after: None }),
    ];
    let mut tx = db.begin().await?;
    for (topic, work) in work {
        let id = format!("{topic}:{}", uuid::Uuid::now_v7());
        insert(&mut *tx, &id, shop, topic, &work).await?;
    }
    tx.commit().await
}

/// Records the publication of the shop's holdout to its theme, after a change of it. The work
/// publishes the holdout as it is when it runs: of several changes, the last one wins, in
/// whatever order their work is done. A shop the platform did not install (no access token) has
/// no theme to publish to, and nothing is recorded.
pub async fn record_holdout_change(db: &PgPool, shop: &ShopDomain) -> Result<(), sqlx::Error> {
    if !credentials::exists(db, shop).await? {
        return Ok(());
    }
    let id = format!("{HOLDOUT_TOPIC}:{}", uuid::Uuid::now_v7());
    insert(db, &id, shop, HOLDOUT_TOPIC, &Work::PublishHoldout)
        .await
        .map(drop)
}

/// Whether the work of the shop's latest install is not all done yet (none given up, either).
pub async fn install_pending(db: &PgPool, shop: &ShopDomain) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM webhook_deliveries WHERE shop_domain = $1 \
         AND topic = ANY($2) AND done_at IS NULL AND failed_at IS NULL)",
    )
    .bind(shop.as_str())
    .bind(&INSTALL_TOPICS[..])
    .fetch_one(db)
    .await
}

async fn insert<'e>(
    db: impl sqlx::PgExecutor<'e>,
    webhook_id: &str,
    shop: &ShopDomain,
    topic: &str,
    work: &Work,
) -> Result<bool, sqlx::Error> {
    let inserted = sqlx::query(
        "INSERT INTO webhook_deliveries (webhook_id, shop_domain, topic, work) \
         VALUES ($1, $2, $3, $4) ON CONFLICT (webhook_id) DO NOTHING",
    )
    .bind(webhook_id)
    .bind(shop.as_str())
    .bind(topic)
    .bind(sqlx::types::Json(work))
    .execute(db)
    .await?
    .rows_affected();
    Ok(inserted == 1)
}

/// Deletes the shop's deliveries but `except` (a shop's redaction, whose own delivery is
/// marked done after).
pub async fn erase_shop<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    shop: &str,
    except: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM webhook_deliveries WHERE shop_domain = $1 AND webhook_id <> $2")
        .bind(shop)
        .bind(except)
        .execute(executor)
        .await?;
    Ok(())
}

/// Deletes the shop's finished deliveries whose work names the customer (their number), but
/// `except` (the customer's redaction, marked done after).
pub async fn erase_customer<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    shop: &str,
    customer: &str,
    except: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "DELETE FROM webhook_deliveries WHERE shop_domain = $1 AND webhook_id <> $3 \
         AND (done_at IS NOT NULL OR failed_at IS NOT NULL) \
         AND jsonb_exists(work -> 'customer' -> 'ids', $2)",
    )
    .bind(shop)
    .bind(customer)
    .bind(except)
    .execute(executor)
    .await?;
    Ok(())
}

/// Saves a long piece of work's progress (an import's cursor) and extends its lease: a worker
/// that takes it after a crash goes on from there.
pub async fn save_progress(db: &PgPool, webhook_id: &str, work: &Work) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE webhook_deliveries SET work = $2, \
         next_attempt_at = now() + make_interval(secs => $3) WHERE webhook_id = $1",
    )
    .bind(webhook_id)
    .bind(sqlx::types::Json(work))
    .bind(LEASE.as_secs_f64())
    .execute(db)
    .await?;
    Ok(())
}

/// One taken delivery.
#[derive(sqlx::FromRow)]
pub struct Taken {
    pub webhook_id: String,
    shop_domain: String,
    topic: String,
    pub work: sqlx::types::Json<Work>,
    attempts: i32,
    pub received_at: DateTime<Utc>,
}

/// What the worker works with.
#[derive(Clone)]
pub struct Worker {
    pub db: PgPool,
    pub warehouse: Warehouse,
    pub catalog: CatalogCache,
    /// The platform's endpoints and the token key; `None` when the platform settings are off
    /// (an import then waits, retried, until an instance that has them takes it).
    pub platform: Option<Arc<Platform>>,
    /// How long a delivery is kept after its work ended (done or given up).
    pub retention: Duration,
}

/// Does the recorded deliveries' work until the process ends. `wake` is signalled when a
/// delivery is recorded.
pub fn spawn_worker(worker: Worker, wake: Arc<Notify>) {
    tokio::spawn(async move {
        let mut pruned_at: Option<Instant> = None;
        loop {
            if pruned_at.is_none_or(|at| at.elapsed() >= PRUNE_EVERY) {
                pruned_at = Some(Instant::now());
                match prune(&worker.db, worker.retention).await {
                    Ok(0) => {}
                    Ok(deleted) => tracing::info!(deleted, "pruned old webhook deliveries"),
                    Err(e) => tracing::warn!(error = %e, "cannot prune webhook deliveries"),
                }
                let kept = redactions::REDACTIONS_KEPT;
                match redactions::forget_older_than(&worker.db, kept).await {
                    Ok(0) => {}
                    Ok(forgotten) => tracing::info!(forgotten, "forgot old redaction records"),
                    Err(e) => tracing::warn!(error = %e, "cannot forget old redaction records"),
                }
            }
            if let Err(e) = work_until_idle(&worker).await {
                tracing::warn!(error = %e, "cannot read due webhook deliveries");
            }
            let _ = tokio::time::timeout(POLL, wake.notified()).await;
        }
    });
}

/// Does the due deliveries' work, a batch at a time, until none is left due; how many
/// deliveries it took. The worker does this each time it wakes; a caller that must know the work
/// is done (a test, before it asserts) does it at once. Deliveries another worker holds, and
/// retries not yet due, are left to their time.
pub async fn work_until_idle(worker: &Worker) -> Result<usize, sqlx::Error> {
    let mut worked = 0;
    loop {
        let taken = take_due(&worker.db).await?;
        let full = taken.len() as i64 == BATCH;
        worked += taken.len();
        work_on(worker, taken).await;
        if !full {
            return Ok(worked);
        }
    }
}

/// Deletes the deliveries whose work ended (done, or given up) more than `retention` ago; how
/// many. A delivery is kept at least `retention` after it was received, which the settings make
/// longer than the replay window: every repeat the window lets in still finds its id.
pub async fn prune(db: &PgPool, retention: Duration) -> Result<u64, sqlx::Error> {
    let mut deleted = 0;
    loop {
        let batch = sqlx::query(
            "DELETE FROM webhook_deliveries WHERE webhook_id IN ( \
               SELECT webhook_id FROM webhook_deliveries \
               WHERE (done_at IS NOT NULL OR failed_at IS NOT NULL) \
                 AND coalesce(done_at, failed_at) < now() - make_interval(secs => $1) \
               LIMIT $2)",
        )
        .bind(retention.as_secs_f64())
        .bind(PRUNE_BATCH)
        .execute(db)
        .await?
        .rows_affected();
        deleted += batch;
        metrics::counter!("webhooks_pruned_total").increment(batch);
        if batch < PRUNE_BATCH as u64 {
            return Ok(deleted);
        }
    }
}

async fn take_due(db: &PgPool) -> Result<Vec<Taken>, sqlx::Error> {
    sqlx::query_as(
        "UPDATE webhook_deliveries d \
         SET attempts = d.attempts + 1, next_attempt_at = now() + make_interval(secs => $2) \
         FROM (SELECT webhook_id FROM webhook_deliveries \
               WHERE done_at IS NULL AND failed_at IS NULL AND next_attempt_at <= now() \
               ORDER BY received_at, webhook_id LIMIT $1 FOR UPDATE SKIP LOCKED) due \
         WHERE d.webhook_id = due.webhook_id \
         RETURNING d.webhook_id, d.shop_domain, d.topic, d.work, d.attempts, d.received_at",
    )
    .bind(BATCH)
    .bind(LEASE.as_secs_f64())
    .fetch_all(db)
    .await
}

/// What one shop's deliveries in a batch ask, in the order they were received.
#[derive(Default)]
struct ShopWork<'t> {
    uninstall: Vec<&'t Taken>,
    products: Vec<&'t Taken>,
    /// Done one at a time, last.
    privacy: Vec<&'t Taken>,
    /// The calls to the platform (an install's, a holdout's publication), in the order they were
    /// recorded.
    imports: Vec<&'t Taken>,
}

async fn work_on(worker: &Worker, mut taken: Vec<Taken>) {
    let (db, catalog) = (&worker.db, &worker.catalog);
    if taken.is_empty() {
        return;
    }
    // RETURNING does not keep the subquery's order.
    taken.sort_by(|a, b| (a.received_at, &a.webhook_id).cmp(&(b.received_at, &b.webhook_id)));
    let mut by_shop: BTreeMap<&str, ShopWork> = BTreeMap::new();
    for delivery in &taken {
        let shop = by_shop.entry(delivery.shop_domain.as_str()).or_default();
        match &delivery.work.0 {
            Work::Uninstall => shop.uninstall.push(delivery),
            Work::Product { .. } => shop.products.push(delivery),
            Work::CustomerReport { .. } | Work::CustomerRedact { .. } | Work::ShopRedact => {
                shop.privacy.push(delivery)
            }
            Work::ImportProducts { .. }
            | Work::ActivatePixel
            | Work::ImportCollections { .. }
            | Work::PublishHoldout => shop.imports.push(delivery),
        }
    }
    for (shop, work) in by_shop {
        let Ok(shop) = ShopDomain::parse(shop) else {
            // Parsed when it arrived; a row that no longer parses is given up.
            let all = [
                &work.uninstall,
                &work.products,
                &work.privacy,
                &work.imports,
            ];
            let deliveries: Vec<&Taken> = all.into_iter().flatten().copied().collect();
            finish(
                db,
                &deliveries,
                Err("the shop domain does not parse".into()),
            )
            .await;
            continue;
        };
        if !work.products.is_empty() {
            let changes: Vec<PlatformChange> = work
                .products
                .iter()
                .filter_map(|d| match &d.work.0 {
                    Work::Product { change } => Some(change.clone()),
                    _ => None,
                })
                .collect();
            let outcome = match products::apply_platform_changes(db, &shop, &changes).await {
                // A shop that is not installed has no catalog to keep in step.
                Ok(()) | Err(CatalogError::ShopNotFound) => Ok(()),
                Err(e) => Err(e.to_string()),
            };
            if outcome.is_ok() {
                catalog.invalidate(&shop).await;
            }
            finish(db, &work.products, outcome).await;
        }
        for delivery in work.imports {
            let outcome = match &delivery.work.0 {
                Work::ActivatePixel => install::activate_pixel(worker, &shop).await,
                Work::PublishHoldout => install::publish_holdout(worker, &shop).await,
                _ => install::import(worker, &shop, delivery).await,
            };
            finish(db, &[delivery], outcome).await;
        }
        if !work.uninstall.is_empty() {
            let outcome = match shops::uninstall(db, &shop).await {
                // The platform revokes the access token with the uninstall.
                Ok(()) | Err(CatalogError::ShopNotFound) => credentials::erase(db, &shop)
                    .await
                    .map_err(|e| e.to_string()),
                Err(e) => Err(e.to_string()),
            };
            if outcome.is_ok() {
                catalog.invalidate(&shop).await;
            }
            finish(db, &work.uninstall, outcome).await;
        }
        for delivery in work.privacy {
            let outcome = privacy_work(worker, &shop, delivery).await;
            if outcome.is_ok() {
                catalog.invalidate(&shop).await;
            }
            finish(db, &[delivery], outcome).await;
        }
    }
}

async fn privacy_work(worker: &Worker, shop: &ShopDomain, delivery: &Taken) -> Result<(), String> {
    let (db, warehouse) = (&worker.db, &worker.warehouse);
    match &delivery.work.0 {
        Work::CustomerReport {
            customer,
            data_request_id,
            requested_at,
        } => {
            let request = (customer, data_request_id.as_str(), *requested_at);
            privacy::report(db, warehouse, shop, request).await
        }
        Work::CustomerRedact { customer } => {
            let request = (delivery.webhook_id.as_str(), delivery.received_at);
            privacy::redact_customer(db, warehouse, shop, customer, request).await
        }
        Work::ShopRedact => {
            let request = (delivery.webhook_id.as_str(), delivery.received_at);
            privacy::redact_shop(db, warehouse, shop, request).await
        }
        Work::Uninstall
        | Work::Product { .. }
        | Work::ImportProducts { .. }
        | Work::ActivatePixel
        | Work::ImportCollections { .. }
        | Work::PublishHoldout => Ok(()),
    }
}

/// Records how the deliveries' attempt ended: done, to be retried after a backoff, or given up.
/// Each is counted once its row says so, so that a count never runs ahead of the record.
async fn finish(db: &PgPool, deliveries: &[&Taken], outcome: Result<(), String>) {
    for delivery in deliveries {
        let topic = topic_label(&delivery.topic);
        let result = match &outcome {
            Ok(()) => {
                let done = sqlx::query(
                    "UPDATE webhook_deliveries SET done_at = now() WHERE webhook_id = $1",
                )
                .bind(&delivery.webhook_id)
                .execute(db)
                .await;
                metrics::counter!("webhooks_done_total", "topic" => topic).increment(1);
                done
            }
            Err(error) => {
                let give_up = delivery.attempts >= MAX_ATTEMPTS;
                tracing::warn!(webhook = %delivery.webhook_id, topic, attempts = delivery.attempts, give_up, %error, "webhook work failed");
                let failed = sqlx::query(
                    "UPDATE webhook_deliveries SET last_error = $2, \
                     next_attempt_at = now() + make_interval(secs => $3), \
                     failed_at = CASE WHEN $4 THEN now() END WHERE webhook_id = $1",
                )
                .bind(&delivery.webhook_id)
                .bind(error)
                .bind(retry_delay(delivery.attempts).as_secs_f64())
                .bind(give_up)
                .execute(db)
                .await;
                metrics::counter!("webhooks_failed_total", "topic" => topic).increment(1);
                if give_up {
                    metrics::counter!("webhooks_given_up_total", "topic" => topic).increment(1);
                }
                failed
            }
        };
        // The lease runs out and the delivery is taken again: done twice at worst, which every
        // piece of work tolerates (the catalog keeps only newer states; uninstall is idempotent).
        if let Err(e) = result {
            tracing::warn!(webhook = %delivery.webhook_id, error = %e, "cannot record the end of webhook work");
        }
    }
}

/// The `topic` label: one of the known topics, whatever the row says.
fn topic_label(raw: &str) -> &'static str {
    match Topic::parse(raw) {
        Some(topic) => topic.as_str(),
        None => INSTALL_TOPICS
            .into_iter()
            .chain([HOLDOUT_TOPIC])
            .find(|t| *t == raw)
            .unwrap_or("other"),
    }
}

/// Before attempt `attempts + 1`: 1 s, doubling, at most an hour.
fn retry_delay(attempts: i32) -> Duration {
    let mut delays = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(3600))
        .with_max_times(MAX_ATTEMPTS as usize)
        .build();
    let n = usize::try_from(attempts.max(1) - 1).unwrap_or(0);
    delays.nth(n).unwrap_or(Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_back_off_from_a_second_to_an_hour() {
        assert_eq!(retry_delay(1), Duration::from_secs(1));
        assert_eq!(retry_delay(2), Duration::from_secs(2));
        assert_eq!(retry_delay(5), Duration::from_secs(16));
        assert_eq!(retry_delay(MAX_ATTEMPTS), Duration::from_secs(3600));
    }
}
