//! A video's media, as its processing changes it: the state and progress, the outputs (poster,
//! mini version, renditions) and their facts, the poster's moment, the captions. `media` decides
//! what these become and calls these writes inside its own transactions (with its jobs and
//! uploads); the catalog alone writes `videos`.

use serde::Serialize;
use sqlx::PgExecutor;
use uuid::Uuid;

use super::domain::ShopDomain;

/// Where a video made from a file starts.
#[derive(Debug, Clone, Copy)]
pub enum FirstState {
    /// Its file is being uploaded.
    Uploading,
    /// Its file is to be fetched from an address.
    Queued,
}

/// Creates a draft video that will play once its file is processed.
pub async fn insert_from_file<'e>(
    executor: impl PgExecutor<'e>,
    shop: &ShopDomain,
    id: Uuid,
    title: &str,
    state: FirstState,
) -> Result<(), sqlx::Error> {
    let state = match state {
        FirstState::Uploading => "uploading",
        FirstState::Queued => "queued",
    };
    sqlx::query(
        "INSERT INTO videos (shop_domain, id, title, video_url, status, processing_state) \
         VALUES ($1, $2, $3, '', 'DRAFT', $4)",
    )
    .bind(shop.as_str())
    .bind(id)
    .bind(title)
    .bind(state)
    .execute(executor)
    .await?;
    Ok(())
}

/// What a file's check learned before processing: shown on the video while it waits.
#[derive(Debug, Clone, Copy)]
pub struct CheckedFile {
    pub duration_ms: u64,
    pub width: u32,
    pub height: u32,
}

/// The video's file is stored whole: it waits for processing, showing what its check learned.
pub async fn queue_uploaded<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    checked: Option<CheckedFile>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_state = 'queued', processing_progress = 0, \
         duration = COALESCE($2, duration), width = COALESCE($3, width), \
         height = COALESCE($4, height), updated_at = now() WHERE id = $1",
    )
    .bind(video)
    .bind(checked.map(|f| f.duration_ms as f64 / 1000.0))
    .bind(checked.and_then(|f| i32::try_from(f.width).ok()))
    .bind(checked.and_then(|f| i32::try_from(f.height).ok()))
    .execute(executor)
    .await?;
    Ok(())
}

/// A failed video waits for processing again, its failure forgotten.
pub async fn requeue<'e>(executor: impl PgExecutor<'e>, video: Uuid) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_state = 'queued', processing_progress = 0, \
         processing_error_code = NULL, processing_error = NULL, updated_at = now() WHERE id = $1",
    )
    .bind(video)
    .execute(executor)
    .await?;
    Ok(())
}

/// The moment of the video its poster is to be made from.
pub async fn set_poster_time<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    at_ms: u32,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE videos SET poster_time_ms = $2, updated_at = now() WHERE id = $1")
        .bind(video)
        .bind(i32::try_from(at_ms).unwrap_or(i32::MAX))
        .execute(executor)
        .await?;
    Ok(())
}

/// The video's processing is at `state` (`fetching`, `processing`), `progress` percent done.
pub async fn set_state<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    state: &str,
    progress: u8,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_state = $2, processing_progress = $3, \
         processing_error_code = NULL, processing_error = NULL, updated_at = now() \
         WHERE id = $1",
    )
    .bind(video)
    .bind(state)
    .bind(i16::from(progress))
    .execute(executor)
    .await?;
    Ok(())
}

/// How far the processing is, while it is processing.
pub async fn set_progress<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    progress: u8,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_progress = $2 WHERE id = $1 \
         AND processing_state = 'processing'",
    )
    .bind(video)
    .bind(i16::from(progress))
    .execute(executor)
    .await?;
    Ok(())
}

/// Shows the poster and the mini version on a video still processing.
pub async fn show_preview<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    poster_url: &str,
    mini_url: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET thumbnail = $2, poster_url = $2, mini_version_url = $3, \
         updated_at = now() WHERE id = $1 AND processing_state = 'processing'",
    )
    .bind(video)
    .bind(poster_url)
    .bind(mini_url)
    .execute(executor)
    .await?;
    Ok(())
}

/// A processing's outputs and the facts of the file they were made from.
pub struct Processed<'a> {
    pub poster_url: &'a str,
    pub mini_url: &'a str,
    pub hls_url: &'a str,
    pub progressive_url: &'a str,
    pub duration_ms: u64,
    pub width: u32,
    pub height: u32,
    pub frame_rate: f64,
    pub has_audio: bool,
    /// Where the outputs are stored.
    pub media_prefix: &'a str,
    pub media_bytes: u64,
}

/// The video is ready: it plays from `processed`'s outputs.
pub async fn publish_ready<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    processed: &Processed<'_>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_state = 'ready', processing_progress = 100, \
         processing_error_code = NULL, processing_error = NULL, \
         thumbnail = $2, poster_url = $2, mini_version_url = $3, hls_url = $4, \
         video_url = $5, duration = $6, width = $7, height = $8, frame_rate = $9, \
         has_audio = $10, media_prefix = $11, poster_prefix = NULL, \
         media_bytes = $12, updated_at = now() WHERE id = $1",
    )
    .bind(video)
    .bind(processed.poster_url)
    .bind(processed.mini_url)
    .bind(processed.hls_url)
    .bind(processed.progressive_url)
    .bind(processed.duration_ms as f64 / 1000.0)
    .bind(i32::try_from(processed.width).unwrap_or(i32::MAX))
    .bind(i32::try_from(processed.height).unwrap_or(i32::MAX))
    .bind(processed.frame_rate)
    .bind(processed.has_audio)
    .bind(processed.media_prefix)
    .bind(i64::try_from(processed.media_bytes).unwrap_or(i64::MAX))
    .execute(executor)
    .await?;
    Ok(())
}

/// A new poster for a ready video, stored under `prefix`.
pub async fn publish_poster<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    poster_url: &str,
    prefix: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET thumbnail = $2, poster_url = $2, poster_prefix = $3, \
         updated_at = now() WHERE id = $1",
    )
    .bind(video)
    .bind(poster_url)
    .bind(prefix)
    .execute(executor)
    .await?;
    Ok(())
}

/// The video failed, with a code and a message for the merchant.
pub async fn mark_failed<'e>(
    executor: impl PgExecutor<'e>,
    video: Uuid,
    code: &str,
    message: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET processing_state = 'failed', processing_progress = 0, \
         processing_error_code = $2, processing_error = $3, updated_at = now() WHERE id = $1",
    )
    .bind(video)
    .bind(code)
    .bind(message)
    .execute(executor)
    .await?;
    Ok(())
}

/// The video's caption files, as media describes them.
pub async fn set_captions<'e, T: Serialize + Sync>(
    executor: impl PgExecutor<'e>,
    shop: &ShopDomain,
    video: Uuid,
    captions: &T,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE videos SET captions = $3, updated_at = now() WHERE shop_domain = $1 AND id = $2",
    )
    .bind(shop.as_str())
    .bind(video)
    .bind(sqlx::types::Json(captions))
    .execute(executor)
    .await?;
    Ok(())
}
