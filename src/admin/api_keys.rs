use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{AdminBodyErrors, AdminErrors, Object, ObjectPath, ShopPath};
use crate::analytics::keys::{self, ApiKeyInfo, CreatedApiKey, NewApiKey};
use crate::app::AppState;
use crate::error::ApiError;
use crate::extract::AppJson;

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyList {
    pub api_keys: Vec<ApiKeyInfo>,
}

impl Object for ApiKeyInfo {
    const NOUN: &'static str = "API key";
}

/// Create an analytics API key
///
/// The response is the only time the full key is shown; only its hash is stored.
#[utoipa::path(
    post, path = "/shops/{shop}/api-keys", tag = "admin",
    params(ShopPath),
    request_body = NewApiKey,
    responses((status = 201, body = CreatedApiKey), AdminBodyErrors)
)]
pub async fn create_api_key(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(new): AppJson<NewApiKey>,
) -> Result<(StatusCode, Json<CreatedApiKey>), ApiError> {
    let created = keys::create(&state.db, &shop, new).await?;
    Ok((StatusCode::CREATED, Json(created)))
}

/// List API keys (without the keys themselves)
///
/// Each key shows when it was last used (`lastUsedAt`), kept to the minute.
#[utoipa::path(
    get, path = "/shops/{shop}/api-keys", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = ApiKeyList), AdminErrors)
)]
pub async fn list_api_keys(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<ApiKeyList>, ApiError> {
    let api_keys = keys::list(&state.db, &shop).await?;
    Ok(Json(ApiKeyList { api_keys }))
}

/// Revoke an API key
///
/// Takes effect at once; revoking a revoked key changes nothing.
#[utoipa::path(
    delete, path = "/shops/{shop}/api-keys/{id}", tag = "admin",
    params(ObjectPath<ApiKeyInfo>),
    responses((status = 204, description = "Revoked"), AdminErrors)
)]
pub async fn revoke_api_key(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<ApiKeyInfo>,
) -> Result<StatusCode, ApiError> {
    keys::revoke(&state.db, &shop, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
