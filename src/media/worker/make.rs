//! A job's run: the source fetched (an import) or found (an upload), probed, and each output
//! made in its own directory and stored under a new run prefix, the poster and the mini version
//! shown on the video while the renditions are made.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use anyhow::Context;
use object_store::path::Path as ObjectName;
use uuid::Uuid;

use super::Worker;
use crate::catalog::video_media;
use crate::media::ffmpeg::{Output, SourceFacts, StepError};
use crate::media::jobs::{Job, JobKind};
use crate::media::{import, import_rules, names, Refusal};

/// What a processing run made, to publish on the video.
pub(super) struct Made {
    pub(super) run: ObjectName,
    pub(super) facts: SourceFacts,
    pub(super) poster: String,
    pub(super) mini: Option<String>,
    pub(super) renditions: Option<(String, String)>,
    pub(super) bytes: u64,
}

impl Worker {
    pub(super) async fn make(
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
        let rules = import_rules(&self.media);
        let size = import::fetch(&url, source, &rules)
            .await
            .map_err(|e| match e {
                import::ImportError::Refused(refusal) => StepError::Refused(refusal),
                import::ImportError::Failed(e) => StepError::Failed(e),
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
}

#[derive(sqlx::FromRow)]
struct VideoSource {
    poster_time_ms: Option<i32>,
    parts: Vec<String>,
}

/// A step's own directory inside the job's.
async fn step_dir(job_dir: &Path, step: &str) -> Result<PathBuf, StepError> {
    let dir = job_dir.join(step);
    tokio::fs::create_dir_all(&dir)
        .await
        .with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

fn step_seconds(step: &'static str, started: std::time::Instant) {
    metrics::histogram!("media_step_seconds", "step" => step)
        .record(started.elapsed().as_secs_f64());
}
