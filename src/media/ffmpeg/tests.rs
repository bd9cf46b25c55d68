//! The steps on real files made by `samples`, their outputs checked with ffprobe and ffmpeg's
//! own measurements.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;
use uuid::Uuid;

use super::*;
use crate::media::samples::{self, Sample};

/// A private directory, removed when the test ends.
struct TestDir(PathBuf);

impl TestDir {
    fn new() -> TestDir {
        let dir = std::env::temp_dir().join(format!("videoapp-ffmpeg-test-{}", Uuid::new_v4()));
        std::fs::create_dir_all(&dir).expect("a test directory");
        TestDir(dir)
    }

    /// An empty directory inside, for one step's outputs.
    fn sub(&self, name: &str) -> PathBuf {
        let dir = self.0.join(name);
        std::fs::create_dir_all(&dir).expect("a test directory");
        dir
    }

    async fn sample(&self, sample: Sample) -> PathBuf {
        samples::make_in(sample, &self.0)
            .await
            .expect("sample made")
    }
}

impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn ffmpeg() -> Ffmpeg {
    Ffmpeg {
        threads: 2,
        timeout: Duration::from_secs(120),
    }
}

fn limits() -> MediaLimits {
    MediaLimits::for_tests()
}

/// What ffprobe prints for `args` then `path`, run directly (not through the code under test).
async fn run_ffprobe(args: &[&str], path: &Path) -> Vec<u8> {
    let out = tokio::process::Command::new("ffprobe")
        .args(["-v", "error"])
        .args(args)
        .arg(path)
        .output()
        .await
        .expect("ffprobe runs");
    let error = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ffprobe {}: {error}", path.display());
    out.stdout
}

/// ffprobe's streams and format of `path`.
async fn ffprobe(path: &Path) -> Value {
    let args = ["-show_streams", "-show_format", "-of", "json"];
    serde_json::from_slice(&run_ffprobe(&args, path).await).expect("ffprobe's JSON")
}

/// The `key` of the first stream of `kind`, as text.
fn first_stream(probed: &Value, kind: &str, key: &str) -> String {
    let stream = streams(probed, kind)
        .first()
        .copied()
        .cloned()
        .unwrap_or_default();
    stream[key].as_str().unwrap_or_default().to_string()
}

fn streams<'a>(probed: &'a Value, kind: &str) -> Vec<&'a Value> {
    probed["streams"]
        .as_array()
        .map(|s| s.iter().filter(|s| s["codec_type"] == kind).collect())
        .unwrap_or_default()
}

fn size_of(stream: &Value) -> (u64, u64) {
    (
        stream["width"].as_u64().unwrap_or(0),
        stream["height"].as_u64().unwrap_or(0),
    )
}

fn seconds(value: &Value) -> f64 {
    value.as_str().and_then(|s| s.parse().ok()).unwrap_or(0.0)
}

/// The average of a signalstats value (`YAVG`, `VAVG`) over `path`'s frames, after `crop`.
async fn mean(path: &Path, crop: &str, key: &str) -> f64 {
    let filter = format!("{crop}signalstats,metadata=print:key=lavfi.signalstats.{key}:file=-");
    let out = tokio::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(path)
        .args(["-vf", &filter, "-f", "null", "-"])
        .output()
        .await
        .expect("ffmpeg runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let values: Vec<f64> = text
        .lines()
        .filter_map(|l| l.split_once('=').filter(|(k, _)| k.ends_with(key)))
        .filter_map(|(_, v)| v.trim().parse().ok())
        .collect();
    assert!(
        !values.is_empty(),
        "no {key} from {}: {text}",
        path.display()
    );
    values.iter().sum::<f64>() / values.len() as f64
}

/// The top-level boxes of an MP4, in order.
fn boxes(bytes: &[u8]) -> Vec<String> {
    let mut found = Vec::new();
    let mut at = 0usize;
    while at + 8 <= bytes.len() {
        let size =
            u32::from_be_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]) as usize;
        found.push(String::from_utf8_lossy(&bytes[at + 4..at + 8]).into_owned());
        if size < 8 {
            break;
        }
        at += size;
    }
    found
}

async fn assert_fast_start(path: &Path) {
    let top = boxes(&tokio::fs::read(path).await.expect("output read"));
    let moov = top.iter().position(|b| b == "moov");
    let mdat = top.iter().position(|b| b == "mdat");
    assert!(moov.is_some() && moov < mdat, "{}: {top:?}", path.display());
}

async fn renditions(source: &Path, facts: &SourceFacts, dir: &Path) -> (Renditions, Vec<u8>) {
    let seen = Mutex::new(Vec::new());
    let report = |p: u8| seen.lock().expect("progress").push(p);
    let made = ffmpeg()
        .renditions(source, facts, dir, &report)
        .await
        .expect("renditions made");
    (made, seen.into_inner().expect("progress"))
}

/// The `#EXT-X-STREAM-INF` lines of the master playlist and what each names.
async fn variants(dir: &Path, made: &Renditions) -> Vec<(String, String)> {
    let text = tokio::fs::read_to_string(dir.join(&made.master))
        .await
        .expect("master read");
    let lines: Vec<&str> = text.lines().collect();
    lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.starts_with("#EXT-X-STREAM-INF:"))
        .map(|(i, l)| (l.to_string(), lines.get(i + 1).unwrap_or(&"").to_string()))
        .collect()
}

fn attribute<'a>(stream_inf: &'a str, name: &str) -> Option<&'a str> {
    let start = stream_inf.find(&format!("{name}="))? + name.len() + 1;
    let rest = &stream_inf[start..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.split('"').next();
    }
    rest.split(',').next()
}

async fn probe_sample(dir: &TestDir, sample: Sample) -> (PathBuf, SourceFacts) {
    let source = dir.sample(sample).await;
    let facts = ffmpeg().probe(&source, &limits()).await.expect("a video");
    (source, facts)
}

#[tokio::test]
async fn an_h264_source_becomes_a_ladder_with_a_master_playlist_and_a_progressive_mp4() {
    let dir = TestDir::new();
    let sample = Sample::H264 {
        width: 960,
        height: 540,
        seconds: 5,
        audio: true,
    };
    let (source, facts) = probe_sample(&dir, sample).await;
    assert_eq!(
        (facts.width, facts.height, facts.duration_ms),
        (960, 540, 5000)
    );
    assert!(facts.has_audio);
    let out = dir.sub("out");

    let (made, progress) = renditions(&source, &facts, &out).await;

    // Every output is listed with its type, and is there.
    for o in &made.outputs {
        assert!(o.path.is_file(), "{} listed but not written", o.name);
        assert_eq!(o.path, out.join(&o.name));
        let expected = match o.name.rsplit('.').next() {
            Some("m3u8") => "application/vnd.apple.mpegurl",
            Some("m4s") => "video/iso.segment",
            Some("mp4") => "video/mp4",
            other => panic!("unexpected output {other:?}"),
        };
        assert_eq!(o.content_type, expected, "{}", o.name);
    }
    assert_eq!(made.master, "hls/master.m3u8");
    assert_eq!(made.progressive, "video-540.mp4");

    let variants = variants(&out, &made).await;
    let mut resolutions: Vec<&str> = variants
        .iter()
        .filter_map(|(l, _)| attribute(l, "RESOLUTION"))
        .collect();
    resolutions.sort();
    assert_eq!(resolutions, ["640x360", "960x540"]);
    for (line, uri) in &variants {
        let bandwidth: u64 = attribute(line, "BANDWIDTH")
            .and_then(|b| b.parse().ok())
            .unwrap_or(0);
        assert!(bandwidth > 100_000, "{line}");
        let codecs = attribute(line, "CODECS").unwrap_or("");
        assert!(
            codecs.starts_with("avc1.64") && codecs.ends_with(",mp4a.40.2"),
            "{line}"
        );
        assert!(out.join("hls").join(uri).is_file(), "{uri}");
    }

    // No rendition of sound alone: a player needs one playlist to start.
    let master = tokio::fs::read_to_string(out.join(&made.master))
        .await
        .expect("master");
    assert!(!master.contains("EXT-X-MEDIA"), "{master}");
    assert!(made
        .outputs
        .iter()
        .all(|o| !o.name.starts_with("hls/audio/")));

    // Segments of 2 s in every rung, each starting on a keyframe (or they could not be cut so),
    // each carrying the pictures and the sound.
    for folder in ["360", "540"] {
        let file = |prefix: String| {
            let o = made.outputs.iter().find(|o| o.name.starts_with(&prefix));
            o.expect("listed").path.clone()
        };
        let init = tokio::fs::read(file(format!("hls/{folder}/init")))
            .await
            .expect("init");
        let first = tokio::fs::read(file(format!("hls/{folder}/seg-000")))
            .await
            .expect("segment");
        let joined = out.join(format!("rung-{folder}.mp4"));
        tokio::fs::write(&joined, [init, first].concat())
            .await
            .expect("written");
        let probed = ffprobe(&joined).await;
        assert_eq!(
            first_stream(&probed, "video", "codec_name"),
            "h264",
            "{folder}"
        );
        assert_eq!(
            first_stream(&probed, "audio", "codec_name"),
            "aac",
            "{folder}"
        );
        // The source's AAC-LC is copied, packet for packet, not encoded again.
        assert!(facts.audio_copyable);
        let sound = |packets: Vec<String>| -> Vec<String> {
            let hashes = packets.iter().filter(|p| p.starts_with("packet,1,"));
            hashes
                .filter_map(|p| p.split(',').find(|f| f.starts_with("MD5:")))
                .map(str::to_string)
                .collect()
        };
        let copied = sound(packets(&joined).await);
        let source_sound = sound(packets(&source).await);
        assert!(
            copied.len() > 10,
            "{folder}: {} packets of sound",
            copied.len()
        );
        // The first, the encoder's priming, ffprobe prints with its side data in the source
        // instead of its hash: the rest match one for one.
        assert_eq!(copied[1..], source_sound[..copied.len() - 1], "{folder}");

        let playlist =
            tokio::fs::read_to_string(out.join("hls").join(folder).join("playlist.m3u8"))
                .await
                .expect("media playlist");
        let durations: Vec<f64> = playlist
            .lines()
            .filter_map(|l| l.strip_prefix("#EXTINF:"))
            .filter_map(|d| d.trim_end_matches(',').parse().ok())
            .collect();
        assert!(durations.len() >= 2, "{folder}: {durations:?}");
        let (last, whole) = durations.split_last().expect("segments");
        assert!(
            whole.iter().all(|d| (d - 2.0).abs() < 0.05),
            "{folder}: {durations:?}"
        );
        assert!(*last <= 2.05, "{folder}: {durations:?}");
    }

    let progressive = out.join(&made.progressive);
    let probed = ffprobe(&progressive).await;
    let video = streams(&probed, "video");
    assert_eq!(video[0]["codec_name"], "h264");
    assert_eq!(video[0]["profile"], "High");
    assert_eq!(size_of(video[0]), (960, 540));
    assert_eq!(streams(&probed, "audio")[0]["codec_name"], "aac");
    assert!((seconds(&probed["format"]["duration"]) - 5.0).abs() < 0.2);
    assert_fast_start(&progressive).await;

    assert_eq!(progress.first(), Some(&0));
    assert_eq!(progress.last(), Some(&100));
    assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
}

#[tokio::test]
async fn hevc_vp9_and_prores_sources_become_h264() {
    let dir = TestDir::new();
    for (sample, codec) in [
        (Sample::Hevc, "hevc"),
        (Sample::Vp9, "vp9"),
        (Sample::ProRes, "prores"),
    ] {
        let (source, facts) = probe_sample(&dir, sample).await;
        assert_eq!(facts.video_codec, codec);
        let out = dir.sub(codec);

        let (made, _) = renditions(&source, &facts, &out).await;
        let mini = ffmpeg()
            .mini(&source, &facts, &out)
            .await
            .expect("mini made");

        let progressive = ffprobe(&out.join(&made.progressive)).await;
        assert_eq!(
            first_stream(&progressive, "video", "codec_name"),
            "h264",
            "{codec}"
        );
        assert_eq!(
            first_stream(&progressive, "video", "pix_fmt"),
            "yuv420p",
            "{codec}"
        );
        assert_eq!(
            first_stream(&progressive, "audio", "codec_name"),
            "aac",
            "{codec}"
        );
        let segment = made
            .outputs
            .iter()
            .find(|o| o.name.starts_with("hls/360/seg-"))
            .expect("a segment");
        let init = made
            .outputs
            .iter()
            .find(|o| o.name.starts_with("hls/360/init"))
            .expect("an init");
        let mut joined = tokio::fs::read(&init.path).await.expect("init");
        joined.extend(tokio::fs::read(&segment.path).await.expect("segment"));
        let joined_path = out.join("joined.mp4");
        tokio::fs::write(&joined_path, joined)
            .await
            .expect("written");
        assert_eq!(
            streams(&ffprobe(&joined_path).await, "video")[0]["codec_name"],
            "h264",
            "{codec}"
        );
        assert_eq!(
            streams(&ffprobe(&mini.path).await, "video")[0]["codec_name"],
            "h264",
            "{codec}"
        );
    }
}

#[tokio::test]
async fn a_webm_that_states_no_duration_is_measured() {
    let dir = TestDir::new();
    let source = dir.sample(Sample::Recorded).await;
    assert_eq!(ffprobe(&source).await["format"]["duration"], Value::Null);

    let facts = ffmpeg().probe(&source, &limits()).await.expect("a video");

    assert_eq!(facts.video_codec, "vp8");
    assert!((1900..=2100).contains(&facts.duration_ms), "{facts:?}");
    let short = MediaLimits {
        max_duration: Duration::from_secs(1),
        ..limits()
    };
    assert_eq!(refusal(&source, &short).await.code, "VIDEO_TOO_LONG");
}

#[tokio::test]
async fn a_rotated_phone_video_comes_out_upright() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(&dir, Sample::Rotated).await;
    assert_eq!((facts.width, facts.height, facts.rotation), (360, 640, 90));
    let out = dir.sub("out");

    let poster = ffmpeg()
        .poster(&source, &facts, None, &out)
        .await
        .expect("poster made");
    let (made, _) = renditions(&source, &facts, &out).await;
    let mini = ffmpeg()
        .mini(&source, &facts, &out)
        .await
        .expect("mini made");

    for path in [
        out.join(&poster.main),
        out.join(&made.progressive),
        mini.path.clone(),
    ] {
        let probed = ffprobe(&path).await;
        let video = streams(&probed, "video")[0];
        assert_eq!(size_of(video), (360, 640), "{}", path.display());
        assert!(
            video.get("side_data_list").is_none(),
            "{}: still asks to be turned",
            path.display()
        );
        // Upright, the colour bars stand: red down the left edge, cyan down the right. Turned
        // either way, each edge would cross every bar.
        let left = mean(&path, "crop=iw/12:ih:0:0,", "VAVG").await;
        let right = mean(&path, "crop=iw/12:ih:iw-iw/12:0,", "VAVG").await;
        assert!(
            left > 200.0 && right < 60.0,
            "{}: left V {left}, right V {right}",
            path.display()
        );
    }
}

#[tokio::test]
async fn a_variable_frame_rate_source_is_cut_into_even_segments() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(&dir, Sample::VariableFrameRate).await;
    assert_eq!(facts.duration_ms / 100, 30);
    let out = dir.sub("out");

    let (made, _) = renditions(&source, &facts, &out).await;

    let probed = ffprobe(&out.join(&made.progressive)).await;
    let video = streams(&probed, "video")[0];
    assert_eq!(video["codec_name"], "h264");
    assert_eq!(
        video["avg_frame_rate"], video["r_frame_rate"],
        "frames evenly spaced"
    );
    assert!((seconds(&probed["format"]["duration"]) - 3.0).abs() < 0.2);
    let playlist = tokio::fs::read_to_string(out.join("hls/360/playlist.m3u8"))
        .await
        .expect("playlist");
    assert!(playlist.contains("#EXTINF:2.000000,"), "{playlist}");
}

#[tokio::test]
async fn a_silent_source_gets_no_sound_anywhere() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(&dir, Sample::NoAudio).await;
    assert!(!facts.has_audio);
    let out = dir.sub("out");

    let (made, _) = renditions(&source, &facts, &out).await;

    let master = tokio::fs::read_to_string(out.join(&made.master))
        .await
        .expect("master");
    assert!(master.contains("CODECS=\"avc1."), "{master}");
    assert!(
        !master.contains("mp4a") && !master.contains("TYPE=AUDIO"),
        "{master}"
    );
    assert!(made
        .outputs
        .iter()
        .all(|o| !o.name.starts_with("hls/audio/")));
    assert!(streams(&ffprobe(&out.join(&made.progressive)).await, "audio").is_empty());
}

#[tokio::test]
async fn a_4k_source_tops_out_at_1080() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(&dir, Sample::FourK).await;
    assert_eq!((facts.width, facts.height), (3840, 2160));
    let out = dir.sub("out");

    let (made, _) = renditions(&source, &facts, &out).await;

    let mut resolutions: Vec<String> = variants(&out, &made)
        .await
        .iter()
        .filter_map(|(l, _)| attribute(l, "RESOLUTION").map(str::to_string))
        .collect();
    resolutions.sort_by_key(|r| r.split('x').next().and_then(|w| w.parse::<u32>().ok()));
    assert_eq!(resolutions, ["640x360", "960x540", "1280x720", "1920x1080"]);
    assert_eq!(made.progressive, "video-720.mp4");
    assert_eq!(
        size_of(streams(&ffprobe(&out.join(&made.progressive)).await, "video")[0]),
        (1280, 720)
    );
}

#[tokio::test]
async fn the_poster_comes_at_the_cards_size_and_twice_it_in_jpeg_and_webp() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(
        &dir,
        Sample::H264 {
            width: 1280,
            height: 720,
            seconds: 2,
            audio: false,
        },
    )
    .await;
    let out = dir.sub("out");

    let poster = ffmpeg()
        .poster(&source, &facts, None, &out)
        .await
        .expect("poster made");

    let mut names: Vec<&str> = poster.outputs.iter().map(|o| o.name.as_str()).collect();
    names.sort();
    assert_eq!(
        names,
        [
            "poster-360.jpg",
            "poster-360.webp",
            "poster-720.jpg",
            "poster-720.webp"
        ]
    );
    assert_eq!(poster.main, "poster-720.jpg");
    for o in &poster.outputs {
        let probed = ffprobe(&o.path).await;
        let video = streams(&probed, "video")[0];
        let (codec, kind) = if o.name.ends_with(".jpg") {
            ("mjpeg", "image/jpeg")
        } else {
            ("webp", "image/webp")
        };
        assert_eq!(
            (video["codec_name"].as_str(), o.content_type),
            (Some(codec), kind)
        );
        let expected = if o.name.contains("-360.") {
            (640, 360)
        } else {
            (1280, 720)
        };
        assert_eq!(size_of(video), expected, "{}", o.name);
    }
}

#[tokio::test]
async fn the_poster_skips_a_black_start() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(&dir, Sample::BlackStart).await;
    let out = dir.sub("out");

    let poster = ffmpeg()
        .poster(&source, &facts, None, &out)
        .await
        .expect("poster made");

    // A 640x360 source: one size, never enlarged.
    assert_eq!(poster.main, "poster-360.jpg");
    assert_eq!(poster.outputs.len(), 2);
    let bright = mean(&out.join(&poster.main), "", "YAVG").await;
    assert!(bright > 60.0, "the poster is dark: mean luma {bright}");

    // The measure sees black when it is there: the frame at 0 ms, chosen, is dark.
    let chosen = dir.sub("chosen");
    let at_start = ffmpeg()
        .poster(&source, &facts, Some(0), &chosen)
        .await
        .expect("poster made");
    let dark = mean(&chosen.join(&at_start.main), "", "YAVG").await;
    assert!(dark < 20.0, "mean luma {dark}");
}

#[tokio::test]
async fn the_mini_version_is_short_muted_small_and_starts_on_a_keyframe() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(
        &dir,
        Sample::H264 {
            width: 1280,
            height: 720,
            seconds: 8,
            audio: true,
        },
    )
    .await;
    let out = dir.sub("out");

    let mini = ffmpeg()
        .mini(&source, &facts, &out)
        .await
        .expect("mini made");

    assert_eq!(
        (mini.name.as_str(), mini.content_type),
        ("mini.mp4", "video/mp4")
    );
    let probed = ffprobe(&mini.path).await;
    let video = streams(&probed, "video")[0];
    assert_eq!(video["codec_name"], "h264");
    assert_eq!(size_of(video), (640, 360));
    assert!(streams(&probed, "audio").is_empty());
    let duration = seconds(&probed["format"]["duration"]);
    assert!((3.0..=6.0).contains(&duration), "{duration} s");
    let bytes = tokio::fs::metadata(&mini.path).await.expect("mini").len();
    assert!(bytes <= 400_000, "{bytes} bytes");
    assert_fast_start(&mini.path).await;

    let first = tokio::process::Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-select_streams",
            "v:0",
            "-read_intervals",
            "%+#1",
        ])
        .args([
            "-show_entries",
            "frame=key_frame,pict_type",
            "-of",
            "csv=p=0",
        ])
        .arg(&mini.path)
        .output()
        .await
        .expect("ffprobe runs");
    let first = String::from_utf8_lossy(&first.stdout);
    assert!(first.starts_with("1,I"), "the first frame: {first}");
}

#[tokio::test]
async fn nothing_of_the_sources_metadata_reaches_the_outputs() {
    let dir = TestDir::new();
    let plain = dir.sample(Sample::NoAudio).await;
    let tagged = dir.0.join("tagged.mp4");
    let status = tokio::process::Command::new("ffmpeg")
        .args(["-v", "error", "-i"])
        .arg(&plain)
        .args([
            "-c",
            "copy",
            "-metadata",
            "title=Secret place",
            "-metadata:s:v:0",
            "handler_name=Secret place",
        ])
        .args(["-metadata", "location=+48.8577+002.2950/"])
        .arg(&tagged)
        .status()
        .await
        .expect("ffmpeg runs");
    assert!(status.success());
    let facts = ffmpeg().probe(&tagged, &limits()).await.expect("a video");
    let out = dir.sub("out");

    let mini = ffmpeg()
        .mini(&tagged, &facts, &out)
        .await
        .expect("mini made");
    let (made, _) = renditions(&tagged, &facts, &out).await;

    for path in [mini.path, out.join(&made.progressive)] {
        let text = ffprobe(&path).await.to_string();
        assert!(
            !text.contains("Secret") && !text.contains("48.8577"),
            "{}: {text}",
            path.display()
        );
    }
}

async fn refusal(source: &Path, limits: &MediaLimits) -> Refusal {
    match ffmpeg().probe(source, limits).await {
        Err(StepError::Refused(refusal)) => refusal,
        Err(StepError::Failed(e)) => {
            panic!("{}: failed instead of refused: {e:#}", source.display())
        }
        Ok(facts) => panic!("{}: taken as {facts:?}", source.display()),
    }
}

#[tokio::test]
async fn steps_take_paths_relative_to_the_services_directory() {
    let dir = TestDir::new();
    let source = dir.sample(Sample::NoAudio).await;
    let out = dir.sub("out");
    // The same places, reached from the working directory.
    let up = std::env::current_dir()
        .expect("a working directory")
        .components()
        .count()
        - 1;
    let relative = |path: &Path| {
        let mut relative: PathBuf = std::iter::repeat_n("..", up).collect();
        relative.push(path.strip_prefix("/").expect("an absolute path"));
        relative
    };
    let facts = ffmpeg()
        .probe(&relative(&source), &limits())
        .await
        .expect("a video");

    let mini = ffmpeg()
        .mini(&relative(&source), &facts, &relative(&out))
        .await
        .expect("mini made");
    let poster = ffmpeg()
        .poster(&relative(&source), &facts, None, &relative(&out))
        .await
        .expect("poster made");

    for output in poster.outputs.iter().chain([&mini]) {
        assert!(
            output.path.is_absolute() && output.path.is_file(),
            "{}",
            output.path.display()
        );
        assert!(out.join(&output.name).is_file(), "{}", output.name);
    }
}

#[tokio::test]
async fn files_that_are_not_videos_are_refused_with_a_code_and_a_reason() {
    let dir = TestDir::new();
    let cases = [
        (Sample::Empty, "EMPTY_FILE", "empty"),
        (Sample::Corrupt, "NOT_A_VIDEO", "damaged or incomplete"),
        (Sample::Renamed, "NOT_A_VIDEO", "is an image (PNG)"),
        (Sample::Image, "NOT_A_VIDEO", "is an image (PNG)"),
        (Sample::AudioOnly, "NOT_A_VIDEO", "sound but no picture"),
    ];
    for (sample, code, words) in cases {
        let source = dir.sample(sample).await;
        let refused = refusal(&source, &limits()).await;
        assert_eq!(
            (refused.status.as_u16(), refused.code),
            (422, code),
            "{sample:?}"
        );
        assert!(
            refused.message.contains(words),
            "{sample:?}: {}",
            refused.message
        );
    }
}

#[tokio::test]
async fn videos_beyond_the_limits_are_refused() {
    let dir = TestDir::new();
    let source = dir.sample(Sample::NoAudio).await;

    let short = MediaLimits {
        max_duration: Duration::from_secs(1),
        ..limits()
    };
    let refused = refusal(&source, &short).await;
    assert_eq!(refused.code, "VIDEO_TOO_LONG");
    assert!(
        refused.message.contains("2 s long") && refused.message.contains("1 s"),
        "{}",
        refused.message
    );

    let narrow = MediaLimits {
        max_side: 320,
        ..limits()
    };
    let refused = refusal(&source, &narrow).await;
    assert_eq!(refused.code, "VIDEO_TOO_LARGE");
    assert!(
        refused.message.contains("640×360") && refused.message.contains("320"),
        "{}",
        refused.message
    );
}

#[tokio::test]
async fn a_run_past_its_time_limit_is_killed() {
    let dir = TestDir::new();
    let (source, facts) = probe_sample(
        &dir,
        Sample::H264 {
            width: 1280,
            height: 720,
            seconds: 8,
            audio: true,
        },
    )
    .await;
    let out = dir.sub("out");
    let hurried = Ffmpeg {
        threads: 1,
        timeout: Duration::from_millis(200),
    };

    let result = hurried.renditions(&source, &facts, &out, &|_| {}).await;

    match result {
        Err(StepError::Failed(e)) => assert!(
            matches!(
                e.downcast_ref::<RunError>(),
                Some(RunError::TimedOut { .. })
            ),
            "{e:#}"
        ),
        Err(StepError::Refused(r)) => panic!("refused: {r:?}"),
        Ok(_) => panic!("finished within 200 ms"),
    }
    // Killed and reaped: no process is left working in the run's directory.
    let hls = out.join("hls");
    let left: Vec<_> = std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(Result::ok)
        .filter(|p| std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd == hls))
        .collect();
    assert!(left.is_empty(), "still running: {left:?}");
}

/// Every packet of `path` (stream, pts, dts, size, keyframe, its bytes' MD5), as ffprobe reads
/// them.
async fn packets(path: &Path) -> Vec<String> {
    let entries = "packet=stream_index,pts,dts,size,flags,data_hash";
    let args = [
        "-show_data_hash",
        "MD5",
        "-show_entries",
        entries,
        "-of",
        "csv",
    ];
    let out = run_ffprobe(&args, path).await;
    String::from_utf8_lossy(&out)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The top-level boxes of `bytes`, and the sample count of each track of each `moof`.
fn layout(bytes: &[u8]) -> (Vec<String>, Vec<Vec<usize>>) {
    use mp4_atom::{Any, Decode};
    let (mut kinds, mut samples) = (Vec::new(), Vec::new());
    let mut rest = bytes;
    while !rest.is_empty() {
        let atom = Any::decode(&mut rest).expect("a box");
        kinds.push(atom.kind().to_string());
        if let Any::Moof(moof) = atom {
            samples.push(moof.traf.iter().map(|t| t.trun[0].samples.len()).collect());
        }
    }
    (kinds, samples)
}

#[tokio::test]
async fn a_segment_s_first_quarter_second_gets_a_fragment_of_its_own_and_nothing_else_changes() {
    let dir = TestDir::new();
    let source = dir
        .sample(Sample::H264 {
            width: 640,
            height: 360,
            seconds: 4,
            audio: true,
        })
        .await;
    let out = dir.sub("hls");
    // A plain run of ffmpeg's HLS muxer, as the ladder's: 2 s fMP4 segments, sound in each.
    let made = tokio::process::Command::new("ffmpeg")
        .current_dir(&out)
        .args(["-v", "error", "-i"])
        .arg(&source)
        .args([
            "-c:v",
            "libx264",
            "-preset",
            "superfast",
            "-g",
            "60",
            "-sc_threshold",
            "0",
        ])
        .args([
            "-c:a",
            "aac",
            "-f",
            "hls",
            "-hls_segment_type",
            "fmp4",
            "-hls_time",
            "2",
        ])
        .args([
            "-hls_playlist_type",
            "vod",
            "-hls_segment_filename",
            "seg-%03d.m4s",
        ])
        .arg("playlist.m3u8")
        .output()
        .await
        .expect("ffmpeg runs");
    assert!(
        made.status.success(),
        "{}",
        String::from_utf8_lossy(&made.stderr)
    );
    let init = tokio::fs::read(out.join("init.mp4")).await.expect("init");
    let segment = tokio::fs::read(out.join("seg-001.m4s"))
        .await
        .expect("segment");
    assert_eq!(layout(&segment).1.len(), 1, "ffmpeg writes one fragment");

    let split = fragments::split_first_samples(&segment).expect("split");

    let (kinds, samples) = layout(&split);
    assert_eq!(kinds, ["styp", "moof", "mdat", "moof", "mdat"]);
    // 2 s of 30 frames a second, and of AAC packets: a quarter second of each, then the rest.
    let (_, before) = layout(&segment);
    let whole: Vec<usize> = before[0].clone();
    assert_eq!(whole[0], 60);
    assert_eq!(samples[0][0], 8, "the first quarter second of pictures");
    let sound = whole[1] as f64 / 8.0;
    assert!(
        (samples[0][1] as f64 - sound).abs() <= 1.0,
        "the first quarter second of sound: {samples:?} of {whole:?}"
    );
    assert_eq!(samples[1][0] + samples[0][0], whole[0]);
    assert_eq!(samples[1][1] + samples[0][1], whole[1]);
    let as_made = out.join("as-made.mp4");
    let rewritten = out.join("rewritten.mp4");
    tokio::fs::write(&as_made, [init.as_slice(), &segment].concat())
        .await
        .expect("written");
    tokio::fs::write(&rewritten, [init.as_slice(), &split].concat())
        .await
        .expect("written");
    // The same packets, with the same times, sizes and keyframes (interleaved otherwise).
    let mut packets_made = packets(&as_made).await;
    let mut packets_now = packets(&rewritten).await;
    packets_made.sort();
    packets_now.sort();
    assert!(packets_made.len() > 100, "{}", packets_made.len());
    assert_eq!(packets_now, packets_made);
    assert!(fragments::split_first_samples(b"not a segment").is_none());
}
