//! The processing worker: takes jobs from the queue (`jobs`), makes a video's outputs with
//! ffmpeg in a private directory, stores them under a new run prefix, and publishes them on the
//! video in one transaction that also checks the job is still its own. Also deletes the objects
//! queued for deletion, expires unfinished uploads, and sweeps objects nothing references.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use futures::TryStreamExt;
use object_store::path::Path as ObjectName;
use sqlx::PgPool;
use uuid::Uuid;

use super::ffmpeg::{Output, SourceFacts, StepError};
use super::jobs::{self, Job, JobKind};
use super::{names, Media, Refusal};
use crate::catalog::video_media::{self, mark_failed};

/// How often an idle worker looks for work it was not woken for (jobs queued by another
/// instance, retries coming due, leases running out).
const IDLE_POLL: Duration = Duration::from_secs(2);
/// How often the progress of a running job is written to its video.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);
const EXPIRY_EVERY: Duration = Duration::from_secs(60);
const SWEEP_EVERY: Duration = Duration::from_secs(3600);

#[derive(Clone)]
pub struct Worker {
    pub db: PgPool,
    pub media: Media,
}

/// Starts `count` processing workers and one housekeeper (deletions, expiry, sweep).
pub fn spawn(worker: Worker, count: u32) {
    for _ in 0..count {
        let worker = worker.clone();
        tokio::spawn(async move { worker.run_jobs().await });
    }
    tokio::spawn(async move { worker.keep_house().await });
}

/// What a processing run made, to publish on the video.
struct Made {
    run: ObjectName,
    facts: SourceFacts,
    poster: String,
    mini: Option<String>,
    renditions: Option<(String, String)>,
    bytes: u64,
}

impl Worker {
    fn lease(&self) -> Duration {
        self.media.config.job_lease
    }

    /// Takes and runs jobs until the process ends.
    pub async fn run_jobs(&self) {
        loop {
            match jobs::claim(&self.db, self.lease()).await {
                Ok(Some(job)) => self.run(job).await,
                Ok(None) => {
                    let _ = tokio::time::timeout(IDLE_POLL, self.media.work.notified()).await;
                }
                Err(e) => {
                    tracing::warn!(error = %e, "cannot take a processing job");
                    tokio::time::sleep(IDLE_POLL).await;
                }
            }
        }
    }

    /// Runs one job to its end: published, given back for a retry, or failed.
    pub async fn run(&self, job: Job) {
        metrics::counter!("media_jobs_started_total", "kind" => kind_label(job.kind)).increment(1);
        let dir = work_dir(&job);
        let outcome = match private_dir(&dir).await {
            Ok(()) => self.run_leased(&job, &dir).await,
            Err(e) => Some(Err(StepError::Failed(e))),
        };
        let _ = tokio::fs::remove_dir_all(&dir).await;
        let result = match outcome {
            // The lease was lost: another worker has the job; nothing of this run is shown.
            None => {
                tracing::warn!(job = job.id, "lost the lease of a processing job");
                return;
            }
            Some(result) => result,
        };
        let settled = match result {
            Ok(made) => self.publish(&job, made).await,
            Err(StepError::Refused(refusal)) => self.refuse(&job, &refusal).await,
            Err(StepError::Failed(e)) => self.retry_or_fail(&job, &e).await,
        };
        if let Err(e) = settled {
            tracing::warn!(job = job.id, error = %e, "cannot record a processing job's end");
        }
    }

    /// Runs the job while renewing its lease and writing its progress; `None` when the lease is
    /// lost (the work is dropped at once, which stops ffmpeg).
    async fn run_leased(&self, job: &Job, dir: &Path) -> Option<Result<Made, StepError>> {
        let progress = Arc::new(AtomicU8::new(0));
        let step = Arc::new(std::sync::Mutex::new("probe"));
        let work = self.make(job, dir, &progress, &step);
        tokio::pin!(work);
        let mut renew = tokio::time::interval(self.lease() / 3);
        let mut report = tokio::time::interval(PROGRESS_EVERY);
        let mut reported = 0;
        loop {
            tokio::select! {
                result = &mut work => return Some(result),
                _ = renew.tick() => {
                    let current = *step.lock().unwrap_or_else(|e| e.into_inner());
                    match jobs::renew(&self.db, job, self.lease(), current).await {
                        Ok(true) => {}
                        Ok(false) => return None,
                        // Postgres away: keep working; the lease may still hold when it returns.
                        Err(e) => tracing::warn!(error = %e, "cannot renew a job's lease"),
                    }
                }
                _ = report.tick() => {
                    let now = progress.load(Ordering::Relaxed);
                    if now != reported {
                        reported = now;
                        let _ = self.set_progress(job, now).await;
                    }
                }
            }
        }
    }

    async fn make(
        &self,
        job: &Job,
        dir: &Path,
        progress: &Arc<AtomicU8>,
        step: &Arc<std::sync::Mutex<&'static str>>,
    ) -> Result<Made, StepError> {
        let set_step = |name: &'static str| {
            *step.lock().unwrap_or_else(|e| e.into_inner()) = name;
        };
        if job.kind != JobKind::Poster {
            self.set_state(job, "processing", 0).await?;
        }
        let source = dir.join("source");
        if job.kind == JobKind::Import {
            set_step("import");
            let started = std::time::Instant::now();
            self.import(job, &source).await?;
            step_seconds("import", started);
        }
        let video = self.video(job).await?;
        let started = std::time::Instant::now();
        let parts: Vec<ObjectName> = video
            .parts
            .iter()
            .map(|p| ObjectName::from(p.as_str()))
            .collect();
        if parts.is_empty() {
            return Err(StepError::Refused(Refusal::unprocessable(
                "SOURCE_MISSING",
                "the uploaded file is no longer stored; upload it again",
            )));
        }
        // An imported source is here already; an upload's parts are read where they are in
        // the directory store, fetched from a bucket.
        let source = match job.kind {
            JobKind::Import => source,
            _ => self
                .media
                .store
                .readable_in_place(&parts, dir)
                .await
                .map_err(StepError::Failed)?,
        };
        let ffmpeg = self.media.ffmpeg();
        let limits = self.media.config.limits;
        let facts = ffmpeg.probe(&source, &limits).await?;
        step_seconds("probe", started);
        let run = names::run_prefix(&job.shop, job.video_id, Uuid::now_v7());
        // The outputs' bytes; the source's count as its upload's.
        let mut bytes = 0;

        set_step("poster");
        let started = std::time::Instant::now();
        let at_ms = video.poster_time_ms.and_then(|ms| u64::try_from(ms).ok());
        let poster = ffmpeg
            .poster(&source, &facts, at_ms, &step_dir(dir, "poster").await?)
            .await?;
        bytes += self.store_outputs(&run, &poster.outputs).await?;
        let poster_name = poster.main.clone();
        step_seconds("poster", started);
        if job.kind == JobKind::Poster {
            return Ok(Made {
                run,
                facts,
                poster: poster_name,
                mini: None,
                renditions: None,
                bytes,
            });
        }

        set_step("mini");
        let started = std::time::Instant::now();
        let mini = ffmpeg
            .mini(&source, &facts, &step_dir(dir, "mini").await?)
            .await?;
        bytes += self
            .store_outputs(&run, std::slice::from_ref(&mini))
            .await?;
        step_seconds("mini", started);
        // The poster and the mini version show in the dashboard while the rest is made.
        self.preview(job, &run, &poster_name, &mini.name).await?;

        set_step("renditions");
        let started = std::time::Instant::now();
        let report = {
            let progress = Arc::clone(progress);
            move |percent: u8| progress.store(percent.min(99), Ordering::Relaxed)
        };
        let renditions = ffmpeg
            .renditions(
                &source,
                &facts,
                &step_dir(dir, "renditions").await?,
                &report,
            )
            .await?;
        bytes += self.store_outputs(&run, &renditions.outputs).await?;
        step_seconds("renditions", started);
        set_step("publish");
        Ok(Made {
            run,
            facts,
            poster: poster_name,
            mini: Some(mini.name),
            renditions: Some((renditions.master, renditions.progressive)),
            bytes,
        })
    }

    /// Fetches the job's URL into `source` and keeps it as the video's upload (its source for a
    /// retry or another poster).
    async fn import(&self, job: &Job, source: &Path) -> Result<(), StepError> {
        let url = job
            .source_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
            .ok_or_else(|| StepError::Failed(anyhow::anyhow!("an import without its URL")))?;
        let rules = super::import_rules(&self.media);
        let size = super::import::fetch(&url, source, &rules)
            .await
            .map_err(|e| match e {
                super::import::ImportError::Refused(refusal) => StepError::Refused(refusal),
                super::import::ImportError::Failed(e) => StepError::Failed(e),
            })?;
        let part = names::upload_part(job.video_id, 0, Uuid::new_v4());
        self.media.store.put_file(&part, source).await?;
        let expires = chrono::Utc::now();
        sqlx::query(
            "INSERT INTO media_uploads \
             (video_id, shop_domain, length, received, parts, expires_at, completed_at) \
             VALUES ($1, $2, $3, $3, ARRAY[$4], $5, now()) \
             ON CONFLICT (video_id) DO UPDATE SET length = $3, received = $3, \
             parts = ARRAY[$4], completed_at = now()",
        )
        .bind(job.video_id)
        .bind(job.shop.as_str())
        .bind(i64::try_from(size).unwrap_or(i64::MAX))
        .bind(part.as_ref())
        .bind(expires)
        .execute(&self.db)
        .await
        .map_err(|e| StepError::Failed(e.into()))?;
        Ok(())
    }

    async fn store_outputs(&self, run: &ObjectName, outputs: &[Output]) -> Result<u64, StepError> {
        let mut bytes = 0;
        for output in outputs {
            let name = names::output(run, &output.name);
            bytes += self
                .media
                .store
                .put_file(&name, &output.path)
                .await
                .with_context(|| format!("cannot store {name}"))?;
        }
        Ok(bytes)
    }

    async fn video(&self, job: &Job) -> Result<VideoSource, StepError> {
        let row: Option<VideoSource> = sqlx::query_as(
            "SELECT v.poster_time_ms, COALESCE(u.parts, '{}') AS parts FROM videos v \
             LEFT JOIN media_uploads u ON u.video_id = v.id WHERE v.id = $1",
        )
        .bind(job.video_id)
        .fetch_optional(&self.db)
        .await
        .map_err(|e| StepError::Failed(e.into()))?;
        row.ok_or_else(|| StepError::Failed(anyhow::anyhow!("the video is gone")))
    }

    async fn set_state(&self, job: &Job, state: &str, progress: u8) -> Result<(), StepError> {
        video_media::set_state(&self.db, job.video_id, state, progress)
            .await
            .map_err(|e| StepError::Failed(e.into()))
    }

    async fn set_progress(&self, job: &Job, progress: u8) -> Result<(), sqlx::Error> {
        video_media::set_progress(&self.db, job.video_id, progress).await
    }

    /// Shows the poster and the mini version on the video (not yet on any store: it is not
    /// ready) while the renditions are made.
    async fn preview(
        &self,
        job: &Job,
        run: &ObjectName,
        poster: &str,
        mini: &str,
    ) -> Result<(), StepError> {
        let poster_url = self.media.store.public_url(&names::output(run, poster));
        let mini_url = self.media.store.public_url(&names::output(run, mini));
        video_media::show_preview(&self.db, job.video_id, &poster_url, &mini_url)
            .await
            .map_err(|e| StepError::Failed(e.into()))
    }

    /// Shows the run's outputs on the video, if the job is still this worker's; otherwise the
    /// run's objects are queued for deletion and nothing changes.
    async fn publish(&self, job: &Job, made: Made) -> anyhow::Result<()> {
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
    async fn refuse(&self, job: &Job, refusal: &Refusal) -> anyhow::Result<()> {
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
    async fn retry_or_fail(&self, job: &Job, error: &anyhow::Error) -> anyhow::Result<()> {
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

#[derive(sqlx::FromRow)]
struct VideoSource {
    poster_time_ms: Option<i32>,
    parts: Vec<String>,
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

/// A job's private working directory.
fn work_dir(job: &Job) -> PathBuf {
    std::env::temp_dir()
        .join("videoapp-media")
        .join(format!("{}-{}", job.id, job.lease))
}

/// Creates `dir` readable by this user only: sources are merchants' private files.
pub(crate) async fn private_dir(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    let dir = dir.to_path_buf();
    tokio::task::spawn_blocking(move || {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))
    })
    .await?
}

/// A step's own directory inside the job's.
async fn step_dir(job_dir: &Path, step: &str) -> Result<PathBuf, StepError> {
    let dir = job_dir.join(step);
    tokio::fs::create_dir_all(&dir)
        .await
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

fn kind_label(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Import => "import",
        JobKind::Process => "process",
        JobKind::Poster => "poster",
    }
}

fn step_seconds(step: &'static str, started: std::time::Instant) {
    metrics::histogram!("media_step_seconds", "step" => step)
        .record(started.elapsed().as_secs_f64());
}
