//! The provisioning API (shops, products, collections, videos, widgets, API keys), behind the admin bearer
//! token.

mod api_keys;
mod auth;
mod captions;
mod collections;
mod path;
mod privacy;
mod products;
mod shops;
mod uploads;
mod videos;
mod widgets;

use std::collections::BTreeMap;

use axum::extract::{Request, State};
use axum::http::Method;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::RefOr;
use utoipa::IntoResponses;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;
use crate::error::{ApiError, ErrorBody};

pub use auth::AdminToken;
pub(crate) use path::ShopPath;
use path::{Object, ObjectPath};

/// The provisioning API at `/admin/v1`, behind the admin token.
pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    let mut routes = shop_routes()
        .routes(routes!(shops::put_shop, shops::delete_shop))
        .routes(routes!(
            products::upsert_products,
            products::delete_products
        ));
    auth::document_token_requirement(routes.get_openapi_mut());
    let routes = routes
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            invalidate_after_write,
        ))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            unless_postgres_is_down,
        ))
        // Authentication runs before any extractor, so a caller without the token learns
        // nothing about which shops or objects exist.
        .route_layer(middleware::from_fn_with_state(state, auth::require_admin));
    OpenApiRouter::new().nest("/admin/v1", routes)
}

/// What the merchant's dashboard does with the same handlers, under `/app/api`: the shop is
/// read, its catalog listed, its videos, widgets and keys managed; and the merchant's own
/// settings of the shop changed, which the admin sets with the rest of them (`PUT`). The caller
/// (the dashboard's session, checked by the router that nests this one) may only name its own
/// shop.
pub fn dashboard_routes(state: AppState) -> OpenApiRouter<AppState> {
    shop_routes()
        .routes(routes!(shops::patch_shop))
        .route_layer(middleware::from_fn_with_state(
            state.clone(),
            invalidate_after_write,
        ))
        .route_layer(middleware::from_fn_with_state(
            state,
            unless_postgres_is_down,
        ))
}

/// Every provisioning call reads or writes Postgres: while it is known to be unreachable the
/// call is answered 503 at once, after its caller was authenticated, rather than after waiting
/// out the pool's acquire timeout. A call that finds it unreachable is a 503 too
/// (`ApiError::from(sqlx::Error)`).
async fn unless_postgres_is_down(
    State(state): State<AppState>,
    req: Request,
    next: Next,
) -> Response {
    match state.postgres.check() {
        Ok(()) => next.run(req).await,
        Err(down) => ApiError::DatabaseUnavailable(down.into()).into_response(),
    }
}

/// The routes the admin and the dashboard share, relative to where they are nested.
fn shop_routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(shops::get_shop))
        .routes(routes!(products::list_products))
        .routes(routes!(collections::list_collections))
        .routes(routes!(videos::create_video, videos::list_videos))
        .routes(routes!(uploads::upload_options, uploads::create_upload))
        .routes(routes!(
            uploads::upload_offset,
            uploads::append_upload,
            uploads::terminate_upload
        ))
        .routes(routes!(uploads::import_video))
        .routes(routes!(uploads::retry_video))
        .routes(routes!(uploads::choose_poster))
        .routes(routes!(captions::put_captions, captions::delete_captions))
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
        .routes(routes!(privacy::list_privacy_reports))
}

/// A successful write drops the shop's cached snapshot (and, for deletes, the cached API keys) on
/// this instance at once; other instances hear of it through the NOTIFY the write's transaction
/// sent.
async fn invalidate_after_write(
    State(state): State<AppState>,
    shop: Result<ShopPath, ApiError>,
    req: Request,
    next: Next,
) -> Response {
    let is_write = ![Method::GET, Method::HEAD, Method::OPTIONS].contains(req.method());
    let is_delete = req.method() == Method::DELETE;
    let response = next.run(req).await;
    if let (true, true, Ok(ShopPath { shop })) = (is_write, response.status().is_success(), shop) {
        state.catalog.invalidate(&shop).await;
        // Revoking a key or uninstalling a shop must shut its keys out here at once.
        if is_delete {
            state.api_keys.invalidate_all();
        }
    }
    response
}

/// The errors of a provisioning route without a request body: a missing or wrong admin token, an
/// unknown shop or object, or Postgres out of reach. Documentation only.
#[derive(IntoResponses)]
pub enum AdminErrors {
    #[response(status = 401)]
    Unauthorized(ErrorBody),
    #[response(status = 404)]
    NotFound(ErrorBody),
    #[response(
        status = 503,
        description = "SERVICE_UNAVAILABLE: the catalog's database cannot be reached; retry after `Retry-After` seconds"
    )]
    Unavailable(ErrorBody),
}

/// A request body that is invalid, too slow or too large. Documentation only.
#[derive(IntoResponses)]
pub enum BodyErrors {
    #[response(status = 400)]
    Invalid(ErrorBody),
    #[response(status = 408)]
    TimedOut(ErrorBody),
    #[response(status = 413)]
    TooLarge(ErrorBody),
}

/// [`AdminErrors`] and a request body that is invalid, too slow or too large. Documentation only.
pub struct AdminBodyErrors;

impl IntoResponses for AdminBodyErrors {
    fn responses() -> BTreeMap<String, RefOr<utoipa::openapi::Response>> {
        let mut responses = AdminErrors::responses();
        responses.extend(BodyErrors::responses());
        responses
    }
}
