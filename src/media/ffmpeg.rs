//! ffprobe and ffmpeg, run as locked-down child processes: only the `file` and `pipe` protocols,
//! no standard input, bounded threads, a wall-clock limit, in a private working directory, and
//! no argument taken from user text (inputs and outputs are paths this service chose).

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::config::MediaLimits;
use crate::media::Refusal;

/// How ffmpeg runs: its threads and the longest one run may take.
#[derive(Debug, Clone, Copy)]
pub struct Ffmpeg {
    pub threads: u32,
    pub timeout: Duration,
}

/// What probing the source found, as displayed (width and height after rotation).
#[derive(Debug, Clone, PartialEq)]
pub struct SourceFacts {
    pub duration_ms: u64,
    pub width: u32,
    pub height: u32,
    pub frame_rate: f64,
    pub has_audio: bool,
    /// ffprobe's name of the video codec (`h264`, `hevc`, `vp9`, …).
    pub video_codec: String,
    /// Clockwise degrees the source asks to be turned when shown (0, 90, 180, 270).
    pub rotation: u32,
}

/// A file a step made, to be stored under the run's prefix as `name`.
#[derive(Debug, Clone)]
pub struct Output {
    /// Relative object name: `poster-480.jpg`, `mini.mp4`, `hls/master.m3u8`, `video-720.mp4`.
    pub name: String,
    pub path: PathBuf,
    pub content_type: &'static str,
}

/// What a step failed with: the file is refused (the merchant's to fix, not retried), or the
/// run failed (retried).
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error("{}", .0.message)]
    Refused(Refusal),
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// The poster's outputs: JPEG and WebP at the card's size and twice it.
pub struct Poster {
    pub outputs: Vec<Output>,
    /// The name of the one the storefront shows (`posterUrl`, `thumbnail`).
    pub main: String,
}

/// All outputs of a processing run and the names the video's URLs point at.
pub struct Renditions {
    pub outputs: Vec<Output>,
    /// The HLS master playlist (`hlsUrl`).
    pub master: String,
    /// The progressive MP4 (`videoUrl`).
    pub progressive: String,
}

impl Ffmpeg {
    /// Probes `source` and refuses anything that is not a playable video within `limits`.
    pub async fn probe(
        &self,
        source: &Path,
        limits: &MediaLimits,
    ) -> Result<SourceFacts, StepError> {
        let _ = (source, limits);
        Err(StepError::Failed(anyhow::anyhow!("not built yet")))
    }

    /// The poster at `at_ms` (None: a representative frame of the first seconds), into `dir`.
    pub async fn poster(
        &self,
        source: &Path,
        facts: &SourceFacts,
        at_ms: Option<u64>,
        dir: &Path,
    ) -> Result<Poster, StepError> {
        let _ = (source, facts, at_ms, dir);
        Err(StepError::Failed(anyhow::anyhow!("not built yet")))
    }

    /// The mini version (`mini.mp4`) into `dir`.
    pub async fn mini(
        &self,
        source: &Path,
        facts: &SourceFacts,
        dir: &Path,
    ) -> Result<Output, StepError> {
        let _ = (source, facts, dir);
        Err(StepError::Failed(anyhow::anyhow!("not built yet")))
    }

    /// HLS renditions and the progressive MP4 into `dir`; `progress` is told 0–100 as it goes.
    pub async fn renditions(
        &self,
        source: &Path,
        facts: &SourceFacts,
        dir: &Path,
        progress: &(dyn Fn(u8) + Send + Sync),
    ) -> Result<Renditions, StepError> {
        let _ = (source, facts, dir, progress);
        Err(StepError::Failed(anyhow::anyhow!("not built yet")))
    }
}
