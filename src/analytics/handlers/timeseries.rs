//! `GET /api/v1/analytics/timeseries`: the shop's, one video's or one widget's metrics per day,
//! ISO week or month of the shop's calendar, every bucket present.

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::params::{CompareQuery, RangeQuery};
use super::record::{catalog_error, catalog_id};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::{postgres_available, Caller};
use crate::analytics::dates::DateRange;
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
    params(SeriesQuery, RangeQuery, CompareQuery, FormatQuery),
    responses(
        (status = 200, content((TimeseriesResponse = "application/json"), (String = "text/csv"))),
        (status = 404, description = "NOT_FOUND: no such video or widget in the key's shop", body = ErrorBody),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn timeseries(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(query): AppQuery<SeriesQuery>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(compare): AppQuery<CompareQuery>,
    AppQuery(format): AppQuery<FormatQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let series = series(&state, &caller, &query).await?;
    let mut window = Window::resolve(&state, &caller, &range, &compare).await?;
    window.meta.interval = Some(query.interval);
    let days = |range| queries::daily_totals(&state.warehouse, &series, &caller.shop, range);
    let (current, comparison) = tokio::join!(
        days(&window.range),
        optionally(window.comparison_range(), days)
    );
    let buckets = query.interval.buckets(&window.range);
    let current = fold(&buckets, current?);
    let comparison = match (window.comparison, comparison?) {
        (Some((compare, _)), Some(days)) => {
            Some(fold(&compare.spans(&window.range, &buckets), days))
        }
        _ => None,
    };
    let data: Vec<Bucket> = buckets
        .iter()
        .zip(current)
        .enumerate()
        .map(|(i, (bucket, totals))| Bucket {
            date: bucket.start,
            metrics: totals.into(),
            comparison: Comparison::of(comparison.as_ref().map(|c| c[i])),
        })
        .collect();
    if format.wants_csv(&headers) {
        let list = format!("timeseries-{}", query.interval.as_str());
        let name = export::file_name(&list, &window.range);
        return Ok(export::respond(&name, comparison.is_some(), data));
    }
    let body = Json(TimeseriesResponse {
        success: true,
        data,
        meta: window.meta,
    });
    Ok((export::VARY_ACCEPT, body).into_response())
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
