use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::{AdminBodyErrors, AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::shops::{self, MerchantSettings, Shop, ShopSettings, Upserted};
use crate::error::{ApiError, ErrorBody};
use crate::extract::AppJson;
use crate::platform::work;

/// Create or update a shop
///
/// Absent fields keep their current value; a new (or reinstalled) shop starts from the defaults
/// (timezone `UTC`, currency `USD`, branding shown, a 7-day attribution window).
#[utoipa::path(
    put, path = "/shops/{shop}", tag = "admin",
    params(ShopPath),
    request_body = ShopSettings,
    responses(
        (status = 201, description = "Shop created", body = Shop),
        (status = 200, description = "Shop updated", body = Shop),
        (status = 400, description = "Invalid field", body = ErrorBody),
        (status = 401, description = "Missing or wrong admin token", body = ErrorBody),
    )
)]
pub async fn put_shop(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(settings): AppJson<ShopSettings>,
) -> Result<(StatusCode, Json<Shop>), ApiError> {
    let holdout_changed = settings.holdout_percent.is_some();
    let answer = match shops::upsert(&state.db, &shop, settings).await? {
        Upserted::Created(shop) => (StatusCode::CREATED, Json(shop)),
        Upserted::Updated(shop) => (StatusCode::OK, Json(shop)),
    };
    if holdout_changed {
        work::record_holdout_change(&state.db, &shop).await?;
        state.webhook_work.notify_one();
    }
    Ok(answer)
}

/// Read a shop
#[utoipa::path(
    get, path = "/shops/{shop}", tag = "admin",
    params(ShopPath),
    responses(
        (status = 200, body = Shop),
        (status = 401, body = ErrorBody),
        (status = 404, description = "Unknown or uninstalled shop", body = ErrorBody),
    )
)]
pub async fn get_shop(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<Shop>, ApiError> {
    Ok(Json(shops::get(&state.db, &shop).await?))
}

/// Change the merchant's settings of a shop
///
/// The dashboard's: only the fields present change. The shop must be installed; this never
/// creates one.
#[utoipa::path(
    patch, path = "/shops/{shop}", tag = "dashboard",
    params(ShopPath),
    request_body = MerchantSettings,
    responses((status = 200, body = Shop), AdminBodyErrors)
)]
pub async fn patch_shop(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(settings): AppJson<MerchantSettings>,
) -> Result<Json<Shop>, ApiError> {
    let holdout_changed = settings.holdout_percent.is_some();
    let updated = shops::update(&state.db, &shop, settings).await?;
    if holdout_changed {
        work::record_holdout_change(&state.db, &shop).await?;
        state.webhook_work.notify_one();
    }
    Ok(Json(updated))
}

/// Uninstall a shop
///
/// Removes its products, videos and widgets and revokes all its API keys.
#[utoipa::path(
    delete, path = "/shops/{shop}", tag = "admin",
    params(ShopPath),
    responses((status = 204, description = "Uninstalled"), AdminErrors)
)]
pub async fn delete_shop(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<StatusCode, ApiError> {
    shops::uninstall(&state.db, &shop).await?;
    Ok(StatusCode::NO_CONTENT)
}
