//! Processing, tus uploads and `/media` ranges beside plain baselines of the same run
//! (BENCHMARKS.md, "Media"). `MEDIA_BENCH_FIGURES` picks them (123; 3 runs 1).

mod support;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context};
use bytes::Bytes;
use futures::future::OptionFuture;
use reqwest::{RequestBuilder, StatusCode};
use videoapp::config::{MediaConfig, Settings};
use videoapp::media::ffmpeg::Ffmpeg;
use videoapp::media::samples::{self, Sample};

use support::helpers::ADMIN_TOKEN;
use support::load::{self, median, setting, CpuUsage};
use support::{Databases, Outcome, ServiceProcess, SHOP};

const MIB: u64 = 1 << 20;
/// The upload: the clip padded to this size, in `PATCH`es of this size.
const UPLOAD_MIB: u64 = 256;
const CHUNK_MIB: u64 = 8;
/// wrk's run of ranges per target, and its connections.
const RANGE_SECONDS: u64 = 10;
const RANGE_CONNECTIONS: u64 = 16;
/// wrk's script: each request the next 1 MiB of the file, from the start again at its end.
const RANGES: &str = "local size, at = 0, 0\n\
    function init(args) size = tonumber(args[1]) end\n\
    function request()\n  local first = at\n  at = at + 1048576\n  if at >= size then at = 0 end\n\
    local last = math.min(first + 1048575, size - 1)\n\
    return wrk.format('GET', nil, { Range = 'bytes=' .. first .. '-' .. last })\nend\n";

fn main() -> ExitCode {
    if !load::benching("media") {
        return ExitCode::SUCCESS;
    }
    support::on_fresh_databases(None, run)
}

async fn run(databases: &Databases, database_url: &str) -> Outcome {
    let work = tempfile::tempdir()?;
    let dir = work.path();
    let clip = samples::make_in(Sample::PhoneClip { seconds: 30 }, dir).await;
    let clip = clip.context("making the phone clip")?;
    let size = std::fs::metadata(&clip)?.len();
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let (cores, clip_name, load) = (load::cores(), clip.display(), load.trim());
    println!("\nmedia run: {clip_name}, {size} bytes; {cores} cores, load {load}");
    let rounds = setting("MEDIA_BENCH_ROUNDS", 3);
    let figures = std::env::var("MEDIA_BENCH_FIGURES").unwrap_or_else(|_| "123".into());
    let wanted = figures.contains(['1', '3']);
    let made = wanted.then(|| processing(&clip, dir, rounds));
    let progressive = OptionFuture::from(made).await.transpose()?;
    let store = dir.join("store");
    let env = [
        ("VIDEOAPP_MEDIA_DIR", store.display().to_string()),
        ("VIDEOAPP_MEDIA_WORKERS", "0".to_string()),
    ];
    let service = ServiceProcess::start_with(databases, database_url, &env).await?;
    if figures.contains('2') {
        upload(&service, &clip, dir, rounds).await?;
    }
    match progressive.filter(|_| figures.contains('3')) {
        Some(made) => ranges(&service, &made, &store, rounds).await,
        None => Ok(()),
    }
}

/// Every output as the worker makes them, into `dir`: the seconds until the poster and the mini
/// version (what the dashboard shows first), and everything, were made; the progressive MP4.
async fn make(media: &MediaConfig, clip: &Path, dir: &Path) -> Outcome<([f64; 2], PathBuf)> {
    let (threads, timeout) = (media.ffmpeg_threads, media.ffmpeg_timeout);
    let ffmpeg = Ffmpeg { threads, timeout };
    let [poster, mini, renditions] = ["poster", "mini", "renditions"].map(|step| dir.join(step));
    for dir in [&poster, &mini, &renditions] {
        let _ = std::fs::remove_dir_all(dir);
        std::fs::create_dir_all(dir).with_context(|| dir.display().to_string())?;
    }
    let started = Instant::now();
    let facts = ffmpeg.probe(clip, &media.limits).await?;
    ffmpeg.poster(clip, &facts, None, &poster).await?;
    ffmpeg.mini(clip, &facts, &mini).await?;
    let preview = started.elapsed().as_secs_f64();
    let made = ffmpeg.renditions(clip, &facts, &renditions, &|_| {});
    let progressive = renditions.join(made.await?.progressive);
    Ok(([preview, started.elapsed().as_secs_f64()], progressive))
}

/// Figure 1: rounds of every output, then the plain transcode; returns the progressive MP4.
async fn processing(clip: &Path, work: &Path, rounds: u64) -> Outcome<PathBuf> {
    let media = Settings::default().media.media_config()?;
    let threads = media.ffmpeg_threads;
    println!("\nprocessing: ffmpeg threads {threads}; plain: ffmpeg -preset veryfast, H.264 + AAC, default threads");
    println!(
        "  round  poster+mini  everything  plain transcode  everything/plain  poster+mini/plain"
    );
    let (mut ratios, mut progressive) = (Vec::new(), PathBuf::new());
    for round in 1..=rounds {
        let made = make(&media, clip, &work.join("outputs")).await;
        let ([preview, everything], made) = made.context("processing the clip")?;
        progressive = made;
        let started = Instant::now();
        let plain = tokio::process::Command::new("ffmpeg")
            .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y", "-i"])
            .arg(clip)
            .args(["-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac"])
            .args(["-movflags", "+faststart"])
            .arg(work.join("plain.mp4"))
            .status()
            .await;
        let succeeded = plain.as_ref().is_ok_and(|s| s.success());
        ensure!(succeeded, "the plain transcode failed: {plain:?}");
        let plain = started.elapsed().as_secs_f64();
        let ratio = [everything / plain, preview / plain];
        ratios.push(ratio);
        println!("  #{round}     {preview:>9.2} s  {everything:>8.2} s  {plain:>13.2} s  {:>15.2}×  {:>16.2}×", ratio[0], ratio[1]);
    }
    let [all, previews] = [0, 1].map(|i| median(ratios.iter().map(|r| r[i]).collect()));
    println!(
        "  median: everything {all:.2}× the plain transcode (goal ≤ 1.5×), poster + mini version \
         {previews:.2}× (goal ≤ 0.3×)"
    );
    Ok(progressive)
}

/// Figure 2: tus uploads of the padded clip, alternating with a copy.
async fn upload(service: &ServiceProcess, clip: &Path, work: &Path, rounds: u64) -> Outcome {
    let (total, chunk) = (UPLOAD_MIB * MIB, CHUNK_MIB * MIB);
    let mut file = std::fs::read(clip)?;
    // A `free` box after the clip: still the same video to ffprobe, of the size wanted.
    let padding = total.checked_sub(file.len() as u64);
    let padding = padding.context("a clip over the upload's size")?;
    file.extend_from_slice(&(padding as u32).to_be_bytes());
    file.extend_from_slice(b"free");
    file.resize(total as usize, 0);
    let source = work.join("upload.mp4");
    std::fs::write(&source, &file)?;
    let (file, client) = (Bytes::from(file), reqwest::Client::new());
    let tus = |r: RequestBuilder| r.bearer_auth(ADMIN_TOKEN).header("Tus-Resumable", "1.0.0");
    let uploads = format!("{}/admin/v1/shops/{SHOP}/uploads", service.base_url);
    let mib_per_s = |started: Instant| UPLOAD_MIB as f64 / started.elapsed().as_secs_f64();
    println!("\nupload: {UPLOAD_MIB} MiB in {CHUNK_MIB} MiB PATCHes, one connection; copy: tokio::fs::copy + fsync");
    println!("  round  service        last PATCH  copy           service/copy");
    let mut ratios = Vec::new();
    for round in 1..=rounds {
        let started = Instant::now();
        let created = tus(client.post(&uploads))
            .header("Upload-Length", total.to_string())
            // base64 of the title, "bench"
            .header("Upload-Metadata", "title YmVuY2g=");
        let created = created.send().await?;
        let answered = || format!("the creation answered {}", created.status());
        let location = created.headers().get("location").with_context(answered)?;
        let location = format!("{}{}", service.base_url, location.to_str()?);
        let (mut offset, mut last) = (0, Duration::ZERO);
        while offset < total {
            let (end, sent) = ((offset + chunk).min(total), Instant::now());
            let answer = tus(client.patch(&location))
                .header("Upload-Offset", offset.to_string())
                .header("Content-Type", "application/offset+octet-stream")
                .body(file.slice(offset as usize..end as usize));
            let answer = answer.send().await?;
            if answer.status() != StatusCode::NO_CONTENT {
                let text = answer.text().await.unwrap_or_default();
                bail!("PATCH at {offset} answered: {text}");
            }
            (offset, last) = (end, sent.elapsed());
        }
        let uploaded = mib_per_s(started);
        let (copy, started) = (work.join("copy.mp4"), Instant::now());
        tokio::fs::copy(&source, &copy).await?;
        tokio::fs::File::open(&copy).await?.sync_all().await?;
        let copied = mib_per_s(started);
        let _ = std::fs::remove_file(&copy);
        let (last, ratio) = (last.as_secs_f64(), uploaded / copied);
        println!("  #{round}     {uploaded:>7.1} MiB/s  {last:>7.3} s  {copied:>7.1} MiB/s  {ratio:>11.2}×");
        ratios.push(ratio);
    }
    let ratio = median(ratios);
    println!("  median: the service {ratio:.2}× the copy's rate (goal ≥ 0.8×)");
    Ok(())
}

/// Figure 3: wrk's 1 MiB ranges of the progressive MP4 from `/media` and from `ServeDir`.
async fn ranges(service: &ServiceProcess, mp4: &Path, store: &Path, rounds: u64) -> Outcome {
    let name = format!("videos/{SHOP}/bench/run/video-720.mp4");
    let stored = store.join(&name);
    std::fs::create_dir_all(stored.parent().unwrap_or(store))?;
    let size = std::fs::copy(mp4, &stored)?;
    let router =
        axum::Router::new().nest_service("/media", tower_http::services::ServeDir::new(store));
    let ceiling = load::serve(router).await?;
    let urls = [&service.base_url, &ceiling].map(|base| format!("{base}/media/{name}"));
    let client = reqwest::Client::new();
    let range = |url: &str| load::answer(client.get(url).header("Range", "bytes=0-1048575"));
    let (served, ceiling) = (range(&urls[0]).await?, range(&urls[1]).await?);
    let same = served.0 == StatusCode::PARTIAL_CONTENT && served == ceiling;
    let (served, ceiling) = (served.0, ceiling.0);
    ensure!(same, "a range: /media {served}, the ceiling {ceiling}");
    let script = store.join("ranges.lua");
    std::fs::write(&script, RANGES)?;
    println!(
        "\nranges: {size} bytes' progressive MP4 in 1 MiB ranges, wrk {RANGE_CONNECTIONS} \
         connections, {} threads, 2 s warm-up + {RANGE_SECONDS} s per target, {rounds} rounds",
        load::cores()
    );
    let (seconds, connections) = (RANGE_SECONDS, RANGE_CONNECTIONS);
    let names = ["service (/media)", "ceiling (tower-http ServeDir)"];
    let script = [script.display().to_string(), size.to_string()];
    let measure = async |t: usize| {
        let server = |cpu: &CpuUsage| if t == 0 { cpu.watched[0] } else { cpu.own };
        let cores = (&[service.pid][..], server);
        let measured = load::warm_and_measure(&urls[t], connections, [2, seconds], &script, cores);
        let m = measured.await?;
        let mib = m.rate * size as f64 / size.div_ceil(MIB) as f64 / MIB as f64;
        Ok((m, format!("{mib:>7.0} MiB/s")))
    };
    let measured = load::rounds(&names, rounds, "bytes", measure).await;
    measured.map(drop)
}
