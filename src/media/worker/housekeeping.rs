//! Housekeeping beside the jobs: deleting the objects queued for deletion, expiring unfinished
//! uploads, reporting each shop's storage, and sweeping objects nothing refers to.

use std::time::Duration;

use futures::TryStreamExt;
use object_store::path::Path as ObjectName;
use uuid::Uuid;

use super::{Worker, IDLE_POLL};
use crate::catalog::video_media::mark_failed;
use crate::media::{jobs, names};

const EXPIRY_EVERY: Duration = Duration::from_secs(60);
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

impl Worker {
    /// Deletions, expired uploads and the sweep, until the process ends.
    pub async fn keep_house(&self) {
        let mut expiry = tokio::time::interval(EXPIRY_EVERY);
        let mut sweep = tokio::time::interval(SWEEP_EVERY);
        sweep.tick().await;
        loop {
            tokio::select! {
                _ = expiry.tick() => {
                    if let Err(e) = self.expire_uploads().await {
                        tracing::warn!(error = format!("{e:#}"), "cannot expire uploads");
                    }
                    if let Err(e) = self.report_storage().await {
                        tracing::warn!(error = %e, "cannot read the shops' media storage");
                    }
                }
                _ = sweep.tick() => {
                    if let Err(e) = self.sweep().await {
                        tracing::warn!(error = format!("{e:#}"), "cannot sweep media objects");
                    }
                }
                _ = tokio::time::sleep(IDLE_POLL) => {}
            }
            if let Err(e) = self.delete_due().await {
                tracing::warn!(error = format!("{e:#}"), "cannot delete media objects");
            }
        }
    }

    /// Deletes the objects of every deletion that is due; one that fails waits and is retried.
    pub async fn delete_due(&self) -> anyhow::Result<usize> {
        let due: Vec<(String, i32)> = sqlx::query_as(
            "SELECT prefix, attempts FROM media_deletions WHERE run_after <= now() \
             ORDER BY created_at LIMIT 100",
        )
        .fetch_all(&self.db)
        .await?;
        let mut done = 0;
        for (prefix, attempts) in due {
            match self
                .media
                .store
                .delete_prefix(&ObjectName::from(prefix.as_str()))
                .await
            {
                Ok(_) => {
                    sqlx::query("DELETE FROM media_deletions WHERE prefix = $1")
                        .bind(&prefix)
                        .execute(&self.db)
                        .await?;
                    done += 1;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot delete media objects; retrying later");
                    sqlx::query(
                        "UPDATE media_deletions SET attempts = attempts + 1, \
                         run_after = now() + $2 * interval '1 second' WHERE prefix = $1",
                    )
                    .bind(&prefix)
                    .bind(i64::try_from(jobs::backoff(attempts + 1).as_secs()).unwrap_or(1800))
                    .execute(&self.db)
                    .await?;
                }
            }
        }
        Ok(done)
    }

    /// Unfinished uploads past their expiry: their bytes are removed and the video says why.
    pub async fn expire_uploads(&self) -> anyhow::Result<usize> {
        let mut tx = self.db.begin().await?;
        let expired: Vec<Uuid> = sqlx::query_scalar(
            "DELETE FROM media_uploads WHERE completed_at IS NULL AND expires_at < now() \
             RETURNING video_id",
        )
        .fetch_all(&mut *tx)
        .await?;
        for video in &expired {
            mark_failed(
                &mut *tx,
                *video,
                "UPLOAD_EXPIRED",
                "The upload was not finished in time, so its part was removed. Upload the file \
                 again.",
            )
            .await?;
            jobs::delete_later(&mut tx, names::upload_prefix(*video).as_ref()).await?;
        }
        tx.commit().await?;
        if !expired.is_empty() {
            metrics::counter!("media_uploads_expired_total").increment(expired.len() as u64);
        }
        Ok(expired.len())
    }

    /// Sets `media_storage_bytes{shop}` from Postgres: each shop's sources and outputs, what its
    /// quota counts.
    pub async fn report_storage(&self) -> Result<(), sqlx::Error> {
        let shops: Vec<(String, i64)> = sqlx::query_as(
            "SELECT shop_domain, SUM(bytes)::BIGINT FROM ( \
               SELECT shop_domain, media_bytes AS bytes FROM videos WHERE media_bytes > 0 \
               UNION ALL SELECT shop_domain, length FROM media_uploads) AS stored \
             GROUP BY shop_domain",
        )
        .fetch_all(&self.db)
        .await?;
        for (shop, bytes) in shops {
            metrics::gauge!("media_storage_bytes", "shop" => shop).set(bytes as f64);
        }
        Ok(())
    }

    /// Deletes objects that no video, upload or deletion refers to and that are older than the
    /// grace period (a younger one may be a run or an upload still on its way).
    pub async fn sweep(&self) -> anyhow::Result<usize> {
        let grace = chrono::Duration::from_std(self.media.config.sweep_grace)?;
        let cutoff = chrono::Utc::now() - grace;
        let referenced: Vec<String> = sqlx::query_scalar(
            "SELECT media_prefix FROM videos WHERE media_prefix IS NOT NULL \
             UNION ALL SELECT poster_prefix FROM videos WHERE poster_prefix IS NOT NULL \
             UNION ALL SELECT jsonb_array_elements(captions)->>'prefix' FROM videos \
             UNION ALL SELECT unnest(parts) FROM media_uploads",
        )
        .fetch_all(&self.db)
        .await?;
        let referenced: std::collections::HashSet<String> = referenced.into_iter().collect();
        let objects = self.media.store.objects();
        let mut stale = Vec::new();
        for root in ["videos", "uploads"] {
            let mut listing = objects.list(Some(&ObjectName::from(root)));
            while let Some(meta) = listing.try_next().await? {
                if meta.last_modified > cutoff {
                    continue;
                }
                // An upload's part is referenced by its name; a run's output (or a caption file)
                // by its prefix, `videos/{shop}/{video}/{run}`, its first four segments.
                let name = meta.location.as_ref();
                let run: String = meta
                    .location
                    .parts()
                    .take(4)
                    .map(|p| p.as_ref().to_string())
                    .collect::<Vec<_>>()
                    .join("/");
                let kept = referenced.contains(name) || referenced.contains(&run);
                if !kept {
                    stale.push(meta.location);
                }
            }
        }
        let count = stale.len();
        for name in stale {
            objects.delete(&name).await?;
        }
        if count > 0 {
            tracing::info!(count, "swept media objects no video refers to");
        }
        Ok(count)
    }
}
