//! The provisioning API (shops, products, videos, widgets, API keys), behind the admin bearer
//! token.

mod api_keys;
mod auth;
mod products;
mod shops;
mod videos;
mod widgets;

use axum::extract::{RawPathParams, Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::Response;
use utoipa::{IntoParams, IntoResponses};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;
use uuid::Uuid;

use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::{ApiError, ErrorBody};

pub use auth::AdminToken;

pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(
            shops::put_shop,
            shops::get_shop,
            shops::delete_shop
        ))
        .routes(routes!(
            products::upsert_products,
            products::list_products,
            products::delete_products
        ))
        .routes(routes!(videos::create_video, videos::list_videos))
        .routes(routes!(
            videos::get_video,
            videos::patch_video,
            videos::delete_video
        ))
        .routes(routes!(widgets::create_widget, widgets::list_widgets))
        .routes(routes!(
            widgets::get_widget,
            widgets::patch_widget,
            widgets::delete_widget
        ))
        .routes(routes!(api_keys::create_api_key, api_keys::list_api_keys))
        .routes(routes!(api_keys::revoke_api_key))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            invalidate_after_write,
        ))
        // Authentication runs before any extractor, so a caller without the token learns
        // nothing about which shops or objects exist.
        .route_layer(middleware::from_fn_with_state(state, auth::require_admin))
}

/// A successful write drops the shop's cached snapshot (and, for deletes, the cached API keys) on
/// this instance at once; other instances hear of it through the NOTIFY the write's transaction
/// sent.
async fn invalidate_after_write(
    State(state): State<AppState>,
    path: RawPathParams,
    req: Request,
    next: Next,
) -> Response {
    let shop = path
        .iter()
        .find(|(name, _)| *name == "shop")
        .and_then(|(_, value)| ShopDomain::parse(value).ok());
    let is_write = req.method() != Method::GET;
    let is_delete = req.method() == Method::DELETE;
    let response = next.run(req).await;
    if let (true, true, Some(shop)) = (is_write, response.status().is_success(), shop) {
        state.catalog.invalidate(&shop).await;
        // Revoking a key or uninstalling a shop must shut its keys out here at once.
        if is_delete {
            state.api_keys.invalidate_all();
        }
    }
    response
}

/// The `{shop}` path parameter of every provisioning route (documentation only: handlers take the
/// raw segment and parse it with [`shop_param`]).
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ShopPath {
    /// Shop domain
    pub shop: String,
}

/// The errors of a provisioning route without a request body: a missing or wrong admin token, or
/// an unknown shop or object. Documentation only.
#[derive(IntoResponses)]
pub enum AdminErrors {
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    #[response(status = 404)]
    NotFound(ErrorBody),
}

/// [`AdminErrors`] and an invalid request body. Documentation only.
#[derive(IntoResponses)]
pub enum AdminBodyErrors {
    #[response(status = 400)]
    Invalid(ErrorBody),
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    #[response(status = 404)]
    NotFound(ErrorBody),
}

/// The `{shop}` path segment as a domain value.
fn shop_param(raw: &str) -> Result<ShopDomain, ApiError> {
    ShopDomain::parse(raw).map_err(|e| ApiError::validation("shop", e.0))
}

/// An object id from the path. Ids are UUIDs we generated; anything else names no object.
fn id_param(raw: &str, what: &'static str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound(what))
}
