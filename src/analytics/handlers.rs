//! The analytics endpoints: metrics of the shop's videos and widgets, and its totals, over a
//! range of whole days in the shop's timezone.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::future::Future;

use axum::extract::State;
use axum::Extension;
use axum::Json;
use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::auth::Caller;
use super::dates::{iso_millis, strict_date, DateRange};
use super::queries::{self, Subject, Totals};
use super::AnalyticsErrors;
use crate::app::AppState;
use crate::catalog::domain::{VideoStatus, WidgetStatus, WidgetType};
use crate::catalog::{videos, widgets, CatalogError};
use crate::error::{ApiError, ErrorBody};
use crate::extract::{AppPath, AppQuery};

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

impl RangeQuery {
    /// The range in the shop's timezone, and the `meta` that reports it.
    async fn resolve(
        &self,
        state: &AppState,
        caller: &Caller,
    ) -> Result<(DateRange, Meta), ApiError> {
        // The shop's timezone from the cached catalog snapshot: no query on the hot path.
        let snapshot = state.catalog.get(&caller.shop).await?;
        let tz = snapshot.ok_or(ApiError::InvalidApiKey)?.timezone.tz();
        let today = Utc::now().with_timezone(&tz).date_naive();
        let range = DateRange::new(self.start_date, self.end_date, today)?;
        let meta = Meta {
            start_date: iso_millis(range.start_instant(tz)),
            end_date: iso_millis(range.end_instant(tz)),
        };
        Ok((range, meta))
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
    #[schema(example = "2026-10-22T00:00:00.000Z")]
    start_date: String,
    #[schema(example = "2026-11-21T23:59:59.999Z")]
    end_date: String,
}

#[derive(Serialize, ToSchema)]
pub struct Pagination {
    page: u32,
    limit: u32,
    total_count: usize,
    total_pages: usize,
}

/// An exact decimal with two places, written as a JSON number (`12.30`).
#[derive(Debug)]
pub struct Decimal2(Box<RawValue>);

impl Decimal2 {
    /// From ten-thousandths, rounded half away from zero to cents.
    pub fn from_e4(value: i64) -> Decimal2 {
        let cents = (i128::from(value) + if value >= 0 { 50 } else { -50 }) / 100;
        Decimal2::from_hundredths(cents)
    }

    fn from_hundredths(cents: i128) -> Decimal2 {
        let sign = if cents < 0 { "-" } else { "" };
        let text = format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
        Decimal2(RawValue::from_string(text).expect("a decimal is a JSON number"))
    }

    /// `part / whole × 100`, rounded to two places; 0 when `whole` is 0.
    pub fn percent(part: u64, whole: u64) -> Decimal2 {
        if whole == 0 {
            return Decimal2::from_hundredths(0);
        }
        let (part, whole) = (u128::from(part), u128::from(whole));
        let hundredths = (part * 10_000 * 2 + whole) / (whole * 2);
        Decimal2::from_hundredths(hundredths as i128)
    }
}

impl Serialize for Decimal2 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

#[derive(Serialize, ToSchema)]
pub struct Metrics {
    impressions: u64,
    views: u64,
    clicks: u64,
    add_to_cart: u64,
    /// Completed checkouts.
    orders: u64,
    /// Sum of the orders' revenue in the shop currency, 2 decimals.
    #[schema(value_type = f64, example = 123.45)]
    revenue: Decimal2,
}

impl From<Totals> for Metrics {
    fn from(t: Totals) -> Self {
        Metrics {
            impressions: t.impressions,
            views: t.views,
            clicks: t.clicks,
            add_to_cart: t.add_to_cart,
            orders: t.orders,
            revenue: Decimal2::from_e4(t.revenue_e4),
        }
    }
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum SortKey {
    Views,
    Clicks,
    Impressions,
    AddToCart,
    Orders,
    Revenue,
    Title,
    CreatedAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
enum SortOrder {
    Desc,
    Asc,
}

/// One row to sort: what every sort key needs, and the item it stands for.
struct Sortable<'a, T> {
    item: &'a T,
    id: Uuid,
    title: &'a str,
    created_at: DateTime<Utc>,
    totals: Totals,
}

fn compare<T>(key: SortKey, a: &Sortable<T>, b: &Sortable<T>) -> Ordering {
    match key {
        SortKey::Views => a.totals.views.cmp(&b.totals.views),
        SortKey::Clicks => a.totals.clicks.cmp(&b.totals.clicks),
        SortKey::Impressions => a.totals.impressions.cmp(&b.totals.impressions),
        SortKey::AddToCart => a.totals.add_to_cart.cmp(&b.totals.add_to_cart),
        SortKey::Orders => a.totals.orders.cmp(&b.totals.orders),
        SortKey::Revenue => a.totals.revenue_e4.cmp(&b.totals.revenue_e4),
        SortKey::Title => a.title.cmp(b.title),
        SortKey::CreatedAt => a.created_at.cmp(&b.created_at),
    }
}

impl ListQuery {
    /// Every item with its totals (zero where nothing happened), sorted by the key, ties by id
    /// ascending so that pages are stable, and cut to the requested page.
    fn apply<'a, T>(
        &self,
        items: &'a [T],
        describe: impl Fn(&'a T) -> (Uuid, &'a str, DateTime<Utc>),
        mut totals: HashMap<String, Totals>,
    ) -> (Vec<(&'a T, Totals)>, Pagination) {
        let mut rows: Vec<Sortable<T>> = items
            .iter()
            .map(|item| {
                let (id, title, created_at) = describe(item);
                let totals = totals.remove(&id.to_string()).unwrap_or_default();
                Sortable {
                    item,
                    id,
                    title,
                    created_at,
                    totals,
                }
            })
            .collect();
        rows.sort_by(|a, b| {
            let order = compare(self.sort_by, a, b);
            let order = match self.sort_order {
                SortOrder::Desc => order.reverse(),
                SortOrder::Asc => order,
            };
            order.then_with(|| a.id.cmp(&b.id))
        });
        let (rows, pagination) = self.slice(rows);
        (
            rows.into_iter().map(|r| (r.item, r.totals)).collect(),
            pagination,
        )
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

/// Per-video metrics for all of the shop's videos
#[utoipa::path(
    get, path = "/api/v1/analytics/videos", tag = "analytics",
    params(ListQuery, RangeQuery),
    responses(
        (status = 200, body = VideoAnalyticsList, headers(("X-RateLimit-Limit" = u32), ("X-RateLimit-Remaining" = u32), ("X-RateLimit-Reset" = u64))),
        (status = 400, description = "INVALID_DATE, INVALID_DATE_RANGE or INVALID_PARAMETER", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED or INVALID_API_KEY", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED", body = ErrorBody, headers(("Retry-After" = u64))),
        (status = 503, description = "ClickHouse unavailable", body = ErrorBody),
    ),
    security(("api_key" = []))
)]
pub async fn list_videos(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(listing): AppQuery<ListQuery>,
    AppQuery(range): AppQuery<RangeQuery>,
) -> Result<Json<VideoAnalyticsList>, ApiError> {
    let catalog = videos::list(&state.db, &caller.shop);
    let (data, pagination, meta) =
        list_page(&state, &caller, &listing, range, catalog, |_| true).await?;
    Ok(Json(VideoAnalyticsList {
        success: true,
        data,
        meta,
        pagination,
    }))
}

/// A catalog object the analytics API reports on: a video or a widget.
trait Analysed {
    const SUBJECT: Subject;
    type Record;
    /// Id, title and creation time: what listings sort by.
    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>);
    fn record(&self, totals: Totals) -> Self::Record;
}

/// A page of the caller's objects (`catalog`, those `keep` accepts), each with its totals in the
/// range.
async fn list_page<T: Analysed>(
    state: &AppState,
    caller: &Caller,
    listing: &ListQuery,
    range: RangeQuery,
    catalog: impl Future<Output = Result<Vec<T>, CatalogError>>,
    keep: impl Fn(&T) -> bool,
) -> Result<(Vec<T::Record>, Pagination, Meta), ApiError> {
    let (range, meta) = range.resolve(state, caller).await?;
    // Postgres and ClickHouse answer at the same time.
    let (catalog, totals) = tokio::join!(
        catalog,
        queries::totals_by_id(&state.warehouse, T::SUBJECT, &caller.shop, &range)
    );
    let (mut catalog, totals) = (catalog.map_err(catalog_error)?, totals?);
    catalog.retain(keep);
    let (rows, pagination) = listing.apply(&catalog, T::sort_fields, totals);
    let data = rows.into_iter().map(|(item, t)| item.record(t)).collect();
    Ok((data, pagination, meta))
}

/// One of the caller's objects, read by `get` with the id in the path, with its totals in the
/// range. An id that is not a UUID names no object.
async fn one_record<T: Analysed, F>(
    state: &AppState,
    caller: &Caller,
    raw_id: &str,
    range: RangeQuery,
    get: impl FnOnce(Uuid) -> F,
) -> Result<(T::Record, Meta), ApiError>
where
    F: Future<Output = Result<T, CatalogError>>,
{
    let id = Uuid::parse_str(raw_id).map_err(|_| ApiError::NotFound("Resource"))?;
    let item = get(id).await.map_err(catalog_error)?;
    let (range, meta) = range.resolve(state, caller).await?;
    let id = item.sort_fields().0.to_string();
    let totals =
        queries::totals_of(&state.warehouse, T::SUBJECT, &caller.shop, &range, &id).await?;
    Ok((item.record(totals), meta))
}

impl Analysed for videos::Video {
    const SUBJECT: Subject = Subject::Video;
    type Record = VideoAnalytics;

    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>) {
        (self.id, &self.title, self.created_at)
    }

    fn record(&self, totals: Totals) -> VideoAnalytics {
        VideoAnalytics {
            id: self.id,
            title: self.title.clone(),
            thumbnail_url: self.thumbnail.clone(),
            duration: self.duration,
            status: self.status,
            product_count: self.product_ids.len(),
            metrics: totals.into(),
        }
    }
}

/// The key's shop is gone: its key no longer counts. Anything else missing is not found.
fn catalog_error(e: CatalogError) -> ApiError {
    match e {
        CatalogError::ShopNotFound => ApiError::InvalidApiKey,
        CatalogError::NotFound(_) => ApiError::NotFound("Resource"),
        other => ApiError::Internal(other.into()),
    }
}

/// Metrics for one video
#[utoipa::path(
    get, path = "/api/v1/analytics/video/{videoId}", tag = "analytics",
    params(("videoId" = String, Path, description = "The video's id"), RangeQuery),
    responses(
        (status = 200, body = VideoAnalyticsOne),
        (status = 400, description = "INVALID_DATE or INVALID_DATE_RANGE", body = ErrorBody),
        (status = 401, description = "UNAUTHORIZED or INVALID_API_KEY", body = ErrorBody),
        (status = 404, description = "NOT_FOUND: no such video in the key's shop", body = ErrorBody),
        (status = 429, description = "RATE_LIMIT_EXCEEDED", body = ErrorBody),
    ),
    security(("api_key" = []))
)]
pub async fn one_video(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppPath(video_id): AppPath<String>,
    AppQuery(range): AppQuery<RangeQuery>,
) -> Result<Json<VideoAnalyticsOne>, ApiError> {
    let get = |id| videos::get(&state.db, &caller.shop, id);
    let (data, meta) = one_record(&state, &caller, &video_id, range, get).await?;
    Ok(Json(VideoAnalyticsOne {
        success: true,
        data,
        meta,
    }))
}

#[derive(Serialize, ToSchema)]
pub struct Summary {
    impressions: u64,
    views: u64,
    clicks: u64,
    add_to_cart: u64,
    orders: u64,
    #[schema(value_type = f64)]
    revenue: Decimal2,
    /// clicks / views × 100, 2 decimals; 0 when there are no views.
    #[schema(value_type = f64)]
    ctr: Decimal2,
    /// orders / views × 100, 2 decimals; 0 when there are no views.
    #[schema(value_type = f64)]
    cvr: Decimal2,
}

#[derive(Serialize, ToSchema)]
pub struct SummaryResponse {
    success: bool,
    data: Summary,
    meta: Meta,
}

/// Shop totals with click-through and conversion rates
#[utoipa::path(
    get, path = "/api/v1/analytics/summary", tag = "analytics",
    params(RangeQuery),
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
) -> Result<Json<SummaryResponse>, ApiError> {
    let (range, meta) = range.resolve(&state, &caller).await?;
    let t = queries::shop_totals(&state.warehouse, &caller.shop, &range).await?;
    Ok(Json(SummaryResponse {
        success: true,
        data: Summary {
            impressions: t.impressions,
            views: t.views,
            clicks: t.clicks,
            add_to_cart: t.add_to_cart,
            orders: t.orders,
            revenue: Decimal2::from_e4(t.revenue_e4),
            ctr: Decimal2::percent(t.clicks, t.views),
            cvr: Decimal2::percent(t.orders, t.views),
        },
        meta,
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
    type Record = WidgetAnalytics;

    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>) {
        (self.id, &self.title, self.created_at)
    }

    fn record(&self, totals: Totals) -> WidgetAnalytics {
        WidgetAnalytics {
            id: self.id,
            title: self.title.clone(),
            widget_type: self.widget_type,
            status: self.status,
            video_count: self.video_ids.len(),
            metrics: totals.into(),
        }
    }
}

/// Per-widget metrics
#[utoipa::path(
    get, path = "/api/v1/analytics/widgets", tag = "analytics",
    params(ListQuery, WidgetFilter, RangeQuery),
    responses(
        (status = 200, body = WidgetAnalyticsList),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn list_widgets(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(listing): AppQuery<ListQuery>,
    AppQuery(filter): AppQuery<WidgetFilter>,
    AppQuery(range): AppQuery<RangeQuery>,
) -> Result<Json<WidgetAnalyticsList>, ApiError> {
    let only_type = filter.widget_type;
    let catalog = widgets::list(&state.db, &caller.shop);
    let keep = |w: &widgets::Widget| only_type.is_none_or(|t| w.widget_type == t);
    let (data, pagination, meta) =
        list_page(&state, &caller, &listing, range, catalog, keep).await?;
    Ok(Json(WidgetAnalyticsList {
        success: true,
        data,
        meta,
        pagination,
    }))
}

/// Metrics for one widget
#[utoipa::path(
    get, path = "/api/v1/analytics/widget/{widgetId}", tag = "analytics",
    params(("widgetId" = String, Path, description = "The widget's id"), RangeQuery),
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
) -> Result<Json<WidgetAnalyticsOne>, ApiError> {
    let get = |id| widgets::get(&state.db, &caller.shop, id);
    let (data, meta) = one_record(&state, &caller, &widget_id, range, get).await?;
    Ok(Json(WidgetAnalyticsOne {
        success: true,
        data,
        meta,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_rates_are_exact_decimals_with_two_places() {
        assert_eq!(Decimal2::from_e4(1_000_000_000).0.get(), "100000.00");
        assert_eq!(Decimal2::from_e4(0).0.get(), "0.00");
        assert_eq!(Decimal2::from_e4(1_999).0.get(), "0.20");
        assert_eq!(Decimal2::from_e4(1_949).0.get(), "0.19");
        assert_eq!(Decimal2::from_e4(1_950).0.get(), "0.20");
        assert_eq!(Decimal2::percent(1, 3).0.get(), "33.33");
        assert_eq!(Decimal2::percent(2, 3).0.get(), "66.67");
        assert_eq!(Decimal2::percent(5, 0).0.get(), "0.00");
        assert_eq!(Decimal2::percent(3, 3).0.get(), "100.00");
    }
}
