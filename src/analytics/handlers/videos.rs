//! `GET /analytics/videos` and `GET /analytics/video/{videoId}`: the shop's videos and their
//! metrics.

use axum::extract::State;
use axum::response::Response;
use axum::Extension;
use axum::Json;
use chrono::{DateTime, Utc};
use serde::Serialize;
use utoipa::ToSchema;
use uuid::Uuid;

use super::breakdown::{BreakdownQuery, ValueEntry};
use super::listing::{list, Pagination};
use super::params::{CompareQuery, ListQuery, ListRequest, RangeQuery};
use super::record::{one_record, Analysed, OneAnswer, OneQuery};
use super::window::Meta;
use crate::analytics::auth::Caller;
use crate::analytics::dimensions::Filters;
use crate::analytics::export::{CsvRow, FormatQuery};
use crate::analytics::list_cache::{ListCache, ListCaches};
use crate::analytics::metrics::{Comparison, Metrics};
use crate::analytics::queries::{Subject, Totals};
use crate::app::AppState;
use crate::catalog::domain::VideoStatus;
use crate::catalog::videos;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{AppPath, AppQuery};

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

/// One video's or widget's numbers with `breakdown`: one entry per value.
#[derive(Serialize, ToSchema)]
pub struct BreakdownResponse {
    success: bool,
    data: Vec<ValueEntry>,
    meta: Meta,
}

impl BreakdownResponse {
    pub(super) fn new(data: Vec<ValueEntry>, meta: Meta) -> Self {
        BreakdownResponse {
            success: true,
            data,
            meta,
        }
    }
}

/// A video's record, or with `breakdown` one entry per value.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum VideoAnswer {
    One(Box<VideoAnalyticsOne>),
    Breakdown(BreakdownResponse),
}

/// Per-video metrics for all of the shop's videos
#[utoipa::path(
    get, path = "/analytics/videos", tag = "analytics", operation_id = "list_video_analytics",
    params(ListQuery, RangeQuery, CompareQuery, Filters, FormatQuery),
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

/// Metrics for one video
#[utoipa::path(
    get, path = "/analytics/video/{videoId}", tag = "analytics",
    params(("videoId" = String, Path, description = "The video's id"), RangeQuery, CompareQuery, Filters, BreakdownQuery),
    responses(
        (status = 200, body = VideoAnswer),
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
    AppQuery(filters): AppQuery<Filters>,
    AppQuery(breakdown): AppQuery<BreakdownQuery>,
) -> Result<Json<VideoAnswer>, ApiError> {
    let get = |id| videos::get(&state.db, &caller.shop, id);
    let query = OneQuery {
        range,
        compare,
        filters,
        breakdown,
    };
    let (answer, meta) = one_record(&state, &caller, &video_id, query, get).await?;
    Ok(Json(match answer {
        OneAnswer::Record(data) => VideoAnswer::One(Box::new(VideoAnalyticsOne {
            success: true,
            data,
            meta,
        })),
        OneAnswer::Breakdown(data) => VideoAnswer::Breakdown(BreakdownResponse::new(data, meta)),
    }))
}
