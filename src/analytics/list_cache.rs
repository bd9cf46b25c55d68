//! What the video and widget lists keep in memory. A list needs every video (or widget) of the
//! shop with its totals over the range, sorted; over a long range the totals are the expensive
//! part (ClickHouse sums each video's years, months and days), while a page is a slice of the
//! sorted list. Three things are kept:
//!
//! - sorted lists, so that another page, the CSV, or the same page asked again is a slice;
//! - the shop's videos (or widgets) and where each id sits among them, while its catalog version
//!   stays, so that a list computed afresh reads no catalog;
//! - the totals of the days before today, so that a shop receiving events (whose numbers move
//!   with every shipped batch, today's) costs a query of today's days only.
//!
//! Each is exact, never merely recent: each entry carries the versions of what it was computed
//! from (`warehouse::changes`: the catalog's, the shop's, and the latest change to a day of the
//! range), read before the computation, and is served only to a request that read the same. A
//! request that reads other versions computes afresh and its answer replaces the entry, so a
//! shop whose numbers move with every batch keeps one entry per list, not one per batch.
//! What was computed from ClickHouse while a batch of the shop's events was going in is served
//! but not kept (`WritesCheck`): the read may have seen the batch in one aggregate and not yet in
//! another.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use moka::future::Cache;
use moka::ops::compute::{CompResult, Op};
use moka::policy::EvictionPolicy;
use sqlx::PgPool;
use uuid::Uuid;

use super::dates::{DateRange, DaySplit};
use super::dimensions::Filters;
use super::handlers::{SortKey, SortOrder};
use super::queries::{self, IdTotals, Subject, Totals};
use crate::catalog::domain::ShopDomain;
use crate::catalog::{videos::Video, widgets::Widget};
use crate::error::ApiError;
use crate::warehouse::changes::{self, Versions, Writes};
use crate::warehouse::Warehouse;

/// Rows all sorted lists of one kind together may hold.
const MAX_LIST_ROWS: u64 = 100_000;
/// Ids all kept totals together may hold.
const MAX_TOTALS_ROWS: u64 = 200_000;
/// An entry nobody asked for this long is dropped: it is only memory by then.
const IDLE: Duration = Duration::from_secs(600);

/// An item of a listing with its totals, and those of the comparison range when asked for.
pub type Counted<'a, T> = (&'a T, Totals, Option<Totals>);

/// A shop's videos (or widgets), and where each id sits among them, so that a list adds each
/// row of totals to its item in one lookup.
pub struct Catalog<T> {
    items: Vec<T>,
    positions: foldhash::HashMap<Uuid, usize>,
}

impl<T> Catalog<T> {
    /// `items`, each known by `id`.
    pub(super) fn new(items: Vec<T>, id: impl Fn(&T) -> Uuid) -> Self {
        let positions = items.iter().enumerate().map(|(i, item)| (id(item), i));
        let positions = positions.collect();
        Catalog { items, positions }
    }

    pub fn items(&self) -> &[T] {
        &self.items
    }

    /// Where the item `id` names sits in `items`, if there is one.
    pub fn position(&self, id: &Uuid) -> Option<usize> {
        self.positions.get(id).copied()
    }

    fn len(&self) -> usize {
        self.items.len()
    }
}

/// A sorted listing: its rows, in order, point into the catalog it was computed from, which it
/// keeps. A row is a few dozen bytes; copying the catalog's items instead (several strings
/// each) took as long as a list's ClickHouse query.
pub struct Sorted<T> {
    catalog: Arc<Catalog<T>>,
    rows: Vec<(usize, Totals, Option<Totals>)>,
}

impl<T> Sorted<T> {
    /// `rows` index `catalog`'s items.
    pub(super) fn new(
        catalog: Arc<Catalog<T>>,
        rows: Vec<(usize, Totals, Option<Totals>)>,
    ) -> Self {
        debug_assert!(rows.iter().all(|(i, ..)| *i < catalog.len()));
        Sorted { catalog, rows }
    }

    /// How many rows it holds: its weight in the cache.
    pub fn rows(&self) -> usize {
        self.rows.len()
    }

    /// Each item with its totals, in order.
    pub fn iter(&self) -> impl Iterator<Item = Counted<'_, T>> {
        let items = self.catalog.items();
        (self.rows.iter()).map(move |&(i, totals, comparison)| (&items[i], totals, comparison))
    }
}

/// Which sorted list: the key of its entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) struct ListKey {
    pub shop: ShopDomain,
    pub range: DateRange,
    pub comparison: Option<DateRange>,
    pub sort_by: SortKey,
    pub sort_order: SortOrder,
    pub filters: Filters,
}

/// Which past days' totals.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct PastKey {
    shop: ShopDomain,
    subject: Subject,
    range: DateRange,
    filters: Filters,
}

/// An entry: what was computed, and the versions it was computed at.
struct Versioned<V, W> {
    versions: W,
    value: Arc<V>,
}

type Entries<K, V, W> = Cache<K, Arc<Versioned<V, W>>>;

fn entries<K, V, W>(max_rows: u64, rows: fn(&V) -> usize) -> Entries<K, V, W>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    W: Send + Sync + 'static,
{
    Cache::builder()
        .max_capacity(max_rows)
        .weigher(move |_, entry: &Arc<Versioned<V, W>>| weight(rows(&entry.value)))
        .time_to_idle(IDLE)
        // Recency is what counts here: a list just computed is the one about to be paged.
        .eviction_policy(EvictionPolicy::lru())
        .build()
}

/// Whether what was computed from ClickHouse may be kept: only if no batch of the shop's events
/// was going in from when its versions were read to when it was computed (`changes::Writes`),
/// since a read that races one may see it in one aggregate and not another. Such an answer is
/// served, as of a moment of the insert, but not kept.
#[derive(Clone, Copy)]
pub(super) struct WritesCheck<'a> {
    db: &'a PgPool,
    shop: &'a ShopDomain,
    /// The shop's writes when the versions were read.
    before: Writes,
}

impl<'a> WritesCheck<'a> {
    pub fn new(db: &'a PgPool, shop: &'a ShopDomain, before: Writes) -> Self {
        WritesCheck { db, shop, before }
    }

    /// Whether nothing was written to the shop's numbers since the versions were read. Not
    /// knowing (Postgres failed) keeps nothing: the answer is served all the same.
    async fn none_since(&self) -> bool {
        match changes::writes(self.db, self.shop).await {
            Ok(now) => self.before.none_between(&now),
            Err(error) => {
                tracing::warn!(%error, "cannot read the shop's writes; the answer is not kept");
                false
            }
        }
    }
}

/// The value under `key` if it was computed at `versions`; otherwise `load`'s, which replaces
/// it unless `check` finds the shop's numbers were written meanwhile. Concurrent calls for one
/// key run one after another, so they share one load.
async fn get_or_load<K, V, W>(
    cache: &Entries<K, V, W>,
    (key, versions): (K, W),
    load: impl Future<Output = Result<V, ApiError>>,
    check: Option<WritesCheck<'_>>,
    label: &'static str,
) -> Result<Arc<V>, ApiError>
where
    K: std::hash::Hash + Eq + Send + Sync + 'static,
    V: Send + Sync + 'static,
    W: PartialEq + Send + Sync + 'static,
{
    // Boxed, both: the load (ClickHouse and Postgres queries, and for a list the past totals'
    // own lookup) and moka's computation are kilobytes of future each, which would otherwise
    // sit in every caller's future, nested, and on the stack.
    let load = Box::pin(load);
    let mut unkept = None;
    let unkept_value = &mut unkept;
    let outcome = Box::pin(cache.entry(key).and_try_compute_with(|held| async move {
        if held.is_some_and(|e| e.value().versions == versions) {
            return Ok::<_, ApiError>(Op::Nop);
        }
        let value = Arc::new(load.await?);
        let keep = match check {
            Some(check) => check.none_since().await,
            None => true,
        };
        if !keep {
            *unkept_value = Some(value);
            return Ok(Op::Nop);
        }
        Ok(Op::Put(Arc::new(Versioned { versions, value })))
    }))
    .await?;
    if let Some(value) = unkept {
        count(label, true);
        return Ok(value);
    }
    let (entry, missed) = match outcome {
        CompResult::Unchanged(entry) => (entry, false),
        CompResult::Inserted(entry) | CompResult::ReplacedWith(entry) => (entry, true),
        CompResult::StillNone(_) | CompResult::Removed(_) => {
            unreachable!("the closure keeps an entry or puts one")
        }
    };
    count(label, missed);
    Ok(entry.into_value().value.clone())
}

/// The sorted lists of one kind of item.
pub struct ListCache<T> {
    entries: Entries<ListKey, Sorted<T>, Versions>,
    /// The shop's items, under the catalog version they were read at.
    catalog: Entries<ShopDomain, Catalog<T>, i64>,
    /// `cache` labels of the hit and miss counters: the lists', the catalog's.
    labels: [&'static str; 2],
}

impl<T: Send + Sync + 'static> ListCache<T> {
    fn new(labels: [&'static str; 2]) -> Self {
        ListCache {
            entries: entries(MAX_LIST_ROWS, Sorted::rows),
            catalog: entries(MAX_LIST_ROWS, Catalog::len),
            labels,
        }
    }

    /// The shop's items as of catalog `version`, read by `load` unless they are held.
    pub(super) async fn catalog(
        &self,
        shop: &ShopDomain,
        version: i64,
        load: impl Future<Output = Result<Catalog<T>, ApiError>>,
    ) -> Result<Arc<Catalog<T>>, ApiError> {
        let key = (shop.clone(), version);
        get_or_load(&self.catalog, key, load, None, self.labels[1]).await
    }

    /// The list under `key` as of `versions` (those of the current range's and the comparison
    /// range's days among them), computed by `load` unless it is held. A failed load keeps
    /// nothing, nor one that `check` refuses.
    pub(super) async fn get(
        &self,
        key: ListKey,
        versions: Versions,
        load: impl Future<Output = Result<Sorted<T>, ApiError>>,
        check: WritesCheck<'_>,
    ) -> Result<Arc<Sorted<T>>, ApiError> {
        get_or_load(
            &self.entries,
            (key, versions),
            load,
            Some(check),
            self.labels[0],
        )
        .await
    }
}

/// Totals by id over a range: those of its past days (kept) and those of the rest (asked).
#[derive(Default)]
pub(super) struct RangeTotals {
    past: Option<Arc<IdTotals>>,
    rest: IdTotals,
}

impl RangeTotals {
    /// The rows of both parts: an id with events in each comes twice, and its totals are the sum.
    pub fn rows(&self) -> impl Iterator<Item = &(Uuid, Totals)> {
        self.past
            .iter()
            .flat_map(|past| past.iter())
            .chain(&self.rest)
    }
}

/// The analytics API's caches.
pub struct ListCaches {
    pub videos: ListCache<Video>,
    pub widgets: ListCache<Widget>,
    /// Under the shop's version and that of the days.
    past: Entries<PastKey, IdTotals, (i64, i64)>,
}

impl Default for ListCaches {
    fn default() -> Self {
        ListCaches {
            videos: ListCache::new(["videos", "video_catalog"]),
            widgets: ListCache::new(["widgets", "widget_catalog"]),
            past: entries(MAX_TOTALS_ROWS, Vec::len),
        }
    }
}

impl ListCaches {
    /// Totals by id of the events `filters` keep over the range `split` cuts before today: the
    /// days before today from memory
    /// when none of them changed since (`versions` of the shop, and of those days), the rest
    /// from ClickHouse, concurrently.
    pub(super) async fn totals(
        &self,
        warehouse: &Warehouse,
        (subject, check): (Subject, WritesCheck<'_>),
        split: DaySplit,
        (shop_version, past_days_version): (i64, i64),
        filters: Filters,
    ) -> Result<RangeTotals, ApiError> {
        let shop = check.shop;
        let query = async |range: DateRange| {
            queries::totals_by_id(warehouse, subject, shop, &range, &filters).await
        };
        let past = async {
            let Some(range) = split.before else {
                return Ok(None);
            };
            let key = PastKey {
                shop: shop.clone(),
                subject,
                range,
                filters,
            };
            let versions = (shop_version, past_days_version);
            let (versions, load) = ((key, versions), query(range));
            let totals = get_or_load(&self.past, versions, load, Some(check), "past_totals");
            Ok::<_, ApiError>(Some(totals.await?))
        };
        let rest = async {
            match split.from {
                Some(range) => query(range).await,
                None => Ok(IdTotals::new()),
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
