//! The storefront proxy: requests that reach us through the platform's app proxy, signed with
//! the secret we share with the platform: the widget endpoints and the event endpoint.

pub mod caching;
mod display_rules;
mod events;
mod presentation;
pub mod request;
pub mod signature;
pub mod view_counts;
pub(crate) mod widgets;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(widgets::contextual_widgets))
        .routes(routes!(widgets::widget_by_id))
        .routes(routes!(widgets::widgets_list))
        .routes(routes!(events::record_events))
}
