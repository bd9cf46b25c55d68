//! ffprobe and ffmpeg, run as locked-down child processes: only the `file` and `pipe` protocols
//! (and `concatf` over a list of an upload's own parts, `run::input_url`), no standard input,
//! bounded threads, a wall-clock limit, in a private working directory, and no argument taken
//! from user text (inputs and outputs are paths this service chose).
//!
//! Every output is H.264 (High, 4:2:0, 8-bit) with AAC, from the source as shown: ffmpeg turns
//! a rotated phone video upright as it decodes, and pixels are made square. Nothing of the
//! source's metadata is copied. The outputs of a run, by name:
//!
//! - poster: `poster-360.jpg`, `poster-360.webp`, `poster-720.jpg`, `poster-720.webp` (named by
//!   their short side, never larger than the source's), the largest JPEG the main one;
//! - mini version: `mini.mp4`;
//! - renditions: `hls/master.m3u8`; per rung `hls/{360,540,720,1080}/playlist.m3u8`, its
//!   `init_N.mp4` and `seg-NNN.m4s`; the shared sound `hls/audio/…` likewise; and the
//!   progressive `video-720.mp4` (`video-540.mp4` or smaller for smaller sources).

mod fragments;
mod mini;
mod picture;
mod poster;
mod probe;
mod renditions;
pub(crate) mod run;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::config::MediaLimits;
use crate::media::Refusal;
use picture::Size;
use run::{CommandLine, RunError, Stdout};

/// The most ffprobe may print for one file: a real one's streams and format take a few KB.
const PROBE_OUTPUT_LIMIT: usize = 1 << 20;

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
    /// The sound is AAC-LC that every browser plays: the renditions copy it, not encode it.
    pub audio_copyable: bool,
    /// ffprobe's name of the video codec (`h264`, `hevc`, `vp9`, …).
    pub video_codec: String,
    /// Clockwise degrees the source asks to be turned when shown (0, 90, 180, 270).
    pub rotation: u32,
}

/// A file a step made, to be stored under the run's prefix as `name`.
#[derive(Debug, Clone)]
pub struct Output {
    /// Relative object name: `poster-720.jpg`, `mini.mp4`, `hls/master.m3u8`, `video-720.mp4`.
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

impl Output {
    fn new(dir: &Path, name: String, content_type: &'static str) -> Output {
        Output {
            path: dir.join(&name),
            name,
            content_type,
        }
    }
}

impl From<RunError> for StepError {
    fn from(e: RunError) -> StepError {
        StepError::Failed(e.into())
    }
}

impl Ffmpeg {
    /// Probes `source` and refuses anything that is not a playable video within `limits`.
    pub async fn probe(
        &self,
        source: &Path,
        limits: &MediaLimits,
    ) -> Result<SourceFacts, StepError> {
        let source = std::path::absolute(source).context("the source's path")?;
        let size = tokio::fs::metadata(&source)
            .await
            .with_context(|| format!("reading {}", source.display()))?
            .len();
        if size == 0 {
            return Err(StepError::Refused(Refusal::unprocessable(
                "EMPTY_FILE",
                "This file is empty (0 bytes). Upload the video again.",
            )));
        }
        let dir = source.parent().unwrap_or(Path::new("/"));
        let mut line = CommandLine::ffprobe(self.threads);
        // Decoders allocate no frame beyond the largest we take, so a decompression bomb is
        // refused from its headers before any frame of it is made.
        let side = u64::from(limits.max_side) + 128;
        line.args(["-max_pixels", &(side * side).to_string()])
            .args(["-show_streams", "-show_format", "-of", "json"])
            .probe_input(&source, probe::PROBE_DEMUXERS);
        let json = match run::run(&line, dir, self.timeout, Stdout::Keep(PROBE_OUTPUT_LIMIT)).await
        {
            Ok(json) => json,
            // ffprobe could not read it: frames beyond the largest we take, or a file
            // truncated, damaged, or in a format we do not know.
            Err(e) if e.exited_with_error() => {
                tracing::debug!(error = format!("{e:#}"), "ffprobe refused a source");
                let refusal = e
                    .stderr()
                    .and_then(|stderr| probe::too_many_pixels(stderr, limits))
                    .unwrap_or_else(probe::damaged);
                return Err(StepError::Refused(refusal));
            }
            Err(e) => return Err(e.into()),
        };
        let probed: probe::Probed =
            serde_json::from_slice(&json).context("reading ffprobe's answer")?;
        let classified = probe::classify(&probed, limits).map_err(StepError::Refused)?;
        let mut facts = classified.facts;
        if !classified.duration_known {
            facts.duration_ms = self.measure_duration(&source, &facts, dir).await?;
            probe::check_duration(facts.duration_ms, limits).map_err(StepError::Refused)?;
        }
        Ok(facts)
    }

    /// The length of a source whose container does not state it, by reading (not decoding)
    /// its video to the end.
    async fn measure_duration(
        &self,
        source: &Path,
        facts: &SourceFacts,
        dir: &Path,
    ) -> Result<u64, StepError> {
        let end = std::sync::atomic::AtomicU64::new(0);
        let on_time = |us: u64| {
            end.fetch_max(us, std::sync::atomic::Ordering::Relaxed);
        };
        let mut line = CommandLine::ffmpeg(self.threads);
        line.args(["-max_pixels", &picture::max_pixels(facts).to_string()])
            .input(source, probe::SOURCE_DEMUXERS)
            .args([
                "-map",
                "0:V:0",
                "-c",
                "copy",
                "-f",
                "null",
                "-progress",
                "pipe:1",
            ])
            .arg("-");
        match run::run(&line, dir, self.timeout, Stdout::Progress(&on_time)).await {
            Ok(_) => Ok(end.into_inner() / 1000),
            Err(e) if e.exited_with_error() => Err(StepError::Refused(probe::damaged())),
            Err(e) => Err(e.into()),
        }
    }

    /// Fails unless `path` holds H.264 at `size`: ffmpeg's exit code alone does not prove an
    /// output is what was asked for.
    async fn check_h264(&self, path: &Path, size: Size, dir: &Path) -> Result<(), StepError> {
        let mut line = CommandLine::ffprobe(self.threads);
        line.args(["-select_streams", "v:0", "-show_streams", "-of", "json"])
            .probe_input(path, "mov");
        let json = run::run(&line, dir, self.timeout, Stdout::Keep(PROBE_OUTPUT_LIMIT)).await?;
        let probed: probe::Probed =
            serde_json::from_slice(&json).context("reading ffprobe's answer")?;
        let seen = probed.picture();
        if seen != Some(("h264", size.width, size.height)) {
            return Err(anyhow::anyhow!(
                "{} is {seen:?}, not H.264 at {}x{}",
                path.display(),
                size.width,
                size.height
            )
            .into());
        }
        Ok(())
    }
}

/// The source and output directory as absolute paths: the children run elsewhere (in `dir` or
/// below it), and outputs are listed by where they are.
fn absolute(source: &Path, dir: &Path) -> anyhow::Result<(PathBuf, PathBuf)> {
    Ok((
        std::path::absolute(source).context("the source's path")?,
        std::path::absolute(dir).context("the output directory's path")?,
    ))
}
