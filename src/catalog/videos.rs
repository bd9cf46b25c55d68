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

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Video {
    pub id: Uuid,
    pub title: String,
    /// The poster, for a video made from a file.
    pub thumbnail: String,
    /// The progressive MP4, for a video made from a file.
    pub video_url: String,
    pub mini_version_url: String,
    /// Seconds.
    pub duration: f64,
    pub status: VideoStatus,
    pub product_ids: Vec<ProductGid>,
    /// Where a video made from a file stands; `null` for a video given as URLs.
    pub processing: Option<Processing>,
    /// The HLS master playlist of a processed video; empty otherwise.
    pub hls_url: String,
    /// The poster of a processed video (as `thumbnail`); empty otherwise.
    pub poster_url: String,
    /// The moment of the video the poster shows, in milliseconds; `null`: chosen by the service.
    pub poster_time_ms: Option<i32>,
    /// Display size of a processed video's source, in pixels; `null` when unknown.
    pub width: Option<i32>,
    pub height: Option<i32>,
    /// WebVTT captions, one per language, in language order.
    pub captions: Vec<Caption>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A caption file of a video.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Caption {
    /// A BCP 47 language tag, e.g. `en` or `pt-BR`.
    pub language: String,
    /// The WebVTT file.
    pub url: String,
}

/// A caption as `videos.captions` holds it: with its objects' prefix, for deletion and the sweep.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct StoredCaption {
    pub language: String,
    pub url: String,
    pub prefix: String,
}

/// The processing of a video made from an upload or an import.
#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Processing {
    pub state: ProcessingState,
    /// 0–100, within the current state.
    pub progress: i16,
    /// Why it failed, when `state` is `failed`.
    pub error: Option<ProcessingError>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ProcessingError {
    /// e.g. `NOT_A_VIDEO`, `VIDEO_TOO_LONG`, `PROCESSING_FAILED`.
    pub code: String,
    /// What went wrong and what to do, for the merchant.
    pub message: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema, sqlx::Type)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "text", rename_all = "lowercase")]
pub enum ProcessingState {
    /// The file is still arriving.
    Uploading,
    /// Waiting for a worker.
    Queued,
    Processing,
    /// Every output is made: the video can be published.
    Ready,
    /// See `error`; the merchant may retry.
    Failed,
}

/// A `videos` row as stored; [`Video`] is what the API shows of it.
#[derive(sqlx::FromRow)]
pub(crate) struct VideoRow {
    id: Uuid,
    title: String,
    thumbnail: String,
    video_url: String,
    mini_version_url: String,
    duration: f64,
    status: VideoStatus,
    product_ids: Vec<ProductGid>,
    processing_state: Option<ProcessingState>,
    processing_progress: i16,
    processing_error_code: Option<String>,
    processing_error: Option<String>,
    hls_url: String,
    poster_url: String,
    poster_time_ms: Option<i32>,
    width: Option<i32>,
    height: Option<i32>,
    captions: sqlx::types::Json<Vec<StoredCaption>>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<VideoRow> for Video {
    fn from(row: VideoRow) -> Video {
        let processing = row.processing_state.map(|state| Processing {
            state,
            progress: row.processing_progress,
            error: row.processing_error_code.map(|code| ProcessingError {
                code,
                message: row.processing_error.unwrap_or_default(),
            }),
        });
        Video {
            id: row.id,
            title: row.title,
            thumbnail: row.thumbnail,
            video_url: row.video_url,
            mini_version_url: row.mini_version_url,
            duration: row.duration,
            status: row.status,
            product_ids: row.product_ids,
            processing,
            hls_url: row.hls_url,
            poster_url: row.poster_url,
            poster_time_ms: row.poster_time_ms,
            width: row.width,
            height: row.height,
            captions: row
                .captions
                .0
                .into_iter()
                .map(|c| Caption {
                    language: c.language,
                    url: c.url,
                })
                .collect(),
            created_at: row.created_at,
            updated_at: row.updated_at,
        }
    }
}

impl Video {
    /// Whether the video can play on a store: given as URLs, or processed.
    pub fn playable(&self) -> bool {
        self.processing
            .as_ref()
            .is_none_or(|p| p.state == ProcessingState::Ready)
    }
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
    check_product_ids(&v.product_ids)
}

fn check_product_ids(ids: &[ProductGid]) -> Result<(), CatalogError> {
    check_unique("productIds", ids, ProductGid::to_string)?;
    if ids.len() > MAX_LINKED_PRODUCTS {
        return Err(CatalogError::invalid(
            "productIds",
            format!("at most {MAX_LINKED_PRODUCTS} products"),
        ));
    }
    Ok(())
}

pub(crate) const VIDEO_COLUMNS: &str =
    "id, title, thumbnail, video_url, mini_version_url, duration, status, product_ids, \
     processing_state, processing_progress, processing_error_code, processing_error, hls_url, \
     poster_url, poster_time_ms, width, height, captions, created_at, updated_at";

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
    sqlx::query_as::<_, VideoRow>(sql)
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
        .map(Video::from)
}

/// Whether the shop has a published video.
pub async fn any_published(pool: &PgPool, shop: &ShopDomain) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM videos WHERE shop_domain = $1 AND status = 'PUBLISHED')",
    )
    .bind(shop.as_str())
    .fetch_one(pool)
    .await
}

pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<Video>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let videos: Vec<VideoRow> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 ORDER BY created_at, id"
    ))
    .bind(shop.as_str())
    .fetch_all(pool)
    .await?;
    Ok(videos.into_iter().map(Video::from).collect())
}

/// The shop's published videos, oldest first.
pub(crate) async fn list_published(
    conn: &mut sqlx::PgConnection,
    shop: &ShopDomain,
) -> Result<Vec<Video>, sqlx::Error> {
    let videos: Vec<VideoRow> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND status = 'PUBLISHED' \
         AND (processing_state IS NULL OR processing_state = 'ready') ORDER BY created_at, id"
    ))
    .bind(shop.as_str())
    .fetch_all(conn)
    .await?;
    Ok(videos.into_iter().map(Video::from).collect())
}

pub async fn get(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<Video, CatalogError> {
    super::require_shop(pool, shop).await?;
    let video: Option<VideoRow> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND id = $2"
    ))
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(pool)
    .await?;
    video
        .map(Video::from)
        .ok_or(CatalogError::NotFound("video"))
}

/// A video as the caller's transaction sees it (e.g. just made, before another worker moves it).
pub(crate) async fn get_in(
    tx: &mut Transaction<'static, Postgres>,
    id: Uuid,
) -> Result<Video, sqlx::Error> {
    let row: VideoRow =
        sqlx::query_as(&format!("SELECT {VIDEO_COLUMNS} FROM videos WHERE id = $1"))
            .bind(id)
            .fetch_one(&mut **tx)
            .await?;
    Ok(row.into())
}

pub async fn update(
    pool: &PgPool,
    shop: &ShopDomain,
    id: Uuid,
    patch: VideoPatch,
) -> Result<Video, CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    let current: Option<VideoRow> = sqlx::query_as(&format!(
        "SELECT {VIDEO_COLUMNS} FROM videos WHERE shop_domain = $1 AND id = $2 FOR UPDATE"
    ))
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    let current = Video::from(current.ok_or(CatalogError::NotFound("video"))?);
    if current.processing.is_some() {
        // A video made from a file has its media fields filled from the outputs.
        let filled = [
            ("thumbnail", patch.thumbnail.is_some()),
            ("videoUrl", patch.video_url.is_some()),
            ("miniVersionUrl", patch.mini_version_url.is_some()),
            ("duration", patch.duration.is_some()),
        ];
        if let Some((field, _)) = filled.iter().find(|(_, given)| *given) {
            return Err(CatalogError::invalid(
                *field,
                "is made from the uploaded file and cannot be set; choose the poster with \
                 POST …/videos/{id}/poster",
            ));
        }
        if patch.status == Some(VideoStatus::Published) && !current.playable() {
            return Err(not_ready(&current));
        }
        let sql = format!(
            "UPDATE videos SET title = COALESCE($3, title), status = COALESCE($4, status), \
             product_ids = COALESCE($5, product_ids), updated_at = now() \
             WHERE shop_domain = $1 AND id = $2 RETURNING {VIDEO_COLUMNS}"
        );
        if let Some(title) = &patch.title {
            check_required_text("title", title, TITLE_CHARS)?;
        }
        if let Some(ids) = &patch.product_ids {
            check_product_ids(ids)?;
        }
        let row: VideoRow = sqlx::query_as(&sql)
            .bind(shop.as_str())
            .bind(id)
            .bind(patch.title.as_deref())
            .bind(patch.status)
            .bind(patch.product_ids.as_ref())
            .fetch_one(&mut *tx)
            .await?;
        tx.commit().await?;
        return Ok(row.into());
    }
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

/// Why a video cannot be published yet, for the merchant.
fn not_ready(video: &Video) -> CatalogError {
    let state = video.processing.as_ref().map(|p| p.state);
    let message = match state {
        Some(ProcessingState::Uploading) => "the video is still uploading",
        Some(ProcessingState::Failed) => {
            "the video could not be processed; retry it or upload it again"
        }
        _ => "the video is still being processed",
    };
    CatalogError::NotReady(format!(
        "status: cannot be PUBLISHED yet: {message}; it can be once its processing state is ready"
    ))
}

/// Deletes a video; the foreign key removes it from every widget in the same transaction, and
/// its stored media (outputs and upload) are queued for deletion in it too.
pub async fn delete(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<(), CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    let sql = "DELETE FROM videos WHERE shop_domain = $1 AND id = $2";
    super::delete_in(&mut tx, shop, id, sql, "video").await?;
    crate::media::forget_video(&mut tx, shop, id).await?;
    tx.commit().await?;
    Ok(())
}
