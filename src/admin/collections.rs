use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::collections::{self, Collection};
use crate::error::ApiError;

#[derive(Serialize, ToSchema)]
pub struct CollectionList {
    pub collections: Vec<Collection>,
}

/// List collections
///
/// The shop's collections as the platform holds them, imported when the app is installed, by
/// title: what a picker of collections offers.
#[utoipa::path(
    get, path = "/shops/{shop}/collections", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = CollectionList), AdminErrors)
)]
pub async fn list_collections(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<CollectionList>, ApiError> {
    let collections = collections::list(&state.db, &shop).await?;
    Ok(Json(CollectionList { collections }))
}
