//! Sorted listings kept in memory. Paging through a list, downloading it, or a dashboard asking
//! again all need the same thing: every video (or widget) of the shop with its totals over the
//! range, sorted. Over a long range that is the expensive part (ClickHouse sums each video's months
//! and days), while a page is a slice of it.
//!
//! An entry is exact, never merely recent: its key holds the shop's [`DataVersions`], read before
//! the listing is computed, and those move after every catalog write and after every batch of the
//! shop's events lands in ClickHouse. A request that reads newer versions misses and computes
//! afresh; old entries are never asked for again and age out.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

use super::dates::DateRange;
use super::handlers::{SortKey, SortOrder};
use super::queries::Totals;
use crate::catalog::domain::ShopDomain;
use crate::catalog::shops::DataVersions;
use crate::catalog::{videos::Video, widgets::Widget};
use crate::error::ApiError;

/// Rows (videos or widgets) all entries of one list together may hold: some tens of megabytes.
const MAX_ROWS: u64 = 200_000;

/// An entry nobody asked for this long is dropped: it is only memory by then.
const IDLE: Duration = Duration::from_secs(600);

/// An item of a listing with its totals, and those of the comparison range when asked for.
pub type Counted<T> = (T, Totals, Option<Totals>);

/// Everything a sorted listing depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ListKey {
    pub shop: ShopDomain,
    pub range: DateRange,
    pub comparison: Option<DateRange>,
    pub sort_by: SortKey,
    pub sort_order: SortOrder,
    pub versions: DataVersions,
}

/// The sorted listings of one kind of item.
pub struct ListCache<T> {
    entries: Cache<ListKey, Arc<Vec<Counted<T>>>>,
    /// `list` label of the hit and miss counters.
    list: &'static str,
}

impl<T: Send + Sync + 'static> ListCache<T> {
    fn new(list: &'static str) -> Self {
        ListCache {
            entries: Cache::builder()
                .max_capacity(MAX_ROWS)
                .weigher(|_, rows: &Arc<Vec<Counted<T>>>| {
                    u32::try_from(rows.len() + 1).unwrap_or(u32::MAX)
                })
                .time_to_idle(IDLE)
                .build(),
            list,
        }
    }

    /// The listing under `key`, computed by `load` on a miss. Concurrent misses of one key share
    /// one load; a failed load is not kept.
    pub(super) async fn get(
        &self,
        key: ListKey,
        load: impl Future<Output = Result<Vec<Counted<T>>, ApiError>>,
    ) -> Result<Arc<Vec<Counted<T>>>, ApiError> {
        let entry = self
            .entries
            .entry(key)
            .or_try_insert_with(async { load.await.map(Arc::new) })
            .await
            .map_err(ApiError::unshare)?;
        if entry.is_fresh() {
            metrics::counter!("analytics_list_cache_misses_total", "list" => self.list)
                .increment(1);
        } else {
            metrics::counter!("analytics_list_cache_hits_total", "list" => self.list).increment(1);
        }
        Ok(entry.into_value())
    }
}

/// The list caches of the analytics API.
pub struct ListCaches {
    pub videos: ListCache<Video>,
    pub widgets: ListCache<Widget>,
}

impl Default for ListCaches {
    fn default() -> Self {
        ListCaches {
            videos: ListCache::new("videos"),
            widgets: ListCache::new("widgets"),
        }
    }
}
