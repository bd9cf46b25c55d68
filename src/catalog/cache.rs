//! The per-shop snapshot cache. A storefront request on a warm cache touches no database.
//!
//! Staleness is bounded three ways: a catalog write invalidates its shop at once on the instance
//! that made it; every other instance hears of it through Postgres `NOTIFY`; and a TTL covers a
//! notification lost while the listener was reconnecting (on reconnect the cache is flushed too).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use moka::future::Cache;
use sqlx::PgPool;

use super::domain::ShopDomain;
use super::snapshot::ShopSnapshot;

/// `None` marks a shop that is not installed, so unknown shops cost no query either.
type Entry = Option<Arc<ShopSnapshot>>;

#[derive(Clone)]
pub struct CatalogCache {
    inner: Arc<Inner>,
}

struct Inner {
    snapshots: Cache<ShopDomain, Entry>,
    pool: PgPool,
    /// Bumped by every invalidation; a load that saw it move may have read old data.
    invalidations: AtomicU64,
    loads: AtomicU64,
    /// `catalog_cache_hits_total`, resolved once: every storefront request counts one, and
    /// `counter!` looks its name up in the registry on each use.
    hits: metrics::Counter,
}

impl CatalogCache {
    pub fn new(pool: PgPool, ttl: Duration, max_shops: u64) -> Self {
        CatalogCache {
            inner: Arc::new(Inner {
                snapshots: Cache::builder()
                    .max_capacity(max_shops)
                    .time_to_live(ttl)
                    .build(),
                pool,
                invalidations: AtomicU64::new(0),
                loads: AtomicU64::new(0),
                hits: metrics::counter!("catalog_cache_hits_total"),
            }),
        }
    }

    /// The shop's snapshot, loading it on a miss. Concurrent misses for one shop share one load.
    pub async fn get(&self, shop: &ShopDomain) -> Result<Entry, Arc<sqlx::Error>> {
        if let Some(entry) = self.inner.snapshots.get(shop).await {
            self.inner.hits.increment(1);
            return Ok(entry);
        }
        metrics::counter!("catalog_cache_misses_total").increment(1);
        // Boxed: a load's future (the Postgres reads) is kilobytes, and without the box every
        // caller's future would be that large, hit or miss, and copied so on every request.
        Box::pin(
            self.inner
                .snapshots
                .try_get_with_by_ref(shop, self.load(shop)),
        )
        .await
    }

    async fn load(&self, shop: &ShopDomain) -> Result<Entry, sqlx::Error> {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            let seen = self.inner.invalidations.load(Ordering::SeqCst);
            let started = Instant::now();
            let snapshot = ShopSnapshot::load(&self.inner.pool, shop).await?;
            self.inner.loads.fetch_add(1, Ordering::Relaxed);
            metrics::counter!("catalog_cache_loads_total").increment(1);
            metrics::histogram!("catalog_snapshot_load_seconds")
                .record(started.elapsed().as_secs_f64());
            // An invalidation during the read may concern data we read before it committed:
            // read again rather than cache something already stale.
            if self.inner.invalidations.load(Ordering::SeqCst) == seen || attempt == ATTEMPTS {
                return Ok(snapshot.map(Arc::new));
            }
        }
        unreachable!("the last attempt always returns")
    }

    pub async fn invalidate(&self, shop: &ShopDomain) {
        self.inner.invalidations.fetch_add(1, Ordering::SeqCst);
        metrics::counter!("catalog_cache_invalidations_total").increment(1);
        self.inner.snapshots.invalidate(shop).await;
    }

    pub fn invalidate_all(&self) {
        self.inner.invalidations.fetch_add(1, Ordering::SeqCst);
        metrics::counter!("catalog_cache_flushes_total").increment(1);
        self.inner.snapshots.invalidate_all();
    }

    /// How many snapshots this cache has read from Postgres (for tests and diagnostics).
    pub fn loads(&self) -> u64 {
        self.inner.loads.load(Ordering::Relaxed)
    }
}
