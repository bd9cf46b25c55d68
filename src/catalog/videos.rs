//! Videos: the media a widget shows, each linked to the products it sells.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::{PgPool, Postgres, Transaction};
use utoipa::openapi::schema::{ArrayBuilder, SchemaType, Type};
use utoipa::openapi::Ref;
use utoipa::ToSchema;
use uuid::Uuid;

use super::domain::{text_schema, ProductGid, ShopDomain, TextLine, VideoStatus};
use super::{
    begin_write, check_optional_url, check_required_text, check_unique, CatalogError, LINK_CHARS,
    TITLE_CHARS,
};

const MAX_DURATION_SECONDS: f64 = 24.0 * 3600.0;
const MAX_LINKED_PRODUCTS: usize = 250;

#[derive(Debug, Clone, Serialize, ToSchema, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct Video {
    pub id: Uuid,
    pub title: String,
    pub thumbnail: String,
    pub video_url: String,
    pub mini_version_url: String,
    /// Seconds.
    pub duration: f64,
    pub status: VideoStatus,
    pub product_ids: Vec<ProductGid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewVideo {
    #[schema(schema_with = text_schema::required::<TITLE_CHARS>)]
    pub title: TextLine,
    #[serde(default)]
    #[schema(schema_with = text_schema::link)]
    pub thumbnail: TextLine,
    #[schema(schema_with = text_schema::required_link)]
    pub video_url: TextLine,
    #[serde(default)]
    #[schema(schema_with = text_schema::link)]
    pub mini_version_url: TextLine,
    /// Seconds, 0 when unknown.
    #[serde(default)]
    #[schema(minimum = 0, maximum = 86400)]
    pub duration: f64,
    /// Default `DRAFT`: nothing reaches a live store before the merchant publishes it.
    #[serde(default = "draft")]
    pub status: VideoStatus,
    /// Distinct products; a bare number and its global id are the same product.
    #[serde(default)]
    #[schema(schema_with = product_ids)]
    pub product_ids: Vec<ProductGid>,
}

fn draft() -> VideoStatus {
    VideoStatus::Draft
}

fn product_ids() -> ArrayBuilder {
    ArrayBuilder::new()
        .items(Ref::from_schema_name("ProductGid"))
        .max_items(Some(MAX_LINKED_PRODUCTS))
        .unique_items(true)
}

fn product_ids_or_null() -> ArrayBuilder {
    product_ids().schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
}

/// `PATCH`: only the fields present change; `productIds` replaces the whole list.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VideoPatch {
    #[schema(schema_with = text_schema::required_or_null::<TITLE_CHARS>)]
    pub title: Option<TextLine>,
    #[schema(schema_with = text_schema::link_or_null)]
    pub thumbnail: Option<TextLine>,
    #[schema(schema_with = text_schema::required_link_or_null)]
    pub video_url: Option<TextLine>,
    #[schema(schema_with = text_schema::link_or_null)]
    pub mini_version_url: Option<TextLine>,
    #[schema(minimum = 0, maximum = 86400)]
    pub duration: Option<f64>,
    pub status: Option<VideoStatus>,
    #[schema(schema_with = product_ids_or_null)]
    pub product_ids: Option<Vec<ProductGid>>,
}

fn validate(v: &NewVideo) -> Result<(), CatalogError> {
    check_required_text("title", &v.title, TITLE_CHARS)?;
    check_optional_url("thumbnail", &v.thumbnail)?;
    check_required_text("videoUrl", &v.video_url, LINK_CHARS)?;
    check_optional_url("videoUrl", &v.video_url)?;
    check_optional_url("miniVersionUrl", &v.mini_version_url)?;
    if !(0.0..=MAX_DURATION_SECONDS).contains(&v.duration) {
        return Err(CatalogError::invalid(
            "duration",
            format!("must be between 0 and {MAX_DURATION_SECONDS} seconds"),
        ));
    }
    check_unique("productIds", &v.product_ids, ProductGid::to_string)?;
    if v.product_ids.len() > MAX_LINKED_PRODUCTS {
        return Err(CatalogError::invalid(
            "productIds",
            format!("at most {MAX_LINKED_PRODUCTS} products"),
        ));
    }
    Ok(())
}

const VIDEO_COLUMNS: &str = "id, title, thumbnail, video_url, mini_version_url, duration, status, \
                             product_ids, created_at, updated_at";

pub async fn create(
    pool: &PgPool,
    shop: &ShopDomain,
    new: NewVideo,
) -> Result<Video, CatalogError> {
    validate(&new)?;
    let (mut tx, _) = begin_write(pool, shop).await?;
    let sql = format!(
        "INSERT INTO videos (shop_domain, id, title, thumbnail, video_url, mini_version_url, \
         duration, status, product_ids) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         RETURNING {VIDEO_COLUMNS}"
    );
    let video = write_row(&mut tx, &sql, shop, Uuid::now_v7(), &new).await?;
    tx.commit().await?;
    Ok(video)
}

/// Runs `sql`, an insert or update of one video that returns its columns, with the shop as `$1`,
/// the id as `$2` and the fields of `video` as `$3` to `$9`.
async fn write_row(
    tx: &mut Transaction<'static, Postgres>,
    sql: &str,
    shop: &ShopDomain,
    id: Uuid,
    video: &NewVideo,
) -> Result<Video, sqlx::Error> {
    sqlx::query_as(sql)
        .bind(shop.as_str())
        .bind(id)
        .bind(&video.title)
        .bind(&video.thumbnail)
        .bind(&video.video_url)
        .bind(&video.mini_version_url)
        .bind(video.duration)
        .bind(video.status)
        .bind(&video.product_ids)
        .fetch_one(&mut **tx)
        .await
}

pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<Video>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let videos = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 ORDER BY created_at, id"
    ))
    .bind(shop.as_str())
    .fetch_all(pool)
    .await?;
    Ok(videos)
}

/// The shop's published videos, oldest first.
pub(crate) async fn list_published(
    conn: &mut sqlx::PgConnection,
    shop: &ShopDomain,
) -> Result<Vec<Video>, sqlx::Error> {
    sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND status = 'PUBLISHED' \
         ORDER BY created_at, id"
    ))
    .bind(shop.as_str())
    .fetch_all(conn)
    .await
}

pub async fn get(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<Video, CatalogError> {
    super::require_shop(pool, shop).await?;
    let video: Option<Video> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND id = $2"
    ))
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(pool)
    .await?;
    video.ok_or(CatalogError::NotFound("video"))
}

pub async fn update(
    pool: &PgPool,
    shop: &ShopDomain,
    id: Uuid,
    patch: VideoPatch,
) -> Result<Video, CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    let current: Option<Video> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND id = $2 FOR UPDATE"
    ))
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let current = current.ok_or(CatalogError::NotFound("video"))?;
    let merged = NewVideo {
        title: TextLine::or_stored(patch.title, current.title),
        thumbnail: TextLine::or_stored(patch.thumbnail, current.thumbnail),
        video_url: TextLine::or_stored(patch.video_url, current.video_url),
        mini_version_url: TextLine::or_stored(patch.mini_version_url, current.mini_version_url),
        duration: patch.duration.unwrap_or(current.duration),
        status: patch.status.unwrap_or(current.status),
        product_ids: patch.product_ids.unwrap_or(current.product_ids),
    };
    validate(&merged)?;
    let sql = format!(
        "UPDATE videos SET title = $3, thumbnail = $4, video_url = $5, mini_version_url = $6, \
         duration = $7, status = $8, product_ids = $9, updated_at = now() \
         WHERE shop_domain = $1 AND id = $2 RETURNING {VIDEO_COLUMNS}"
    );
    let video = write_row(&mut tx, &sql, shop, id, &merged).await?;
    tx.commit().await?;
    Ok(video)
}

/// Deletes a video; the foreign key removes it from every widget in the same transaction.
pub async fn delete(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<(), CatalogError> {
    let sql = "DELETE FROM videos WHERE shop_domain = $1 AND id = $2";
    super::delete_one(pool, shop, id, sql, "video").await
}
