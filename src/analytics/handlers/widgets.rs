//! `GET /analytics/widgets` and `GET /analytics/widget/{widgetId}`: the shop's widgets and their
//! metrics.

use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::breakdown::BreakdownQuery;
use super::listing::{list, Pagination};
use super::params::{CompareQuery, ListQuery, ListRequest, RangeQuery, WidgetFilter};
use super::record::{one_record, Analysed, OneAnswer, OneQuery};
use super::videos::BreakdownResponse;
use super::window::Meta;
use crate::analytics::auth::Caller;
use crate::analytics::dimensions::Filters;
use crate::analytics::export::{CsvRow, FormatQuery};
use crate::analytics::list_cache::{ListCache, ListCaches};
use crate::analytics::metrics::{Comparison, Metrics};
use crate::analytics::queries::{Subject, Totals};
use crate::analytics::AnalyticsErrors;
use crate::app::AppState;
use crate::catalog::domain::{WidgetStatus, WidgetType};
use crate::catalog::widgets;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{AppPath, AppQuery};

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
    get, path = "/analytics/widgets", tag = "analytics", operation_id = "list_widget_analytics",
    params(ListQuery, WidgetFilter, RangeQuery, CompareQuery, Filters, FormatQuery),
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
    params(("widgetId" = String, Path, description = "The widget's id"), RangeQuery, CompareQuery, Filters, BreakdownQuery),
    responses(
        (status = 200, body = WidgetAnswer),
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
    AppQuery(filters): AppQuery<Filters>,
    AppQuery(breakdown): AppQuery<BreakdownQuery>,
) -> Result<Json<WidgetAnswer>, ApiError> {
    let get = |id| widgets::get(&state.db, &caller.shop, id);
    let query = OneQuery {
        range,
        compare,
        filters,
        breakdown,
    };
    let (answer, meta) = one_record(&state, &caller, &widget_id, query, get).await?;
    Ok(Json(match answer {
        OneAnswer::Record(data) => WidgetAnswer::One(Box::new(WidgetAnalyticsOne {
            success: true,
            data,
            meta,
        })),
        OneAnswer::Breakdown(data) => WidgetAnswer::Breakdown(BreakdownResponse::new(data, meta)),
    }))
}

/// A widget's record, or with `breakdown` one entry per value.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum WidgetAnswer {
    One(Box<WidgetAnalyticsOne>),
    Breakdown(BreakdownResponse),
}
