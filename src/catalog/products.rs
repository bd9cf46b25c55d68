//! Products as synced from the platform: what a video links to and the storefront shows.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use super::domain::{text_schema, CollectionGid, ProductGid, ShopDomain, TextLine};
use super::{
    begin_write, check_optional_url, check_required_text, CatalogError, HANDLE_CHARS, TITLE_CHARS,
};

/// One sync request may carry this many products; larger catalogs sync in pages.
pub const MAX_PRODUCTS_PER_REQUEST: usize = 1000;

#[derive(Debug, Clone, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Product {
    /// Global id or bare number; stored as the global id.
    pub id: ProductGid,
    #[schema(schema_with = text_schema::required::<TITLE_CHARS>)]
    pub title: TextLine,
    /// No whitespace.
    #[schema(schema_with = text_schema::handle)]
    pub handle: TextLine,
    #[serde(default)]
    #[schema(schema_with = text_schema::link)]
    pub image: TextLine,
    #[serde(default)]
    #[schema(schema_with = text_schema::link)]
    pub url: TextLine,
    #[serde(default)]
    #[schema(max_items = 250)]
    pub collection_ids: Vec<CollectionGid>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductUpsert {
    /// Each product at most once (a bare number and its global id are the same product).
    #[schema(max_items = 1000)]
    pub products: Vec<Product>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ProductDelete {
    #[schema(max_items = 1000)]
    pub ids: Vec<ProductGid>,
}

fn validate(products: &[Product]) -> Result<(), CatalogError> {
    if products.len() > MAX_PRODUCTS_PER_REQUEST {
        return Err(CatalogError::invalid(
            "products",
            format!("at most {MAX_PRODUCTS_PER_REQUEST} products per request"),
        ));
    }
    let mut seen = HashSet::new();
    for (i, p) in products.iter().enumerate() {
        let field = |name: &str| format!("products[{i}].{name}");
        if !seen.insert(&p.id) {
            return Err(CatalogError::invalid(
                field("id"),
                format!("{} appears more than once", p.id),
            ));
        }
        check_required_text(&field("title"), &p.title, TITLE_CHARS)?;
        check_required_text(&field("handle"), &p.handle, HANDLE_CHARS)?;
        if p.handle.chars().any(char::is_whitespace) {
            return Err(CatalogError::invalid(
                field("handle"),
                "must not contain whitespace",
            ));
        }
        check_optional_url(&field("image"), &p.image)?;
        check_optional_url(&field("url"), &p.url)?;
        if p.collection_ids.len() > 250 {
            return Err(CatalogError::invalid(
                field("collectionIds"),
                "at most 250 collections",
            ));
        }
    }
    Ok(())
}

/// Inserts or replaces the given products; returns the new catalog version.
pub async fn upsert(
    pool: &PgPool,
    shop: &ShopDomain,
    products: &[Product],
) -> Result<i64, CatalogError> {
    validate(products)?;
    let (mut tx, version) = begin_write(pool, shop).await?;
    // One statement for the whole batch: the rows travel as one JSON document.
    sqlx::query(
        "INSERT INTO products (shop_domain, gid, title, handle, image, url, collection_ids)
         SELECT $1, p.id, p.title, p.handle, p.image, p.url,
                ARRAY(SELECT jsonb_array_elements_text(p.\"collectionIds\"))
         FROM jsonb_to_recordset($2) AS p(id text, title text, handle text, image text, url text,
                                          \"collectionIds\" jsonb)
         ON CONFLICT (shop_domain, gid) DO UPDATE SET
             title = EXCLUDED.title, handle = EXCLUDED.handle, image = EXCLUDED.image,
             url = EXCLUDED.url, collection_ids = EXCLUDED.collection_ids, updated_at = now()",
    )
    .bind(shop.as_str())
    .bind(sqlx::types::Json(products))
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(version)
}

/// A product's state as the platform reported it, as of `at` (the product's own `updated_at`, or
/// the time of its deletion).
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum PlatformChange {
    /// Active: the storefront may show it.
    Active {
        product: Product,
        at: DateTime<Utc>,
        /// Whether `product.collection_ids` is the platform's whole list of the product's
        /// collections, as an import reads it. A webhook's body does not list them: the
        /// collections held stay.
        #[serde(default)]
        with_collections: bool,
    },
    /// Deleted, or made other than active.
    Removed { id: ProductGid, at: DateTime<Utc> },
}

/// Applies the platform's product changes in one catalog write, in order, each only where it is
/// newer than what the catalog holds: a state older than the product's held one, or than its
/// last removal, changes nothing, so deliveries may be worked on in any order. A product's
/// collections change only with a change that lists them (an import), and then whatever its
/// time: the platform does not date a product's membership, and an import reads it as it is now.
pub async fn apply_platform_changes(
    pool: &PgPool,
    shop: &ShopDomain,
    changes: &[PlatformChange],
) -> Result<(), CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    for change in changes {
        match change {
            PlatformChange::Active {
                product,
                at,
                with_collections,
            } => {
                sqlx::query(
                    "INSERT INTO products \
                         (shop_domain, gid, title, handle, image, url, platform_updated_at) \
                     SELECT $1, $2, $3, $4, $5, $6, $7 \
                     WHERE NOT EXISTS (SELECT 1 FROM product_removals \
                         WHERE shop_domain = $1 AND gid = $2 AND removed_at >= $7) \
                     ON CONFLICT (shop_domain, gid) DO UPDATE SET \
                         title = EXCLUDED.title, handle = EXCLUDED.handle, \
                         image = EXCLUDED.image, url = EXCLUDED.url, \
                         platform_updated_at = EXCLUDED.platform_updated_at, updated_at = now() \
                     WHERE products.platform_updated_at IS NULL \
                        OR products.platform_updated_at < EXCLUDED.platform_updated_at",
                )
                .bind(shop.as_str())
                .bind(&product.id)
                .bind(product.title.as_str())
                .bind(product.handle.as_str())
                .bind(product.image.as_str())
                .bind(product.url.as_str())
                .bind(at)
                .execute(&mut *tx)
                .await?;
                if *with_collections {
                    sqlx::query(
                        "UPDATE products SET collection_ids = $3 \
                         WHERE shop_domain = $1 AND gid = $2 AND collection_ids <> $3",
                    )
                    .bind(shop.as_str())
                    .bind(&product.id)
                    .bind(&product.collection_ids)
                    .execute(&mut *tx)
                    .await?;
                }
            }
            PlatformChange::Removed { id, at } => {
                sqlx::query(
                    "INSERT INTO product_removals (shop_domain, gid, removed_at) \
                     VALUES ($1, $2, $3) ON CONFLICT (shop_domain, gid) DO UPDATE \
                     SET removed_at = GREATEST(product_removals.removed_at, EXCLUDED.removed_at)",
                )
                .bind(shop.as_str())
                .bind(id)
                .bind(at)
                .execute(&mut *tx)
                .await?;
                sqlx::query(
                    "DELETE FROM products WHERE shop_domain = $1 AND gid = $2 \
                     AND (platform_updated_at IS NULL OR platform_updated_at <= $3)",
                )
                .bind(shop.as_str())
                .bind(id)
                .bind(at)
                .execute(&mut *tx)
                .await?;
            }
        }
    }
    tx.commit().await?;
    Ok(())
}

/// Deletes the given products; ids the shop does not have are ignored. Returns how many went.
pub async fn delete(
    pool: &PgPool,
    shop: &ShopDomain,
    ids: &[ProductGid],
) -> Result<(u64, i64), CatalogError> {
    if ids.len() > MAX_PRODUCTS_PER_REQUEST {
        return Err(CatalogError::invalid(
            "ids",
            format!("at most {MAX_PRODUCTS_PER_REQUEST} ids per request"),
        ));
    }
    let (mut tx, version) = begin_write(pool, shop).await?;
    let deleted = sqlx::query("DELETE FROM products WHERE shop_domain = $1 AND gid = ANY($2)")
        .bind(shop.as_str())
        .bind(ids)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    tx.commit().await?;
    Ok((deleted, version))
}

/// All products of a shop, by id.
pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<Product>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let mut conn = pool.acquire().await?;
    Ok(list_all(&mut conn, shop).await?)
}

/// The shop's products whose title or handle contains `words`, ignoring case (every product when
/// `words` is empty), for a merchant finding one by name.
pub async fn search(
    pool: &PgPool,
    shop: &ShopDomain,
    words: &str,
) -> Result<Vec<Product>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let mut conn = pool.acquire().await?;
    Ok(select(&mut conn, shop, words.trim()).await?)
}

pub(crate) async fn list_all(
    conn: &mut sqlx::PgConnection,
    shop: &ShopDomain,
) -> Result<Vec<Product>, sqlx::Error> {
    select(conn, shop, "").await
}

/// `strpos` rather than `LIKE`: the merchant's words are matched as they are, `%` and `_` included.
async fn select(
    conn: &mut sqlx::PgConnection,
    shop: &ShopDomain,
    words: &str,
) -> Result<Vec<Product>, sqlx::Error> {
    let rows: Vec<(
        ProductGid,
        TextLine,
        TextLine,
        TextLine,
        TextLine,
        Vec<CollectionGid>,
    )> = sqlx::query_as(
        "SELECT gid, title, handle, image, url, collection_ids FROM products \
             WHERE shop_domain = $1 \
               AND ($2 = '' OR strpos(lower(title), lower($2)) > 0 \
                    OR strpos(lower(handle), lower($2)) > 0) \
             ORDER BY gid",
    )
    .bind(shop.as_str())
    .bind(words)
    .fetch_all(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|(id, title, handle, image, url, collection_ids)| Product {
            id,
            title,
            handle,
            image,
            url,
            collection_ids,
        })
        .collect())
}
