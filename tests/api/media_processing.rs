//! Videos from a file end to end: an upload or an import processed by real ffmpeg into every
//! output, served at `/media` (or from an S3 bucket), shown on the store once published; files
//! refused with their reason; workers that die; retries, posters, deletion and the sweep.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use videoapp::media::samples::{self, Sample};

use crate::support::media::{media_worker, stored_objects, video_id_of, Tus};
use crate::support::platform::{wait_until_worked, Delivery};
use crate::support::*;

const SHOP: &str = "processing-shop.myshopify.com";
/// Processing a small sample takes seconds; a loaded two-core machine may take many times that.
const PROCESSING: Duration = Duration::from_secs(180);

const SMALL: Sample = Sample::H264 {
    width: 360,
    height: 640,
    seconds: 3,
    audio: true,
};

async fn sample(kind: Sample) -> (PathBuf, Vec<u8>) {
    let dir = std::env::temp_dir().join(format!("videoapp-samples-{}", uuid::Uuid::new_v4()));
    let path = samples::make_in(kind, &dir).await.expect("make a sample");
    let bytes = std::fs::read(&path).unwrap();
    (path, bytes)
}

/// An instance with `workers` processing workers and a media directory of its own.
async fn spawn_processing(workers: u32) -> (TestApp, PathBuf) {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| {
        s.media.media_dir = media_dir;
        s.media.media_workers = workers;
    })
    .await;
    app.create_shop(SHOP).await;
    (app, dir)
}

async fn video(app: &impl Service, id: &str) -> Value {
    let response = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{id}"))
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

/// Waits until the video's processing state is `state`; fails at once on another end state,
/// saying what its jobs last failed with.
async fn wait_for_state(app: &impl Service, id: &str, state: &str) -> Value {
    let db = &sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let jobs_errors = move || async move {
        let errors: Vec<Option<String>> =
            sqlx::query_scalar("SELECT last_error FROM media_jobs WHERE video_id = $1::uuid")
                .bind(id)
                .fetch_all(db)
                .await
                .unwrap();
        errors
    };
    let what = format!("the video is {state}");
    eventually(&what, PROCESSING, move || async move {
        let body = video(app, id).await;
        let now = body["processing"]["state"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if now == state {
            return Ok(body);
        }
        if matches!(now.as_str(), "ready" | "failed") {
            let errors = jobs_errors().await;
            panic!("the video is {now}, not {state}: {body}; its jobs' errors: {errors:?}");
        }
        Err((body, jobs_errors().await))
    })
    .await
}

/// Uploads `bytes` in three chunks; returns the upload's location and the last answer.
async fn upload(app: &impl Service, bytes: &[u8], title: &str) -> (String, reqwest::Response) {
    let tus = Tus { app, shop: SHOP };
    let location = tus.create(bytes.len() as u64, title).await;
    let chunk = bytes.len().div_ceil(3).max(1);
    let last = tus.upload(&location, bytes, chunk).await;
    (location, last)
}

async fn get(app: &impl Service, url: &str) -> reqwest::Response {
    app.client.get(url).send().await.unwrap()
}

#[tokio::test]
async fn an_uploaded_video_is_processed_into_every_output_served_and_shown_on_the_store() {
    let (app, _) = spawn_processing(1).await;
    let (_, bytes) = sample(SMALL).await;
    let (location, last) = upload(&app, &bytes, "Summer dress").await;
    assert_eq!(last.status(), StatusCode::NO_CONTENT);
    assert_eq!(last.headers()["upload-offset"], bytes.len().to_string());
    let id = video_id_of(&location).to_string();
    let body = wait_for_state(&app, &id, "ready").await;
    assert_eq!(body["processing"]["progress"], 100);
    assert_eq!(body["processing"]["error"], Value::Null);
    assert_eq!(
        (body["width"].as_i64(), body["height"].as_i64()),
        (Some(360), Some(640))
    );
    let duration = body["duration"].as_f64().unwrap();
    assert!((2.9..=3.1).contains(&duration), "{duration}");
    let prefix = format!("{}/media/videos/{SHOP}/{id}/", app.address);
    for field in [
        "videoUrl",
        "hlsUrl",
        "posterUrl",
        "thumbnail",
        "miniVersionUrl",
    ] {
        let url = body[field].as_str().unwrap();
        assert!(url.starts_with(&prefix), "{field}: {url}");
    }
    assert_eq!(body["posterUrl"], body["thumbnail"]);

    // Every output is served, with its type; the playlists name what they lead to.
    let mp4 = get(&app, body["videoUrl"].as_str().unwrap()).await;
    assert_eq!(mp4.status(), StatusCode::OK);
    assert_eq!(mp4.headers()["content-type"], "video/mp4");
    assert_eq!(
        mp4.headers()["cache-control"],
        "public, max-age=31536000, immutable"
    );
    let poster = get(&app, body["posterUrl"].as_str().unwrap()).await;
    assert_eq!(poster.headers()["content-type"], "image/jpeg");
    let master_url = body["hlsUrl"].as_str().unwrap();
    let master = get(&app, master_url).await;
    assert_eq!(
        master.headers()["content-type"],
        "application/vnd.apple.mpegurl"
    );
    let master = master.text().await.unwrap();
    assert!(master.contains("RESOLUTION=360x640"), "{master}");
    assert!(master.contains("CODECS=\"avc1."), "{master}");
    let variant = master.lines().find(|l| l.ends_with(".m3u8")).unwrap();
    let base = master_url.rsplit_once('/').unwrap().0;
    let playlist = get(&app, &format!("{base}/{variant}"))
        .await
        .text()
        .await
        .unwrap();
    let segment = playlist
        .lines()
        .find(|l| l.ends_with(".m4s"))
        .expect(&playlist);
    let variant_base = format!("{base}/{variant}");
    let variant_base = variant_base.rsplit_once('/').unwrap().0;
    let part = app
        .client
        .get(format!("{variant_base}/{segment}"))
        .header("Range", "bytes=0-99")
        .send()
        .await
        .unwrap();
    assert_eq!(part.status(), StatusCode::PARTIAL_CONTENT);
    assert_eq!(part.bytes().await.unwrap().len(), 100);

    // Published, the store shows it with its HLS playlist and poster.
    let response = app
        .send_admin_json(
            Method::PATCH,
            &format!("/shops/{SHOP}/videos/{id}"),
            &json!({ "status": "PUBLISHED" }),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    app.create_widget(SHOP, json!({ "videoIds": [id] })).await;
    let (status, widgets) = json_of(
        app.storefront("contextual-widgets", SHOP, &[("location", "home")])
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{widgets}");
    let shown = &widgets["widgets"][0]["videos"][0];
    assert_eq!(shown["hlsUrl"], body["hlsUrl"], "{widgets}");
    assert_eq!(shown["posterUrl"], body["posterUrl"]);
    assert_eq!(shown["videoUrl"], body["videoUrl"]);
}

#[tokio::test]
async fn files_that_are_not_playable_videos_are_refused_with_their_reason_and_none_of_their_bytes_stay(
) {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| {
        s.media.media_dir = media_dir;
        s.media.video_max_seconds = 2;
        s.media.video_max_side = 640;
    })
    .await;
    app.create_shop(SHOP).await;
    let too_long = Sample::H264 {
        width: 320,
        height: 180,
        seconds: 3,
        audio: false,
    };
    let too_large = Sample::H264 {
        width: 960,
        height: 540,
        seconds: 1,
        audio: false,
    };
    for (kind, code, says) in [
        (Sample::Corrupt, "NOT_A_VIDEO", "damaged"),
        (Sample::Renamed, "NOT_A_VIDEO", "PNG"),
        (Sample::Image, "NOT_A_VIDEO", "PNG"),
        (Sample::AudioOnly, "NOT_A_VIDEO", "no picture"),
        (too_long, "VIDEO_TOO_LONG", ""),
        (too_large, "VIDEO_TOO_LARGE", ""),
    ] {
        let (_, bytes) = sample(kind).await;
        let (location, last) = upload(&app, &bytes, "Refused").await;
        let id = video_id_of(&location).to_string();
        assert_error(last, StatusCode::UNPROCESSABLE_ENTITY, code, says).await;
        let body = video(&app, &id).await;
        assert_eq!(body["processing"]["state"], "failed", "{kind:?}: {body}");
        assert_eq!(body["processing"]["error"]["code"], code, "{kind:?}");
        let message = body["processing"]["error"]["message"].as_str().unwrap();
        assert!(message.len() > 20, "{kind:?}: {message}");
        assert!(
            stored_objects(&dir, &id).is_empty(),
            "{kind:?}: {:?}",
            stored_objects(&dir, &id)
        );
        let response = app
            .send_admin_json(
                Method::PATCH,
                &format!("/shops/{SHOP}/videos/{id}"),
                &json!({ "status": "PUBLISHED" }),
            )
            .await;
        assert_error(
            response,
            StatusCode::BAD_REQUEST,
            "VIDEO_NOT_READY",
            "could not be processed",
        )
        .await;
    }
}

#[tokio::test]
async fn two_instances_take_the_chunks_of_one_upload_and_either_processes_it() {
    let database_url = fresh_database().await;
    let clickhouse_database = fresh_clickhouse_database();
    let dir = fresh_media_dir();
    let instance = |workers: u32| {
        let mut settings = test_settings(&database_url, &clickhouse_database);
        settings.media.media_dir = dir.clone();
        settings.media.media_workers = workers;
        spawn_with_settings(settings, database_url.clone(), clickhouse_database.clone())
    };
    let first = instance(0).await;
    let second = instance(1).await;
    first.create_shop(SHOP).await;
    let (_, bytes) = sample(SMALL).await;
    let tus_first = Tus {
        app: &first,
        shop: SHOP,
    };
    let tus_second = Tus {
        app: &second,
        shop: SHOP,
    };
    let location = tus_first.create(bytes.len() as u64, "Shared").await;
    let half = bytes.len() / 2;
    assert_eq!(
        tus_first
            .patch(&location, 0, bytes[..half].to_vec())
            .await
            .status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(
        tus_second.offset(&location).await,
        (StatusCode::OK, Some(half as u64))
    );
    let last = tus_second
        .patch(&location, half as u64, bytes[half..].to_vec())
        .await;
    assert_eq!(last.status(), StatusCode::NO_CONTENT);
    let id = video_id_of(&location).to_string();
    wait_for_state(&first, &id, "ready").await;
}

/// A child process that a failing test does not leave behind.
struct KilledOnDrop(std::process::Child);

impl Drop for KilledOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test]
async fn a_worker_killed_mid_job_leaves_nothing_half_visible_and_another_finishes_the_job() {
    let (app, dir) = spawn_processing(0).await;
    let (_, bytes) = sample(Sample::PhoneClip { seconds: 8 }).await;
    let (location, last) = upload(&app, &bytes, "Killed").await;
    assert_eq!(last.status(), StatusCode::NO_CONTENT);
    let id = video_id_of(&location).to_string();
    let public_url = format!("{}/media", app.address);
    let mut worker = KilledOnDrop(
        std::process::Command::new(env!("CARGO_BIN_EXE_videoapp"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("DATABASE_URL", &app.database_url)
            .env("VIDEOAPP_MEDIA_DIR", &dir)
            .env("VIDEOAPP_MEDIA_PUBLIC_URL", &public_url)
            .env("VIDEOAPP_MEDIA_JOB_LEASE_SECONDS", "3")
            .arg("worker")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start videoapp worker"),
    );
    // Killed once it is making the renditions: the poster and mini version exist by then.
    let (db, id) = (&app.db, &id);
    eventually(
        "the worker reached the renditions",
        PROCESSING,
        move || async move {
            let step: Option<String> = sqlx::query_scalar(
                "SELECT step FROM media_jobs WHERE video_id = $1::uuid AND state = 'running'",
            )
            .bind(id)
            .fetch_optional(db)
            .await
            .unwrap()
            .flatten();
            match step.as_deref() {
                Some("renditions") => Ok(()),
                _ => Err(step),
            }
        },
    )
    .await;
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(worker.0.id() as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap();
    worker.0.wait().unwrap();
    let body = video(&app, id).await;
    assert_eq!(body["processing"]["state"], "processing");
    assert_eq!(body["hlsUrl"], "", "{body}");
    assert_eq!(body["videoUrl"], "");

    // Another worker takes the job once the lease runs out, and finishes it.
    let mut other = media_worker(&app, &dir).await;
    let mut config = (*other.media.config).clone();
    config.job_lease = Duration::from_secs(3);
    other.media.config = std::sync::Arc::new(config);
    let runner = other.clone();
    let running = tokio::spawn(async move { runner.run_jobs().await });
    let body = wait_for_state(&app, id, "ready").await;
    running.abort();
    let attempts: i32 =
        sqlx::query_scalar("SELECT attempts FROM media_jobs WHERE video_id = $1::uuid")
            .bind(id)
            .fetch_one(&app.db)
            .await
            .unwrap();
    assert_eq!(attempts, 2);
    let published = body["hlsUrl"].as_str().unwrap();
    assert_eq!(get(&app, published).await.status(), StatusCode::OK);

    // The killed run's outputs are referenced by nothing: the sweep removes them, not the
    // published run's.
    let runs = |dir: &Path| -> std::collections::BTreeSet<String> {
        stored_objects(dir, &format!("videos/{SHOP}/{id}/"))
            .iter()
            .map(|p| {
                p.split(&format!("{id}/"))
                    .nth(1)
                    .unwrap()
                    .split('/')
                    .next()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(runs(&dir).len(), 2, "{:?}", runs(&dir));
    let mut sweeper = other.clone();
    let mut config = (*sweeper.media.config).clone();
    config.sweep_grace = Duration::ZERO;
    sweeper.media.config = std::sync::Arc::new(config);
    assert!(sweeper.sweep().await.unwrap() > 0);
    assert_eq!(runs(&dir).len(), 1);
    assert_eq!(get(&app, published).await.status(), StatusCode::OK);
    assert_eq!(
        get(&app, body["posterUrl"].as_str().unwrap())
            .await
            .status(),
        StatusCode::OK
    );
}

#[tokio::test]
async fn an_import_from_a_url_is_fetched_processed_and_ready_and_a_private_address_is_refused() {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| {
        s.media.media_dir = media_dir;
        s.media.media_workers = 1;
        s.media.import_allow_loopback_http = true;
    })
    .await;
    app.create_shop(SHOP).await;
    let (_, bytes) = sample(SMALL).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let origin = format!("http://{}", listener.local_addr().unwrap());
    let served = bytes.clone();
    tokio::spawn(async move {
        let router = axum::Router::new().route(
            "/clip.mp4",
            axum::routing::get(move || {
                let body = served.clone();
                async move { ([("content-type", "video/mp4")], body) }
            }),
        );
        axum::serve(listener, router).await.unwrap();
    });
    let response = app
        .send_admin_json(
            Method::POST,
            &format!("/shops/{SHOP}/videos/import"),
            &json!({ "url": format!("{origin}/clip.mp4"), "title": "Imported" }),
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["processing"]["state"], "queued");
    let id = body["id"].as_str().unwrap().to_string();
    let body = wait_for_state(&app, &id, "ready").await;
    assert_eq!(body["title"], "Imported");
    assert_eq!(
        get(&app, body["videoUrl"].as_str().unwrap()).await.status(),
        StatusCode::OK
    );

    let response = app
        .send_admin_json(
            Method::POST,
            &format!("/shops/{SHOP}/videos/import"),
            &json!({ "url": "http://169.254.169.254/latest/meta-data", "title": "Metadata" }),
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let response = app
        .send_admin_json(
            Method::POST,
            &format!("/shops/{SHOP}/videos/import"),
            &json!({ "url": format!("{origin}/missing.mp4"), "title": "Missing" }),
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let failed = wait_for_state(&app, body["id"].as_str().unwrap(), "failed").await;
    assert_eq!(
        failed["processing"]["error"]["code"], "IMPORT_FAILED",
        "{failed}"
    );
}

#[tokio::test]
async fn a_failed_video_is_retried_and_a_chosen_poster_replaces_the_old_one() {
    let (app, dir) = spawn_processing(0).await;
    let (_, bytes) = sample(SMALL).await;
    let (location, _) = upload(&app, &bytes, "Retried").await;
    let id = video_id_of(&location).to_string();
    // The last attempt fails (ffmpeg is given no time at all): the video fails with a reason.
    sqlx::query("UPDATE media_jobs SET attempts = 4 WHERE video_id = $1::uuid")
        .bind(&id)
        .execute(&app.db)
        .await
        .unwrap();
    let mut hurried = media_worker(&app, &dir).await;
    let mut config = (*hurried.media.config).clone();
    config.ffmpeg_timeout = Duration::from_millis(1);
    hurried.media.config = std::sync::Arc::new(config);
    let job = videoapp::media::jobs::claim(&app.db, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    hurried.run(job).await;
    let body = video(&app, &id).await;
    assert_eq!(body["processing"]["state"], "failed", "{body}");
    assert_eq!(body["processing"]["error"]["code"], "PROCESSING_FAILED");

    let response = app
        .send_admin(Method::POST, &format!("/shops/{SHOP}/videos/{id}/retry"))
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["processing"]["state"], "queued");
    let worker = media_worker(&app, &dir).await;
    let job = videoapp::media::jobs::claim(&app.db, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    worker.run(job).await;
    let ready = video(&app, &id).await;
    assert_eq!(ready["processing"]["state"], "ready", "{ready}");
    let response = app
        .send_admin(Method::POST, &format!("/shops/{SHOP}/videos/{id}/retry"))
        .await;
    assert_error(response, StatusCode::CONFLICT, "VIDEO_NOT_FAILED", "failed").await;

    // Another poster, from 2 s in: a new object; the old one is deleted.
    let old_poster = ready["posterUrl"].as_str().unwrap().to_string();
    let response = app
        .send_admin_json(
            Method::POST,
            &format!("/shops/{SHOP}/videos/{id}/poster"),
            &json!({ "atMs": 2000 }),
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["posterTimeMs"], 2000);
    let job = videoapp::media::jobs::claim(&app.db, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    worker.run(job).await;
    let after = video(&app, &id).await;
    assert_eq!(after["processing"]["state"], "ready");
    assert_ne!(after["posterUrl"], old_poster.as_str());
    assert_eq!(after["thumbnail"], after["posterUrl"]);
    assert_eq!(
        get(&app, after["posterUrl"].as_str().unwrap())
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(after["hlsUrl"], ready["hlsUrl"]);
    let response = app
        .send_admin_json(
            Method::POST,
            &format!("/shops/{SHOP}/videos/{id}/poster"),
            &json!({ "atMs": 60000 }),
        )
        .await;
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        "atMs",
    )
    .await;

    // Deleting the video removes every object of it.
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}/videos/{id}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(
        stored_objects(&dir, &id).is_empty(),
        "{:?}",
        stored_objects(&dir, &id)
    );
}

#[tokio::test]
async fn the_s3_store_takes_uploads_and_serves_outputs_at_its_public_url() {
    let env = |name: &str| {
        std::env::var(name)
            .unwrap_or_else(|_| panic!("{name} is not set: run scripts/test, which starts Garage"))
    };
    // A process of its own, so that its metrics are its own.
    let app = spawn_process_app(&[
        ("VIDEOAPP_S3_BUCKET", env("VIDEOAPP_TEST_S3_BUCKET")),
        ("VIDEOAPP_S3_ENDPOINT", env("VIDEOAPP_TEST_S3_ENDPOINT")),
        ("VIDEOAPP_S3_REGION", env("VIDEOAPP_TEST_S3_REGION")),
        (
            "VIDEOAPP_S3_ACCESS_KEY_ID",
            env("VIDEOAPP_TEST_S3_ACCESS_KEY_ID"),
        ),
        (
            "VIDEOAPP_S3_SECRET_ACCESS_KEY",
            env("VIDEOAPP_TEST_S3_SECRET_ACCESS_KEY"),
        ),
        (
            "VIDEOAPP_MEDIA_PUBLIC_URL",
            env("VIDEOAPP_TEST_S3_PUBLIC_URL"),
        ),
        ("VIDEOAPP_MEDIA_WORKERS", "1".to_string()),
    ])
    .await;
    app.create_shop(SHOP).await;
    let (_, bytes) = sample(SMALL).await;
    let (location, last) = upload(&app, &bytes, "On S3").await;
    assert_eq!(last.status(), StatusCode::NO_CONTENT);
    let id = video_id_of(&location).to_string();
    let body = wait_for_state(&app, &id, "ready").await;
    // The last chunk was answered from the file's index, read from the bucket by ranges: the
    // whole file was fetched once, by the worker, not also to answer the upload.
    let checked = "media_uploads_checked_total";
    assert_eq!(app.metric(checked, &[("by", "index")]).await, Some(1.0));
    let sources = "media_sources_read_total";
    assert_eq!(app.metric(sources, &[("how", "copied")]).await, Some(1.0));
    let public = env("VIDEOAPP_TEST_S3_PUBLIC_URL");
    for field in ["videoUrl", "hlsUrl", "posterUrl", "miniVersionUrl"] {
        let url = body[field].as_str().unwrap();
        assert!(url.starts_with(&public), "{field}: {url}");
        let response = get(&app, url).await;
        assert_eq!(response.status(), StatusCode::OK, "{field}: {url}");
    }
    let mp4 = get(&app, body["videoUrl"].as_str().unwrap()).await;
    assert_eq!(mp4.headers()["content-type"], "video/mp4");
    // The service does not serve the bucket's objects itself.
    let path = body["videoUrl"]
        .as_str()
        .unwrap()
        .trim_start_matches(&public);
    let here = get(&app, &format!("{}/media/{path}", app.address)).await;
    assert_eq!(here.status(), StatusCode::NOT_FOUND);
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}/videos/{id}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        get(&app, body["videoUrl"].as_str().unwrap()).await.status(),
        StatusCode::NOT_FOUND
    );
}

#[tokio::test]
async fn an_uninstall_and_then_the_shops_redaction_remove_every_object_of_its_videos() {
    let (app, dir) = spawn_processing(0).await;
    let (_, bytes) = sample(SMALL).await;
    let (location, _) = upload(&app, &bytes, "Gone with the shop").await;
    let id = video_id_of(&location).to_string();
    let worker = media_worker(&app, &dir).await;
    let job = videoapp::media::jobs::claim(&app.db, Duration::from_secs(60))
        .await
        .unwrap()
        .unwrap();
    worker.run(job).await;
    assert_eq!(video(&app, &id).await["processing"]["state"], "ready");
    assert!(stored_objects(&dir, &format!("uploads/{id}")).len() >= 2);
    assert!(!stored_objects(&dir, &format!("videos/{SHOP}/{id}")).is_empty());

    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    assert!(response.status().is_success());
    worker.delete_due().await.unwrap();
    assert!(
        stored_objects(&dir, &id).is_empty(),
        "{:?}",
        stored_objects(&dir, &id)
    );

    // A run that was still writing when the shop left: its objects go with the redaction.
    let stray = object_store::path::Path::from(format!("videos/{SHOP}/{id}/late/poster-360.jpg"));
    worker
        .media
        .store
        .put(&stray, bytes::Bytes::from_static(b"late"))
        .await
        .unwrap();
    let mut redact = Delivery::new("shop/redact", &json!({ "shop_id": 1, "shop_domain": SHOP }));
    redact.shop = SHOP;
    redact.send_ok(&app).await;
    wait_until_worked(&app).await;
    worker.delete_due().await.unwrap();
    assert!(
        stored_objects(&dir, SHOP).is_empty(),
        "{:?}",
        stored_objects(&dir, SHOP)
    );
}

#[tokio::test]
async fn an_import_whose_title_is_empty_or_too_long_is_refused_naming_the_title_and_makes_no_video()
{
    let app = spawn_app_with(|s| s.media.media_dir = fresh_media_dir()).await;
    app.create_shop(SHOP).await;
    let path = format!("/shops/{SHOP}/videos/import");
    // Titles hold at most 512 characters, as everywhere in the catalog.
    for title in [" ".to_string(), "x".repeat(513)] {
        let body = json!({ "url": "https://example.com/clip.mp4", "title": title });
        let response = app.send_admin_json(Method::POST, &path, &body).await;
        assert_error(
            response,
            StatusCode::BAD_REQUEST,
            "VALIDATION_ERROR",
            "title",
        )
        .await;
    }
    let videos = app
        .admin_list(&format!("/shops/{SHOP}/videos"), "videos")
        .await;
    assert!(videos.is_empty(), "{videos:?}");
}
