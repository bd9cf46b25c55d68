//! The analytics API (`/api/v1/analytics`): keys, authentication, the per-key rate limit, and
//! metrics read from ClickHouse's aggregates, in the shop's timezone: totals, time series,
//! comparisons with an earlier range, and CSV exports.

pub mod auth;
pub mod dates;
pub mod dimensions;
mod export;
mod handlers;
pub mod keys;
pub mod lift;
pub mod list_cache;
pub mod metrics;
mod periods;
pub mod queries;
pub mod split;

use axum::middleware;
use utoipa::IntoResponses;
use utoipa_axum::router::OpenApiRouter;

use crate::app::AppState;
use crate::error::ErrorBody;

/// The analytics API at `/api/v1`, behind `vk_` keys and their rate limit.
pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    let routes =
        handlers::routes().route_layer(middleware::from_fn_with_state(state, auth::authenticate));
    OpenApiRouter::new().nest("/api/v1", routes)
}

/// The same analytics for the merchant's dashboard, under `/app/api`: the caller is the shop
/// of the dashboard's session (checked by the router that nests this one), with no key and no
/// rate limit.
pub fn dashboard_routes() -> OpenApiRouter<AppState> {
    handlers::routes().route_layer(middleware::from_fn(auth::caller_from_session))
}

/// The refusals any analytics call may answer: a bad range or parameter, a missing or unknown key,
/// the key's quota, a database out of reach. Documentation only.
#[derive(IntoResponses)]
pub enum AnalyticsErrors {
    #[response(status = 400)]
    Invalid(ErrorBody),
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    #[response(status = 429)]
    RateLimited(ErrorBody),
    #[response(
        status = 503,
        description = "SERVICE_UNAVAILABLE: ClickHouse or Postgres cannot be reached; retry after `Retry-After` seconds",
        headers(("Retry-After" = u64))
    )]
    Unavailable(ErrorBody),
}
