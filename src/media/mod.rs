//! Videos made from a file: resumable uploads (tus), imports from a URL, processing into a
//! poster, a mini version, HLS renditions and a progressive MP4 (ffmpeg, as leased jobs in
//! Postgres), the objects they are stored as, and `/media`, where the directory store is served.
//!
//! A video made here carries a processing state (`uploading`, `queued`, `processing`, `ready`,
//! `failed`); only a `ready` one can be published, so the storefront never shows a video that
//! cannot play.

pub mod captions;
pub mod ffmpeg;
pub mod import;
pub mod index;
pub mod jobs;
pub mod names;
pub mod samples;
pub mod serve;
pub mod store;
pub mod uploads;
pub mod worker;

use std::sync::Arc;

use axum::http::StatusCode;

use crate::catalog::domain::ShopDomain;
use crate::catalog::video_media;
use crate::catalog::videos::Video;
use crate::config::MediaConfig;
use crate::error::ApiError;
pub use store::MediaStore;

/// What the media handlers and workers share.
#[derive(Clone)]
pub struct Media {
    pub store: MediaStore,
    pub config: Arc<MediaConfig>,
    /// Signalled when a job is queued, to wake this instance's workers at once.
    pub work: Arc<tokio::sync::Notify>,
}

/// Why a file, an upload or an import is refused, with the code and status its answer carries
/// and a message that names the problem for a merchant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    /// 422: the file's content is not what we take (not a video, too long, too large a frame).
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
}

impl Media {
    /// Opens the configured store. With the directory store and no public URL set, objects are
    /// read from this service's own `/media` at `listen`.
    pub fn open(config: &MediaConfig, listen: std::net::SocketAddr) -> anyhow::Result<Media> {
        let public_url = match &config.public_url {
            Some(url) => url.clone(),
            None => url::Url::parse(&format!("http://{listen}/media/"))?,
        };
        Ok(Media {
            store: MediaStore::open(&config.storage, &public_url)?,
            config: Arc::new(config.clone()),
            work: Arc::new(tokio::sync::Notify::new()),
        })
    }
}

impl Media {
    /// ffmpeg as the settings bound it (threads, wall-clock limit).
    pub fn ffmpeg(&self) -> ffmpeg::Ffmpeg {
        ffmpeg::Ffmpeg {
            threads: self.config.ffmpeg_threads,
            timeout: self.config.ffmpeg_timeout,
        }
    }

    /// Deletes the objects under `prefix` now, and with them their queued deletion; when the
    /// store fails, the queued deletion stays for a worker to retry.
    pub async fn delete_now(&self, db: &sqlx::PgPool, prefix: &object_store::path::Path) {
        match self.store.delete_prefix(prefix).await {
            Ok(_) => {
                let _ = sqlx::query("DELETE FROM media_deletions WHERE prefix = $1")
                    .bind(prefix.as_ref())
                    .execute(db)
                    .await;
            }
            Err(e) => tracing::warn!(error = %e, "cannot delete media objects; a worker will"),
        }
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError::Media {
            status: r.status,
            code: r.code,
            message: r.message,
        }
    }
}

/// Queues the deletion of every object of a video (its outputs and its upload), in the
/// transaction that deletes the video.
pub async fn forget_video(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    shop: &ShopDomain,
    video: uuid::Uuid,
) -> Result<(), sqlx::Error> {
    jobs::delete_later(tx, names::video_prefix(shop, video).as_ref()).await?;
    jobs::delete_later(tx, names::upload_prefix(video).as_ref()).await
}

/// Queues the deletion of every object of a shop's videos, in the transaction that deletes them
/// (uninstall, redaction).
pub async fn forget_shop(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO media_deletions (prefix) \
         SELECT 'uploads/' || id FROM videos WHERE shop_domain = $1 \
         ON CONFLICT (prefix) DO UPDATE SET run_after = now()",
    )
    .bind(shop.as_str())
    .execute(&mut **tx)
    .await?;
    jobs::delete_later(tx, names::shop_prefix(shop).as_ref()).await
}

/// What an import may fetch, from the settings.
pub fn import_rules(media: &Media) -> import::ImportRules {
    import::ImportRules {
        max_bytes: media.config.limits.max_bytes,
        allow_loopback_http: media.config.import_allow_loopback_http,
    }
}

/// Creates a video made from the file at `url` and queues its import; the video is `queued`
/// until a worker fetches it.
pub async fn start_import(
    media: &Media,
    db: &sqlx::PgPool,
    shop: &ShopDomain,
    url: &url::Url,
    title: &str,
) -> Result<Video, ApiError> {
    let (mut tx, _) = crate::catalog::begin_write(db, shop).await?;
    let id = uuid::Uuid::now_v7();
    video_media::insert_from_file(&mut *tx, shop, id, title, video_media::FirstState::Queued)
        .await?;
    jobs::enqueue_from(&mut tx, shop, id, jobs::JobKind::Import, Some(url.as_str())).await?;
    // As it is queued: a worker may take it the moment this commits.
    let video = crate::catalog::videos::get_in(&mut tx, id).await?;
    tx.commit().await?;
    media.work.notify_one();
    Ok(video)
}

/// Queues a failed video's processing again: from its stored source, or, for an import that
/// never fetched its file, from its URL.
pub async fn retry(
    media: &Media,
    db: &sqlx::PgPool,
    shop: &ShopDomain,
    video: uuid::Uuid,
) -> Result<Video, ApiError> {
    let (mut tx, _) = crate::catalog::begin_write(db, shop).await?;
    let state: Option<Option<String>> = sqlx::query_scalar(
        "SELECT processing_state FROM videos WHERE shop_domain = $1 AND id = $2 FOR UPDATE",
    )
    .bind(shop.as_str())
    .bind(video)
    .fetch_optional(&mut *tx)
    .await?;
    match state.ok_or(ApiError::NotFound("video"))?.as_deref() {
        Some("failed") => {}
        Some(_) => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "VIDEO_NOT_FAILED",
                "only a video whose processing failed can be retried",
            )
            .into())
        }
        None => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "VIDEO_NOT_FAILED",
                "this video was given as URLs: there is nothing to process",
            )
            .into())
        }
    }
    let has_source: Option<bool> = sqlx::query_scalar(
        "SELECT completed_at IS NOT NULL FROM media_uploads WHERE video_id = $1",
    )
    .bind(video)
    .fetch_optional(&mut *tx)
    .await?;
    let import_url: Option<String> = sqlx::query_scalar(
        "SELECT source_url FROM media_jobs WHERE video_id = $1 AND kind = 'import' \
         ORDER BY id DESC LIMIT 1",
    )
    .bind(video)
    .fetch_optional(&mut *tx)
    .await?
    .flatten();
    match (has_source, import_url) {
        (Some(true), _) => jobs::enqueue(&mut tx, shop, video, jobs::JobKind::Process).await?,
        (None, Some(url)) => {
            jobs::enqueue_from(&mut tx, shop, video, jobs::JobKind::Import, Some(&url)).await?
        }
        _ => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "SOURCE_MISSING",
                "the file of this video is no longer stored; upload it again",
            )
            .into())
        }
    }
    video_media::requeue(&mut *tx, video).await?;
    let queued = crate::catalog::videos::get_in(&mut tx, video).await?;
    tx.commit().await?;
    media.work.notify_one();
    Ok(queued)
}

/// Makes the poster again from the moment `at_ms` of a processed video.
pub async fn choose_poster(
    media: &Media,
    db: &sqlx::PgPool,
    shop: &ShopDomain,
    video: uuid::Uuid,
    at_ms: u32,
) -> Result<Video, ApiError> {
    let (mut tx, _) = crate::catalog::begin_write(db, shop).await?;
    let found: Option<(Option<String>, f64)> = sqlx::query_as(
        "SELECT processing_state, duration FROM videos WHERE shop_domain = $1 AND id = $2 \
         FOR UPDATE",
    )
    .bind(shop.as_str())
    .bind(video)
    .fetch_optional(&mut *tx)
    .await?;
    let (state, duration) = found.ok_or(ApiError::NotFound("video"))?;
    match state.as_deref() {
        Some("ready") => {}
        None => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "NOT_FROM_A_FILE",
                "this video was given as URLs: set its thumbnail instead",
            )
            .into())
        }
        Some(_) => {
            return Err(Refusal::new(
                StatusCode::CONFLICT,
                "VIDEO_NOT_READY",
                "the poster can be chosen once the video is processed (state ready)",
            )
            .into())
        }
    }
    if f64::from(at_ms) >= duration * 1000.0 {
        return Err(ApiError::validation(
            "atMs",
            format!(
                "must be within the video's {} ms",
                (duration * 1000.0) as u64
            ),
        ));
    }
    video_media::set_poster_time(&mut *tx, video, at_ms).await?;
    jobs::enqueue(&mut tx, shop, video, jobs::JobKind::Poster).await?;
    let chosen = crate::catalog::videos::get_in(&mut tx, video).await?;
    tx.commit().await?;
    media.work.notify_one();
    Ok(chosen)
}
