//! The storefront's `viewCount`: lifetime views per video, read from ClickHouse's daily view at
//! most once per refresh interval (default a minute) per shop. Requests never wait for a refresh
//! except a shop's very first one (briefly); while ClickHouse is unreachable the last known
//! counts (or zeros) are served and the storefront keeps working.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clickhouse::Row;
use moka::future::Cache;
use serde::Deserialize;
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;
use crate::warehouse::error::WarehouseError;
use crate::warehouse::Warehouse;

const VIEW_COUNTS_SQL: &str = include_str!("../../sql/25_storefront_view_counts.sql");
/// A shop's first request waits at most this long for its counts.
const FIRST_FETCH_TIMEOUT: Duration = Duration::from_millis(500);
/// After a failed read, try again this much sooner than a full interval.
const RETRY_AFTER_FAILURE: Duration = Duration::from_secs(5);
/// A refresh that takes longer counts as failed.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);

/// Lifetime view counts per video of one shop, as last read from ClickHouse.
#[derive(Debug, Default)]
pub struct ViewCountSet {
    pub counts: HashMap<Uuid, u64>,
    /// Changes whenever the counts do; part of the storefront's ETag.
    pub tag: u64,
}

struct ShopCounts {
    counts: Arc<ViewCountSet>,
    fetched_at: Option<Instant>,
    refreshing: bool,
}

#[derive(Clone)]
pub struct ViewCounts {
    shops: Cache<ShopDomain, Arc<Mutex<ShopCounts>>>,
    warehouse: Warehouse,
    refresh_every: Duration,
}

#[derive(Row, Deserialize)]
struct VideoViews {
    video_id: String,
    views: u64,
}

impl ViewCounts {
    pub fn new(warehouse: Warehouse, refresh_every: Duration) -> Self {
        ViewCounts {
            shops: Cache::new(100_000),
            warehouse,
            refresh_every,
        }
    }

    /// The counts to render with now.
    pub async fn current(&self, shop: &ShopDomain) -> Arc<ViewCountSet> {
        let entry = self
            .shops
            .get_with_by_ref(shop, async {
                Arc::new(Mutex::new(ShopCounts {
                    counts: Arc::default(),
                    fetched_at: None,
                    refreshing: false,
                }))
            })
            .await;
        let (counts, first, due) = {
            let mut state = entry.lock().unwrap_or_else(|e| e.into_inner());
            let due = !state.refreshing
                && state
                    .fetched_at
                    .is_none_or(|t| t.elapsed() >= self.refresh_every);
            if due {
                state.refreshing = true;
            }
            (state.counts.clone(), state.fetched_at.is_none(), due)
        };
        if !due {
            return counts;
        }
        let refresh = self.clone().refresh(shop.clone(), entry.clone());
        if first {
            // Wait briefly the first time; past that, the refresh finishes in the background.
            let task = tokio::spawn(refresh);
            let _ = tokio::time::timeout(FIRST_FETCH_TIMEOUT, task).await;
            return entry
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .counts
                .clone();
        }
        tokio::spawn(refresh);
        counts
    }

    async fn refresh(self, shop: ShopDomain, entry: Arc<Mutex<ShopCounts>>) {
        let fetched = self.fetch(&shop).await;
        let mut state = entry.lock().unwrap_or_else(|e| e.into_inner());
        state.refreshing = false;
        match fetched {
            Ok(fresh) => {
                if fresh.tag != state.counts.tag {
                    state.counts = Arc::new(fresh);
                }
                state.fetched_at = Some(Instant::now());
            }
            Err(e) => {
                metrics::counter!("storefront_view_count_refresh_failures_total").increment(1);
                tracing::warn!(error = %e, %shop, "view counts not refreshed; serving the last known");
                let retry_at =
                    Instant::now() - self.refresh_every.saturating_sub(RETRY_AFTER_FAILURE);
                state.fetched_at = Some(retry_at);
            }
        }
    }

    async fn fetch(&self, shop: &ShopDomain) -> Result<ViewCountSet, WarehouseError> {
        let query = self
            .warehouse
            .client()
            .query(VIEW_COUNTS_SQL)
            .bind(shop.as_str())
            .fetch_all::<VideoViews>();
        let rows = tokio::time::timeout(FETCH_TIMEOUT, query)
            .await
            .map_err(|_| WarehouseError::timed_out(FETCH_TIMEOUT))??;
        let mut counts: Vec<(Uuid, u64)> = rows
            .into_iter()
            .filter_map(|r| Uuid::parse_str(&r.video_id).ok().map(|id| (id, r.views)))
            .collect();
        counts.sort_unstable();
        let mut hasher = DefaultHasher::new();
        counts.hash(&mut hasher);
        Ok(ViewCountSet {
            counts: counts.into_iter().collect::<HashMap<_, _>>(),
            tag: hasher.finish(),
        })
    }
}
