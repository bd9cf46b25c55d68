//! The analytics endpoints: metrics of the shop's videos and widgets, and its totals, over a
//! range of whole days in the shop's timezone, optionally beside a comparison range.

use std::cmp::Ordering;
use std::future::Future;
use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::auth::{postgres_available, Caller};
use super::dates::{iso_millis, strict_date, DateRange, DaySplit};
use super::export::{self, CsvRow, FormatQuery};
use super::list_cache::{
    Catalog, Counted, ListCache, ListCaches, ListKey, RangeTotals, Sorted, WritesCheck,
};
use super::metrics::{Comparison, Metrics, SummaryMetrics};
use super::periods::{Compare, Interval};
use super::queries::{self, Subject, Totals};
use super::AnalyticsErrors;
use crate::app::AppState;
use crate::catalog::domain::{VideoStatus, WidgetStatus, WidgetType};
use crate::catalog::{videos, widgets, CatalogError};
use crate::db;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{AppPath, AppQuery};
use crate::warehouse::changes;

/// The range every endpoint reports on.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RangeQuery {
    /// First day, `YYYY-MM-DD`, in the shop's timezone. Default: 30 days before `end_date`.
    #[serde(default, deserialize_with = "strict_date")]
    start_date: Option<NaiveDate>,
    /// Last day (inclusive), `YYYY-MM-DD`. Default: today in the shop's timezone.
    #[serde(default, deserialize_with = "strict_date")]
    end_date: Option<NaiveDate>,
}

/// The range to compare with, if any.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CompareQuery {
    /// Also report each record over `previous_period` (as many days just before) or
    /// `previous_year` (the same dates a year earlier; 29 February becomes the 28th), as
    /// `comparison`. Sorting and paging follow the requested range.
    #[param(inline)]
    compare: Option<Compare>,
}

/// The ranges an answer reports on, resolved in the shop's timezone.
pub(super) struct Window {
    /// In the shop's timezone.
    pub today: NaiveDate,
    pub range: DateRange,
    /// The comparison range and how it was derived, when asked for.
    pub comparison: Option<(Compare, DateRange)>,
    pub meta: Meta,
}

impl Window {
    /// `query` and `compare` in the shop's timezone, and the `meta` that reports them.
    pub async fn resolve(
        state: &AppState,
        caller: &Caller,
        query: &RangeQuery,
        compare: &CompareQuery,
    ) -> Result<Window, ApiError> {
        // The shop's timezone from the cached catalog snapshot: no query on the hot path.
        let snapshot = state.catalog.get(&caller.shop).await?;
        let tz = snapshot.ok_or(ApiError::InvalidApiKey)?.timezone.tz();
        let today = Utc::now().with_timezone(&tz).date_naive();
        let range = DateRange::new(query.start_date, query.end_date, today)?;
        let comparison = compare.compare.map(|c| (c, c.range(&range)));
        let meta = Meta {
            comparison: comparison.map(|(_, r)| MetaRange::of(&r, tz)),
            interval: None,
            range: MetaRange::of(&range, tz),
        };
        Ok(Window {
            today,
            range,
            comparison,
            meta,
        })
    }

    pub fn comparison_range(&self) -> Option<&DateRange> {
        self.comparison.as_ref().map(|(_, range)| range)
    }
}

/// How a list is ordered and cut into pages.
#[derive(Deserialize, IntoParams)]
#[serde(default)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// 1-based page. Default 1.
    #[serde(deserialize_with = "page_number")]
    #[param(format = Int64, minimum = 1, maximum = 4_294_967_295_f64)]
    page: u32,
    /// Items per page, 1 to 100. Default 10.
    #[serde(deserialize_with = "page_size")]
    #[param(minimum = 1, maximum = 100)]
    limit: u32,
    /// The metric or field to sort by. Default views.
    #[param(inline)]
    sort_by: SortKey,
    /// Default desc. Ties are broken by id, ascending.
    #[param(inline)]
    sort_order: SortOrder,
}

impl Default for ListQuery {
    fn default() -> Self {
        ListQuery {
            page: 1,
            limit: 10,
            sort_by: SortKey::Views,
            sort_order: SortOrder::Desc,
        }
    }
}

fn page_number<'de, D: Deserializer<'de>>(value: D) -> Result<u32, D::Error> {
    integer_in(value, 1, u32::MAX)
}

fn page_size<'de, D: Deserializer<'de>>(value: D) -> Result<u32, D::Error> {
    integer_in(value, 1, 100)
}

/// An integer from `min` to `max`, with a message that states the bounds.
fn integer_in<'de, D: Deserializer<'de>>(value: D, min: u32, max: u32) -> Result<u32, D::Error> {
    let raw = String::deserialize(value)?;
    match raw.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ if max == u32::MAX => Err(serde::de::Error::custom(format!(
            "must be an integer ≥ {min}, got '{raw}'"
        ))),
        _ => Err(serde::de::Error::custom(format!(
            "must be an integer from {min} to {max}, got '{raw}'"
        ))),
    }
}

/// Only widgets of one type.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WidgetFilter {
    /// Only widgets of this type.
    #[param(inline)]
    widget_type: Option<WidgetType>,
}

/// The effective range, in UTC with milliseconds.
#[derive(Serialize, ToSchema)]
pub struct Meta {
    #[serde(flatten)]
    range: MetaRange,
    /// The time series' interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) interval: Option<Interval>,
    /// The comparison range, with `compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<MetaRange>,
}

/// A range's first instant and last millisecond in UTC.
#[derive(Serialize, ToSchema)]
pub struct MetaRange {
    #[schema(example = "2026-10-22T00:00:00.000Z")]
    start_date: String,
    #[schema(example = "2026-11-21T23:59:59.999Z")]
    end_date: String,
}

impl MetaRange {
    fn of(range: &DateRange, tz: Tz) -> MetaRange {
        MetaRange {
            start_date: iso_millis(range.start_instant(tz)),
            end_date: iso_millis(range.end_instant(tz)),
        }
    }
}

#[derive(Serialize, ToSchema)]
pub struct Pagination {
    page: u32,
    limit: u32,
    total_count: usize,
    total_pages: usize,
}

/// A video and its metrics.
#[derive(Serialize, ToSchema)]
pub struct VideoAnalytics {
    id: Uuid,
    title: String,
    thumbnail_url: String,
    /// Seconds.
    duration: f64,
    status: VideoStatus,
    product_count: usize,
    metrics: Metrics,
    /// With `compare`: the same over the comparison range.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<Comparison>,
}

#[derive(Serialize, ToSchema)]
pub struct VideoAnalyticsList {
    success: bool,
    data: Vec<VideoAnalytics>,
    meta: Meta,
    pagination: Pagination,
}

#[derive(Serialize, ToSchema)]
pub struct VideoAnalyticsOne {
    success: bool,
    data: VideoAnalytics,
    meta: Meta,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum SortKey {
    Views,
    Clicks,
    Impressions,
    AddToCart,
    Orders,
    Revenue,
    Title,
    CreatedAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum SortOrder {
    Desc,
    Asc,
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

/// What a list endpoint is asked: the page, the range, the comparison and the format.
pub struct ListRequest {
    listing: ListQuery,
    range: RangeQuery,
    compare: CompareQuery,
    format: FormatQuery,
    headers: HeaderMap,
}

impl<S: Send + Sync> FromRequestParts<S> for ListRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(ListRequest {
            listing: AppQuery::from_request_parts(parts, state).await?.0,
            range: AppQuery::from_request_parts(parts, state).await?.0,
            compare: AppQuery::from_request_parts(parts, state).await?.0,
            format: AppQuery::from_request_parts(parts, state).await?.0,
            headers: parts.headers.clone(),
        })
    }
}

/// Per-video metrics for all of the shop's videos
#[utoipa::path(
    get, path = "/analytics/videos", tag = "analytics",
    params(ListQuery, RangeQuery, CompareQuery, FormatQuery),
    responses(
        (status = 200, headers(("X-RateLimit-Limit" = u32), ("X-RateLimit-Remaining" = u32), ("X-RateLimit-Reset" = u64)),
            content((VideoAnalyticsList = "application/json"), (String = "text/csv"))),
        (status = 400, description = "INVALID_DATE, INVALID_DATE_RANGE or INVALID_PARAMETER", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED or INVALID_API_KEY", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED", body = ErrorBody, headers(("Retry-After" = u64))),
        (status = 503, description = "SERVICE_UNAVAILABLE: ClickHouse or Postgres cannot be reached; retry after `Retry-After` seconds", body = ErrorBody,
         headers(("Retry-After" = u64))),
    ),
    security(("api_key" = []))
)]
pub async fn list_videos(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    request: ListRequest,
) -> Result<Response, ApiError> {
    let catalog = videos::list(&state.db, &caller.shop);
    list(
        &state,
        &caller,
        request,
        catalog,
        |_| true,
        |data, meta, pagination| VideoAnalyticsList {
            success: true,
            data,
            meta,
            pagination,
        },
    )
    .await
}

/// A catalog object the analytics API reports on: a video or a widget.
pub(super) trait Analysed: Clone + Send + Sync + 'static {
    const SUBJECT: Subject;
    /// What its CSV file is called, before the range.
    const LIST_NAME: &'static str;
    type Record: Serialize + CsvRow + Send + 'static;
    /// Id, title and creation time: what listings sort by.
    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>);
    fn record(&self, totals: Totals, comparison: Option<Totals>) -> Self::Record;
    /// Where its sorted listings are kept.
    fn lists(caches: &ListCaches) -> &ListCache<Self>;
}

/// The caller's objects (`catalog`, those `keep` accepts), each with its totals in the range: a
/// page of them as JSON (`page` builds the body), or all of them as CSV. The sorted listing comes
/// from the list cache when the shop's data has not moved since it was computed.
async fn list<T: Analysed, B: Serialize>(
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
    };
    let check = WritesCheck::new(&state.db, &caller.shop, writes);
    let caches = &state.analytics_lists;
    let lists = T::lists(caches);
    let load = async {
        let subject = (T::SUBJECT, check);
        let totals = |split, past_days| {
            caches.totals(&state.warehouse, subject, split, (shop_version, past_days))
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

/// `query` over `range` when there is one.
pub(super) async fn optionally<'r, R, T, F>(
    range: Option<&'r R>,
    query: impl FnOnce(&'r R) -> F,
) -> Result<Option<T>, ApiError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    match range {
        Some(range) => query(range).await.map(Some),
        None => Ok(None),
    }
}

/// One of the caller's objects, read by `get` with the id in the path, with its totals in the
/// range. An id that is not a UUID names no object.
async fn one_record<T: Analysed, F>(
    state: &AppState,
    caller: &Caller,
    raw_id: &str,
    (range, compare): (RangeQuery, CompareQuery),
    get: impl FnOnce(Uuid) -> F,
) -> Result<(T::Record, Meta), ApiError>
where
    F: Future<Output = Result<T, CatalogError>>,
{
    let id = catalog_id(raw_id)?;
    postgres_available(state)?;
    let item = get(id).await.map_err(catalog_error)?;
    let window = Window::resolve(state, caller, &range, &compare).await?;
    let id = item.sort_fields().0.to_string();
    let totals = |range| queries::totals_of(&state.warehouse, T::SUBJECT, &caller.shop, range, &id);
    let (current, comparison) = tokio::join!(
        totals(&window.range),
        optionally(window.comparison_range(), totals)
    );
    Ok((item.record(current?, comparison?), window.meta))
}

impl Analysed for videos::Video {
    const SUBJECT: Subject = Subject::Video;
    const LIST_NAME: &'static str = "videos";
    type Record = VideoAnalytics;

    fn lists(caches: &ListCaches) -> &ListCache<Self> {
        &caches.videos
    }

    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>) {
        (self.id, &self.title, self.created_at)
    }

    fn record(&self, totals: Totals, comparison: Option<Totals>) -> VideoAnalytics {
        VideoAnalytics {
            id: self.id,
            title: self.title.clone(),
            thumbnail_url: self.thumbnail.clone(),
            duration: self.duration,
            status: self.status,
            product_count: self.product_ids.len(),
            metrics: totals.into(),
            comparison: Comparison::of(comparison),
        }
    }
}

impl CsvRow for VideoAnalytics {
    const COLUMNS: &'static [&'static str] =
        &["id", "title", "status", "duration", "product_count"];

    fn write_leading(&self, row: &mut csv::StringRecord) {
        row.push_field(&self.id.to_string());
        row.push_field(&self.title);
        row.push_field(self.status.as_str());
        row.push_field(&self.duration.to_string());
        row.push_field(&self.product_count.to_string());
    }

    fn metrics(&self) -> (&Metrics, Option<&Comparison>) {
        (&self.metrics, self.comparison.as_ref())
    }
}

/// A video's or widget's id as the caller wrote it: one that is not a UUID names nothing in the
/// catalog, so it is not found.
pub(super) fn catalog_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound("Resource"))
}

/// The key's shop is gone: its key no longer counts. Anything else missing is not found.
/// Postgres out of reach is 503, like ClickHouse.
pub(super) fn catalog_error(e: CatalogError) -> ApiError {
    match e {
        CatalogError::ShopNotFound => ApiError::InvalidApiKey,
        CatalogError::NotFound(_) => ApiError::NotFound("Resource"),
        CatalogError::Db(e) if db::is_unreachable(&e) => ApiError::Unavailable(e.into()),
        other => ApiError::Internal(other.into()),
    }
}

/// Metrics for one video
#[utoipa::path(
    get, path = "/analytics/video/{videoId}", tag = "analytics",
    params(("videoId" = String, Path, description = "The video's id"), RangeQuery, CompareQuery),
    responses(
        (status = 200, body = VideoAnalyticsOne),
        (status = 400, description = "INVALID_DATE, INVALID_DATE_RANGE or INVALID_PARAMETER", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED or INVALID_API_KEY", body = ErrorBody),
        (status = 404, description = "NOT_FOUND: no such video in the key's shop", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED", body = ErrorBody),
        (status = 503, description = "SERVICE_UNAVAILABLE: ClickHouse or Postgres cannot be reached; retry after `Retry-After` seconds", body = ErrorBody,
         headers(("Retry-After" = u64))),
    ),
    security(("api_key" = []))
)]
pub async fn one_video(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppPath(video_id): AppPath<String>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(compare): AppQuery<CompareQuery>,
) -> Result<Json<VideoAnalyticsOne>, ApiError> {
    let get = |id| videos::get(&state.db, &caller.shop, id);
    let (data, meta) = one_record(&state, &caller, &video_id, (range, compare), get).await?;
    Ok(Json(VideoAnalyticsOne {
        success: true,
        data,
        meta,
    }))
}

/// The shop's totals, and the comparison's when asked for.
#[derive(Serialize, ToSchema)]
pub struct Summary {
    #[serde(flatten)]
    metrics: SummaryMetrics,
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<SummaryComparison>,
}

/// The summary over the comparison range.
#[derive(Serialize, ToSchema)]
pub struct SummaryComparison {
    metrics: SummaryMetrics,
}

#[derive(Serialize, ToSchema)]
pub struct SummaryResponse {
    success: bool,
    data: Summary,
    meta: Meta,
}

/// Shop totals with click-through and conversion rates
#[utoipa::path(
    get, path = "/analytics/summary", tag = "analytics",
    params(RangeQuery, CompareQuery),
    responses(
        (status = 200, body = SummaryResponse),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn summary(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(compare): AppQuery<CompareQuery>,
) -> Result<Json<SummaryResponse>, ApiError> {
    let window = Window::resolve(&state, &caller, &range, &compare).await?;
    let totals = |range| queries::shop_totals(&state.warehouse, &caller.shop, range);
    let (current, comparison) = tokio::join!(
        totals(&window.range),
        optionally(window.comparison_range(), totals)
    );
    Ok(Json(SummaryResponse {
        success: true,
        data: Summary {
            metrics: current?.into(),
            comparison: comparison?.map(|t| SummaryComparison { metrics: t.into() }),
        },
        meta: window.meta,
    }))
}

/// A widget and its metrics.
#[derive(Serialize, ToSchema)]
pub struct WidgetAnalytics {
    id: Uuid,
    title: String,
    #[serde(rename = "type")]
    widget_type: WidgetType,
    status: WidgetStatus,
    video_count: usize,
    metrics: Metrics,
    /// With `compare`: the same over the comparison range.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<Comparison>,
}

#[derive(Serialize, ToSchema)]
pub struct WidgetAnalyticsList {
    success: bool,
    data: Vec<WidgetAnalytics>,
    meta: Meta,
    pagination: Pagination,
}

#[derive(Serialize, ToSchema)]
pub struct WidgetAnalyticsOne {
    success: bool,
    data: WidgetAnalytics,
    meta: Meta,
}

impl Analysed for widgets::Widget {
    const SUBJECT: Subject = Subject::Widget;
    const LIST_NAME: &'static str = "widgets";
    type Record = WidgetAnalytics;

    fn lists(caches: &ListCaches) -> &ListCache<Self> {
        &caches.widgets
    }

    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>) {
        (self.id, &self.title, self.created_at)
    }

    fn record(&self, totals: Totals, comparison: Option<Totals>) -> WidgetAnalytics {
        WidgetAnalytics {
            id: self.id,
            title: self.title.clone(),
            widget_type: self.widget_type,
            status: self.status,
            video_count: self.video_ids.len(),
            metrics: totals.into(),
            comparison: Comparison::of(comparison),
        }
    }
}

impl CsvRow for WidgetAnalytics {
    const COLUMNS: &'static [&'static str] = &["id", "title", "type", "status", "video_count"];

    fn write_leading(&self, row: &mut csv::StringRecord) {
        row.push_field(&self.id.to_string());
        row.push_field(&self.title);
        row.push_field(self.widget_type.as_str());
        row.push_field(self.status.as_str());
        row.push_field(&self.video_count.to_string());
    }

    fn metrics(&self) -> (&Metrics, Option<&Comparison>) {
        (&self.metrics, self.comparison.as_ref())
    }
}

/// Per-widget metrics
#[utoipa::path(
    get, path = "/analytics/widgets", tag = "analytics",
    params(ListQuery, WidgetFilter, RangeQuery, CompareQuery, FormatQuery),
    responses(
        (status = 200, content((WidgetAnalyticsList = "application/json"), (String = "text/csv"))),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn list_widgets(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(filter): AppQuery<WidgetFilter>,
    request: ListRequest,
) -> Result<Response, ApiError> {
    let only_type = filter.widget_type;
    let catalog = widgets::list(&state.db, &caller.shop);
    let keep = |w: &widgets::Widget| only_type.is_none_or(|t| w.widget_type == t);
    list(
        &state,
        &caller,
        request,
        catalog,
        keep,
        |data, meta, pagination| WidgetAnalyticsList {
            success: true,
            data,
            meta,
            pagination,
        },
    )
    .await
}

/// Metrics for one widget
#[utoipa::path(
    get, path = "/analytics/widget/{widgetId}", tag = "analytics",
    params(("widgetId" = String, Path, description = "The widget's id"), RangeQuery, CompareQuery),
    responses(
        (status = 200, body = WidgetAnalyticsOne),
        (status = 404, description = "NOT_FOUND", body = ErrorBody),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn one_widget(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppPath(widget_id): AppPath<String>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(compare): AppQuery<CompareQuery>,
) -> Result<Json<WidgetAnalyticsOne>, ApiError> {
    let get = |id| widgets::get(&state.db, &caller.shop, id);
    let (data, meta) = one_record(&state, &caller, &widget_id, (range, compare), get).await?;
    Ok(Json(WidgetAnalyticsOne {
        success: true,
        data,
        meta,
    }))
}
