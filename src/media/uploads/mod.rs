//! tus 1.0 resumable uploads (core, creation, creation-with-upload, expiration, termination,
//! checksum). An upload's id is its video's: the video exists, `uploading`, from the creation on.
//! Its state is in Postgres and its bytes in object storage, so any instance takes any request
//! of any upload, and a connection that drops keeps what it delivered.
//!
//! The protocol's headers are read in `tus`, each chunk is received in `chunks`, and a whole
//! upload is checked and queued in `check`; this module makes, finds and ends uploads.

mod check;
mod chunks;
mod tus;

use std::time::Duration;

use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use uuid::Uuid;

use super::{names, Media, Refusal};
use crate::catalog::domain::ShopDomain;
use crate::catalog::video_media::{self, FirstState};
use crate::catalog::{self, CatalogError};
use crate::error::ApiError;
pub use check::sniff;
pub use chunks::{append, Appended};
use tus::title_of;
pub use tus::{
    http_date, integer_header, parse_checksum, parse_metadata, require_tus, Checksum, Metadata,
    TusResumable, CHECKSUM_MISMATCH, OFFSET_OCTET_STREAM, TUS_CHECKSUMS, TUS_EXTENSIONS,
    TUS_RESUMABLE, TUS_VERSION, UPLOAD_CHECKSUM, UPLOAD_DEFER_LENGTH, UPLOAD_EXPIRES,
    UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET,
};

/// An upload as Postgres has it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UploadState {
    pub video_id: Uuid,
    pub length: i64,
    pub received: i64,
    pub expires_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub filename: String,
}

fn refusal(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
    Refusal::new(status, code, message).into()
}

/// Creates the video and its upload (tus creation). The caller checked the tus version.
pub async fn create(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    length: u64,
    metadata: &Metadata,
) -> Result<UploadState, ApiError> {
    let limits = media.config.limits;
    if length == 0 {
        return Err(Refusal::unprocessable("EMPTY_FILE", "the file is empty (0 bytes)").into());
    }
    if length > limits.max_bytes {
        metrics::counter!("media_uploads_refused_total", "reason" => "FILE_TOO_LARGE").increment(1);
        return Err(too_large(length, limits.max_bytes));
    }
    let title = title_of(metadata)?;
    let filename: String = metadata
        .filename
        .as_deref()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(255)
        .collect();
    let (mut tx, _) = catalog::begin_write(db, shop).await?;
    let used: i64 = sqlx::query_scalar(
        "SELECT ((SELECT COALESCE(SUM(media_bytes), 0) FROM videos WHERE shop_domain = $1) \
              + (SELECT COALESCE(SUM(length), 0) FROM media_uploads WHERE shop_domain = $1))::BIGINT",
    )
    .bind(shop.as_str())
    .fetch_one(&mut *tx)
    .await
    .map_err(CatalogError::from)?;
    let used = u64::try_from(used).unwrap_or(0);
    if used.saturating_add(length) > limits.shop_quota_bytes {
        metrics::counter!("media_uploads_refused_total", "reason" => "QUOTA_EXCEEDED").increment(1);
        return Err(Refusal::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "QUOTA_EXCEEDED",
            format!(
                "the shop's video storage is full: {} of {} used, and this file is {}; delete \
                 videos you no longer show",
                human_bytes(used),
                human_bytes(limits.shop_quota_bytes),
                human_bytes(length)
            ),
        )
        .into());
    }
    let id = Uuid::now_v7();
    let expires_at =
        Utc::now() + chrono::Duration::from_std(limits.upload_expiry).unwrap_or_default();
    video_media::insert_from_file(&mut *tx, shop, id, &title, FirstState::Uploading)
        .await
        .map_err(CatalogError::from)?;
    let upload: UploadState = sqlx::query_as(
        "INSERT INTO media_uploads (video_id, shop_domain, length, filename, expires_at) \
         VALUES ($1, $2, $3, $4, $5) \
         RETURNING video_id, length, received, expires_at, completed_at, filename",
    )
    .bind(id)
    .bind(shop.as_str())
    .bind(i64::try_from(length).unwrap_or(i64::MAX))
    .bind(&filename)
    .bind(expires_at)
    .fetch_one(&mut *tx)
    .await
    .map_err(CatalogError::from)?;
    tx.commit().await.map_err(CatalogError::from)?;
    metrics::counter!("media_uploads_created_total").increment(1);
    Ok(upload)
}

fn too_large(length: u64, max: u64) -> ApiError {
    Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "FILE_TOO_LARGE",
        format!(
            "the file is {}, more than the {} a video may be",
            human_bytes(length),
            human_bytes(max)
        ),
    )
    .into()
}

/// The upload of `video`, if the shop has one by that id.
pub async fn find(db: &PgPool, shop: &ShopDomain, video: Uuid) -> Result<UploadState, ApiError> {
    let upload: Option<UploadState> = sqlx::query_as(
        "SELECT video_id, length, received, expires_at, completed_at, filename \
         FROM media_uploads WHERE video_id = $1 AND shop_domain = $2",
    )
    .bind(video)
    .bind(shop.as_str())
    .fetch_optional(db)
    .await?;
    let upload = upload.ok_or(ApiError::NotFound("upload"))?;
    if upload.completed_at.is_none() && upload.expires_at < Utc::now() {
        return Err(expired());
    }
    Ok(upload)
}

fn expired() -> ApiError {
    refusal(
        StatusCode::GONE,
        "UPLOAD_EXPIRED",
        "the upload was not finished in time and has expired; upload the file again",
    )
}

/// Ends an upload at the client's request (tus termination), expired or not: the video and
/// all its bytes go.
pub async fn terminate(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
) -> Result<(), ApiError> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM media_uploads WHERE video_id = $1 AND shop_domain = $2")
            .bind(video)
            .bind(shop.as_str())
            .fetch_optional(db)
            .await?;
    found.ok_or(ApiError::NotFound("upload"))?;
    catalog::videos::delete(db, shop, video).await?;
    media.delete_now(db, &names::upload_prefix(video)).await;
    media
        .delete_now(db, &names::video_prefix(shop, video))
        .await;
    Ok(())
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} bytes"),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

/// How long a client is told to keep an upload's URL: the expiry the settings give.
pub fn expiry(media: &Media) -> Duration {
    media.config.limits.upload_expiry
}
