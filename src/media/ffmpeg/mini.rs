//! The mini version: the first seconds, muted, small, for a card to play while it is seen.

use std::path::Path;

use super::picture;
use super::probe::SOURCE_DEMUXERS;
use super::run::{CommandLine, Stdout};
use super::{absolute, Ffmpeg, Output, SourceFacts, StepError};

/// Long enough to show the product move, short enough to loop without notice.
const SECONDS: u32 = 5;
const SHORT_SIDE: u32 = 360;
/// With a buffer of the same size, the file is at most (rate × length + buffer) / 8 bytes:
/// (500 × 5 + 500) kbit / 8 = 375 KB, under the 400 KB a card may cost a shopper.
const MAX_KBITS_PER_SECOND: u32 = 500;

impl Ffmpeg {
    /// The mini version (`mini.mp4`) into `dir`.
    pub async fn mini(
        &self,
        source: &Path,
        facts: &SourceFacts,
        dir: &Path,
    ) -> Result<Output, StepError> {
        let (source, dir) = absolute(source, dir)?;
        let output = Output::new(&dir, "mini.mp4".to_string(), "video/mp4");
        let size = picture::fit(facts, SHORT_SIDE);
        let rate = picture::output_rate(facts);
        // One keyframe, the first: the clip starts cleanly and loops back to a whole picture.
        let gop = (rate * f64::from(SECONDS)).ceil() as u32 + 1;
        let kbits = format!("{MAX_KBITS_PER_SECOND}k");

        let mut line = CommandLine::ffmpeg(self.threads);
        line.args(["-max_pixels", &picture::max_pixels(facts).to_string()])
            .args(["-t", &SECONDS.to_string()])
            .input(&source, SOURCE_DEMUXERS)
            .args([
                "-filter_complex",
                &format!(
                    "[0:V:0]{},{}[mini]",
                    picture::fps_filter(rate),
                    picture::scale_filter(size)
                ),
            ])
            .args(["-map", "[mini]", "-an", "-sn", "-dn"])
            .args([
                "-c:v",
                "libx264",
                "-preset",
                "veryfast",
                "-profile:v",
                "high",
            ])
            .args(["-crf", "26", "-maxrate", &kbits, "-bufsize", &kbits])
            .args(["-g", &gop.to_string()])
            .args(["-movflags", "+faststart", "-f", "mp4"])
            .output(&output.path);
        super::run::run(&line, &dir, self.timeout, Stdout::Ignore)
            .await
            .map_err(anyhow::Error::from)?;
        self.check_h264(&output.path, size, &dir).await?;
        Ok(output)
    }
}
