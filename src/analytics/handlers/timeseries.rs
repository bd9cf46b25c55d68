//! `GET /api/v1/analytics/timeseries`: the shop's, one video's or one widget's metrics per day,
//! ISO week or month of the shop's calendar, every bucket present.

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{AnyOfBuilder, Schema};
use utoipa::openapi::{Ref, RefOr};
use utoipa::{IntoParams, PartialSchema, ToSchema};

use super::breakdown::{ordered, per_value, BreakdownQuery, Named};
use super::params::{CompareQuery, RangeQuery};
use super::record::{catalog_error, catalog_id};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::{postgres_available, Caller};
use crate::analytics::dates::DateRange;
use crate::analytics::dimensions::{shown, Dimension, Filters};
use crate::analytics::export::{self, CsvRow, FormatQuery};
use crate::analytics::metrics::{Comparison, Metrics};
use crate::analytics::periods::{span_of, Interval};
use crate::analytics::queries::{self, Series, Totals};
use crate::analytics::AnalyticsErrors;
use crate::app::AppState;
use crate::catalog::{videos, widgets};
use crate::error::{ApiError, ErrorBody};
use crate::extract::AppQuery;

/// Whose series, and in what buckets.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct SeriesQuery {
    /// `day` (default), `week` (ISO weeks, from Monday) or `month`, in the shop's calendar.
    #[serde(default)]
    #[param(inline)]
    interval: Interval,
    /// Only this video's events. Not with `widget_id`.
    video_id: Option<String>,
    /// Only this widget's events. Not with `video_id`.
    widget_id: Option<String>,
}

/// One bucket: its first day (clipped to the range) and its metrics.
#[derive(Serialize, ToSchema)]
pub struct Bucket {
    #[schema(value_type = String, format = Date, example = "2026-10-22")]
    date: NaiveDate,
    metrics: Metrics,
    /// With `compare`: the bucket's days moved to the comparison range.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<Comparison>,
}

#[derive(Serialize, ToSchema)]
pub struct TimeseriesResponse {
    success: bool,
    data: Vec<Bucket>,
    meta: Meta,
}

/// One value's series, with its totals over the range.
#[derive(Serialize, ToSchema)]
pub struct ValueSeries {
    #[serde(flatten)]
    named: Named,
    metrics: Metrics,
    series: Vec<Bucket>,
}

/// With `breakdown`: one series per value, ordered by its totals.
#[derive(Serialize, ToSchema)]
pub struct TimeseriesBreakdownResponse {
    success: bool,
    data: Vec<ValueSeries>,
    meta: Meta,
}

/// The series, or with `breakdown` one per value.
#[derive(Serialize)]
#[serde(untagged)]
pub enum TimeseriesAnswer {
    Series(TimeseriesResponse),
    Breakdown(TimeseriesBreakdownResponse),
}

/// `anyOf`, not `oneOf`: a breakdown with no values (`data: []`) is also a valid series.
impl utoipa::PartialSchema for TimeseriesAnswer {
    fn schema() -> RefOr<Schema> {
        AnyOfBuilder::new()
            .item(Ref::from_schema_name(TimeseriesResponse::name()))
            .item(Ref::from_schema_name(TimeseriesBreakdownResponse::name()))
            .description(Some("The series, or with `breakdown` one per value."))
            .into()
    }
}

impl ToSchema for TimeseriesAnswer {
    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.push((
            TimeseriesResponse::name().into(),
            TimeseriesResponse::schema(),
        ));
        TimeseriesResponse::schemas(schemas);
        let breakdown = TimeseriesBreakdownResponse::schema();
        schemas.push((TimeseriesBreakdownResponse::name().into(), breakdown));
        TimeseriesBreakdownResponse::schemas(schemas);
    }
}

/// A row of a broken-down series' CSV: the value, then the bucket.
struct ValueBucket {
    value: String,
    bucket: Bucket,
}

impl CsvRow for ValueBucket {
    const COLUMNS: &'static [&'static str] = &["date"];

    fn write_leading(&self, row: &mut csv::StringRecord) {
        row.push_field(&self.value);
        self.bucket.write_leading(row);
    }

    fn metrics(&self) -> (&Metrics, Option<&Comparison>) {
        self.bucket.metrics()
    }
}

impl CsvRow for Bucket {
    const COLUMNS: &'static [&'static str] = &["date"];

    fn write_leading(&self, row: &mut csv::StringRecord) {
        row.push_field(&self.date.to_string());
    }

    fn metrics(&self) -> (&Metrics, Option<&Comparison>) {
        (&self.metrics, self.comparison.as_ref())
    }
}

/// Metrics per day, week or month
#[utoipa::path(
    get, path = "/analytics/timeseries", tag = "analytics",
    params(SeriesQuery, RangeQuery, CompareQuery, Filters, BreakdownQuery, FormatQuery),
    responses(
        (status = 200, content((TimeseriesAnswer = "application/json"), (String = "text/csv"))),
        (status = 404, description = "NOT_FOUND: no such video or widget in the key's shop", body = ErrorBody),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn timeseries(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    request: SeriesRequest,
) -> Result<Response, ApiError> {
    let SeriesRequest {
        query,
        range,
        compare,
        filters,
        breakdown,
        format,
        headers,
    } = request;
    let series = series(&state, &caller, &query).await?;
    let mut window = Window::resolve(&state, &caller, &range, &compare).await?;
    window.meta.interval = Some(query.interval);
    let buckets = query.interval.buckets(&window.range);
    let comparison_spans =
        (window.comparison).map(|(compare, _)| compare.spans(&window.range, &buckets));
    let (current, comparison) = if filters.is_empty() && breakdown.breakdown.is_none() {
        let days = |range| queries::daily_totals(&state.warehouse, &series, &caller.shop, range);
        let (current, comparison) = tokio::join!(
            days(&window.range),
            optionally(window.comparison_range(), days)
        );
        (current?, comparison?)
    } else {
        let asked = (&filters, breakdown.breakdown);
        let days = |range| {
            let shop = &caller.shop;
            queries::totals_by_value(&state.warehouse, &series, shop, range, asked, true)
        };
        let (current, comparison) = tokio::join!(
            days(&window.range),
            optionally(window.comparison_range(), days)
        );
        let (current, comparison) = (current?, comparison?);
        if let Some(dimension) = breakdown.breakdown {
            let spans = (&buckets[..], comparison_spans.as_deref());
            let data = by_value(&breakdown, spans, current, comparison);
            if format.wants_csv(&headers) {
                let name = format!(
                    "timeseries-{}-by-{}",
                    query.interval.as_str(),
                    dimension.as_str()
                );
                let name = export::file_name(&name, &window.range);
                let rows = (data.into_iter())
                    .flat_map(|s| {
                        let value = shown(&s.value).to_string();
                        (s.series.into_iter()).map(move |bucket| ValueBucket {
                            value: value.clone(),
                            bucket,
                        })
                    })
                    .collect();
                let leading: [&[&str]; 2] = [&[dimension.as_str()], ValueBucket::COLUMNS];
                let compared = window.comparison.is_some();
                return Ok(export::respond_under(&name, compared, &leading, rows));
            }
            let body = Json(TimeseriesAnswer::Breakdown(TimeseriesBreakdownResponse {
                success: true,
                data: with_dimension(dimension, data),
                meta: window.meta,
            }));
            return Ok((export::VARY_ACCEPT, body).into_response());
        }
        (days_of(current), comparison.map(days_of))
    };
    let current = fold(&buckets, current);
    let comparison = match (&comparison_spans, comparison) {
        (Some(spans), Some(days)) => Some(fold(spans, days)),
        _ => None,
    };
    let data = buckets_of(&buckets, current, comparison.as_deref());
    if format.wants_csv(&headers) {
        let list = format!("timeseries-{}", query.interval.as_str());
        let name = export::file_name(&list, &window.range);
        return Ok(export::respond(&name, comparison.is_some(), data));
    }
    let body = Json(TimeseriesAnswer::Series(TimeseriesResponse {
        success: true,
        data,
        meta: window.meta,
    }));
    Ok((export::VARY_ACCEPT, body).into_response())
}

/// Each bucket with its totals, and its comparison's.
fn buckets_of(
    buckets: &[DateRange],
    current: Vec<Totals>,
    comparison: Option<&[Totals]>,
) -> Vec<Bucket> {
    (buckets.iter().zip(current).enumerate())
        .map(|(i, (bucket, totals))| Bucket {
            date: bucket.start,
            metrics: totals.into(),
            comparison: Comparison::of(comparison.map(|c| c[i])),
        })
        .collect()
}

/// Rows of totals by value and day as the days' totals (one value, or all of them together).
fn days_of(rows: Vec<queries::ValueTotals>) -> Vec<queries::DayTotals> {
    (rows.into_iter())
        .map(|row| queries::DayTotals {
            date: row.day,
            totals: row.totals,
        })
        .collect()
}

/// A broken-down series before it is named: its value, its totals over the range, its buckets.
struct Unnamed {
    value: String,
    totals: Totals,
    series: Vec<Bucket>,
}

/// One series per value (with its comparison's buckets), ordered by the range's totals.
fn by_value(
    breakdown: &BreakdownQuery,
    (buckets, comparison_spans): (&[DateRange], Option<&[DateRange]>),
    current: Vec<queries::ValueTotals>,
    comparison: Option<Vec<queries::ValueTotals>>,
) -> Vec<Unnamed> {
    let group = |rows: Vec<queries::ValueTotals>| {
        let mut values: std::collections::BTreeMap<String, Vec<queries::ValueTotals>> =
            Default::default();
        for row in rows {
            values.entry(row.value.clone()).or_default().push(row);
        }
        values
    };
    let totals = per_value(current.clone());
    let earlier = comparison.as_ref().map(|c| per_value(c.clone()));
    let (mut current, mut comparison) = (group(current), comparison.map(group));
    ordered(breakdown, totals, earlier)
        .into_iter()
        .map(|(value, totals, _)| {
            let days = days_of(current.remove(&value).unwrap_or_default());
            let compared = (comparison.as_mut())
                .zip(comparison_spans)
                .map(|(c, spans)| fold(spans, days_of(c.remove(&value).unwrap_or_default())));
            let series = buckets_of(buckets, fold(buckets, days), compared.as_deref());
            Unnamed {
                value,
                totals,
                series,
            }
        })
        .collect()
}

fn with_dimension(dimension: Dimension, data: Vec<Unnamed>) -> Vec<ValueSeries> {
    (data.into_iter())
        .map(|s| ValueSeries {
            named: Named::new(dimension, &s.value),
            metrics: s.totals.into(),
            series: s.series,
        })
        .collect()
}

/// What the time series is asked: whose series, the range, the comparison, the filters, the
/// breakdown and the format.
pub struct SeriesRequest {
    query: SeriesQuery,
    range: RangeQuery,
    compare: CompareQuery,
    filters: Filters,
    breakdown: BreakdownQuery,
    format: FormatQuery,
    headers: HeaderMap,
}

impl<S: Send + Sync> FromRequestParts<S> for SeriesRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(SeriesRequest {
            query: AppQuery::from_request_parts(parts, state).await?.0,
            range: AppQuery::from_request_parts(parts, state).await?.0,
            compare: AppQuery::from_request_parts(parts, state).await?.0,
            filters: AppQuery::from_request_parts(parts, state).await?.0,
            breakdown: AppQuery::from_request_parts(parts, state).await?.0,
            format: AppQuery::from_request_parts(parts, state).await?.0,
            headers: parts.headers.clone(),
        })
    }
}

/// Whose events the series counts, checked against the caller's catalog.
async fn series(
    state: &AppState,
    caller: &Caller,
    query: &SeriesQuery,
) -> Result<Series, ApiError> {
    match (&query.video_id, &query.widget_id) {
        (Some(_), Some(_)) => Err(ApiError::invalid(
            "widget_id",
            "give video_id or widget_id, not both",
        )),
        (Some(video), None) => {
            let id = catalog_id(video)?;
            postgres_available(state)?;
            let video = videos::get(&state.db, &caller.shop, id)
                .await
                .map_err(catalog_error)?;
            Ok(Series::Video(video.id.to_string()))
        }
        (None, Some(widget)) => {
            let id = catalog_id(widget)?;
            postgres_available(state)?;
            let widget = widgets::get(&state.db, &caller.shop, id)
                .await
                .map_err(catalog_error)?;
            Ok(Series::Widget(widget.id.to_string()))
        }
        (None, None) => Ok(Series::Shop),
    }
}

/// The days' totals added up per span (buckets, or their comparisons); spans without events
/// stay zero.
fn fold(spans: &[DateRange], days: Vec<queries::DayTotals>) -> Vec<Totals> {
    let mut totals = vec![Totals::default(); spans.len()];
    for day in days {
        if let Some(i) = span_of(spans, day.date) {
            totals[i] += day.totals;
        }
    }
    totals
}
