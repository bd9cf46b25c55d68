use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{shop_param, AdminBodyErrors, AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::products::{self, Product, ProductDelete, ProductUpsert};
use crate::error::ApiError;
use crate::extract::{AppJson, AppPath};

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
    put, path = "/admin/v1/shops/{shop}/products", tag = "admin",
    params(ShopPath),
    request_body = ProductUpsert,
    responses((status = 200, body = ProductsUpserted), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn upsert_products(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
    AppJson(body): AppJson<ProductUpsert>,
) -> Result<Json<ProductsUpserted>, ApiError> {
    let shop = shop_param(&shop)?;
    let catalog_version = products::upsert(&state.db, &shop, &body.products).await?;
    Ok(Json(ProductsUpserted {
        upserted: body.products.len(),
        catalog_version,
    }))
}

/// List products
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/products", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = ProductList), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn list_products(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
) -> Result<Json<ProductList>, ApiError> {
    let products = products::list(&state.db, &shop_param(&shop)?).await?;
    Ok(Json(ProductList { products }))
}

/// Delete products
///
/// Ids the shop does not have are ignored; `deleted` counts the ones removed.
#[utoipa::path(
    delete, path = "/admin/v1/shops/{shop}/products", tag = "admin",
    params(ShopPath),
    request_body = ProductDelete,
    responses((status = 200, body = ProductsDeleted), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn delete_products(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
    AppJson(body): AppJson<ProductDelete>,
) -> Result<Json<ProductsDeleted>, ApiError> {
    let shop = shop_param(&shop)?;
    let (deleted, catalog_version) = products::delete(&state.db, &shop, &body.ids).await?;
    Ok(Json(ProductsDeleted {
        deleted,
        catalog_version,
    }))
}
