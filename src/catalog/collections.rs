//! The shop's collections as the platform holds them, imported at install: what a picker offers.

use chrono::{DateTime, Utc};
use serde::Serialize;
use sqlx::PgPool;
use utoipa::ToSchema;

use super::domain::{text_schema, CollectionGid, ShopDomain, TextLine};
use super::{CatalogError, TITLE_CHARS};

#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Collection {
    /// The collection's global id.
    pub id: CollectionGid,
    #[schema(schema_with = text_schema::required::<TITLE_CHARS>)]
    pub title: TextLine,
    #[schema(schema_with = text_schema::handle)]
    pub handle: TextLine,
    /// Its image's URL; empty when it has none.
    #[schema(schema_with = text_schema::link)]
    pub image: TextLine,
}

/// Writes one page of an import: each collection as the platform gave it.
pub async fn store_imported(
    pool: &PgPool,
    shop: &ShopDomain,
    collections: &[Collection],
) -> Result<(), CatalogError> {
    super::require_shop(pool, shop).await?;
    let column =
        |field: fn(&Collection) -> &str| -> Vec<&str> { collections.iter().map(field).collect() };
    sqlx::query(
        "INSERT INTO collections (shop_domain, gid, title, handle, image) \
         SELECT $1, * FROM UNNEST($2::text[], $3::text[], $4::text[], $5::text[]) \
         ON CONFLICT (shop_domain, gid) DO UPDATE SET title = excluded.title, \
         handle = excluded.handle, image = excluded.image, imported_at = now()",
    )
    .bind(shop.as_str())
    .bind(column(|c| c.id.as_str()))
    .bind(column(|c| c.title.as_str()))
    .bind(column(|c| c.handle.as_str()))
    .bind(column(|c| c.image.as_str()))
    .execute(pool)
    .await?;
    Ok(())
}

/// Forgets the collections an import that started at `started_at` did not see: the platform no
/// longer has them.
pub async fn forget_not_imported_since(
    pool: &PgPool,
    shop: &ShopDomain,
    started_at: DateTime<Utc>,
) -> Result<u64, sqlx::Error> {
    let forgotten =
        sqlx::query("DELETE FROM collections WHERE shop_domain = $1 AND imported_at < $2")
            .bind(shop.as_str())
            .bind(started_at)
            .execute(pool)
            .await?
            .rows_affected();
    Ok(forgotten)
}

/// The shop's collections, by title.
pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<Collection>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let rows: Vec<(CollectionGid, TextLine, TextLine, TextLine)> = sqlx::query_as(
        "SELECT gid, title, handle, image FROM collections \
         WHERE shop_domain = $1 ORDER BY title, gid",
    )
    .bind(shop.as_str())
    .fetch_all(pool)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, title, handle, image)| Collection {
            id,
            title,
            handle,
            image,
        })
        .collect())
}
