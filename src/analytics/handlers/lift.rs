//! `GET /analytics/lift`: what the shop's holdout shows, the exposed group beside the holdout,
//! with the relative lifts of conversion and of revenue per session, their 95% intervals and
//! p-values (`analytics::lift`).

use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::params::{CompareQuery, RangeQuery};
use super::window::{Meta, Window};
use crate::analytics::auth::Caller;
use crate::analytics::export::{self, FormatQuery, VARY_ACCEPT};
use crate::analytics::lift::{self, GroupFigures, Interval};
use crate::analytics::metrics::Decimal2;
use crate::analytics::queries;
use crate::analytics::AnalyticsErrors;
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::AppQuery;

/// One group's figures over the range.
#[derive(Serialize, ToSchema)]
pub struct GroupMetrics {
    /// Visits: each sends one `session` event at its first page.
    sessions: u64,
    orders: u64,
    /// Orders ÷ sessions, in percent.
    #[schema(value_type = f64, example = 2.35)]
    conversion_rate: Decimal2,
    /// In the shop's currency.
    #[schema(value_type = f64, example = 1234.5)]
    revenue: Decimal2,
    #[schema(value_type = f64, example = 1.42)]
    revenue_per_session: Decimal2,
    /// Average order value: revenue ÷ orders.
    #[schema(value_type = f64, example = 60.25)]
    aov: Decimal2,
}

impl From<&GroupFigures> for GroupMetrics {
    fn from(g: &GroupFigures) -> GroupMetrics {
        let per = |count: u64| Decimal2::from_e4(per_e4(g.revenue_e4, count));
        GroupMetrics {
            sessions: g.sessions,
            orders: g.orders,
            conversion_rate: Decimal2::percent(g.orders, g.sessions),
            revenue: Decimal2::from_e4(g.revenue_e4),
            revenue_per_session: per(g.sessions),
            aov: per(g.orders),
        }
    }
}

/// `revenue_e4 / count`, rounded half away from zero; 0 when `count` is 0.
fn per_e4(revenue_e4: i64, count: u64) -> i64 {
    let (revenue, count) = (i128::from(revenue_e4), i128::from(count));
    if count == 0 {
        return 0;
    }
    let half = if revenue >= 0 { count / 2 } else { -count / 2 };
    ((revenue + half) / count) as i64
}

/// A relative lift of the exposed group over the holdout, in percent with two decimals (+50% is
/// `50.00`), its 95% interval, and the two-sided p-value of no difference.
#[derive(Serialize, ToSchema)]
pub struct LiftFigure {
    #[schema(value_type = f64, example = 12.5)]
    value: Decimal2,
    #[schema(value_type = f64, example = -3.1)]
    ci_low: Decimal2,
    #[schema(value_type = f64, example = 30.04)]
    ci_high: Decimal2,
    /// Four decimals.
    #[schema(value_type = f64, example = 0.1234)]
    p_value: Box<RawValue>,
}

impl From<Interval> for LiftFigure {
    fn from(i: Interval) -> LiftFigure {
        LiftFigure {
            value: Decimal2::of(i.value),
            ci_low: Decimal2::of(i.ci_low),
            ci_high: Decimal2::of(i.ci_high),
            p_value: RawValue::from_string(format!("{:.4}", i.p_value.clamp(0.0, 1.0)))
                .expect("a fixed-point number is JSON"),
        }
    }
}

/// The lifts; each `null` while the holdout has nothing to compare with (no sessions, or no
/// orders or revenue).
#[derive(Serialize, ToSchema)]
pub struct Lifts {
    conversion_rate: Option<LiftFigure>,
    revenue_per_session: Option<LiftFigure>,
}

#[derive(Serialize, ToSchema)]
pub struct LiftData {
    exposed: GroupMetrics,
    holdout: GroupMetrics,
    lift: Lifts,
    /// Whether each group has what the intervals need: at least 1,000 sessions, 50 orders and
    /// 50 sessions without one. Until then the lifts are shown, but they say little.
    enough_data: bool,
}

#[derive(Serialize, ToSchema)]
pub struct LiftResponse {
    success: bool,
    data: LiftData,
    meta: Meta,
}

/// What the shop's holdout shows: each group's conversion and revenue, and the lift
#[utoipa::path(
    get, path = "/analytics/lift", tag = "analytics",
    params(RangeQuery, FormatQuery),
    responses(
        (status = 200, content((LiftResponse = "application/json"), (String = "text/csv"))),
        AnalyticsErrors,
    ),
    security(("api_key" = []))
)]
pub async fn lift(
    State(state): State<AppState>,
    Extension(caller): Extension<Caller>,
    AppQuery(range): AppQuery<RangeQuery>,
    AppQuery(format): AppQuery<FormatQuery>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let window = Window::resolve(&state, &caller, &range, &CompareQuery::none()).await?;
    let (exposed, holdout) =
        queries::lift_groups(&state.warehouse, &caller.shop, &window.range).await?;
    let data = LiftData {
        exposed: GroupMetrics::from(&exposed),
        holdout: GroupMetrics::from(&holdout),
        lift: Lifts {
            conversion_rate: lift::conversion_lift(&exposed, &holdout).map(LiftFigure::from),
            revenue_per_session: lift::revenue_per_session_lift(&exposed, &holdout)
                .map(LiftFigure::from),
        },
        enough_data: lift::enough_data(&exposed, &holdout),
    };
    if format.wants_csv(&headers) {
        let name = export::file_name("lift", &window.range);
        return Ok((VARY_ACCEPT, csv_answer(&name, &data)).into_response());
    }
    let answer = LiftResponse {
        success: true,
        data,
        meta: window.meta,
    };
    Ok((VARY_ACCEPT, Json(answer)).into_response())
}

/// One header and one row: each group's figures, then each lift's, then `enough_data`; a lift
/// that cannot be computed has empty cells.
fn csv_answer(file_name: &str, data: &LiftData) -> Response {
    let mut header = Vec::new();
    let mut row = Vec::new();
    for (name, g) in [("exposed", &data.exposed), ("holdout", &data.holdout)] {
        let cells = [
            ("sessions", g.sessions.to_string()),
            ("orders", g.orders.to_string()),
            ("conversion_rate", g.conversion_rate.as_str().to_string()),
            ("revenue", g.revenue.as_str().to_string()),
            (
                "revenue_per_session",
                g.revenue_per_session.as_str().to_string(),
            ),
            ("aov", g.aov.as_str().to_string()),
        ];
        for (column, cell) in cells {
            header.push(format!("{name}_{column}"));
            row.push(cell);
        }
    }
    let lifts = [
        ("conversion_rate", &data.lift.conversion_rate),
        ("revenue_per_session", &data.lift.revenue_per_session),
    ];
    for (name, figure) in lifts {
        let cells = match figure {
            Some(f) => [
                f.value.as_str(),
                f.ci_low.as_str(),
                f.ci_high.as_str(),
                f.p_value.get(),
            ]
            .map(String::from),
            None => Default::default(),
        };
        for (column, cell) in ["lift", "ci_low", "ci_high", "p_value"].iter().zip(cells) {
            header.push(format!("{name}_{column}"));
            row.push(cell);
        }
    }
    header.push("enough_data".into());
    row.push(data.enough_data.to_string());
    export::respond_single(file_name, &header, &row)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_per_session_and_per_order_rounds_half_away_from_zero() {
        assert_eq!(per_e4(10_000, 3), 3_333);
        assert_eq!(per_e4(20_000, 3), 6_667);
        assert_eq!(per_e4(-20_000, 3), -6_667);
        assert_eq!(per_e4(5, 0), 0);
    }
}
