//! HLS renditions and the progressive MP4.
//!
//! One ffmpeg run decodes the source once and encodes every rung of the ladder from it: the
//! frames are scaled down step by step (each rung from the one above, cheaper than each from
//! the source), every rung gets a keyframe at every 2 s and nowhere else, so segments of all
//! rungs start at the same instants. The sound is in every rung's segments rather than a
//! rendition of its own: a player then starts from one playlist, one init segment and one
//! segment, where a separate audio rendition costs it three more round trips before the first
//! frame. Sound that is AAC-LC already (a phone's) is copied into each rung; other sound is
//! encoded to AAC at 128 kbit/s once per rung (an encoder's output goes to one variant only).
//! The progressive MP4 is then a copy of the 720 rung into one file, not another encode. The
//! master playlist is written here, from what the run made: each rung's codec string from its
//! own `avcC` and its bandwidth from its segments.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{anyhow, Context};

use super::picture::{self, Size};
use super::probe::SOURCE_DEMUXERS;
use super::run::{CommandLine, Stdout};
use super::{absolute, Ffmpeg, Output, Renditions, SourceFacts, StepError};

/// Short sides of the ladder's rungs; a source gets those up to its own (a 4K source stops at
/// 1080), or one rung of its own size when it is smaller than them all.
const RUNGS: [u32; 4] = [360, 540, 720, 1080];
/// Bits per pixel of each rung (by its short side): smaller pictures need more bits for each of
/// their pixels. At 30 frames a second these give 0.83, 1.56, 2.49 and 4.98 Mbit/s for 9:16.
const BITS_PER_PIXEL: [(u32, f64); 4] = [(360, 0.12), (540, 0.10), (720, 0.09), (1080, 0.08)];
/// The rung a player starts on: sharp enough on a phone, light enough on a slow network.
const STARTING_RUNG: u32 = 540;
/// The progressive MP4's rung, or the largest below it.
const PROGRESSIVE_RUNG: u32 = 720;
const SEGMENT_SECONDS: u32 = 2;
const AUDIO_KBITS: u32 = 128;
/// The audio codec string of AAC-LC, which the run encodes.
const AAC_CODEC: &str = "mp4a.40.2";
/// Of the run's progress, the encode's share; the remux and playlists take the rest.
const ENCODE_SHARE: u64 = 95;

struct Rung {
    /// The name of its folder under `hls/`: its short side.
    name: String,
    size: Size,
    max_kbits: u32,
}

/// A media playlist the run wrote, as read back.
struct MediaPlaylist {
    init: String,
    segments: Vec<(String, f64)>,
}

impl Ffmpeg {
    /// HLS renditions and the progressive MP4 into `dir`; `progress` is told 0–100 as it goes.
    pub async fn renditions(
        &self,
        source: &Path,
        facts: &SourceFacts,
        dir: &Path,
        progress: &(dyn Fn(u8) + Send + Sync),
    ) -> Result<Renditions, StepError> {
        let (source, dir) = absolute(source, dir)?;
        let rate = picture::output_rate(facts);
        let rungs = ladder(facts, rate);
        let hls = dir.join("hls");
        for rung in &rungs {
            create_dir(&hls.join(&rung.name)).await?;
        }

        progress(0);
        let reported = std::sync::atomic::AtomicU8::new(0);
        let duration_us = facts.duration_ms.max(1) * 1000;
        let on_time = |out_time_us: u64| {
            let percent = (out_time_us.min(duration_us) * ENCODE_SHARE / duration_us) as u8;
            if percent > reported.fetch_max(percent, std::sync::atomic::Ordering::Relaxed) {
                progress(percent);
            }
        };
        let line = self.ladder_command(&source, facts, rate, &rungs);
        super::run::run(&line, &hls, self.timeout, Stdout::Progress(&on_time))
            .await
            .map_err(anyhow::Error::from)?;

        let mut outputs = Vec::new();
        let mut variants = Vec::new();
        for rung in &rungs {
            let playlist = read_media_playlist(&hls.join(&rung.name)).await?;
            split_segments(&hls.join(&rung.name), &playlist).await?;
            let codec = avc_codec(&hls.join(&rung.name).join(&playlist.init)).await?;
            variants.push(Variant {
                name: rung.name.clone(),
                size: rung.size,
                codec,
                bandwidth: bandwidth(&hls.join(&rung.name), &playlist).await?,
            });
            list_outputs(&dir, &rung.name, &playlist, &mut outputs);
        }
        let master = Output::new(
            &dir,
            "hls/master.m3u8".into(),
            "application/vnd.apple.mpegurl",
        );
        let text = master_playlist(&variants, facts.has_audio, rate);
        tokio::fs::write(&master.path, text)
            .await
            .context("writing the master playlist")?;
        outputs.insert(0, master.clone());

        let progressive_rung = rungs
            .iter()
            .rev()
            .find(|r| r.size.short_side() <= PROGRESSIVE_RUNG)
            .unwrap_or(&rungs[0]);
        let progressive = Output::new(
            &dir,
            format!("video-{}.mp4", progressive_rung.name),
            "video/mp4",
        );
        self.remux_progressive(&hls, &progressive_rung.name, &progressive.path)
            .await?;
        self.check_h264(&progressive.path, progressive_rung.size, &dir)
            .await?;
        outputs.push(progressive.clone());
        progress(100);

        Ok(Renditions {
            outputs,
            master: master.name,
            progressive: progressive.name,
        })
    }

    /// The one run that encodes every rung (and the sound) into `hls/`, its working directory.
    fn ladder_command(
        &self,
        source: &Path,
        facts: &SourceFacts,
        rate: f64,
        rungs: &[Rung],
    ) -> CommandLine {
        let mut line = CommandLine::ffmpeg(self.threads);
        line.args(["-max_pixels", &picture::max_pixels(facts).to_string()])
            .input(source, SOURCE_DEMUXERS);

        // Largest first, each smaller rung scaled from the one above it.
        let mut graph = format!("[0:V:0]{},", picture::fps_filter(rate));
        for (i, rung) in rungs.iter().enumerate().rev() {
            let flags = if i + 1 == rungs.len() {
                "bicubic"
            } else {
                "bilinear"
            };
            let Size { width, height } = rung.size;
            write!(
                graph,
                "scale={width}:{height}:flags={flags},setsar=1,format=yuv420p"
            )
            .ok();
            if i == 0 {
                graph.push_str("[v0]");
            } else {
                write!(graph, ",split=2[v{i}][down{i}];[down{i}]").ok();
            }
        }
        line.args(["-filter_complex", &graph]);
        for i in 0..rungs.len() {
            line.args(["-map", &format!("[v{i}]")]);
        }
        if facts.has_audio {
            // The sound once for each rung: a stream goes into one variant only.
            for _ in rungs {
                line.args(["-map", "0:a:0"]);
            }
        }

        let gop = (rate * f64::from(SEGMENT_SECONDS)).round().max(1.0) as u32;
        line.args([
            "-c:v",
            "libx264",
            "-profile:v",
            "high",
            "-pix_fmt",
            "yuv420p",
        ])
        // superfast: the whole ladder in about the time one veryfast 1080p encode takes.
        .args(["-preset", "superfast", "-crf", "23"])
        // A keyframe at every segment's start and nowhere else (no scene-cut keyframes),
        // GOPs closed, so every rung's segments begin at the same instants.
        .args(["-g", &gop.to_string(), "-keyint_min", &gop.to_string()])
        .args(["-sc_threshold", "0", "-flags", "+cgop"])
        .args([
            "-force_key_frames",
            &format!("expr:gte(t,n_forced*{SEGMENT_SECONDS})"),
        ]);
        for (i, rung) in rungs.iter().enumerate() {
            line.args([
                format!("-maxrate:v:{i}"),
                format!("{}k", rung.max_kbits),
                format!("-bufsize:v:{i}"),
                format!("{}k", rung.max_kbits * 2),
            ]);
        }
        if facts.audio_copyable {
            line.args(["-c:a", "copy"]);
        } else if facts.has_audio {
            line.args(["-c:a", "aac", "-b:a", &format!("{AUDIO_KBITS}k")])
                .args(["-ac", "2", "-ar", "48000"]);
        }

        let streams: Vec<String> = rungs
            .iter()
            .enumerate()
            .map(|(i, rung)| {
                let sound = if facts.has_audio {
                    format!(",a:{i}")
                } else {
                    String::new()
                };
                format!("v:{i}{sound},name:{}", rung.name)
            })
            .collect();
        line.args(["-f", "hls", "-hls_segment_type", "fmp4"])
            .args(["-hls_time", &SEGMENT_SECONDS.to_string()])
            .args(["-hls_playlist_type", "vod", "-hls_list_size", "0"])
            .args(["-hls_flags", "independent_segments"])
            .args(["-hls_fmp4_init_filename", "init.mp4"])
            .args(["-hls_segment_filename", "%v/seg-%03d.m4s"])
            .args(["-var_stream_map", &streams.join(" ")])
            .args(["-progress", "pipe:1"])
            .args(["-map_metadata", "-1", "-map_chapters", "-1"])
            .args(["-threads", &self.threads.to_string()])
            .args(["-protocol_whitelist", "file,pipe"])
            // Written relative to `hls/`, the working directory: the muxer makes each
            // variant's name from this pattern, which a `file:` prefix would end up in.
            .arg("%v/playlist.m3u8");
        line
    }

    /// The rung (its video and its sound), copied into one MP4 with its index first.
    async fn remux_progressive(
        &self,
        hls: &Path,
        rung: &str,
        dest: &Path,
    ) -> Result<(), StepError> {
        // The playlist is this run's own; reading it opens its segments, nothing else.
        let mut line = CommandLine::ffmpeg(self.threads);
        line.args(["-f", "hls"])
            .input(&hls.join(rung).join("playlist.m3u8"), "hls,mov");
        line.args(["-map", "0:v:0", "-map", "0:a:0?"])
            .args(["-c", "copy", "-movflags", "+faststart", "-f", "mp4"])
            .output(dest);
        super::run::run(&line, hls, self.timeout, Stdout::Ignore)
            .await
            .map_err(anyhow::Error::from)?;
        Ok(())
    }
}

/// The rungs for this source, smallest first.
fn ladder(facts: &SourceFacts, rate: f64) -> Vec<Rung> {
    let source_short = facts.width.min(facts.height);
    let mut shorts: Vec<u32> = RUNGS.into_iter().filter(|s| *s <= source_short).collect();
    if shorts.is_empty() {
        shorts.push(source_short);
    }
    // Bits are spent by the frame; a slow source's frames need about as many as a fast one's.
    let bits_rate = rate.max(24.0);
    shorts
        .into_iter()
        .map(|short| {
            let size = picture::fit(facts, short);
            let bpp = BITS_PER_PIXEL
                .iter()
                .find(|(rung, _)| size.short_side() <= *rung)
                .map_or(0.08, |(_, bpp)| *bpp);
            let bits = f64::from(size.width) * f64::from(size.height) * bits_rate * bpp;
            Rung {
                name: size.short_side().to_string(),
                size,
                max_kbits: (bits / 1000.0).round().max(100.0) as u32,
            }
        })
        .collect()
}

/// Rewrites each segment with its first frame in a fragment of its own (`fragments`), so a
/// player shows it before the rest of the segment has arrived.
async fn split_segments(folder: &Path, playlist: &MediaPlaylist) -> Result<(), StepError> {
    for (segment, _) in &playlist.segments {
        let path = folder.join(segment);
        let bytes = tokio::fs::read(&path)
            .await
            .with_context(|| format!("reading {}", path.display()))?;
        match super::fragments::split_first_samples(&bytes) {
            Some(split) => tokio::fs::write(&path, split)
                .await
                .with_context(|| format!("writing {}", path.display()))?,
            None => tracing::warn!(segment = %path.display(), "a segment of an unexpected layout"),
        }
    }
    Ok(())
}

async fn create_dir(path: &Path) -> Result<(), StepError> {
    tokio::fs::create_dir_all(path)
        .await
        .with_context(|| format!("creating {}", path.display()))?;
    Ok(())
}

/// Reads the init segment and segments (with their durations) of a playlist the run wrote.
async fn read_media_playlist(folder: &Path) -> Result<MediaPlaylist, StepError> {
    let path = folder.join("playlist.m3u8");
    let text = tokio::fs::read_to_string(&path)
        .await
        .with_context(|| format!("reading {}", path.display()))?;
    parse_media_playlist(&text)
        .with_context(|| format!("in {}", path.display()))
        .map_err(StepError::from)
}

fn parse_media_playlist(text: &str) -> anyhow::Result<MediaPlaylist> {
    let mut init = None;
    let mut segments = Vec::new();
    let mut duration = None;
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        if let Some(map) = line.strip_prefix("#EXT-X-MAP:") {
            let uri = map
                .split_once("URI=\"")
                .and_then(|(_, rest)| rest.split_once('"'))
                .map(|(uri, _)| uri)
                .ok_or_else(|| anyhow!("an EXT-X-MAP without a URI"))?;
            init = Some(plain_name(uri)?);
        } else if let Some(extinf) = line.strip_prefix("#EXTINF:") {
            let seconds = extinf.split(',').next().unwrap_or_default().trim();
            duration = Some(seconds.parse::<f64>().context("an EXTINF duration")?);
        } else if !line.starts_with('#') {
            let seconds = duration
                .take()
                .ok_or_else(|| anyhow!("a segment without EXTINF"))?;
            segments.push((plain_name(line)?, seconds));
        }
    }
    let init = init.ok_or_else(|| anyhow!("no EXT-X-MAP"))?;
    if segments.is_empty() {
        return Err(anyhow!("no segments"));
    }
    Ok(MediaPlaylist { init, segments })
}

/// A file name in the playlist's own folder, as the muxer writes them.
fn plain_name(uri: &str) -> anyhow::Result<String> {
    if uri.is_empty() || uri.contains(['/', '\\', ':']) || uri.starts_with('.') {
        return Err(anyhow!("unexpected name {uri:?}"));
    }
    Ok(uri.to_string())
}

fn list_outputs(dir: &Path, folder: &str, playlist: &MediaPlaylist, outputs: &mut Vec<Output>) {
    let name = |file: &str| format!("hls/{folder}/{file}");
    outputs.push(Output::new(
        dir,
        name("playlist.m3u8"),
        "application/vnd.apple.mpegurl",
    ));
    outputs.push(Output::new(dir, name(&playlist.init), "video/mp4"));
    for (segment, _) in &playlist.segments {
        outputs.push(Output::new(dir, name(segment), "video/iso.segment"));
    }
}

/// Bits per second: the peak over segments (what a player must sustain) and the average.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bandwidth {
    peak: u64,
    average: u64,
}

async fn bandwidth(folder: &Path, playlist: &MediaPlaylist) -> Result<Bandwidth, StepError> {
    let (mut peak, mut bits, mut seconds) = (0.0f64, 0.0f64, 0.0f64);
    for (segment, duration) in &playlist.segments {
        let path = folder.join(segment);
        let bytes = tokio::fs::metadata(&path)
            .await
            .with_context(|| format!("reading {}", path.display()))?
            .len();
        let segment_bits = bytes as f64 * 8.0;
        // A last segment of a few frames says little of the rate a player must sustain.
        if *duration >= 0.5 || playlist.segments.len() == 1 {
            peak = peak.max(segment_bits / duration.max(0.001));
        }
        bits += segment_bits;
        seconds += duration;
    }
    Ok(Bandwidth {
        peak: peak.ceil() as u64,
        average: (bits / seconds.max(0.001)).ceil() as u64,
    })
}

/// `avc1.PPCCLL` from the init segment's decoder configuration (profile, constraints, level).
async fn avc_codec(init: &Path) -> Result<String, StepError> {
    let bytes = tokio::fs::read(init)
        .await
        .with_context(|| format!("reading {}", init.display()))?;
    avc_codec_of(&bytes)
        .ok_or_else(|| anyhow!("no avcC in {}", init.display()))
        .map_err(StepError::from)
}

fn avc_codec_of(init: &[u8]) -> Option<String> {
    let at = memchr::memmem::find(init, b"avcC")?;
    // configurationVersion (1), then AVCProfileIndication, profile_compatibility, AVCLevelIndication.
    let config = init.get(at + 4..at + 8)?;
    (config[0] == 1).then(|| format!("avc1.{:02x}{:02x}{:02x}", config[1], config[2], config[3]))
}

struct Variant {
    name: String,
    size: Size,
    codec: String,
    bandwidth: Bandwidth,
}

fn master_playlist(variants: &[Variant], has_audio: bool, rate: f64) -> String {
    let mut text = String::from("#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-INDEPENDENT-SEGMENTS\n");
    // Players start on the first variant listed.
    let first = variants
        .iter()
        .rposition(|v| v.size.short_side() <= STARTING_RUNG)
        .unwrap_or(0);
    let order = std::iter::once(first).chain((0..variants.len()).filter(|i| *i != first));
    for variant in order.map(|i| &variants[i]) {
        let codecs = if has_audio {
            format!("{},{AAC_CODEC}", variant.codec)
        } else {
            variant.codec.clone()
        };
        writeln!(
            text,
            "#EXT-X-STREAM-INF:BANDWIDTH={},AVERAGE-BANDWIDTH={},RESOLUTION={}x{},\
             FRAME-RATE={rate:.3},CODECS=\"{codecs}\"\n{}/playlist.m3u8",
            variant.bandwidth.peak,
            variant.bandwidth.average,
            variant.size.width,
            variant.size.height,
            variant.name,
        )
        .ok();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts(width: u32, height: u32) -> SourceFacts {
        SourceFacts {
            duration_ms: 10_000,
            width,
            height,
            frame_rate: 30.0,
            has_audio: true,
            audio_copyable: false,
            video_codec: "h264".into(),
            rotation: 0,
        }
    }

    fn shorts(facts: &SourceFacts) -> Vec<u32> {
        ladder(facts, 30.0)
            .iter()
            .map(|r| r.size.short_side())
            .collect()
    }

    #[test]
    fn the_ladder_climbs_to_the_source_and_stops_at_1080() {
        assert_eq!(shorts(&facts(1080, 1920)), [360, 540, 720, 1080]);
        assert_eq!(shorts(&facts(3840, 2160)), [360, 540, 720, 1080]);
        assert_eq!(shorts(&facts(1280, 720)), [360, 540, 720]);
        assert_eq!(shorts(&facts(600, 1000)), [360, 540]);
        assert_eq!(shorts(&facts(320, 240)), [240]);
    }

    #[test]
    fn bitrates_follow_bits_per_pixel() {
        let rungs = ladder(&facts(1080, 1920), 30.0);
        let kbits: Vec<u32> = rungs.iter().map(|r| r.max_kbits).collect();
        assert_eq!(kbits, [829, 1555, 2488, 4977]);
    }

    #[test]
    fn a_media_playlist_is_read_back_with_its_durations() {
        let playlist = parse_media_playlist(
            "#EXTM3U\n#EXT-X-VERSION:7\n#EXT-X-TARGETDURATION:2\n#EXT-X-MAP:URI=\"init_1.mp4\"\n\
             #EXTINF:2.000000,\nseg-000.m4s\n#EXTINF:1.500000,\nseg-001.m4s\n#EXT-X-ENDLIST\n",
        )
        .expect("parsed");
        assert_eq!(playlist.init, "init_1.mp4");
        assert_eq!(
            playlist.segments,
            [
                ("seg-000.m4s".to_string(), 2.0),
                ("seg-001.m4s".to_string(), 1.5)
            ]
        );
        assert!(parse_media_playlist("#EXTM3U\n#EXT-X-MAP:URI=\"../x\"\n").is_err());
    }

    #[test]
    fn the_codec_string_is_read_from_avcc() {
        let init = [b"....avcC".as_slice(), &[1, 0x64, 0x00, 0x28, 0xff]].concat();
        assert_eq!(avc_codec_of(&init).as_deref(), Some("avc1.640028"));
    }

    #[test]
    fn the_master_playlist_starts_on_540_and_names_sound_only_when_there_is_some() {
        let variant = |short: u32, width, height| Variant {
            name: short.to_string(),
            size: Size { width, height },
            codec: "avc1.64001f".into(),
            bandwidth: Bandwidth {
                peak: 1000,
                average: 800,
            },
        };
        let variants = [
            variant(360, 360, 640),
            variant(540, 540, 960),
            variant(720, 720, 1280),
        ];
        let with_sound = master_playlist(&variants, true, 30.0);
        let first = with_sound
            .lines()
            .find(|l| l.starts_with("#EXT-X-STREAM-INF"))
            .expect("a variant");
        assert_eq!(
            first,
            "#EXT-X-STREAM-INF:BANDWIDTH=1000,AVERAGE-BANDWIDTH=800,RESOLUTION=540x960,\
             FRAME-RATE=30.000,CODECS=\"avc1.64001f,mp4a.40.2\""
        );
        // The sound travels in each rung's own segments: no rendition of its own.
        assert!(!with_sound.contains("EXT-X-MEDIA"));
        let silent = master_playlist(&variants, false, 30.0);
        assert!(!silent.contains("mp4a"));
    }
}
