//! The per-shop snapshot cache. A storefront request on a warm cache touches no database.
//!
//! Staleness is bounded three ways: a catalog write invalidates its shop at once on the instance
//! that made it; every other instance hears of it through Postgres `NOTIFY`; and a TTL covers a
//! notification lost while the listener was reconnecting (on reconnect every shop is
//! invalidated too).
//!
//! Invalidating a shop never throws its snapshot away: the next request reloads it, and if the
//! reload fails (Postgres is unreachable) the previous snapshot is served instead. So the
//! storefront, and the shop facts ingestion needs, outlast a Postgres outage on every shop this
//! instance has loaded; only a shop it never loaded cannot be served until Postgres is back.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use moka::future::Cache;
use sqlx::PgPool;

use super::domain::ShopDomain;
use super::snapshot::ShopSnapshot;
use crate::db::Reachability;

/// `None` marks a shop that is not installed, so unknown shops cost no query either.
type Entry = Option<Arc<ShopSnapshot>>;

/// Why a shop's snapshot could not be had: there was none to fall back on, and reading it failed.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SnapshotError {
    /// Postgres is known to be unreachable, or the read found it so.
    #[error("Postgres is unreachable: {0}")]
    Unreachable(String),
    /// Postgres answered, with an error.
    #[error("catalog load failed: {0}")]
    Failed(Arc<sqlx::Error>),
}

#[derive(Clone)]
pub struct CatalogCache {
    inner: Arc<Inner>,
}

struct Inner {
    slots: Cache<ShopDomain, Arc<Slot>>,
    pool: PgPool,
    postgres: Reachability,
    ttl: Duration,
    /// Moved by [`CatalogCache::invalidate_all`]: a snapshot whose load began before the last
    /// move needs a reload.
    epoch: AtomicU64,
    loads: AtomicU64,
    /// `catalog_cache_hits_total`, resolved once: every storefront request counts one, and
    /// `counter!` looks its name up in the registry on each use.
    hits: metrics::Counter,
}

/// One shop's place in the cache: the last snapshot read, if any, and whether it needs a reload.
#[derive(Default)]
struct Slot {
    held: Mutex<Option<Arc<Held>>>,
    /// Set by an invalidation of the shop; cleared as a reload begins, so one that lands during
    /// the reload leaves the reloaded snapshot marked too.
    invalidated: AtomicBool,
    /// One reload at a time: concurrent misses for one shop share one load.
    reloading: tokio::sync::Mutex<()>,
}

struct Held {
    entry: Entry,
    /// When the read that made it began.
    loaded_at: Instant,
    /// [`Inner::epoch`] when the read began.
    epoch: u64,
}

impl Slot {
    fn held(&self) -> Option<Arc<Held>> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn hold(&self, held: Held) {
        *self.held.lock().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(held));
    }
}

impl CatalogCache {
    pub fn new(pool: PgPool, postgres: Reachability, ttl: Duration, max_shops: u64) -> Self {
        CatalogCache {
            inner: Arc::new(Inner {
                // No expiry: a shop's last snapshot is what it is served from while Postgres
                // is away, however long that is. The TTL marks it for a reload instead.
                slots: Cache::builder().max_capacity(max_shops).build(),
                pool,
                postgres,
                ttl,
                epoch: AtomicU64::new(0),
                loads: AtomicU64::new(0),
                hits: metrics::counter!("catalog_cache_hits_total"),
            }),
        }
    }

    /// The shop's snapshot, reloading it when it was invalidated or is older than the TTL. When
    /// the reload fails the previous snapshot is served; only a shop with none fails.
    pub async fn get(&self, shop: &ShopDomain) -> Result<Entry, SnapshotError> {
        let slot = self
            .inner
            .slots
            .get_with_by_ref(shop, async { Arc::new(Slot::default()) })
            .await;
        if let Some(entry) = self.fresh(&slot) {
            self.inner.hits.increment(1);
            return Ok(entry);
        }
        metrics::counter!("catalog_cache_misses_total").increment(1);
        // Postgres is known to be away: no request waits for it while there is a snapshot.
        if self.inner.postgres.is_down() {
            if let Some(held) = slot.held() {
                return Ok(self.served_stale(held));
            }
        }
        let _reloading = slot.reloading.lock().await;
        // Another request may have reloaded it while this one waited.
        if let Some(entry) = self.fresh(&slot) {
            return Ok(entry);
        }
        // Boxed: a load's future (the Postgres reads) is kilobytes, and without the box every
        // caller's future would be that large, hit or miss, and copied so on every request.
        match Box::pin(self.reload(shop, &slot)).await {
            Ok(entry) => Ok(entry),
            Err(e) => match slot.held() {
                Some(held) => {
                    tracing::warn!(%shop, error = %e, "catalog reload failed; serving the last snapshot");
                    Ok(self.served_stale(held))
                }
                None => Err(e),
            },
        }
    }

    fn fresh(&self, slot: &Slot) -> Option<Entry> {
        let held = slot.held()?;
        let fresh = !slot.invalidated.load(Ordering::SeqCst)
            && held.epoch == self.inner.epoch.load(Ordering::SeqCst)
            && held.loaded_at.elapsed() < self.inner.ttl;
        fresh.then(|| held.entry.clone())
    }

    fn served_stale(&self, held: Arc<Held>) -> Entry {
        metrics::counter!("catalog_cache_stale_served_total").increment(1);
        held.entry.clone()
    }

    async fn reload(&self, shop: &ShopDomain, slot: &Slot) -> Result<Entry, SnapshotError> {
        self.inner
            .postgres
            .check()
            .map_err(|e| SnapshotError::Unreachable(e.to_string()))?;
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            let epoch = self.inner.epoch.load(Ordering::SeqCst);
            slot.invalidated.store(false, Ordering::SeqCst);
            let started = Instant::now();
            let load = ShopSnapshot::load(&self.inner.pool, shop);
            let loaded = match self.inner.postgres.unless_down(load).await {
                Ok(Ok(snapshot)) => Ok(snapshot),
                Ok(Err(e)) if self.inner.postgres.observe(&e) => {
                    Err(SnapshotError::Unreachable(e.to_string()))
                }
                Ok(Err(e)) => Err(SnapshotError::Failed(Arc::new(e))),
                Err(down) => Err(SnapshotError::Unreachable(down.to_string())),
            };
            let snapshot = match loaded {
                Ok(snapshot) => snapshot,
                Err(e) => {
                    // What is held was not replaced: it still needs a reload.
                    slot.invalidated.store(true, Ordering::SeqCst);
                    return Err(e);
                }
            };
            self.inner.loads.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("catalog_cache_loads_total").increment(1);
            metrics::histogram!("catalog_snapshot_load_seconds")
                .record(started.elapsed().as_secs_f64());
            let entry = snapshot.map(Arc::new);
            slot.hold(Held {
                entry: entry.clone(),
                loaded_at: started,
                epoch,
            });
            // An invalidation during the read may concern data we read before it committed:
            // read again rather than answer with something already stale. (Kept either way,
            // marked for a reload, so it is what an outage falls back on.)
            let raced = slot.invalidated.load(Ordering::SeqCst)
                || self.inner.epoch.load(Ordering::SeqCst) != epoch;
            if !raced || attempt == ATTEMPTS {
                return Ok(entry);
            }
        }
        unreachable!("the last attempt always returns")
    }

    /// The shop changed: its next request reloads it (and falls back on this snapshot if the
    /// reload fails).
    pub async fn invalidate(&self, shop: &ShopDomain) {
        metrics::counter!("catalog_cache_invalidations_total").increment(1);
        if let Some(slot) = self.inner.slots.get(shop).await {
            slot.invalidated.store(true, Ordering::SeqCst);
        }
    }

    /// Any shop may have changed (notifications were missed): every shop's next request
    /// reloads it, falling back on what is held if the reload fails.
    pub fn invalidate_all(&self) {
        metrics::counter!("catalog_cache_flushes_total").increment(1);
        self.inner.epoch.fetch_add(1, Ordering::SeqCst);
    }

    /// How many snapshots this cache has read from Postgres (for tests and diagnostics).
    pub fn loads(&self) -> u64 {
        self.inner.loads.load(Ordering::Relaxed)
    }
}
