//! How a run ends: its outputs published on the video (if the job is still the worker's), the
//! file refused, or a failure retried until the last attempt fails the video.

use uuid::Uuid;

use super::make::Made;
use super::{kind_label, Worker};
use crate::catalog::video_media::{self, mark_failed};
use crate::media::jobs::{self, Job, JobKind};
use crate::media::{names, Refusal};

impl Worker {
    /// Shows the run's outputs on the video, if the job is still this worker's; otherwise the
    /// run's objects are queued for deletion and nothing changes.
    pub(super) async fn publish(&self, job: &Job, made: Made) -> anyhow::Result<()> {
        let store = &self.media.store;
        let url = |name: &str| store.public_url(&names::output(&made.run, name));
        let mut tx = self.db.begin().await?;
        if !jobs::still_held(&mut tx, job).await? {
            jobs::delete_later(&mut tx, made.run.as_ref()).await?;
            tx.commit().await?;
            return Ok(());
        }
        let previous: Option<(Option<String>, Option<String>)> = sqlx::query_as(
            "SELECT media_prefix, poster_prefix FROM videos WHERE id = $1 FOR UPDATE",
        )
        .bind(job.video_id)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((media_prefix, poster_prefix)) = previous else {
            jobs::delete_later(&mut tx, made.run.as_ref()).await?;
            tx.commit().await?;
            return Ok(());
        };
        let poster_url = url(&made.poster);
        match (&made.renditions, &made.mini) {
            (Some((master, progressive)), Some(mini)) => {
                let facts = &made.facts;
                let processed = video_media::Processed {
                    poster_url: &poster_url,
                    mini_url: &url(mini),
                    hls_url: &url(master),
                    progressive_url: &url(progressive),
                    duration_ms: facts.duration_ms,
                    width: facts.width,
                    height: facts.height,
                    frame_rate: facts.frame_rate,
                    has_audio: facts.has_audio,
                    media_prefix: made.run.as_ref(),
                    media_bytes: made.bytes,
                };
                video_media::publish_ready(&mut *tx, job.video_id, &processed).await?;
                for old in [media_prefix, poster_prefix].into_iter().flatten() {
                    jobs::delete_later(&mut tx, &old).await?;
                }
            }
            _ => {
                video_media::publish_poster(&mut *tx, job.video_id, &poster_url, made.run.as_ref())
                    .await?;
                if let Some(old) = poster_prefix {
                    jobs::delete_later(&mut tx, &old).await?;
                }
            }
        }
        jobs::done(&mut tx, job).await?;
        crate::catalog::bump_version(&mut tx, &job.shop).await?;
        tx.commit().await?;
        metrics::counter!("media_jobs_finished_total", "kind" => kind_label(job.kind)).increment(1);
        Ok(())
    }

    /// The file is not something we can play: the video fails with the reason, the job ends,
    /// and the source's bytes are removed (a retry cannot help; a new upload can).
    pub(super) async fn refuse(&self, job: &Job, refusal: &Refusal) -> anyhow::Result<()> {
        let mut tx = self.db.begin().await?;
        if !jobs::still_held(&mut tx, job).await? {
            return Ok(());
        }
        if job.kind != JobKind::Poster {
            mark_failed(&mut *tx, job.video_id, refusal.code, &refusal.message).await?;
            discard_source(&mut tx, job.video_id).await?;
        }
        jobs::failed(&mut tx, job, &refusal.message).await?;
        tx.commit().await?;
        metrics::counter!("media_jobs_failed_total", "reason" => refusal.code).increment(1);
        Ok(())
    }

    /// A run that failed for a reason of ours or the machine's: tried again later, and after the
    /// last attempt the video fails with a reason the merchant can act on (retry).
    pub(super) async fn retry_or_fail(
        &self,
        job: &Job,
        error: &anyhow::Error,
    ) -> anyhow::Result<()> {
        tracing::warn!(
            job = job.id,
            attempt = job.attempts,
            error = format!("{error:#}"),
            "processing failed"
        );
        if job.attempts < jobs::MAX_ATTEMPTS {
            jobs::retry_later(
                &self.db,
                job,
                jobs::backoff(job.attempts),
                &format!("{error:#}"),
            )
            .await?;
            if job.kind != JobKind::Poster {
                self.set_state(job, "queued", 0)
                    .await
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            }
            return Ok(());
        }
        let mut tx = self.db.begin().await?;
        if !jobs::still_held(&mut tx, job).await? {
            return Ok(());
        }
        if job.kind != JobKind::Poster {
            mark_failed(
                &mut *tx,
                job.video_id,
                "PROCESSING_FAILED",
                "We could not process this video after several tries. Retry it; if it fails \
                 again, export it from your phone or editor as MP4 (H.264) and upload that.",
            )
            .await?;
        }
        jobs::failed(&mut tx, job, &format!("{error:#}")).await?;
        tx.commit().await?;
        metrics::counter!("media_jobs_failed_total", "reason" => "PROCESSING_FAILED").increment(1);
        Ok(())
    }
}

/// Removes an upload's record and queues its bytes' deletion.
pub(crate) async fn discard_source(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    video: Uuid,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM media_uploads WHERE video_id = $1")
        .bind(video)
        .execute(&mut **tx)
        .await?;
    jobs::delete_later(tx, names::upload_prefix(video).as_ref()).await
}
