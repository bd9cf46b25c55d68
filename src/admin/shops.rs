use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;

use super::{AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::shops::{self, Shop, ShopSettings, Upserted};
use crate::error::{ApiError, ErrorBody};
use crate::extract::AppJson;

/// Create or update a shop
///
/// Absent fields keep their current value; a new (or reinstalled) shop starts from the defaults
/// (timezone `UTC`, currency `USD`, branding shown).
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
    Ok(match shops::upsert(&state.db, &shop, settings).await? {
        Upserted::Created(shop) => (StatusCode::CREATED, Json(shop)),
        Upserted::Updated(shop) => (StatusCode::OK, Json(shop)),
    })
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
