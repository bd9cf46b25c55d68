//! `GET /analytics/summary`: the shop's totals with click-through and conversion rates.

use axum::extract::State;
use axum::Extension;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::breakdown::{self, BreakdownQuery, Dimensions, SummaryEntry};
use super::params::{CompareQuery, RangeQuery};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::Caller;
use crate::analytics::dimensions::Filters;
use crate::analytics::metrics::SummaryMetrics;
use crate::analytics::queries::{self, Series};
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

/// With `breakdown`: one entry per value.
#[derive(Serialize, ToSchema)]
pub struct SummaryBreakdownResponse {
    success: bool,
    data: Vec<SummaryEntry>,
    meta: Meta,
}

/// The shop's totals, or with `breakdown` one entry per value.
#[derive(Serialize, ToSchema)]
#[serde(untagged)]
pub enum SummaryAnswer {
    Totals(Box<SummaryResponse>),
    Breakdown(SummaryBreakdownResponse),
}

/// Shop totals with click-through and conversion rates
#[utoipa::path(
    get, path = "/analytics/summary", tag = "analytics",
    params(RangeQuery, CompareQuery, Filters, BreakdownQuery),
    responses(
        (status = 200, body = SummaryAnswer),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn summary(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(compare): AppQuery<CompareQuery>,
    AppQuery(filters): AppQuery<Filters>,
    AppQuery(breakdown): AppQuery<BreakdownQuery>,
) -> Result<Json<SummaryAnswer>, ApiError> {
    let window = Window::resolve(&state, &caller, &range, &compare).await?;
    let dimensions = Dimensions {
        filters: &filters,
        breakdown: &breakdown,
    };
    let (current, comparison) = if dimensions.are_none() {
        let totals = |range| queries::shop_totals(&state.warehouse, &caller.shop, range);
        let (current, comparison) = tokio::join!(
            totals(&window.range),
            optionally(window.comparison_range(), totals)
        );
        (current?, comparison?)
    } else {
        let shop = &caller.shop;
        match breakdown::totals(&state, shop, &Series::Shop, &window, &dimensions).await? {
            Ok(totals) => totals,
            Err(broken) => {
                return Ok(Json(SummaryAnswer::Breakdown(SummaryBreakdownResponse {
                    success: true,
                    data: broken.summary_entries(),
                    meta: window.meta,
                })))
            }
        }
    };
    Ok(Json(SummaryAnswer::Totals(Box::new(SummaryResponse {
        success: true,
        data: Summary {
            metrics: current.into(),
            comparison: comparison.map(|t| SummaryComparison { metrics: t.into() }),
        },
        meta: window.meta,
    }))))
}
