//! The media store on a real S3-compatible server: the Garage node `scripts/test` starts on
//! loopback (scripts/lib.sh, `start_garage`), whose settings it sources from .data/garage/env.
//! Every test works under a prefix of its own, so runs and tests never see each other's objects.

use std::path::PathBuf;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path;
use rand::RngCore;
use reqwest::{header, StatusCode};
use secrecy::SecretString;
use url::Url;
use uuid::Uuid;
use videoapp::config::{MediaStorage, S3Config};
use videoapp::media::MediaStore;

/// The store writes files larger than this in parts (`PART_BYTES` in src/media/store.rs).
const PART_BYTES: usize = 8 * 1024 * 1024;

fn required(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| {
        panic!(
            "{name} is not set: scripts/test starts Garage and sets it (by hand: \
             `source scripts/lib.sh && ensure_garage && start_garage && source .data/garage/env`)"
        )
    })
}

fn public_base() -> Url {
    required("VIDEOAPP_TEST_S3_PUBLIC_URL")
        .parse()
        .expect("VIDEOAPP_TEST_S3_PUBLIC_URL is a URL")
}

fn open_store() -> MediaStore {
    let s3 = S3Config {
        bucket: required("VIDEOAPP_TEST_S3_BUCKET"),
        endpoint: Some(
            required("VIDEOAPP_TEST_S3_ENDPOINT")
                .parse()
                .expect("VIDEOAPP_TEST_S3_ENDPOINT is a URL"),
        ),
        region: required("VIDEOAPP_TEST_S3_REGION"),
        access_key_id: Some(required("VIDEOAPP_TEST_S3_ACCESS_KEY_ID")),
        secret_access_key: Some(SecretString::from(required(
            "VIDEOAPP_TEST_S3_SECRET_ACCESS_KEY",
        ))),
    };
    MediaStore::open(&MediaStorage::S3(s3), &public_base()).expect("the S3 store opens")
}

/// A prefix no other test or run uses.
fn own_prefix() -> Path {
    Path::from(format!("test-{}", Uuid::new_v4().simple()))
}

fn child(prefix: &Path, name: &str) -> Path {
    Path::from(format!("{prefix}/{name}"))
}

/// A path for a local file of this test's own, under the temporary directory.
fn scratch_file(what: &str) -> PathBuf {
    std::env::temp_dir().join(format!("media-s3-{what}-{}", Uuid::new_v4().simple()))
}

/// Bytes that no compression or deduplication can shorten, so every byte is really stored.
fn random_bytes(len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; len];
    rand::thread_rng().fill_bytes(&mut bytes);
    bytes
}

async fn read_object(store: &MediaStore, name: &Path) -> Bytes {
    store
        .objects()
        .get(name)
        .await
        .unwrap_or_else(|e| panic!("read {name}: {e}"))
        .bytes()
        .await
        .unwrap_or_else(|e| panic!("read {name}'s bytes: {e}"))
}

/// Every object name under `prefix`, sorted.
async fn names_under(store: &MediaStore, prefix: &Path) -> Vec<String> {
    let mut names: Vec<String> = store
        .objects()
        .list(Some(prefix))
        .map_ok(|meta| meta.location.to_string())
        .try_collect()
        .await
        .expect("list the bucket");
    names.sort();
    names
}

#[tokio::test]
async fn put_then_read_back() {
    let store = open_store();
    assert!(!store.served_here(), "a bucket is not served at /media");
    let prefix = own_prefix();
    let name = child(&prefix, "poster.jpg");
    let bytes = Bytes::from(random_bytes(64 * 1024));

    store.put(&name, bytes.clone()).await.expect("put");

    assert_eq!(read_object(&store, &name).await, bytes);
    let meta = store.objects().head(&name).await.expect("head");
    assert_eq!(meta.size, bytes.len() as u64);

    store.delete_prefix(&prefix).await.expect("clean up");
}

#[tokio::test]
async fn put_file_larger_than_a_part_is_uploaded_in_parts_and_round_trips() {
    let store = open_store();
    let prefix = own_prefix();
    let name = child(&prefix, "source.mp4");
    // One whole part and a partial one.
    let content = random_bytes(PART_BYTES + 1_234_567);
    let file = scratch_file("upload");
    std::fs::write(&file, &content).expect("write the local file");

    let size = store.put_file(&name, &file).await.expect("put_file");
    std::fs::remove_file(&file).expect("remove the local file");

    assert_eq!(size, content.len() as u64);
    let stored = read_object(&store, &name).await;
    assert_eq!(stored.len(), content.len());
    assert!(stored == content, "the object differs from the file");
    // S3 gives an object completed from parts the ETag "{md5 of the parts' md5s}-{parts}": two
    // parts here, so the file went up as a multipart upload, not as one PUT.
    let meta = store.objects().head(&name).await.expect("head");
    let e_tag = meta.e_tag.expect("an ETag");
    assert!(
        e_tag.trim_matches('"').ends_with("-2"),
        "not a two-part upload: ETag {e_tag}"
    );

    store.delete_prefix(&prefix).await.expect("clean up");
}

#[tokio::test]
async fn a_buckets_parts_are_fetched_into_one_file_in_the_order_given_for_ffmpeg() {
    let store = open_store();
    let prefix = own_prefix();
    // Written out of order, and of sizes that are not multiples of each other.
    let contents = [
        ("00002", random_bytes(3_000)),
        ("00000", random_bytes(1_000)),
        ("00010", random_bytes(PART_BYTES + 5_000)),
        ("00001", random_bytes(2_000)),
    ];
    for (part, bytes) in &contents {
        store
            .put(&child(&prefix, part), Bytes::from(bytes.clone()))
            .await
            .expect("put a part");
    }
    let mut in_order = contents.clone();
    in_order.sort_by(|a, b| a.0.cmp(b.0));
    let names: Vec<Path> = in_order
        .iter()
        .map(|(part, _)| child(&prefix, part))
        .collect();

    let dir = scratch_file("source");
    std::fs::create_dir_all(&dir).expect("a directory for the source");
    let source = store
        .readable_in_place(&names, &dir)
        .await
        .expect("readable_in_place");
    let joined = std::fs::read(&source).expect("read the joined file");
    std::fs::remove_dir_all(&dir).expect("remove the directory");

    // A bucket's objects are no files ffmpeg could read: one file of them all, no list.
    assert_eq!(source, dir.join("source"));
    let expected: Vec<u8> = in_order.into_iter().flat_map(|(_, bytes)| bytes).collect();
    assert_eq!(joined.len(), expected.len());
    assert!(
        joined == expected,
        "the parts were not joined in the order given"
    );

    store.delete_prefix(&prefix).await.expect("clean up");
}

#[tokio::test]
async fn an_object_written_as_it_arrives_is_stored_whole_or_not_at_all() {
    let store = open_store();
    let prefix = own_prefix();
    // Larger than a part: a multipart upload, completed, then one aborted.
    let content = random_bytes(PART_BYTES + 3_000_000);
    let name = child(&prefix, "kept");
    let mut writer = store.writer(&name);
    for piece in content.chunks(300_000) {
        writer
            .write(Bytes::copy_from_slice(piece))
            .await
            .expect("write");
    }
    assert_eq!(names_under(&store, &prefix).await, Vec::<String>::new());
    assert_eq!(writer.finish().await.expect("finish"), content.len() as u64);
    assert!(
        read_object(&store, &name).await == content,
        "the object differs"
    );

    let dropped = child(&prefix, "dropped");
    let mut writer = store.writer(&dropped);
    for piece in content.chunks(300_000) {
        writer
            .write(Bytes::copy_from_slice(piece))
            .await
            .expect("write");
    }
    writer.abort().await.expect("abort");
    assert_eq!(names_under(&store, &prefix).await, vec![name.to_string()]);

    store.delete_prefix(&prefix).await.expect("clean up");
}

#[tokio::test]
async fn delete_prefix_deletes_everything_under_it_and_nothing_else() {
    let store = open_store();
    let prefix = own_prefix();
    let doomed = child(&prefix, "run-1");
    for name in [
        "poster.jpg",
        "hls/720p/index.m3u8",
        "hls/720p/0001.ts",
        "video.mp4",
    ] {
        store
            .put(&child(&doomed, name), Bytes::from_static(b"doomed"))
            .await
            .expect("put under the prefix");
    }
    let kept = [
        child(&prefix, "run-2/poster.jpg"),
        // Starts with the doomed prefix's characters, but is not under it.
        child(&prefix, "run-10/poster.jpg"),
        child(&prefix, "run-1.json"),
    ];
    for name in &kept {
        store
            .put(name, Bytes::from_static(b"kept"))
            .await
            .expect("put beside the prefix");
    }

    let deleted = store.delete_prefix(&doomed).await.expect("delete_prefix");

    assert_eq!(deleted, 4);
    assert_eq!(names_under(&store, &doomed).await, Vec::<String>::new());
    let mut expected: Vec<String> = kept.iter().map(Path::to_string).collect();
    expected.sort();
    assert_eq!(names_under(&store, &prefix).await, expected);
    for name in &kept {
        assert_eq!(read_object(&store, name).await, Bytes::from_static(b"kept"));
    }

    store.delete_prefix(&prefix).await.expect("clean up");
}

#[tokio::test]
async fn public_url_serves_the_object_to_anyone_over_http() {
    let store = open_store();
    let prefix = own_prefix();
    let name = child(&prefix, "hls/720p/0001.ts");
    let bytes = Bytes::from(random_bytes(100_000));
    store.put(&name, bytes.clone()).await.expect("put");

    let url = store.public_url(&name);
    assert_eq!(url, format!("{}{name}", public_base()));
    // No credentials, as a browser or a CDN fetching from the bucket would read it.
    let anyone = reqwest::Client::new();
    let response = anyone.get(&url).send().await.expect("GET the public URL");
    assert_eq!(response.status(), StatusCode::OK, "GET {url}");
    assert_eq!(response.bytes().await.expect("the body"), bytes);

    // Players seek with ranges.
    let response = anyone
        .get(&url)
        .header(header::RANGE, "bytes=1000-1999")
        .send()
        .await
        .expect("GET a range of the public URL");
    assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT, "GET {url}");
    assert_eq!(
        response.bytes().await.expect("the body"),
        bytes.slice(1000..2000)
    );

    // The bucket itself is not open: only its website endpoint is public.
    let endpoint = required("VIDEOAPP_TEST_S3_ENDPOINT");
    let bucket = required("VIDEOAPP_TEST_S3_BUCKET");
    let direct = format!("{}/{bucket}/{name}", endpoint.trim_end_matches('/'));
    let response = anyone
        .get(&direct)
        .send()
        .await
        .expect("GET from the S3 API");
    assert_eq!(response.status(), StatusCode::FORBIDDEN, "GET {direct}");

    store.delete_prefix(&prefix).await.expect("clean up");
}
