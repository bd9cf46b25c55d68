//! tus uploads at `/admin/v1/shops/{shop}/uploads` (and the dashboard's): creation, offsets,
//! resuming, checksums, termination, expiry, limits, and files refused from their first bytes.

use std::time::Duration;

use base64::Engine;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use sha1::Digest;

use crate::support::media::*;
use crate::support::*;

const SHOP: &str = "uploads-shop.myshopify.com";

async fn video(app: &TestApp, id: &str) -> Value {
    let (status, body) = json_of(
        app.send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{id}"))
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn spawn_with_media_dir() -> (TestApp, std::path::PathBuf) {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| s.media.media_dir = media_dir).await;
    app.create_shop(SHOP).await;
    (app, dir)
}

#[tokio::test]
async fn discovery_names_the_version_the_extensions_the_checksums_and_the_largest_file() {
    let app = spawn_app_with(|s| s.media.upload_max_bytes = 5_000_000).await;
    app.create_shop(SHOP).await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let response = app
        .client
        .request(Method::OPTIONS, app.url(&tus.uploads_path()))
        .bearer_auth(ADMIN_TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let h = response.headers();
    assert_eq!(h["tus-version"], "1.0.0");
    assert_eq!(h["tus-resumable"], "1.0.0");
    assert_eq!(h["tus-max-size"], "5000000");
    let extensions = h["tus-extension"].to_str().unwrap();
    for extension in [
        "creation",
        "creation-with-upload",
        "expiration",
        "termination",
        "checksum",
    ] {
        assert!(
            extensions.split(',').any(|e| e == extension),
            "{extensions}"
        );
    }
    assert_eq!(h["tus-checksum-algorithm"], "sha1,sha256");
}

#[tokio::test]
async fn a_created_upload_is_a_video_uploading_at_once_and_head_follows_its_bytes() {
    let (app, _) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(1000, "Red dress").await;
    assert!(
        location.starts_with(&format!("/admin/v1/shops/{SHOP}/uploads/")),
        "{location}"
    );
    let id = video_id_of(&location);
    let body = video(&app, id).await;
    assert_eq!(body["title"], "Red dress");
    assert_eq!(body["status"], "DRAFT");
    assert_eq!(body["processing"]["state"], "uploading");
    assert_eq!(body["processing"]["error"], Value::Null);

    assert_eq!(tus.offset(&location).await, (StatusCode::OK, Some(0)));
    let response = tus.patch(&location, 0, vec![0u8; 400]).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(response.headers()["upload-offset"], "400");
    assert_eq!(response.headers()["tus-resumable"], "1.0.0");
    let head = tus.request(Method::HEAD, &location).send().await.unwrap();
    assert_eq!(head.headers()["upload-offset"], "400");
    assert_eq!(head.headers()["upload-length"], "1000");
    assert_eq!(head.headers()["cache-control"], "no-store");
    assert!(head.headers().contains_key("upload-expires"));

    // A PATCH that is not where the upload stands is refused and changes nothing.
    let response = tus.patch(&location, 100, vec![1u8; 10]).await;
    assert_error(
        response,
        StatusCode::CONFLICT,
        "UPLOAD_OFFSET_MISMATCH",
        "400",
    )
    .await;
    assert_eq!(tus.offset(&location).await.1, Some(400));
    // Nor can it go past the upload's length.
    let response = tus.patch(&location, 400, vec![1u8; 601]).await;
    assert_error(
        response,
        StatusCode::PAYLOAD_TOO_LARGE,
        "FILE_TOO_LARGE",
        "Upload-Length",
    )
    .await;
    assert_eq!(tus.offset(&location).await.1, Some(400));

    // Publishing is refused until the video is processed.
    let response = app
        .send_admin_json(
            Method::PATCH,
            &format!("/shops/{SHOP}/videos/{id}"),
            &serde_json::json!({ "status": "PUBLISHED" }),
        )
        .await;
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "VIDEO_NOT_READY",
        "still uploading",
    )
    .await;
    // Its title and products may change meanwhile; its media fields are the file's.
    let response = app
        .send_admin_json(
            Method::PATCH,
            &format!("/shops/{SHOP}/videos/{id}"),
            &serde_json::json!({ "title": "Blue dress", "productIds": ["1"] }),
        )
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["title"], "Blue dress");
    let response = app
        .send_admin_json(
            Method::PATCH,
            &format!("/shops/{SHOP}/videos/{id}"),
            &serde_json::json!({ "videoUrl": "https://cdn.example.com/x.mp4" }),
        )
        .await;
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        "videoUrl",
    )
    .await;
}

#[tokio::test]
async fn requests_that_do_not_speak_tus_1_0_0_are_refused_with_the_version_it_speaks() {
    let (app, _) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let request = |version: Option<&str>| {
        let request = app
            .client
            .post(app.url(&tus.uploads_path()))
            .bearer_auth(ADMIN_TOKEN)
            .header("Upload-Length", "10");
        match version {
            Some(version) => request.header("Tus-Resumable", version),
            None => request,
        }
    };
    let response = request(Some("0.2.2")).send().await.unwrap();
    assert_eq!(response.headers()["tus-version"], "1.0.0");
    assert_error(
        response,
        StatusCode::PRECONDITION_FAILED,
        "TUS_VERSION_UNSUPPORTED",
        "1.0.0",
    )
    .await;
    for missing in [None, Some("")] {
        let response = request(missing).send().await.unwrap();
        assert_error(
            response,
            StatusCode::BAD_REQUEST,
            "INVALID_HEADER",
            "Tus-Resumable",
        )
        .await;
    }
    let response = tus
        .request(Method::POST, &tus.uploads_path())
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "INVALID_HEADER",
        "Upload-Length",
    )
    .await;
    let location = tus.create(10, "x").await;
    let response = tus
        .request(Method::PATCH, &location)
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/octet-stream")
        .body(vec![0u8; 10])
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        "offset+octet-stream",
    )
    .await;
    // Without the admin token nothing is said about uploads.
    let response = app
        .client
        .head(app.url(&location))
        .header("Tus-Resumable", "1.0.0")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_chunk_whose_checksum_does_not_match_is_refused_with_460_and_not_kept() {
    let (app, _) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(2000, "Checked").await;
    let chunk = vec![7u8; 1000];
    let wrong = base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(b"other"));
    let response = tus
        .request(Method::PATCH, &location)
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Upload-Checksum", format!("sha1 {wrong}"))
        .body(chunk.clone())
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::from_u16(460).unwrap(),
        "CHECKSUM_MISMATCH",
        "checksum",
    )
    .await;
    assert_eq!(tus.offset(&location).await.1, Some(0));
    let right = base64::engine::general_purpose::STANDARD.encode(sha1::Sha1::digest(&chunk));
    let response = tus
        .request(Method::PATCH, &location)
        .header("Upload-Offset", "0")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Upload-Checksum", format!("sha1 {right}"))
        .body(chunk)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(tus.offset(&location).await.1, Some(1000));
    let response = tus
        .request(Method::PATCH, &location)
        .header("Upload-Offset", "1000")
        .header("Content-Type", "application/offset+octet-stream")
        .header("Upload-Checksum", "md5 AAAA")
        .body(vec![1u8; 10])
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "CHECKSUM_ALGORITHM_UNSUPPORTED",
        "md5",
    )
    .await;
}

#[tokio::test]
async fn an_image_is_refused_at_its_first_chunk_and_none_of_its_bytes_stay() {
    let (app, dir) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(5000, "Not a video").await;
    let id = video_id_of(&location).to_string();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(5000, 0);
    let response = tus.patch(&location, 0, png).await;
    assert_error(
        response,
        StatusCode::UNPROCESSABLE_ENTITY,
        "NOT_A_VIDEO",
        "PNG",
    )
    .await;
    let body = video(&app, &id).await;
    assert_eq!(body["processing"]["state"], "failed");
    assert_eq!(body["processing"]["error"]["code"], "NOT_A_VIDEO");
    assert!(
        stored_objects(&dir, &id).is_empty(),
        "{:?}",
        stored_objects(&dir, &id)
    );
    assert_eq!(tus.offset(&location).await.0, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn files_over_the_limits_or_empty_are_refused_before_a_video_is_made() {
    let app = spawn_app_with(|s| {
        s.media.upload_max_bytes = 10_000;
        s.media.shop_quota_bytes = 25_000;
    })
    .await;
    app.create_shop(SHOP).await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let create = |length: u64| {
        tus.request(Method::POST, &tus.uploads_path())
            .header("Upload-Length", length.to_string())
            .send()
    };
    assert_error(
        create(10_001).await.unwrap(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "FILE_TOO_LARGE",
        "10.0 KB",
    )
    .await;
    assert_error(
        create(0).await.unwrap(),
        StatusCode::UNPROCESSABLE_ENTITY,
        "EMPTY_FILE",
        "empty",
    )
    .await;
    // Two uploads of 10 KB fit the quota of 25 KB, a third does not.
    tus.create(10_000, "one").await;
    tus.create(10_000, "two").await;
    assert_error(
        create(10_000).await.unwrap(),
        StatusCode::PAYLOAD_TOO_LARGE,
        "QUOTA_EXCEEDED",
        "storage is full",
    )
    .await;
    assert_eq!(
        app.admin_list(&format!("/shops/{SHOP}/videos"), "videos")
            .await
            .len(),
        2
    );
    let response = tus
        .request(Method::POST, &tus.uploads_path())
        .header("Upload-Length", "-5")
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "INVALID_HEADER",
        "Upload-Length",
    )
    .await;
    let response = tus
        .request(Method::POST, &tus.uploads_path())
        .header("Upload-Length", "10")
        .header("Upload-Metadata", "title not-base64!")
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "INVALID_HEADER",
        "'title' is not base64",
    )
    .await;
}

#[tokio::test]
async fn terminating_an_upload_deletes_its_video_and_its_bytes() {
    let (app, dir) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(3000, "Cancelled").await;
    let id = video_id_of(&location).to_string();
    let mut mp4_start = b"\0\0\0\x20ftypisom".to_vec();
    mp4_start.resize(1000, 0);
    assert_eq!(
        tus.patch(&location, 0, mp4_start).await.status(),
        StatusCode::NO_CONTENT
    );
    assert_eq!(stored_objects(&dir, &id).len(), 1);
    let response = tus.request(Method::DELETE, &location).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(tus.offset(&location).await.0, StatusCode::NOT_FOUND);
    let response = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{id}"))
        .await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    assert!(stored_objects(&dir, &id).is_empty());
}

#[tokio::test]
async fn a_connection_that_drops_mid_chunk_keeps_what_it_delivered_and_the_upload_resumes() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let (app, _) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(100_000, "Dropped").await;
    let address = app.address.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    // The body follows once the service asks for it (100 Continue): it is storing the chunk by
    // then, so what is sent before the connection drops is what it delivered.
    let head = format!(
        "PATCH {location} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\
         Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: 100000\r\n\
         Expect: 100-continue\r\n\r\n"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let go_ahead = b"HTTP/1.1 100 Continue\r\n\r\n";
    let mut answer = vec![0u8; go_ahead.len()];
    tokio::time::timeout(Duration::from_secs(10), stream.read_exact(&mut answer))
        .await
        .expect("asked for the body")
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&answer),
        String::from_utf8_lossy(go_ahead)
    );
    let mut first = b"\0\0\0\x20ftypisom".to_vec();
    first.resize(40_000, 3);
    stream.write_all(&first).await.unwrap();
    stream.flush().await.unwrap();
    drop(stream);
    let (tus, location) = (&tus, &location);
    eventually(
        "the offset is what was delivered",
        Duration::from_secs(10),
        move || async move {
            let (_, offset) = tus.offset(location).await;
            offset.filter(|o| *o == 40_000).ok_or(offset)
        },
    )
    .await;
    let response = tus.patch(location, 40_000, vec![3u8; 10_000]).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(response.headers()["upload-offset"], "50000");
}

#[tokio::test]
async fn an_upload_not_finished_in_time_expires_and_its_bytes_are_removed() {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| {
        s.media.media_dir = media_dir;
        s.media.upload_expiry = Duration::from_secs(1);
    })
    .await;
    app.create_shop(SHOP).await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let location = tus.create(3000, "Forgotten").await;
    let id = video_id_of(&location).to_string();
    let mut start = b"\0\0\0\x20ftypisom".to_vec();
    start.resize(1000, 0);
    assert_eq!(
        tus.patch(&location, 0, start).await.status(),
        StatusCode::NO_CONTENT
    );
    let (tus, location) = (&tus, &location);
    eventually(
        "the upload expired",
        Duration::from_secs(10),
        move || async move {
            let (status, _) = tus.offset(location).await;
            (status == StatusCode::GONE).then_some(()).ok_or(status)
        },
    )
    .await;
    let response = tus.patch(location, 1000, vec![0u8; 100]).await;
    assert_error(response, StatusCode::GONE, "UPLOAD_EXPIRED", "expired").await;

    let worker = media_worker(&app, &dir).await;
    assert_eq!(worker.expire_uploads().await.unwrap(), 1);
    worker.delete_due().await.unwrap();
    assert!(stored_objects(&dir, &id).is_empty());
    let body = video(&app, &id).await;
    assert_eq!(body["processing"]["state"], "failed");
    assert_eq!(body["processing"]["error"]["code"], "UPLOAD_EXPIRED");
}

/// An MP4 as cameras and editors write it without `+faststart`: its index (`moov`) after its
/// frames, then a `free` box of `padding` bytes; returns the file and where its `moov` starts
/// and ends.
async fn index_last_mp4(seconds: u32, padding: u32) -> (Vec<u8>, std::ops::Range<usize>) {
    let dir = fresh_media_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let path = videoapp::media::samples::make_in(
        videoapp::media::samples::Sample::IndexLast { seconds },
        &dir,
    )
    .await
    .unwrap();
    let mut bytes = std::fs::read(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let mut at = 0;
    let mut moov = None;
    while at + 8 <= bytes.len() {
        let size = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
        if &bytes[at + 4..at + 8] == b"moov" {
            moov = Some(at..at + size);
        }
        at += size;
    }
    let moov = moov.expect("a moov box");
    assert!(moov.end == bytes.len(), "the index is not last");
    bytes.extend_from_slice(&(padding + 8).to_be_bytes());
    bytes.extend_from_slice(b"free");
    bytes.resize(bytes.len() + padding as usize, 0);
    (bytes, moov)
}

/// Claims the queued job and runs it to its end with a worker on the app's media directory.
async fn process_queued(app: &TestApp, dir: &std::path::Path, id: &str) -> Value {
    let worker = media_worker(app, dir).await;
    let job = videoapp::media::jobs::claim(&app.db, Duration::from_secs(60))
        .await
        .unwrap()
        .expect("a queued job");
    worker.run(job).await;
    video(app, id).await
}

/// The bytes of the upload's stored parts, one after another in their names' order.
fn stored_bytes(dir: &std::path::Path, id: &str) -> Vec<u8> {
    let mut parts = stored_objects(&dir.join("uploads"), id);
    parts.sort();
    parts
        .iter()
        .flat_map(|p| std::fs::read(p).unwrap())
        .collect()
}

#[tokio::test]
async fn an_mp4_with_its_index_last_cut_across_chunks_is_probed_and_processed_in_place() {
    let (app, dir) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let (file, moov) = index_last_mp4(4, 0).await;
    let location = tus.create(file.len() as u64, "Index last").await;
    let id = video_id_of(&location).to_string();
    // The frames in two parts, and the index cut between the last two: reading it means seeking
    // from the start to the end and back, across every boundary.
    let middle = moov.start / 2;
    let cuts = [0, middle, moov.start + moov.len() / 2, file.len()];
    for pair in cuts.windows(2) {
        let response = tus
            .patch(&location, pair[0] as u64, file[pair[0]..pair[1]].to_vec())
            .await;
        assert_eq!(response.status(), StatusCode::NO_CONTENT, "at {}", pair[0]);
    }
    assert_eq!(stored_objects(&dir, &id).len(), 3);
    // Probed as the last chunk came.
    let queued = video(&app, &id).await;
    assert_eq!(queued["processing"]["state"], "queued", "{queued}");
    assert_eq!(queued["duration"].as_f64(), Some(4.0), "{queued}");
    assert_eq!(queued["width"], 640);

    let ready = process_queued(&app, &dir, &id).await;
    assert_eq!(ready["processing"]["state"], "ready", "{ready}");
    assert_eq!(ready["duration"].as_f64(), Some(4.0), "{ready}");
    let mp4 = app
        .client
        .get(ready["videoUrl"].as_str().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(mp4.status(), StatusCode::OK);
    assert!(
        stored_bytes(&dir, &id) == file,
        "the parts are not the file"
    );
}

#[tokio::test]
async fn refused_chunks_leave_no_object_in_the_store_not_even_a_partial_one() {
    let (app, dir) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    // Chunks of several MiB: more than the store holds in memory before writing.
    const CHUNK: usize = 3 << 20;
    let patch = |location: &str, offset: usize, bytes: Vec<u8>, sha1: Option<Vec<u8>>| {
        let mut request = tus
            .request(Method::PATCH, location)
            .header("Upload-Offset", offset.to_string())
            .header("Content-Type", "application/offset+octet-stream");
        if let Some(digest) = sha1 {
            let digest = base64::engine::general_purpose::STANDARD.encode(digest);
            request = request.header("Upload-Checksum", format!("sha1 {digest}"));
        }
        request.body(bytes).send()
    };
    let location = tus.create(2 * CHUNK as u64, "Checked").await;
    let id = video_id_of(&location).to_string();
    let mut first = b"\0\0\0\x20ftypisom".to_vec();
    first.resize(CHUNK, 5);
    let wrong = sha1::Sha1::digest(b"other").to_vec();
    let response = patch(&location, 0, first.clone(), Some(wrong.clone()))
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 460);
    assert_eq!(stored_objects(&dir, &id), Vec::<String>::new());

    let right = sha1::Sha1::digest(&first).to_vec();
    let response = patch(&location, 0, first.clone(), Some(right))
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(stored_objects(&dir, &id).len(), 1);
    // A mismatched second chunk, then one longer than what is left: the first part alone stays.
    let response = patch(&location, CHUNK, vec![6u8; CHUNK], Some(wrong))
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 460);
    let response = patch(&location, CHUNK, vec![6u8; CHUNK + 1], None)
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::PAYLOAD_TOO_LARGE);
    assert_eq!(
        stored_objects(&dir, &id).len(),
        1,
        "{:?}",
        stored_objects(&dir, &id)
    );
    assert!(
        stored_bytes(&dir, &id) == first,
        "the first part is not the first chunk"
    );
    assert_eq!(tus.offset(&location).await.1, Some(CHUNK as u64));

    // A first chunk that is an image: refused, and nothing of it was ever written.
    let location = tus.create(2 * CHUNK as u64, "Picture").await;
    let id = video_id_of(&location).to_string();
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.resize(CHUNK, 0);
    let response = patch(&location, 0, png, None).await.unwrap();
    assert_eq!(response.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert_eq!(stored_objects(&dir, &id), Vec::<String>::new());
}

#[tokio::test]
async fn a_client_that_drops_mid_chunk_leaves_exactly_the_bytes_it_delivered_and_resumes_to_ready()
{
    use tokio::io::AsyncWriteExt;
    let (app, dir) = spawn_with_media_dir().await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    // Padded so that what arrives before the drop is more than the store holds in memory.
    let (file, _) = index_last_mp4(3, 3 << 20).await;
    let location = tus.create(file.len() as u64, "Dropped").await;
    let id = video_id_of(&location).to_string();
    let delivered = (2 << 20) + 12_345;
    let address = app.address.trim_start_matches("http://").to_string();
    let mut stream = tokio::net::TcpStream::connect(&address).await.unwrap();
    let head = format!(
        "PATCH {location} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\
         Tus-Resumable: 1.0.0\r\nUpload-Offset: 0\r\n\
         Content-Type: application/offset+octet-stream\r\nContent-Length: {}\r\n\r\n",
        file.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(&file[..delivered]).await.unwrap();
    stream.shutdown().await.unwrap();
    drop(stream);
    let (tus, location) = (&tus, &location);
    eventually(
        "the offset is what was delivered",
        Duration::from_secs(20),
        move || async move {
            let offset = tus.offset(location).await;
            (offset.1 == Some(delivered as u64))
                .then_some(())
                .ok_or(offset)
        },
    )
    .await;
    assert!(
        stored_bytes(&dir, &id) == file[..delivered],
        "the stored bytes are not those delivered"
    );

    let response = tus
        .patch(location, delivered as u64, file[delivered..].to_vec())
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(response.headers()["upload-offset"], file.len().to_string());
    let ready = process_queued(&app, &dir, &id).await;
    assert_eq!(ready["processing"]["state"], "ready", "{ready}");
    assert_eq!(ready["duration"].as_f64(), Some(3.0), "{ready}");
}

#[tokio::test]
async fn a_finished_upload_is_checked_by_its_index_and_processed_from_its_parts_where_they_lie() {
    let dir = fresh_media_dir();
    let app = spawn_process_app(&[
        ("VIDEOAPP_MEDIA_DIR", dir.display().to_string()),
        ("VIDEOAPP_MEDIA_WORKERS", "1".to_string()),
    ])
    .await;
    app.create_shop(SHOP).await;
    let tus = Tus {
        app: &app,
        shop: SHOP,
    };
    let (file, _) = index_last_mp4(3, 0).await;
    let location = tus.create(file.len() as u64, "In place").await;
    let response = tus.upload(&location, &file, file.len().div_ceil(3)).await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    let path = format!("/shops/{SHOP}/videos/{}", video_id_of(&location));
    let (app, path) = (&app, &path);
    eventually(
        "the video is ready",
        Duration::from_secs(180),
        move || async move {
            let (_, body) = json_of(app.send_admin(Method::GET, path).await).await;
            match body["processing"]["state"].as_str() {
                Some("ready") => Ok(()),
                Some("failed") => panic!("{body}"),
                _ => Err(body),
            }
        },
    )
    .await;
    // The last chunk was answered from the file's own index, read by ranges; the worker's run
    // read the three parts in place.
    let checked = "media_uploads_checked_total";
    assert_eq!(app.metric(checked, &[("by", "index")]).await, Some(1.0));
    assert_eq!(app.metric(checked, &[("by", "ffprobe")]).await, None);
    let sources = "media_sources_read_total";
    assert_eq!(app.metric(sources, &[("how", "in_place")]).await, Some(1.0));
    assert_eq!(app.metric(sources, &[("how", "copied")]).await, None);
}
