//! Whether an upload is a video we take: its first bytes, as they arrive, tell an image, a sound
//! or a document apart; once whole, its own index (`index`) or else ffprobe checks it, and a
//! refused file keeps none of its bytes. A file that passes is queued for processing.

use std::path::PathBuf;

use sqlx::PgPool;
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;
use crate::catalog::video_media::{self, mark_failed, CheckedFile};
use crate::error::ApiError;
use crate::media::ffmpeg::StepError;
use crate::media::jobs::{self, JobKind};
use crate::media::worker::{discard_source, private_dir};
use crate::media::{index, names, Media, Refusal};

/// The first bytes of a file, enough to tell an image or a sound from a video.
pub(super) const SNIFF_BYTES: usize = 64;

/// The upload is whole: look at it now, so a file we cannot play is refused to the client that
/// sent it; queue its processing otherwise.
pub(super) async fn finish(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
) -> Result<(), ApiError> {
    let (parts, length): (Vec<String>, i64) =
        sqlx::query_as("SELECT parts, length FROM media_uploads WHERE video_id = $1")
            .bind(video)
            .fetch_optional(db)
            .await?
            .unwrap_or_default();
    let parts: Vec<object_store::path::Path> = parts
        .iter()
        .map(|p| object_store::path::Path::from(p.as_str()))
        .collect();
    let objects = media.store.objects().as_ref();
    let vouched = match index::Parts::new(objects, &parts, length.unsigned_abs()) {
        Some(file) => index::vouch(&file, &media.config.limits).await,
        None => None,
    };
    let facts = match vouched {
        Some(vouched) => {
            metrics::counter!("media_uploads_checked_total", "by" => "index").increment(1);
            Some(vouched)
        }
        None => {
            metrics::counter!("media_uploads_checked_total", "by" => "ffprobe").increment(1);
            probe_or_refuse(media, db, video, &parts).await?
        }
    };
    let mut tx = db.begin().await?;
    sqlx::query("UPDATE media_uploads SET completed_at = now() WHERE video_id = $1")
        .bind(video)
        .execute(&mut *tx)
        .await?;
    let checked = facts.as_ref().map(|f| CheckedFile {
        duration_ms: f.duration_ms,
        width: f.width,
        height: f.height,
    });
    video_media::queue_uploaded(&mut *tx, video, checked).await?;
    jobs::enqueue(&mut tx, shop, video, JobKind::Process).await?;
    tx.commit().await?;
    media.work.notify_one();
    metrics::counter!("media_uploads_finished_total").increment(1);
    Ok(())
}

/// Probes a finished upload with ffprobe, refusing it (none of its bytes stay) when it is no
/// video we take; `None` when ffprobe could not run, for the worker to try again.
async fn probe_or_refuse(
    media: &Media,
    db: &PgPool,
    video: Uuid,
    parts: &[object_store::path::Path],
) -> Result<Option<index::Vouched>, ApiError> {
    // The directory store's parts are read where they are; a bucket's are fetched once, here.
    let scratch = scratch_dir();
    let probed = async {
        private_dir(&scratch).await?;
        let source = media.store.readable_in_place(parts, &scratch).await?;
        Ok::<_, anyhow::Error>(media.ffmpeg().probe(&source, &media.config.limits).await)
    }
    .await;
    let _ = tokio::fs::remove_dir_all(&scratch).await;
    match probed {
        Ok(Ok(facts)) => Ok(Some(index::Vouched {
            duration_ms: facts.duration_ms,
            width: facts.width,
            height: facts.height,
        })),
        Ok(Err(StepError::Refused(refused))) => {
            refuse_upload(media, db, video, &refused).await?;
            Err(refused.into())
        }
        // The worker probes again and retries; the upload itself is complete.
        Ok(Err(StepError::Failed(e))) | Err(e) => {
            tracing::warn!(error = format!("{e:#}"), "cannot probe a finished upload");
            Ok(None)
        }
    }
}

/// A refused file: the video says why, and none of its bytes stay.
pub(super) async fn refuse_upload(
    media: &Media,
    db: &PgPool,
    video: Uuid,
    refused: &Refusal,
) -> Result<(), ApiError> {
    let mut tx = db.begin().await?;
    mark_failed(&mut *tx, video, refused.code, &refused.message).await?;
    discard_source(&mut tx, video).await?;
    tx.commit().await?;
    // At once rather than when a worker next looks: the client is told none of it stays.
    media.delete_now(db, &names::upload_prefix(video)).await;
    metrics::counter!("media_uploads_refused_total", "reason" => refused.code).increment(1);
    Ok(())
}

/// Tells from a file's first bytes that it is clearly no video: an image, a sound, a document.
/// Anything else is left to ffprobe once the file is whole.
pub fn sniff(head: &[u8]) -> Option<Refusal> {
    let image = |kind: &str| {
        Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            format!("this is {kind} image, not a video; upload a video file (MP4, MOV, WebM)"),
        ))
    };
    let starts = |magic: &[u8]| head.starts_with(magic);
    if starts(b"\x89PNG\r\n\x1a\n") {
        return image("a PNG");
    }
    if starts(b"\xff\xd8\xff") {
        return image("a JPEG");
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return image("a GIF");
    }
    if starts(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return image("a WebP");
    }
    if head
        .get(4..12)
        .is_some_and(|b| b == b"ftypheic" || b == b"ftypheix" || b == b"ftypavif")
    {
        return image("an HEIC or AVIF");
    }
    let sound = || {
        Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            "this file has sound but no picture; upload a video file (MP4, MOV, WebM)",
        ))
    };
    if starts(b"ID3") || starts(b"fLaC") || (starts(b"RIFF") && head.get(8..12) == Some(b"WAVE")) {
        return sound();
    }
    if head.get(4..11) == Some(b"ftypM4A") {
        return sound();
    }
    if starts(b"%PDF") {
        return Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            "this is a PDF document, not a video; upload a video file (MP4, MOV, WebM)",
        ));
    }
    None
}

/// A scratch directory for probing a finished upload.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("videoapp-upload-{}", Uuid::new_v4()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_sounds_and_documents_are_told_from_their_first_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n....").unwrap().code, "NOT_A_VIDEO");
        assert!(sniff(b"\xff\xd8\xff\xe0").unwrap().message.contains("JPEG"));
        assert!(sniff(b"ID3\x04").unwrap().message.contains("no picture"));
        assert!(sniff(b"\0\0\0\x20ftypM4A \0\0")
            .unwrap()
            .message
            .contains("no picture"));
        assert!(sniff(b"\0\0\0\x18ftypheic")
            .unwrap()
            .message
            .contains("HEIC"));
        // Videos pass to the probe.
        assert!(sniff(b"\0\0\0\x20ftypisom\0\0").is_none());
        assert!(sniff(b"\x1a\x45\xdf\xa3").is_none());
    }
}
