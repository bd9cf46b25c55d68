//! The analytics API (`/api/v1/analytics`): keys, authentication, the per-key rate limit, and
//! metrics read from ClickHouse's daily views, in the shop's timezone.

pub mod auth;
pub mod dates;
mod handlers;
pub mod keys;
pub mod queries;

use axum::middleware;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(handlers::list_videos))
        .routes(routes!(handlers::one_video))
        .routes(routes!(handlers::summary))
        .routes(routes!(handlers::list_widgets))
        .routes(routes!(handlers::one_widget))
        .route_layer(middleware::from_fn_with_state(state, auth::authenticate))
}
