//! The shared listing of videos and widgets: every item with its totals, sorted and cut into
//! pages (or all of it as CSV), kept in the list cache while the shop's data stands still.

use std::cmp::Ordering;
use std::future::Future;
use std::sync::Arc;

use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::params::{ListQuery, ListRequest, SortKey, SortOrder};
use super::record::{catalog_error, Analysed};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::{postgres_available, Caller};
use crate::analytics::dates::DaySplit;
use crate::analytics::export;
use crate::analytics::list_cache::{Catalog, Counted, ListKey, RangeTotals, Sorted, WritesCheck};
use crate::analytics::queries::Totals;
use crate::app::AppState;
use crate::catalog::CatalogError;
use crate::error::ApiError;
use crate::warehouse::changes;

#[derive(Serialize, ToSchema)]
pub struct Pagination {
    page: u32,
    limit: u32,
    total_count: usize,
    total_pages: usize,
}

/// One row to sort: what every sort key needs, and the item it stands for (borrowed: a catalog
/// item is hundreds of bytes and several strings, too much to move or copy 10,000 times).
struct Sortable<'a, T> {
    index: usize,
    item: &'a T,
    totals: Totals,
    comparison: Option<Totals>,
}

fn compare<T: Analysed>(key: SortKey, a: &Sortable<T>, b: &Sortable<T>) -> Ordering {
    let (a_totals, b_totals) = (&a.totals, &b.totals);
    let ((_, a_title, a_created), (_, b_title, b_created)) =
        (a.item.sort_fields(), b.item.sort_fields());
    match key {
        SortKey::Views => a_totals.views.cmp(&b_totals.views),
        SortKey::Clicks => a_totals.clicks.cmp(&b_totals.clicks),
        SortKey::Impressions => a_totals.impressions.cmp(&b_totals.impressions),
        SortKey::AddToCart => a_totals.add_to_cart.cmp(&b_totals.add_to_cart),
        SortKey::Orders => a_totals.orders.cmp(&b_totals.orders),
        SortKey::Revenue => a_totals.revenue_e4.cmp(&b_totals.revenue_e4),
        SortKey::Title => a_title.cmp(b_title),
        SortKey::CreatedAt => a_created.cmp(&b_created),
    }
}

impl ListQuery {
    /// Every item with its totals (zero where nothing happened), sorted by the key on the
    /// requested range, ties by id ascending so that pages are stable.
    fn sort<T: Analysed>(
        &self,
        catalog: Arc<Catalog<T>>,
        totals: &RangeTotals,
        comparison: Option<&RangeTotals>,
    ) -> Sorted<T> {
        let zero = |_| Totals::default();
        let mut rows: Vec<Sortable<T>> = (catalog.items().iter().enumerate())
            .map(|(index, item)| Sortable {
                index,
                item,
                totals: Totals::default(),
                comparison: comparison.map(zero),
            })
            .collect();
        // Each row of totals to its item; an id that names none is no item's.
        for (id, totals) in totals.rows() {
            if let Some(i) = catalog.position(id) {
                rows[i].totals += *totals;
            }
        }
        for (id, totals) in comparison.iter().flat_map(|c| c.rows()) {
            if let Some(sum) = catalog
                .position(id)
                .and_then(|i| rows[i].comparison.as_mut())
            {
                *sum += *totals;
            }
        }
        // References are sorted, not rows: a row is some two hundred bytes to move, a reference
        // eight.
        let mut order: Vec<&Sortable<T>> = rows.iter().collect();
        order.sort_unstable_by(|a, b| {
            let order = compare(self.sort_by, a, b);
            let order = match self.sort_order {
                SortOrder::Desc => order.reverse(),
                SortOrder::Asc => order,
            };
            order.then_with(|| a.item.sort_fields().0.cmp(&b.item.sort_fields().0))
        });
        let rows = order.into_iter().map(|r| (r.index, r.totals, r.comparison));
        let rows = rows.collect();
        Sorted::new(catalog, rows)
    }

    fn slice<T>(&self, rows: Vec<T>) -> (Vec<T>, Pagination) {
        let total_count = rows.len();
        let limit = self.limit as usize;
        let skip = (self.page as usize - 1).saturating_mul(limit);
        let pagination = Pagination {
            page: self.page,
            limit: self.limit,
            total_count,
            total_pages: total_count.div_ceil(limit),
        };
        (
            rows.into_iter().skip(skip).take(limit).collect(),
            pagination,
        )
    }
}

/// The caller's objects (`catalog`, those `keep` accepts), each with its totals in the range: a
/// page of them as JSON (`page` builds the body), or all of them as CSV. The sorted listing comes
/// from the list cache when the shop's data has not moved since it was computed.
pub(super) async fn list<T: Analysed, B: Serialize>(
    state: &AppState,
    caller: &Caller,
    request: ListRequest,
    catalog: impl Future<Output = Result<Vec<T>, CatalogError>>,
    keep: impl Fn(&T) -> bool,
    page: impl FnOnce(Vec<T::Record>, Meta, Pagination) -> B,
) -> Result<Response, ApiError> {
    let window = Window::resolve(state, caller, &request.range, &request.compare).await?;
    // Each range cut before today: its past days rarely change, today's with every batch.
    let current = window.range.split_before(window.today);
    let comparison = window
        .comparison_range()
        .map(|r| r.split_before(window.today));
    let parts = [Some(current), comparison].map(|s| s.unwrap_or(DaySplit::EMPTY));
    let days = parts.map(|s| [s.before, s.from]).concat();
    let days: Vec<_> = days.iter().map(|r| r.map(|r| r.days_pair())).collect();
    postgres_available(state)?;
    // Read before anything is computed, so that no key claims newer data than its entry holds.
    let (versions, writes) = changes::versions(&state.db, &caller.shop, &days)
        .await
        .map_err(|e| catalog_error(e.into()))?
        .ok_or_else(|| catalog_error(CatalogError::ShopNotFound))?;
    let (shop_version, past_days) = (versions.shop, [versions.days[0], versions.days[2]]);
    let catalog_version = versions.catalog;
    let key = ListKey {
        shop: caller.shop.clone(),
        range: window.range,
        comparison: window.comparison_range().copied(),
        sort_by: request.listing.sort_by,
        sort_order: request.listing.sort_order,
        filters: request.filters,
    };
    let check = WritesCheck::new(&state.db, &caller.shop, writes);
    let caches = &state.analytics_lists;
    let lists = T::lists(caches);
    let load = async {
        let subject = (T::SUBJECT, check);
        let filters = request.filters;
        let totals = |split, past_days| {
            let versions = (shop_version, past_days);
            caches.totals(&state.warehouse, subject, split, versions, filters)
        };
        let catalog = async {
            let items = catalog.await.map_err(catalog_error)?;
            Ok(Catalog::new(items, |item: &T| item.sort_fields().0))
        };
        // Postgres and ClickHouse answer at the same time.
        let (catalog, current, comparison) = tokio::join!(
            lists.catalog(&caller.shop, catalog_version, catalog),
            totals(current, past_days[0]),
            optionally(comparison.as_ref(), |split| totals(*split, past_days[1])),
        );
        let sorted = request
            .listing
            .sort(catalog?, &current?, comparison?.as_ref());
        Ok(sorted)
    };
    let sorted = lists.get(key, versions, load, check).await?;
    let rows: Vec<Counted<T>> = sorted.iter().filter(|(item, ..)| keep(item)).collect();
    let record = |(item, t, c): Counted<T>| item.record(t, c);
    if request.format.wants_csv(&request.headers) {
        let name = export::file_name(T::LIST_NAME, &window.range);
        let records = rows.into_iter().map(record).collect();
        return Ok(export::respond(&name, window.comparison.is_some(), records));
    }
    let (rows, pagination) = request.listing.slice(rows);
    let data = rows.into_iter().map(record).collect();
    let body = Json(page(data, window.meta, pagination));
    Ok((export::VARY_ACCEPT, body).into_response())
}
