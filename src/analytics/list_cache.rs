//! What the video and widget lists keep in memory. A list needs every video (or widget) of the
//! shop with its totals over the range, sorted; over a long range the totals are the expensive
//! part (ClickHouse sums each video's months and days), while a page is a slice of the sorted
//! list. Two things are kept:
//!
//! - sorted lists, so that another page, the CSV, or the same page asked again is a slice;
//! - the totals of the days before today, so that a shop receiving events (whose numbers move
//!   with every shipped batch, today's) costs a query of today's days only.
//!
//! Both are exact, never merely recent: their keys hold the versions of what they were computed
//! from (`warehouse::changes`: the catalog's, the shop's, and the latest change to a day of the
//! range), read before the computation. A request that reads newer versions misses and computes
//! afresh; entries under old versions are never asked for again and age out.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;

use super::dates::{DateRange, DaySplit};
use super::handlers::{SortKey, SortOrder};
use super::queries::{self, Subject, Totals};
use crate::catalog::domain::ShopDomain;
use crate::catalog::{videos::Video, widgets::Widget};
use crate::error::ApiError;
use crate::warehouse::changes::Versions;
use crate::warehouse::Warehouse;

/// Rows all sorted lists of one kind together may hold.
const MAX_LIST_ROWS: u64 = 100_000;
/// Ids all kept totals together may hold.
const MAX_TOTALS_ROWS: u64 = 200_000;
/// An entry nobody asked for this long is dropped: it is only memory by then.
const IDLE: Duration = Duration::from_secs(600);

/// An item of a listing with its totals, and those of the comparison range when asked for.
pub type Counted<T> = (T, Totals, Option<Totals>);

/// Everything a sorted list depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ListKey {
    pub shop: ShopDomain,
    pub range: DateRange,
    pub comparison: Option<DateRange>,
    pub sort_by: SortKey,
    pub sort_order: SortOrder,
    /// With the versions of the current range's and the comparison range's days.
    pub versions: Versions,
}

/// Everything the totals of some past days depend on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PastKey {
    shop: ShopDomain,
    subject: Subject,
    range: DateRange,
    shop_version: i64,
    days_version: i64,
}

/// The sorted lists of one kind of item.
pub struct ListCache<T> {
    entries: Cache<ListKey, Arc<Vec<Counted<T>>>>,
    /// `list` label of the hit and miss counters.
    list: &'static str,
}

impl<T: Send + Sync + 'static> ListCache<T> {
    fn new(list: &'static str) -> Self {
        ListCache {
            entries: Cache::builder()
                .max_capacity(MAX_LIST_ROWS)
                .weigher(|_, rows: &Arc<Vec<Counted<T>>>| weight(rows.len()))
                .time_to_idle(IDLE)
                .build(),
            list,
        }
    }

    /// The list under `key`, computed by `load` on a miss. Concurrent misses of one key share one
    /// load; a failed load is not kept.
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
        count(self.list, entry.is_fresh());
        Ok(entry.into_value())
    }
}

/// Totals by id over a range: those of its past days (kept) plus those of the rest (asked).
#[derive(Default)]
pub(super) struct RangeTotals {
    past: Option<Arc<HashMap<String, Totals>>>,
    rest: HashMap<String, Totals>,
}

impl RangeTotals {
    /// The id's totals, zero where nothing happened.
    pub fn of(&self, id: &str) -> Totals {
        let mut totals = self.rest.get(id).copied().unwrap_or_default();
        if let Some(past) = self.past.as_ref().and_then(|p| p.get(id)) {
            totals += *past;
        }
        totals
    }
}

/// The analytics API's caches.
pub struct ListCaches {
    pub videos: ListCache<Video>,
    pub widgets: ListCache<Widget>,
    past: Cache<PastKey, Arc<HashMap<String, Totals>>>,
}

impl Default for ListCaches {
    fn default() -> Self {
        ListCaches {
            videos: ListCache::new("videos"),
            widgets: ListCache::new("widgets"),
            past: Cache::builder()
                .max_capacity(MAX_TOTALS_ROWS)
                .weigher(|_, totals: &Arc<HashMap<String, Totals>>| weight(totals.len()))
                .time_to_idle(IDLE)
                .build(),
        }
    }
}

impl ListCaches {
    /// Totals by id over the range `split` cuts before today: the days before today from memory
    /// when none of them changed since (`versions` of the shop, and of those days), the rest
    /// from ClickHouse, concurrently.
    pub(super) async fn totals(
        &self,
        warehouse: &Warehouse,
        (subject, shop): (Subject, &ShopDomain),
        split: DaySplit,
        (shop_version, past_days_version): (i64, i64),
    ) -> Result<RangeTotals, ApiError> {
        let query =
            async |range: DateRange| queries::totals_by_id(warehouse, subject, shop, &range).await;
        let past = async {
            let Some(range) = split.before else {
                return Ok::<_, ApiError>(None);
            };
            let key = PastKey {
                shop: shop.clone(),
                subject,
                range,
                shop_version,
                days_version: past_days_version,
            };
            let load = async { query(range).await.map(Arc::new) };
            let entry = self.past.entry(key).or_try_insert_with(load).await;
            let entry = entry.map_err(ApiError::unshare)?;
            count("past_totals", entry.is_fresh());
            Ok(Some(entry.into_value()))
        };
        let rest = async {
            match split.from {
                Some(range) => query(range).await,
                None => Ok(HashMap::new()),
            }
        };
        let (past, rest) = tokio::join!(past, rest);
        Ok(RangeTotals {
            past: past?,
            rest: rest?,
        })
    }
}

/// An entry's weight: its rows, and one for the entry.
fn weight(rows: usize) -> u32 {
    u32::try_from(rows.saturating_add(1)).unwrap_or(u32::MAX)
}

fn count(cache: &'static str, missed: bool) {
    if missed {
        metrics::counter!("analytics_cache_misses_total", "cache" => cache).increment(1);
    } else {
        metrics::counter!("analytics_cache_hits_total", "cache" => cache).increment(1);
    }
}
