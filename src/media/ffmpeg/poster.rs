//! The poster: one frame, JPEG and WebP, at the card's size and twice it.
//!
//! Without a chosen moment the frame is the most representative of the first seconds that are
//! not black: frames are sampled at up to 10 a second from the first 10 s, those mostly dark
//! (`blackframe`) are dropped, and of the 3 s that follow the first bright one, `thumbnail`
//! keeps the frame nearest the average histogram: a settled picture rather than a fade, a
//! transition or a frame blurred by a whip pan, which all stray from it.

use std::path::Path;

use super::picture::{self, Size};
use super::probe::SOURCE_DEMUXERS;
use super::run::{CommandLine, Stdout};
use super::{absolute, Ffmpeg, Output, Poster, SourceFacts, StepError};

/// Short sides of the card (the storefront's largest card is 220 CSS px wide at 9:16, so a
/// portrait poster of 360 px covers it) and of twice it, for dense screens. Files are named by
/// the short side they have: `poster-360.jpg`, `poster-720.webp`.
const SHORT_SIDES: [u32; 2] = [360, 720];
/// How far into the source a representative frame is looked for.
const SEARCH_SECONDS: u32 = 10;
/// How long after the first bright frame the choice is made from.
const CHOICE_SECONDS: u32 = 3;
/// Analysis needs no more frames than this a second.
const SAMPLE_RATE: f64 = 10.0;
/// A frame is dark when most of its pixels are: luma below 32 (of 255) for more than 90 %.
const DARK_PIXELS_PERCENT: u32 = 90;

/// One size of the poster, in both formats.
struct Still {
    size: Size,
    jpeg: Output,
    webp: Output,
}

impl Ffmpeg {
    /// The poster at `at_ms` (None: a representative frame of the first seconds), into `dir`.
    pub async fn poster(
        &self,
        source: &Path,
        facts: &SourceFacts,
        at_ms: Option<u64>,
        dir: &Path,
    ) -> Result<Poster, StepError> {
        let (source, dir) = absolute(source, dir)?;
        let mut sizes: Vec<Size> = SHORT_SIDES
            .iter()
            .map(|s| picture::fit(facts, *s))
            .collect();
        sizes.dedup();
        let stills: Vec<Still> = sizes
            .into_iter()
            .map(|size| {
                let short = size.short_side();
                Still {
                    size,
                    jpeg: Output::new(&dir, format!("poster-{short}.jpg"), "image/jpeg"),
                    webp: Output::new(&dir, format!("poster-{short}.webp"), "image/webp"),
                }
            })
            .collect();
        let Some(largest) = stills.last() else {
            return Err(anyhow::anyhow!("no poster size").into());
        };
        let main = largest.jpeg.name.clone();
        let top = largest.size;

        match at_ms {
            Some(at_ms) => {
                // A moment past the end shows the last frames rather than nothing.
                let at_ms = at_ms.min(facts.duration_ms.saturating_sub(250));
                self.write_poster(&source, facts, Some(at_ms), "", &stills, &dir)
                    .await?;
            }
            None => {
                let sampling = format!(
                    "fps={SAMPLE_RATE:.0},scale={}:{}:flags=bicubic,",
                    top.width, top.height
                );
                let frames = (SAMPLE_RATE as u32 * CHOICE_SECONDS).to_string();
                let bright = format!(
                    "{sampling}blackframe=amount=0:threshold=32,\
                     metadata=mode=select:key=lavfi.blackframe.pblack:\
                     value={DARK_PIXELS_PERCENT}:function=less,\
                     trim=duration={CHOICE_SECONDS},thumbnail={frames},"
                );
                self.write_poster(&source, facts, None, &bright, &stills, &dir)
                    .await?;
                if !all_written(&stills).await {
                    // Dark from start to end of the search: the most representative of its
                    // first seconds all the same.
                    let any =
                        format!("{sampling}trim=duration={CHOICE_SECONDS},thumbnail={frames},");
                    self.write_poster(&source, facts, None, &any, &stills, &dir)
                        .await?;
                }
            }
        }
        if !all_written(&stills).await {
            return Err(anyhow::anyhow!("ffmpeg wrote no poster").into());
        }
        let outputs = stills
            .into_iter()
            .flat_map(|still| [still.jpeg, still.webp])
            .collect();
        Ok(Poster { outputs, main })
    }

    /// One run: the frame `choose` keeps (a filter chain ending in `,`; empty: the first frame
    /// decoded), split into every size and format.
    async fn write_poster(
        &self,
        source: &Path,
        facts: &SourceFacts,
        at_ms: Option<u64>,
        choose: &str,
        stills: &[Still],
        dir: &Path,
    ) -> Result<(), StepError> {
        let mut line = CommandLine::ffmpeg(self.threads);
        line.args(["-max_pixels", &picture::max_pixels(facts).to_string()]);
        match at_ms {
            Some(ms) => line.args(["-ss", &format!("{:.3}", ms as f64 / 1000.0)]),
            None => line.args(["-t", &SEARCH_SECONDS.to_string()]),
        };
        line.input(source, SOURCE_DEMUXERS);

        let branches = stills.len() * 2;
        let mut graph = format!("[0:V:0]{choose}split={branches}");
        for i in 0..branches {
            graph.push_str(&format!("[s{i}]"));
        }
        for (i, still) in stills.iter().enumerate() {
            let Size { width, height } = still.size;
            let scale = format!("scale={width}:{height}:flags=lanczos,setsar=1");
            // JPEG wants full-range pixels; WebP takes the video's own.
            graph.push_str(&format!(";[s{}]{scale},format=yuvj420p[jpeg{i}]", 2 * i));
            graph.push_str(&format!(";[s{}]{scale},format=yuv420p[webp{i}]", 2 * i + 1));
        }
        line.args(["-filter_complex", &graph]);
        for (i, still) in stills.iter().enumerate() {
            line.args(["-map", &format!("[jpeg{i}]"), "-c:v", "mjpeg", "-q:v", "3"])
                .args(["-frames:v", "1", "-update", "1", "-f", "image2"])
                .output(&still.jpeg.path);
            line.args([
                "-map",
                &format!("[webp{i}]"),
                "-c:v",
                "libwebp",
                "-quality",
                "80",
            ])
            .args(["-frames:v", "1", "-update", "1", "-f", "image2"])
            .output(&still.webp.path);
        }
        for still in stills {
            remove_if_there(&still.jpeg.path).await?;
            remove_if_there(&still.webp.path).await?;
        }
        super::run::run(&line, dir, self.timeout, Stdout::Ignore)
            .await
            .map_err(anyhow::Error::from)?;
        Ok(())
    }
}

async fn all_written(stills: &[Still]) -> bool {
    for output in stills.iter().flat_map(|s| [&s.jpeg, &s.webp]) {
        match tokio::fs::metadata(&output.path).await {
            Ok(meta) if meta.len() > 0 => {}
            _ => return false,
        }
    }
    true
}

async fn remove_if_there(path: &Path) -> anyhow::Result<()> {
    match tokio::fs::remove_file(path).await {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e.into()),
        _ => Ok(()),
    }
}
