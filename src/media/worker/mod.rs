//! The processing worker: takes jobs from the queue (`jobs`), makes a video's outputs with
//! ffmpeg in a private directory, stores them under a new run prefix, and publishes them on the
//! video in one transaction that also checks the job is still its own. Also deletes the objects
//! queued for deletion, expires unfinished uploads, and sweeps objects nothing references.
//!
//! A job's run is made in `make` and ends in `settle`; `housekeeping` is the rest.

mod housekeeping;
mod make;
mod settle;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use sqlx::PgPool;

use super::ffmpeg::StepError;
use super::jobs::{self, Job, JobKind};
use super::Media;
use crate::catalog::video_media;
use make::Made;
pub(crate) use settle::discard_source;

/// How often an idle worker looks for work it was not woken for (jobs queued by another
/// instance, retries coming due, leases running out).
const IDLE_POLL: Duration = Duration::from_secs(2);
/// How often the progress of a running job is written to its video.
const PROGRESS_EVERY: Duration = Duration::from_secs(1);

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

    async fn set_state(&self, job: &Job, state: &str, progress: u8) -> Result<(), StepError> {
        video_media::set_state(&self.db, job.video_id, state, progress)
            .await
            .map_err(|e| StepError::Failed(e.into()))
    }

    async fn set_progress(&self, job: &Job, progress: u8) -> Result<(), sqlx::Error> {
        video_media::set_progress(&self.db, job.video_id, progress).await
    }
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

fn kind_label(kind: JobKind) -> &'static str {
    match kind {
        JobKind::Import => "import",
        JobKind::Process => "process",
        JobKind::Poster => "poster",
    }
}
