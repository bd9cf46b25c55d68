//! The storefront proxy: requests that reach us through the platform's app proxy, signed with
//! the secret we share with the platform: the widget endpoints and the event endpoint.

pub mod caching;
mod display_rules;
mod events;
mod presentation;
pub mod request;
pub mod seen;
pub mod signature;
pub mod view_counts;
pub(crate) mod widgets;

use utoipa::IntoResponses;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::ErrorBody;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(widgets::contextual_widgets))
        .routes(routes!(widgets::widget_by_id))
        .routes(routes!(widgets::widgets_list))
        .routes(routes!(events::record_events))
}

/// The refusals every signed storefront endpoint documents alike. Documentation only.
#[derive(IntoResponses)]
pub enum StorefrontErrors {
    #[response(status = 401, description = "INVALID_SIGNATURE")]
    InvalidSignature(ErrorBody),
    #[response(status = 404, description = "SHOP_NOT_FOUND")]
    ShopNotFound(ErrorBody),
}

/// A shop this instance holds no catalog of while Postgres cannot be reached (a shop it has
/// loaded is served from its last snapshot). Documentation only.
#[derive(IntoResponses)]
#[response(
    status = 503,
    description = "SERVICE_UNAVAILABLE: the shop's catalog cannot be read right now; retry after `Retry-After` seconds",
    headers(("Retry-After" = u64))
)]
pub struct CatalogUnavailable(pub ErrorBody);
