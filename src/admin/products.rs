use axum::extract::State;
use axum::Json;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::{AdminBodyErrors, AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::products::{self, Product, ProductDelete, ProductUpsert};
use crate::error::ApiError;
use crate::extract::{AppJson, AppQuery};

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductsUpserted {
    pub upserted: usize,
    pub catalog_version: i64,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProductsDeleted {
    pub deleted: u64,
    pub catalog_version: i64,
}

#[derive(Serialize, ToSchema)]
pub struct ProductList {
    pub products: Vec<Product>,
}

/// Insert or replace products
///
/// At most 1000 products per request. `id` and `collectionIds` take a global id or a bare number.
#[utoipa::path(
    put, path = "/shops/{shop}/products", tag = "admin",
    params(ShopPath),
    request_body = ProductUpsert,
    responses((status = 200, body = ProductsUpserted), AdminBodyErrors)
)]
pub async fn upsert_products(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(body): AppJson<ProductUpsert>,
) -> Result<Json<ProductsUpserted>, ApiError> {
    let catalog_version = products::upsert(&state.db, &shop, &body.products).await?;
    Ok(Json(ProductsUpserted {
        upserted: body.products.len(),
        catalog_version,
    }))
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ProductSearch {
    /// Only the products whose title or handle contains these words, ignoring case.
    pub query: Option<String>,
}

/// List products
///
/// Every product of the shop, or with `query` those whose title or handle contains it.
#[utoipa::path(
    get, path = "/shops/{shop}/products", tag = "admin",
    params(ShopPath, ProductSearch),
    responses((status = 200, body = ProductList), AdminErrors)
)]
pub async fn list_products(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppQuery(search): AppQuery<ProductSearch>,
) -> Result<Json<ProductList>, ApiError> {
    let products =
        products::search(&state.db, &shop, search.query.as_deref().unwrap_or("")).await?;
    Ok(Json(ProductList { products }))
}

/// Delete products
///
/// Ids the shop does not have are ignored; `deleted` counts the ones removed.
#[utoipa::path(
    delete, path = "/shops/{shop}/products", tag = "admin",
    params(ShopPath),
    request_body = ProductDelete,
    responses((status = 200, body = ProductsDeleted), AdminBodyErrors)
)]
pub async fn delete_products(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(body): AppJson<ProductDelete>,
) -> Result<Json<ProductsDeleted>, ApiError> {
    let (deleted, catalog_version) = products::delete(&state.db, &shop, &body.ids).await?;
    Ok(Json(ProductsDeleted {
        deleted,
        catalog_version,
    }))
}
