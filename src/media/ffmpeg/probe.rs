//! What ffprobe says of a source, and whether we take it: a picture stream in a container and a
//! codec we accept, within the limits of length and size, or a refusal that names the problem.

use std::collections::HashMap;
use std::time::Duration;

use serde::Deserialize;

use super::SourceFacts;
use crate::config::MediaLimits;
use crate::media::Refusal;

/// The demuxers ffprobe may use on an uploaded file: the containers we take, and others that
/// read one file and nothing else, so that a refusal can say what the file is. Playlists and
/// concatenation lists (`hls`, `concat`), which would open other files, are not among them.
pub(super) const PROBE_DEMUXERS: &str = "mov,matroska,avi,mpegts,flv,asf,mpeg,ogg,mp3,wav,aac,\
     flac,aiff,amr,png_pipe,jpeg_pipe,webp_pipe,bmp_pipe,tiff_pipe,gif,apng";
/// The demuxers a processing run may use: those of the containers `classify` accepts.
pub(super) const SOURCE_DEMUXERS: &str = "mov,matroska";

/// Video codecs every step can decode (ffprobe's names).
const CODECS: [&str; 6] = ["h264", "hevc", "vp8", "vp9", "av1", "prores"];
/// Beyond this a frame rate is not a camera's but a file made to be expensive.
const MAX_FRAME_RATE: f64 = 240.0;

/// ffprobe's `-show_streams -show_format -of json`, the fields we read.
#[derive(Debug, Deserialize)]
pub(super) struct Probed {
    #[serde(default)]
    streams: Vec<Stream>,
    format: Option<Format>,
}

#[derive(Debug, Deserialize)]
struct Stream {
    codec_type: Option<String>,
    codec_name: Option<String>,
    codec_long_name: Option<String>,
    profile: Option<String>,
    channels: Option<u32>,
    sample_rate: Option<String>,
    width: Option<u32>,
    height: Option<u32>,
    coded_width: Option<u32>,
    coded_height: Option<u32>,
    sample_aspect_ratio: Option<String>,
    avg_frame_rate: Option<String>,
    r_frame_rate: Option<String>,
    duration: Option<String>,
    #[serde(default)]
    disposition: HashMap<String, i64>,
    #[serde(default)]
    tags: HashMap<String, String>,
    #[serde(default)]
    side_data_list: Vec<SideData>,
}

#[derive(Debug, Deserialize)]
struct SideData {
    side_data_type: Option<String>,
    /// Counter-clockwise degrees, as libavutil's display matrix reads.
    rotation: Option<f64>,
}

#[derive(Debug, Deserialize)]
struct Format {
    format_name: String,
    format_long_name: Option<String>,
    duration: Option<String>,
}

impl Probed {
    /// The first picture stream's codec and stored size.
    pub(super) fn picture(&self) -> Option<(&str, u32, u32)> {
        let video = self.streams.iter().find(|s| s.is_picture())?;
        Some((video.codec(), video.width?, video.height?))
    }
}

impl Stream {
    fn is(&self, kind: &str) -> bool {
        self.codec_type.as_deref() == Some(kind)
    }

    /// A moving picture, not a cover image carried beside sound.
    fn is_picture(&self) -> bool {
        self.is("video") && self.disposition.get("attached_pic").copied().unwrap_or(0) == 0
    }

    fn codec(&self) -> &str {
        self.codec_name.as_deref().unwrap_or("unknown")
    }

    /// Clockwise degrees the picture is turned when shown, from the display matrix or, in
    /// older files, the `rotate` tag.
    fn rotation(&self) -> u32 {
        let counter_clockwise = self
            .side_data_list
            .iter()
            .find(|d| d.side_data_type.as_deref() == Some("Display Matrix"))
            .and_then(|d| d.rotation)
            .or_else(|| {
                let clockwise: f64 = self.tags.get("rotate")?.trim().parse().ok()?;
                Some(-clockwise)
            })
            .unwrap_or(0.0);
        let quarter_turns = (-counter_clockwise / 90.0).round();
        if !quarter_turns.is_finite() {
            return 0;
        }
        (quarter_turns as i64).rem_euclid(4) as u32 * 90
    }

    fn frame_rate(&self) -> Option<f64> {
        [&self.avg_frame_rate, &self.r_frame_rate]
            .into_iter()
            .filter_map(|rate| ratio(rate.as_deref()?))
            .find(|rate| *rate > 0.0)
    }
}

/// `30000/1001` or `30` as a number; `0/0` and malformed values as none.
fn ratio(text: &str) -> Option<f64> {
    let (num, den) = text.split_once(['/', ':']).unwrap_or((text, "1"));
    let (num, den): (f64, f64) = (num.trim().parse().ok()?, den.trim().parse().ok()?);
    let value = num / den;
    (value.is_finite() && value > 0.0).then_some(value)
}

fn seconds(text: Option<&str>) -> Option<f64> {
    let value: f64 = text?.trim().parse().ok()?;
    (value.is_finite() && value > 0.0).then_some(value)
}

/// What `classify` found: the facts, but the duration only when the container states it.
pub(super) struct Classified {
    pub facts: SourceFacts,
    pub duration_known: bool,
}

/// Takes or refuses a probed file. A duration the container does not state (a WebM recorded by
/// a browser) is measured by the caller and checked with `check_duration`.
pub(super) fn classify(probed: &Probed, limits: &MediaLimits) -> Result<Classified, Refusal> {
    let format = probed.format.as_ref().ok_or_else(damaged)?;
    let demuxer_names: Vec<&str> = format.format_name.split(',').collect();
    let format_label = format
        .format_long_name
        .clone()
        .unwrap_or_else(|| format.format_name.clone());

    if demuxer_names
        .iter()
        .any(|name| name.ends_with("_pipe") || matches!(*name, "gif" | "apng"))
    {
        return Err(Refusal::unprocessable(
            "NOT_A_VIDEO",
            format!(
                "This file is an image ({}), not a video. Upload a video file such as an MP4 or \
                 MOV.",
                image_label(&format.format_name)
            ),
        ));
    }
    let Some(video) = probed.streams.iter().find(|s| s.is_picture()) else {
        if probed.streams.iter().any(|s| s.is("audio")) {
            return Err(Refusal::unprocessable(
                "NOT_A_VIDEO",
                "This file has sound but no picture. Upload a video file such as an MP4 or MOV.",
            ));
        }
        return Err(damaged());
    };
    if !demuxer_names
        .iter()
        .any(|name| matches!(*name, "mov" | "mp4" | "matroska" | "webm"))
    {
        return Err(Refusal::unprocessable(
            "UNSUPPORTED_FORMAT",
            format!(
                "This video's format ({format_label}) is not supported. Upload an MP4, MOV, WebM \
                 or MKV file."
            ),
        ));
    }
    if !CODECS.contains(&video.codec()) {
        let codec = video
            .codec_long_name
            .clone()
            .unwrap_or_else(|| video.codec().to_string());
        return Err(Refusal::unprocessable(
            "UNSUPPORTED_FORMAT",
            format!(
                "This video is encoded as {codec}, which is not supported. Upload one encoded as \
                 H.264, HEVC (H.265), VP8, VP9, AV1 or ProRes."
            ),
        ));
    }

    let (Some(width), Some(height)) = (video.width, video.height) else {
        return Err(damaged());
    };
    if width == 0 || height == 0 {
        return Err(damaged());
    }
    // The decoder allocates the coded size, which may exceed the shown one: a file that
    // declares a small picture over huge frames is refused before anything decodes it.
    let coded = (
        video.coded_width.unwrap_or(0),
        video.coded_height.unwrap_or(0),
    );
    if coded.0.max(coded.1) > limits.max_side {
        return Err(too_large(coded.0, coded.1, limits));
    }
    let (shown_width, shown_height) = shown_size(width, height, video);
    let rotation = video.rotation();
    let (width, height) = if rotation % 180 == 90 {
        (shown_height, shown_width)
    } else {
        (shown_width, shown_height)
    };
    if width.max(height) > limits.max_side {
        return Err(too_large(width, height, limits));
    }
    let frame_rate = video.frame_rate().unwrap_or(30.0);
    if frame_rate > MAX_FRAME_RATE {
        return Err(Refusal::unprocessable(
            "VIDEO_TOO_LARGE",
            format!(
                "This video has {frame_rate:.0} frames a second; the most we take is \
                 {MAX_FRAME_RATE:.0}. Export it at a lower frame rate, such as 30 or 60."
            ),
        ));
    }

    let duration = seconds(format.duration.as_deref()).or_else(|| {
        probed
            .streams
            .iter()
            .filter_map(|s| seconds(s.duration.as_deref()))
            .reduce(f64::max)
    });
    let duration_ms = duration.map(|s| (s * 1000.0).round() as u64);
    if let Some(ms) = duration_ms {
        check_duration(ms, limits)?;
    }
    let has_audio = probed
        .streams
        .iter()
        .any(|s| s.is("audio") && s.codec_name.is_some());
    // The renditions carry the first sound stream (`0:a:0`): AAC-LC in stereo or mono at a
    // common rate, as phones record it, plays in every browser as it is.
    let audio_copyable = probed
        .streams
        .iter()
        .find(|s| s.is("audio"))
        .is_some_and(|s| {
            s.codec_name.as_deref() == Some("aac")
                && s.profile.as_deref() == Some("LC")
                && matches!(s.channels, Some(1 | 2))
                && matches!(s.sample_rate.as_deref(), Some("44100" | "48000"))
        });
    Ok(Classified {
        facts: SourceFacts {
            duration_ms: duration_ms.unwrap_or(0),
            width,
            height,
            frame_rate,
            has_audio,
            audio_copyable,
            video_codec: video.codec().to_string(),
            rotation,
        },
        duration_known: duration_ms.is_some(),
    })
}

/// Refuses a video longer than the limit, or one with no length at all.
pub(super) fn check_duration(duration_ms: u64, limits: &MediaLimits) -> Result<(), Refusal> {
    if duration_ms == 0 {
        return Err(damaged());
    }
    let limit_ms = limits.max_duration.as_millis() as u64;
    if duration_ms > limit_ms {
        return Err(Refusal::unprocessable(
            "VIDEO_TOO_LONG",
            format!(
                "This video is {} long; the longest we take is {}. Trim it and upload it again.",
                spoken(Duration::from_millis(duration_ms)),
                spoken(limits.max_duration)
            ),
        ));
    }
    Ok(())
}

/// The picture's size with non-square pixels made square (before rotation).
fn shown_size(width: u32, height: u32, video: &Stream) -> (u32, u32) {
    match video.sample_aspect_ratio.as_deref().and_then(ratio) {
        Some(sar) if (sar - 1.0).abs() > 1e-3 && (0.1..=10.0).contains(&sar) => {
            ((f64::from(width) * sar).round() as u32, height)
        }
        _ => (width, height),
    }
}

fn too_large(width: u32, height: u32, limits: &MediaLimits) -> Refusal {
    Refusal::unprocessable(
        "VIDEO_TOO_LARGE",
        format!(
            "This video's picture is {width}×{height} pixels; the largest we take is {} pixels \
             a side. Export it at a smaller resolution, such as 1080p or 4K.",
            limits.max_side
        ),
    )
}

/// A refusal for a file whose frames the decoder would not allocate (`-max_pixels`): ffprobe
/// then fails, saying how large they are. This is how a decompression bomb is caught.
pub(super) fn too_many_pixels(stderr: &str, limits: &MediaLimits) -> Option<Refusal> {
    let (_, rest) = stderr.split_once("Picture size ")?;
    let (size, rest) = rest.split_once(' ')?;
    rest.starts_with("exceeds specified max pixel count")
        .then_some(())?;
    let (width, height) = size.split_once('x')?;
    Some(too_large(width.parse().ok()?, height.parse().ok()?, limits))
}

pub(super) fn damaged() -> Refusal {
    Refusal::unprocessable(
        "NOT_A_VIDEO",
        "This file is damaged or incomplete, or is not a video we can read. If it plays on your \
         device, export or upload it again.",
    )
}

/// `png_pipe` → `PNG`.
fn image_label(format_name: &str) -> String {
    let name = format_name.split(',').next().unwrap_or(format_name);
    name.trim_end_matches("_pipe").to_uppercase()
}

/// `1 min 5 s`, `10 min`, `45 s`.
fn spoken(duration: Duration) -> String {
    let total = duration.as_secs_f64().ceil() as u64;
    let (minutes, seconds) = (total / 60, total % 60);
    match (minutes, seconds) {
        (0, s) => format!("{s} s"),
        (m, 0) => format!("{m} min"),
        (m, s) => format!("{m} min {s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> MediaLimits {
        MediaLimits::for_tests()
    }

    fn probed(json: &str) -> Probed {
        serde_json::from_str(json).expect("test JSON")
    }

    #[test]
    fn only_aac_lc_in_stereo_or_mono_at_a_common_rate_is_copied_into_the_renditions() {
        let copyable = |audio: &str| {
            let json = format!(
                r#"{{"streams":[{{"codec_type":"video","codec_name":"h264","width":64,
                  "height":64}},{audio}],"format":{{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"5"}}}}"#
            );
            classify(&probed(&json), &limits())
                .expect("taken")
                .facts
                .audio_copyable
        };
        let aac = |profile: &str, channels: u32, rate: u32| {
            format!(
                r#"{{"codec_type":"audio","codec_name":"aac","profile":"{profile}",
                  "channels":{channels},"sample_rate":"{rate}"}}"#
            )
        };
        assert!(copyable(&aac("LC", 2, 48_000)));
        assert!(copyable(&aac("LC", 1, 44_100)));
        assert!(!copyable(&aac("HE-AAC", 2, 48_000)));
        assert!(!copyable(&aac("LC", 6, 48_000)));
        assert!(!copyable(&aac("LC", 2, 96_000)));
        assert!(!copyable(
            r#"{"codec_type":"audio","codec_name":"opus","channels":2,"sample_rate":"48000"}"#
        ));
        assert!(!copyable(
            r#"{"codec_type":"data","codec_name":"bin_data"}"#
        ));
    }

    #[test]
    fn a_phone_video_turned_a_quarter_is_shown_portrait() {
        let p = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"h264","width":1920,"height":1080,
              "avg_frame_rate":"30000/1001","side_data_list":[{"side_data_type":"Display Matrix",
              "rotation":-90}]},{"codec_type":"audio","codec_name":"aac"}],
              "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"12.5"}}"#,
        );
        let facts = classify(&p, &limits()).expect("taken").facts;
        assert_eq!(
            (facts.width, facts.height, facts.rotation),
            (1080, 1920, 90)
        );
        assert_eq!(facts.duration_ms, 12_500);
        assert!((facts.frame_rate - 29.97).abs() < 0.01);
        assert!(facts.has_audio);
    }

    #[test]
    fn an_old_rotate_tag_and_non_square_pixels_are_read() {
        let p = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"h264","width":720,"height":576,
              "sample_aspect_ratio":"16:11","tags":{"rotate":"180"}}],
              "format":{"format_name":"matroska,webm","duration":"1"}}"#,
        );
        let facts = classify(&p, &limits()).expect("taken").facts;
        assert_eq!(
            (facts.width, facts.height, facts.rotation),
            (1047, 576, 180)
        );
    }

    #[test]
    fn other_containers_and_codecs_are_named_in_the_refusal() {
        let avi = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":64}],
              "format":{"format_name":"avi","format_long_name":"AVI (Audio Video Interleaved)",
              "duration":"1"}}"#,
        );
        let refusal = classify(&avi, &limits()).err().expect("refused");
        assert_eq!(refusal.code, "UNSUPPORTED_FORMAT");
        assert!(refusal.message.contains("AVI"), "{}", refusal.message);

        let mpeg4 = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"mpeg4",
              "codec_long_name":"MPEG-4 part 2","width":64,"height":64}],
              "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"1"}}"#,
        );
        let refusal = classify(&mpeg4, &limits()).err().expect("refused");
        assert_eq!(refusal.code, "UNSUPPORTED_FORMAT");
        assert!(
            refusal.message.contains("MPEG-4 part 2"),
            "{}",
            refusal.message
        );
    }

    #[test]
    fn huge_coded_frames_and_absurd_frame_rates_are_refused_as_too_large() {
        let bomb = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":64,
              "coded_width":16384,"coded_height":16384}],
              "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"1"}}"#,
        );
        assert_eq!(
            classify(&bomb, &limits()).err().map(|r| r.code),
            Some("VIDEO_TOO_LARGE")
        );
        let fast = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":64,
              "avg_frame_rate":"100000/1"}],
              "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"1"}}"#,
        );
        assert_eq!(
            classify(&fast, &limits()).err().map(|r| r.code),
            Some("VIDEO_TOO_LARGE")
        );
    }

    #[test]
    fn frames_the_decoder_would_not_allocate_are_refused_as_too_large() {
        let stderr = "[h264 @ 0x1] [IMGUTILS @ 0x2] Picture size 16384x16384 exceeds specified \
                      max pixel count 17842176, see the documentation if you wish to increase it";
        let refusal = too_many_pixels(stderr, &limits()).expect("a refusal");
        assert_eq!(refusal.code, "VIDEO_TOO_LARGE");
        assert!(
            refusal.message.contains("16384×16384"),
            "{}",
            refusal.message
        );
        assert!(too_many_pixels("moov atom not found", &limits()).is_none());
    }

    #[test]
    fn a_cover_picture_beside_sound_is_not_a_video() {
        let p = probed(
            r#"{"streams":[{"codec_type":"audio","codec_name":"aac"},{"codec_type":"video",
              "codec_name":"mjpeg","width":600,"height":600,"disposition":{"attached_pic":1}}],
              "format":{"format_name":"mov,mp4,m4a,3gp,3g2,mj2","duration":"100"}}"#,
        );
        let refusal = classify(&p, &limits()).err().expect("refused");
        assert_eq!(refusal.code, "NOT_A_VIDEO");
        assert!(
            refusal.message.contains("no picture"),
            "{}",
            refusal.message
        );
    }

    #[test]
    fn a_duration_the_container_does_not_state_is_left_to_measure() {
        let p = probed(
            r#"{"streams":[{"codec_type":"video","codec_name":"vp8","width":640,"height":480}],
              "format":{"format_name":"matroska,webm"}}"#,
        );
        let classified = classify(&p, &limits()).expect("taken");
        assert!(!classified.duration_known);
    }

    #[test]
    fn lengths_are_spoken_in_minutes_and_seconds() {
        assert_eq!(spoken(Duration::from_secs(600)), "10 min");
        assert_eq!(spoken(Duration::from_millis(65_200)), "1 min 6 s");
        assert_eq!(spoken(Duration::from_secs(45)), "45 s");
    }
}
