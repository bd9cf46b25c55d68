//! `GET /analytics/summary`: the shop's totals with click-through and conversion rates.

use axum::extract::State;
use axum::Extension;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::params::{CompareQuery, RangeQuery};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::Caller;
use crate::analytics::metrics::SummaryMetrics;
use crate::analytics::queries;
use crate::analytics::AnalyticsErrors;
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::AppQuery;

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
