use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{id_param, shop_param, AdminBodyErrors, AdminErrors, ShopPath};
use crate::analytics::keys::{self, ApiKeyInfo, CreatedApiKey, NewApiKey};
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::{AppJson, AppPath};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyList {
    pub api_keys: Vec<ApiKeyInfo>,
}

/// Create an analytics API key
///
/// The response is the only time the full key is shown; only its hash is stored.
#[utoipa::path(
    post, path = "/admin/v1/shops/{shop}/api-keys", tag = "admin",
    params(ShopPath),
    request_body = NewApiKey,
    responses((status = 201, body = CreatedApiKey), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn create_api_key(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
    AppJson(new): AppJson<NewApiKey>,
) -> Result<(StatusCode, Json<CreatedApiKey>), ApiError> {
    let created = keys::create(&state.db, &shop_param(&shop)?, new).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// List API keys (without the keys themselves)
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/api-keys", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = ApiKeyList), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn list_api_keys(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
) -> Result<Json<ApiKeyList>, ApiError> {
    let api_keys = keys::list(&state.db, &shop_param(&shop)?).await?;
    Ok(Json(ApiKeyList { api_keys }))
}

/// Revoke an API key
///
/// Takes effect at once; revoking a revoked key changes nothing.
#[utoipa::path(
    delete, path = "/admin/v1/shops/{shop}/api-keys/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "API key id")),
    responses((status = 204, description = "Revoked"), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn revoke_api_key(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    keys::revoke(&state.db, &shop_param(&shop)?, id_param(&id, "API key")?).await?;
    Ok(StatusCode::NO_CONTENT)
}
