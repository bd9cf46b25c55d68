//! Test files made on the spot with ffmpeg's generated sources (`testsrc2` pictures, a `sine`
//! tone): real videos of each kind a merchant may upload, and files that only look like one.
//! The tests, the benchmarks and the demo store's seed use them, so no binary file is kept.
//!
//! ```no_run
//! # async fn example() -> anyhow::Result<()> {
//! use videoapp::media::samples::{self, Sample};
//! let dir = std::env::temp_dir();
//! let path = samples::make_in(Sample::Hevc, &dir).await?;
//! assert!(path.ends_with("hevc.mp4"));
//! # Ok(()) }
//! ```
//!
//! Each takes a second or two to make, the phone clip and 4K excepted; small ones are 640×360
//! (or 360×640 shown), 2 s long, 30 frames a second, with a 440 Hz tone in stereo.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::media::ffmpeg::run::{self, CommandLine, Stdout};

/// The longest making a sample may take (the 30 s phone clip takes seconds, not minutes).
const TIME_LIMIT: Duration = Duration::from_secs(600);
const SMALL: (u32, u32) = (640, 360);
const SECONDS: u32 = 2;
const RATE: u32 = 30;
/// H.264 made fast, in the 4:2:0 pixels every player decodes.
const H264_VIDEO: [&str; 6] = [
    "-c:v",
    "libx264",
    "-preset",
    "ultrafast",
    "-pix_fmt",
    "yuv420p",
];

/// A kind of file to make.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sample {
    /// H.264 with AAC sound when `audio`, in an MP4 with its index first.
    H264 {
        width: u32,
        height: u32,
        seconds: u32,
        audio: bool,
    },
    /// HEVC tagged `hvc1`, as an iPhone writes it, with AAC, in an MP4.
    Hevc,
    /// VP9 with Opus in a WebM, as browsers and screen recorders write it.
    Vp9,
    /// ProRes 422 Proxy (10-bit 4:2:2) with PCM sound in a MOV, as editors export it.
    ProRes,
    /// VP8 with Opus in a WebM written as a stream, as a browser records one: its header states
    /// no duration.
    Recorded,
    /// Stored landscape (640×360) with a display matrix that turns it a quarter clockwise,
    /// as a phone held upright records: shown 360×640, upright only when turned. Shown, its
    /// colour bars stand upright, red on the left and cyan on the right.
    Rotated,
    /// 30 frames a second for the first second, then 10: frames unevenly spaced (3 s).
    VariableFrameRate,
    /// H.264 without a sound track.
    NoAudio,
    /// 3840×2160 H.264 with AAC, 1 s.
    FourK,
    /// 1.5 s of black, then 2.5 s of picture (4 s, with sound throughout).
    BlackStart,
    /// H.264 with AAC in an MP4 with its index (`moov`) after its frames, as cameras and
    /// editors write one without `+faststart`.
    IndexLast { seconds: u32 },
    /// An MP4 with its index (`moov`) at the end, cut in the middle: unplayable.
    Corrupt,
    /// A PNG image under an `.mp4` name (see `file_name`).
    Renamed,
    /// A PNG image (320×240).
    Image,
    /// AAC sound in an M4A, no picture.
    AudioOnly,
    /// A file of zero bytes.
    Empty,
    /// What a phone records held upright: 1080×1920 H.264 (High) at 30 frames a second, about
    /// 15 Mbit/s, with AAC stereo sound.
    PhoneClip { seconds: u32 },
}

impl Sample {
    /// A file name that tells the sample apart from the others, with its kind's extension.
    pub fn file_name(&self) -> String {
        match self {
            Sample::H264 {
                width,
                height,
                seconds,
                audio,
            } => {
                let sound = if *audio { "" } else { "-muted" };
                format!("h264-{width}x{height}-{seconds}s{sound}.mp4")
            }
            Sample::Hevc => "hevc.mp4".into(),
            Sample::Vp9 => "vp9.webm".into(),
            Sample::ProRes => "prores.mov".into(),
            Sample::Recorded => "recorded.webm".into(),
            Sample::Rotated => "rotated.mp4".into(),
            Sample::VariableFrameRate => "vfr.mp4".into(),
            Sample::NoAudio => "no-audio.mp4".into(),
            Sample::FourK => "4k.mp4".into(),
            Sample::BlackStart => "black-start.mp4".into(),
            Sample::IndexLast { seconds } => format!("index-last-{seconds}s.mp4"),
            Sample::Corrupt => "corrupt.mp4".into(),
            Sample::Renamed => "renamed.mp4".into(),
            Sample::Image => "image.png".into(),
            Sample::AudioOnly => "audio.m4a".into(),
            Sample::Empty => "empty.mp4".into(),
            Sample::PhoneClip { seconds } => format!("phone-{seconds}s.mp4"),
        }
    }
}

/// Makes `sample` in `dir` under its `file_name`; returns its path.
pub async fn make_in(sample: Sample, dir: &Path) -> anyhow::Result<PathBuf> {
    let path = dir.join(sample.file_name());
    make(sample, &path).await?;
    Ok(path)
}

/// Makes `sample` as the file `dest` (replacing it).
pub async fn make(sample: Sample, dest: &Path) -> anyhow::Result<()> {
    let dest = std::path::absolute(dest).context("the sample's path")?;
    let dir = dest
        .parent()
        .context("a sample's path names a file")?
        .to_path_buf();
    tokio::fs::create_dir_all(&dir)
        .await
        .with_context(|| format!("creating {}", dir.display()))?;
    let (width, height) = SMALL;
    match sample {
        Sample::H264 {
            width,
            height,
            seconds,
            audio,
        } => h264(&dest, width, height, seconds, audio).await,
        Sample::NoAudio => h264(&dest, width, height, SECONDS, false).await,
        Sample::FourK => h264(&dest, 3840, 2160, 1, true).await,
        Sample::Hevc => {
            let mut line = generated(width, height, SECONDS, true);
            line.args(["-c:v", "libx265", "-preset", "ultrafast", "-tag:v", "hvc1"])
                .args(["-x265-params", "log-level=error", "-pix_fmt", "yuv420p"])
                .args(["-c:a", "aac", "-movflags", "+faststart", "-f", "mp4"])
                .output(&dest);
            ffmpeg(&line, &dir).await
        }
        Sample::Vp9 => {
            let video = [
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
                "-cpu-used",
                "8",
                "-b:v",
                "1M",
                "-pix_fmt",
                "yuv420p",
            ];
            encoded(SECONDS, &video, "libopus", "webm", &dest).await
        }
        Sample::ProRes => {
            let video = [
                "-c:v",
                "prores_ks",
                "-profile:v",
                "0",
                "-pix_fmt",
                "yuv422p10le",
            ];
            encoded(SECONDS, &video, "pcm_s16le", "mov", &dest).await
        }
        Sample::Recorded => {
            // Written to a pipe, the muxer cannot go back to fill in the duration.
            let mut line = generated(width, height, SECONDS, true);
            line.args(["-c:v", "libvpx", "-deadline", "realtime", "-cpu-used", "8"])
                .args(["-b:v", "1M", "-c:a", "libopus", "-f", "webm", "pipe:1"]);
            let bytes = run::run(&line, &dir, TIME_LIMIT, Stdout::Keep(64 << 20))
                .await
                .map_err(|e| anyhow::anyhow!("{e:#}"))?;
            tokio::fs::write(&dest, bytes).await?;
            Ok(())
        }
        Sample::Rotated => {
            // The upright picture is stored turned a quarter counter-clockwise; the display
            // matrix turns it back. ffmpeg writes that matrix only when copying a stream.
            let stored = scratch(&dest);
            let mut line = generated(height, width, SECONDS, true);
            line.args(["-vf", "transpose=cclock"]);
            h264_output(&mut line, &stored);
            ffmpeg(&line, &dir).await?;
            let mut line = CommandLine::ffmpeg(threads());
            line.input(&stored, "mov")
                .args(["-map", "0", "-c", "copy", "-metadata:s:v:0", "rotate=270"])
                .args(["-f", "mp4"])
                .output(&dest);
            let made = ffmpeg(&line, &dir).await;
            remove(&stored).await?;
            made
        }
        Sample::VariableFrameRate => {
            let mut line = generated(width, height, 3, true);
            line.args(["-vf", "select='lt(t,1)+not(mod(n,3))'", "-fps_mode", "vfr"]);
            h264_output(&mut line, &dest);
            ffmpeg(&line, &dir).await
        }
        Sample::BlackStart => {
            let mut line = CommandLine::ffmpeg(threads());
            let picture = format!(
                "color=c=black:s={width}x{height}:r={RATE}:d=1.5[black];\
                 testsrc2=s={width}x{height}:r={RATE}:d=2.5[picture];\
                 [black][picture]concat=n=2:v=1:a=0"
            );
            line.args(["-f", "lavfi", "-i", &picture])
                .args(["-f", "lavfi", "-i", &tone(4)]);
            h264_output(&mut line, &dest);
            ffmpeg(&line, &dir).await
        }
        Sample::IndexLast { seconds } => {
            // Without +faststart the index is written last.
            encoded(seconds, &H264_VIDEO, "aac", "mp4", &dest).await
        }
        Sample::Corrupt => {
            // Cut in the middle, an index-last MP4 has no index.
            let whole = scratch(&dest);
            Box::pin(make(Sample::IndexLast { seconds: SECONDS }, &whole)).await?;
            let bytes = tokio::fs::read(&whole).await?;
            remove(&whole).await?;
            tokio::fs::write(&dest, &bytes[..bytes.len() / 2]).await?;
            Ok(())
        }
        Sample::Renamed | Sample::Image => {
            let mut line = CommandLine::ffmpeg(threads());
            line.args(["-f", "lavfi", "-i", "testsrc2=s=320x240:r=1:d=1"])
                .args([
                    "-frames:v",
                    "1",
                    "-c:v",
                    "png",
                    "-update",
                    "1",
                    "-f",
                    "image2",
                ])
                .output(&dest);
            ffmpeg(&line, &dir).await
        }
        Sample::AudioOnly => {
            let mut line = CommandLine::ffmpeg(threads());
            line.args(["-f", "lavfi", "-i", &tone(SECONDS)])
                .args(["-c:a", "aac", "-ac", "2", "-f", "mp4"])
                .output(&dest);
            ffmpeg(&line, &dir).await
        }
        Sample::Empty => {
            tokio::fs::write(&dest, b"").await?;
            Ok(())
        }
        Sample::PhoneClip { seconds } => {
            let mut line = generated(1080, 1920, seconds, true);
            line.args([
                "-c:v",
                "libx264",
                "-preset",
                "superfast",
                "-profile:v",
                "high",
            ])
            .args(["-crf", "20", "-pix_fmt", "yuv420p"])
            .args(["-c:a", "aac", "-b:a", "128k", "-ac", "2"])
            .args(["-movflags", "+faststart", "-f", "mp4"])
            .output(&dest);
            ffmpeg(&line, &dir).await
        }
    }
}

/// The test picture and, with `audio`, the tone, as inputs 0 and 1.
fn generated(width: u32, height: u32, seconds: u32, audio: bool) -> CommandLine {
    let mut line = CommandLine::ffmpeg(threads());
    let picture = format!("testsrc2=s={width}x{height}:r={RATE}:d={seconds}");
    line.args(["-f", "lavfi", "-i", &picture]);
    if audio {
        line.args(["-f", "lavfi", "-i", &tone(seconds)]);
    }
    line
}

fn tone(seconds: u32) -> String {
    format!("sine=frequency=440:sample_rate=48000:duration={seconds}")
}

async fn h264(
    dest: &Path,
    width: u32,
    height: u32,
    seconds: u32,
    audio: bool,
) -> anyhow::Result<()> {
    let mut line = generated(width, height, seconds, audio);
    h264_output(&mut line, dest);
    ffmpeg(&line, dest.parent().unwrap_or(Path::new("/"))).await
}

/// The small test picture with the tone, `seconds` long, encoded by the `video` options and
/// `audio` codec into `dest` in the container `format`.
async fn encoded(
    seconds: u32,
    video: &[&str],
    audio: &str,
    format: &str,
    dest: &Path,
) -> anyhow::Result<()> {
    let (width, height) = SMALL;
    let mut line = generated(width, height, seconds, true);
    line.args(video)
        .args(["-c:a", audio, "-f", format])
        .output(dest);
    ffmpeg(&line, dest.parent().unwrap_or(Path::new("/"))).await
}

fn h264_output(line: &mut CommandLine, dest: &Path) {
    line.args(H264_VIDEO)
        .args(["-c:a", "aac", "-ac", "2"])
        .args(["-movflags", "+faststart", "-f", "mp4"])
        .output(dest);
}

async fn ffmpeg(line: &CommandLine, dir: &Path) -> anyhow::Result<()> {
    run::run(line, dir, TIME_LIMIT, Stdout::Ignore)
        .await
        .map_err(|e| anyhow::anyhow!("{e:#}"))?;
    Ok(())
}

/// A file beside `dest` for a step on the way to it.
fn scratch(dest: &Path) -> PathBuf {
    let mut name = dest.file_name().unwrap_or_default().to_os_string();
    name.push(".part");
    dest.with_file_name(name)
}

async fn remove(path: &Path) -> anyhow::Result<()> {
    tokio::fs::remove_file(path)
        .await
        .with_context(|| format!("removing {}", path.display()))
}

fn threads() -> u32 {
    std::thread::available_parallelism().map_or(2, |n| n.get() as u32)
}
