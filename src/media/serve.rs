//! `/media/…`: the directory store's objects, served with `HEAD`, single `Range` requests,
//! `ETag`, year-long immutable caching, our own content types, `nosniff` and CORS.
//!
//! Only processed outputs (`videos/…`) are public; an upload's bytes (`uploads/…`) are the
//! merchant's own until processed, and are never served. Names are taken as they come in the
//! request's path, never decoded, and only in the few characters our own names are made of, so no
//! name reaches outside the store.

use std::ops::RangeInclusive;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::extract::State;
use axum::http::header::{
    ACCEPT_RANGES, CACHE_CONTROL, CONTENT_LENGTH, CONTENT_RANGE, CONTENT_TYPE, ETAG,
    IF_MODIFIED_SINCE, IF_NONE_MATCH, IF_RANGE, RANGE,
};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use headers::{
    ContentRange, ETag, HeaderMapExt, IfModifiedSince, IfNoneMatch, IfRange, LastModified,
};
use http_range_header::RangeUnsatisfiableError;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectMeta};
use tower_http::cors::{AllowOrigin, CorsLayer};

use super::store::{content_type, IMMUTABLE_CACHE_CONTROL as CACHE_FOREVER};
use crate::error::ApiError;
use crate::media::{MediaStore, Refusal};

/// How long a browser may keep a preflight's answer.
const PREFLIGHT_MAX_AGE: Duration = Duration::from_secs(86_400);
const NOT_FOUND: ApiError = ApiError::NotFound("media object");

/// The service mounted at `/media`: the objects of `store` when this service serves them (the
/// directory store), otherwise nothing (a bucket's objects are read from its own address).
pub fn service(store: MediaStore) -> Router {
    if !store.served_here() {
        return Router::new().fallback(|| async { NOT_FOUND });
    }
    Router::new()
        // `get` answers `HEAD` too, with the same headers and no body.
        .route("/{*name}", get(object))
        .fallback(|| async { NOT_FOUND })
        .layer(cors())
        .layer(axum::middleware::map_response(crate::serve::no_sniffing))
        .with_state(store)
}

/// Store pages read segments and playlists from another origin (hls.js, `fetch`), with ranges
/// and revalidation; no credentials are involved, so any origin may read.
fn cors() -> CorsLayer {
    CorsLayer::new()
        .allow_origin(AllowOrigin::any())
        .allow_methods([Method::GET, Method::HEAD])
        .allow_headers([RANGE, IF_NONE_MATCH, IF_RANGE, IF_MODIFIED_SINCE])
        .expose_headers([CONTENT_RANGE, CONTENT_LENGTH, ACCEPT_RANGES, ETAG])
        .max_age(PREFLIGHT_MAX_AGE)
        // The answer is the same for every origin: nothing for caches to tell apart.
        .vary([])
}

async fn object(
    State(store): State<MediaStore>,
    method: Method,
    uri: Uri,
    request: HeaderMap,
) -> Result<Response, ApiError> {
    let name = public_name(uri.path()).ok_or(NOT_FOUND)?;
    let meta = match store.objects().head(&name).await {
        Ok(meta) => meta,
        Err(object_store::Error::NotFound { .. }) => return Err(NOT_FOUND),
        Err(e) => return Err(ApiError::Internal(e.into())),
    };
    let validators = Validators::of(&meta);

    let mut headers = HeaderMap::new();
    validators.write(&mut headers);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(CACHE_FOREVER));
    if validators.not_modified(&request) {
        return Ok((StatusCode::NOT_MODIFIED, headers).into_response());
    }
    headers.insert(ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert(
        CONTENT_TYPE,
        HeaderValue::from_static(content_type(name.as_ref())),
    );

    let size = meta.size;
    let (status, range) = match requested_range(&request, size, &validators) {
        Requested::Whole => (StatusCode::OK, None),
        Requested::Part(range) => {
            let content_range = ContentRange::bytes(range.clone(), size)
                .map_err(|_| ApiError::Internal(anyhow::anyhow!("range {range:?} of {size}")))?;
            headers.typed_insert(content_range);
            (StatusCode::PARTIAL_CONTENT, Some(range))
        }
        Requested::Unsatisfiable => {
            let refusal = Refusal::new(
                StatusCode::RANGE_NOT_SATISFIABLE,
                "RANGE_NOT_SATISFIABLE",
                format!("Range: no requested byte is within the object's {size} bytes"),
            );
            let mut response = ApiError::from(refusal).into_response();
            response
                .headers_mut()
                .typed_insert(ContentRange::unsatisfied_bytes(size));
            return Ok(response);
        }
    };
    let length = range.as_ref().map_or(size, |r| r.end() - r.start() + 1);
    headers.insert(CONTENT_LENGTH, HeaderValue::from(length));
    if method == Method::HEAD {
        return Ok((status, headers).into_response());
    }

    if let Some(file) = store.local_file(&name) {
        let start = range.as_ref().map_or(0, |r| *r.start());
        let body = file_body(&file, start, length)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => NOT_FOUND,
                _ => ApiError::Internal(e.into()),
            })?;
        return Ok((status, headers, body).into_response());
    }
    let options = GetOptions {
        range: range.map(|r| GetRange::Bounded(*r.start()..r.end() + 1)),
        ..GetOptions::default()
    };
    let body = match store.objects().get_opts(&name, options).await {
        Ok(found) => found.into_stream(),
        Err(object_store::Error::NotFound { .. }) => return Err(NOT_FOUND),
        Err(e) => return Err(ApiError::Internal(e.into())),
    };
    Ok((status, headers, Body::from_stream(body)).into_response())
}

/// How much of a file one read takes: `object_store` reads a local file 8 KiB at a time, each
/// read a hop to the blocking pool, which held `/media` to a third of a bare file server's rate
/// for 1 MiB ranges (BENCHMARKS.md, Media).
const FILE_READ_BYTES: usize = 256 * 1024;

/// `length` bytes of `file` from `start`, streamed in large reads.
async fn file_body(file: &std::path::Path, start: u64, length: u64) -> std::io::Result<Body> {
    use tokio::io::{AsyncReadExt, AsyncSeekExt};
    let mut file = tokio::fs::File::open(file).await?;
    if start > 0 {
        file.seek(std::io::SeekFrom::Start(start)).await?;
    }
    let stream = tokio_util::io::ReaderStream::with_capacity(file.take(length), FILE_READ_BYTES);
    Ok(Body::from_stream(stream))
}

/// The store's name for a request's path, when it names a public object: under `videos/`, in
/// segments of the characters our names are made of, none empty, none `.` or `..`.
fn public_name(path: &str) -> Option<Path> {
    let name = path.strip_prefix('/').unwrap_or(path);
    let mut segments = name.split('/');
    if segments.next() != Some("videos") {
        return None;
    }
    let mut rest = segments.peekable();
    rest.peek()?;
    let well_formed = rest.all(|segment| {
        !segment.is_empty()
            && segment != "."
            && segment != ".."
            && segment
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
    });
    if !well_formed {
        return None;
    }
    Path::parse(name).ok()
}

/// What a client may hold a copy by: the store's entity tag (quoted) and modification time.
struct Validators {
    etag: Option<ETag>,
    last_modified: LastModified,
    modified_at: SystemTime,
}

impl Validators {
    fn of(meta: &ObjectMeta) -> Validators {
        let modified_at = SystemTime::from(meta.last_modified);
        Validators {
            etag: meta.e_tag.as_deref().and_then(entity_tag),
            last_modified: LastModified::from(modified_at),
            modified_at,
        }
    }

    fn write(&self, headers: &mut HeaderMap) {
        if let Some(etag) = &self.etag {
            headers.typed_insert(etag.clone());
        }
        headers.typed_insert(self.last_modified);
    }

    /// Whether the client's copy is current: `If-None-Match` when it is sent, otherwise
    /// `If-Modified-Since` (RFC 9110 §13.2.2).
    fn not_modified(&self, request: &HeaderMap) -> bool {
        if let Some(if_none_match) = request.typed_get::<IfNoneMatch>() {
            return self
                .etag
                .as_ref()
                .is_some_and(|etag| !if_none_match.precondition_passes(etag));
        }
        request
            .typed_get::<IfModifiedSince>()
            .is_some_and(|since| !since.is_modified(self.modified_at))
    }

    /// Whether a range may be served: without `If-Range`, or when it names this very object.
    fn range_applies(&self, request: &HeaderMap) -> bool {
        request.typed_get::<IfRange>().is_none_or(|if_range| {
            !if_range.is_modified(self.etag.as_ref(), Some(&self.last_modified))
        })
    }
}

/// The store's tag as an HTTP entity tag: quoted, as the header requires.
fn entity_tag(tag: &str) -> Option<ETag> {
    if tag.starts_with('"') || tag.starts_with("W/") {
        return tag.parse().ok();
    }
    format!("\"{tag}\"").parse().ok()
}

enum Requested {
    Whole,
    Part(RangeInclusive<u64>),
    Unsatisfiable,
}

/// The one range a request asks for. A malformed `Range` is ignored and several ranges are
/// answered with the whole object (RFC 9110 §14.2 lets a server do both): players ask for one.
fn requested_range(request: &HeaderMap, size: u64, validators: &Validators) -> Requested {
    let Some(header) = request.get(RANGE).and_then(|v| v.to_str().ok()) else {
        return Requested::Whole;
    };
    let Ok(ranges) = http_range_header::parse_range_header(header) else {
        return Requested::Whole;
    };
    if ranges.len() != 1 || !validators.range_applies(request) {
        return Requested::Whole;
    }
    match ranges.validate(size) {
        Ok(mut ranges) => ranges.pop().map_or(Requested::Whole, Requested::Part),
        Err(RangeUnsatisfiableError::Unsatisfiable) => Requested::Unsatisfiable,
        Err(_) => Requested::Whole,
    }
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;
    use axum::http::header::{
        ACCESS_CONTROL_ALLOW_METHODS, ACCESS_CONTROL_ALLOW_ORIGIN, ACCESS_CONTROL_EXPOSE_HEADERS,
        ACCESS_CONTROL_REQUEST_HEADERS, ACCESS_CONTROL_REQUEST_METHOD, LAST_MODIFIED, ORIGIN,
        X_CONTENT_TYPE_OPTIONS,
    };
    use axum::http::Request;
    use bytes::Bytes;
    use tower::ServiceExt;

    use super::*;
    use crate::config::{MediaStorage, S3Config};

    const SEGMENT: &str = "videos/demo.myshopify.com/0190e4b8-7c1a-7000-8000-000000000001/0190e4b8-7c1a-7000-8000-000000000002/hls/v0/seg_00001.m4s";

    /// A directory store holding `objects`, removed with the returned guard.
    async fn store_with(objects: &[(&str, &[u8])]) -> (MediaStore, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        let base = url::Url::parse("http://127.0.0.1:8080/media/").unwrap();
        let store =
            MediaStore::open(&MediaStorage::Directory(dir.path().to_path_buf()), &base).unwrap();
        for (name, bytes) in objects {
            store
                .put(&Path::from(*name), Bytes::copy_from_slice(bytes))
                .await
                .unwrap();
        }
        (store, dir)
    }

    fn numbered(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i % 251) as u8).collect()
    }

    async fn send(store: &MediaStore, request: Request<Body>) -> Response {
        service(store.clone()).oneshot(request).await.unwrap()
    }

    fn get_with(path: &str, headers: &[(axum::http::HeaderName, &str)]) -> Request<Body> {
        let mut request = Request::get(path);
        for (name, value) in headers {
            request = request.header(name, *value);
        }
        request.body(Body::empty()).unwrap()
    }

    fn header(response: &Response, name: axum::http::HeaderName) -> Option<&str> {
        response.headers().get(name).map(|v| v.to_str().unwrap())
    }

    async fn body(response: Response) -> Bytes {
        to_bytes(response.into_body(), usize::MAX).await.unwrap()
    }

    async fn error_code(response: Response) -> String {
        let body: serde_json::Value = serde_json::from_slice(&body(response).await).unwrap();
        body["error"]["code"].as_str().unwrap().to_string()
    }

    #[tokio::test]
    async fn an_object_is_served_whole_with_its_validators_and_immutable_caching() {
        let bytes = numbered(10_000);
        let (store, _dir) = store_with(&[(SEGMENT, &bytes)]).await;

        let response = send(&store, get_with(&format!("/{SEGMENT}"), &[])).await;

        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(header(&response, CONTENT_LENGTH), Some("10000"));
        assert_eq!(header(&response, CONTENT_TYPE), Some("video/iso.segment"));
        assert_eq!(header(&response, ACCEPT_RANGES), Some("bytes"));
        assert_eq!(header(&response, CACHE_CONTROL), Some(CACHE_FOREVER));
        assert_eq!(header(&response, X_CONTENT_TYPE_OPTIONS), Some("nosniff"));
        let etag = header(&response, ETAG).unwrap();
        assert!(
            etag.starts_with('"') && etag.ends_with('"') && etag.len() > 2,
            "{etag}"
        );
        let meta = store.objects().head(&Path::from(SEGMENT)).await.unwrap();
        assert_eq!(etag, format!("\"{}\"", meta.e_tag.unwrap()));
        let mut expected = HeaderMap::new();
        expected.typed_insert(LastModified::from(SystemTime::from(meta.last_modified)));
        assert_eq!(
            response.headers().get(LAST_MODIFIED),
            expected.get(LAST_MODIFIED)
        );
        assert_eq!(body(response).await, bytes);
    }

    #[tokio::test]
    async fn head_answers_the_same_headers_without_a_body() {
        let (store, _dir) = store_with(&[(SEGMENT, &numbered(1000))]).await;
        for range in [None, Some("bytes=10-19")] {
            let extra: Vec<_> = range.map(|r| (RANGE, r)).into_iter().collect();
            let got = send(&store, get_with(&format!("/{SEGMENT}"), &extra)).await;
            let mut head = Request::head(format!("/{SEGMENT}"));
            if let Some(range) = range {
                head = head.header(RANGE, range);
            }
            let headed = send(&store, head.body(Body::empty()).unwrap()).await;

            assert_eq!(headed.status(), got.status());
            assert_eq!(headed.headers(), got.headers());
            assert!(body(headed).await.is_empty());
        }
    }

    #[tokio::test]
    async fn each_single_range_form_is_answered_with_its_part() {
        let bytes = numbered(1000);
        let (store, _dir) = store_with(&[(SEGMENT, &bytes)]).await;
        for (range, first, last) in [
            ("bytes=0-0", 0, 0),
            ("bytes=100-199", 100, 199),
            ("bytes=900-5000", 900, 999),
            ("bytes=990-", 990, 999),
            ("bytes=-10", 990, 999),
            ("bytes=-5000", 0, 999),
        ] {
            let response = send(&store, get_with(&format!("/{SEGMENT}"), &[(RANGE, range)])).await;

            assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT, "{range}");
            assert_eq!(
                header(&response, CONTENT_RANGE),
                Some(format!("bytes {first}-{last}/1000").as_str()),
                "{range}"
            );
            let length = (last - first + 1).to_string();
            assert_eq!(header(&response, CONTENT_LENGTH), Some(length.as_str()));
            assert_eq!(body(response).await, bytes[first..=last], "{range}");
        }
    }

    #[tokio::test]
    async fn a_range_outside_the_object_is_416_with_its_length() {
        let (store, _dir) = store_with(&[(SEGMENT, &numbered(1000))]).await;
        for range in ["bytes=1000-", "bytes=1000-1999", "bytes=-0"] {
            let response = send(&store, get_with(&format!("/{SEGMENT}"), &[(RANGE, range)])).await;

            assert_eq!(
                response.status(),
                StatusCode::RANGE_NOT_SATISFIABLE,
                "{range}"
            );
            assert_eq!(header(&response, CONTENT_RANGE), Some("bytes */1000"));
            assert_eq!(error_code(response).await, "RANGE_NOT_SATISFIABLE");
        }
    }

    #[tokio::test]
    async fn several_ranges_or_a_malformed_one_get_the_whole_object() {
        let bytes = numbered(1000);
        let (store, _dir) = store_with(&[(SEGMENT, &bytes)]).await;
        for range in ["bytes=0-9,20-29", "bytes=9-0", "items=0-9", "bytes=abc"] {
            let response = send(&store, get_with(&format!("/{SEGMENT}"), &[(RANGE, range)])).await;

            assert_eq!(response.status(), StatusCode::OK, "{range}");
            assert_eq!(header(&response, CONTENT_RANGE), None);
            assert_eq!(body(response).await, bytes, "{range}");
        }
    }

    #[tokio::test]
    async fn a_copy_with_the_current_tag_is_not_modified() {
        let (store, _dir) = store_with(&[(SEGMENT, &numbered(1000))]).await;
        let first = send(&store, get_with(&format!("/{SEGMENT}"), &[])).await;
        let etag = header(&first, ETAG).unwrap().to_string();
        let last_modified = header(&first, LAST_MODIFIED).unwrap().to_string();

        for validator in [
            (IF_NONE_MATCH, etag.clone()),
            (IF_NONE_MATCH, format!("\"other\", W/{etag}")),
            (IF_NONE_MATCH, "*".to_string()),
            (IF_MODIFIED_SINCE, last_modified.clone()),
        ] {
            let response = send(
                &store,
                get_with(
                    &format!("/{SEGMENT}"),
                    &[(validator.0.clone(), validator.1.as_str())],
                ),
            )
            .await;

            assert_eq!(response.status(), StatusCode::NOT_MODIFIED, "{validator:?}");
            assert_eq!(header(&response, ETAG), Some(etag.as_str()));
            assert_eq!(header(&response, CACHE_CONTROL), Some(CACHE_FOREVER));
            assert!(body(response).await.is_empty());
        }

        // Another tag wins over a date that alone would be current.
        let response = send(
            &store,
            get_with(
                &format!("/{SEGMENT}"),
                &[
                    (IF_NONE_MATCH, "\"other\""),
                    (IF_MODIFIED_SINCE, &last_modified),
                ],
            ),
        )
        .await;
        assert_eq!(response.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn if_range_serves_the_part_only_for_this_very_object() {
        let bytes = numbered(1000);
        let (store, _dir) = store_with(&[(SEGMENT, &bytes)]).await;
        let first = send(&store, get_with(&format!("/{SEGMENT}"), &[])).await;
        let etag = header(&first, ETAG).unwrap().to_string();
        let last_modified = header(&first, LAST_MODIFIED).unwrap().to_string();
        let path = format!("/{SEGMENT}");

        for current in [etag.as_str(), last_modified.as_str()] {
            let response = send(
                &store,
                get_with(&path, &[(RANGE, "bytes=0-9"), (IF_RANGE, current)]),
            )
            .await;
            assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT, "{current}");
        }
        for stale in ["\"other\"", "Thu, 01 Jan 1970 00:00:01 GMT"] {
            let response = send(
                &store,
                get_with(&path, &[(RANGE, "bytes=0-9"), (IF_RANGE, stale)]),
            )
            .await;
            assert_eq!(response.status(), StatusCode::OK, "{stale}");
            assert_eq!(body(response).await, bytes);
        }
    }

    #[tokio::test]
    async fn content_types_are_ours_by_extension() {
        let base = "videos/demo.myshopify.com/v/r";
        let names = [
            ("hls/master.m3u8", "application/vnd.apple.mpegurl"),
            ("hls/v0/seg_00001.m4s", "video/iso.segment"),
            ("hls/v0/init.mp4", "video/mp4"),
            ("video-720.mp4", "video/mp4"),
            ("poster-480.jpg", "image/jpeg"),
            ("poster-480.webp", "image/webp"),
            ("page.html", "application/octet-stream"),
            ("script.js", "application/octet-stream"),
            ("noextension", "application/octet-stream"),
        ];
        let objects: Vec<(String, &[u8])> = names
            .iter()
            .map(|(name, _)| (format!("{base}/{name}"), b"<html><script>".as_slice()))
            .collect();
        let objects: Vec<(&str, &[u8])> = objects.iter().map(|(n, b)| (n.as_str(), *b)).collect();
        let (store, _dir) = store_with(&objects).await;

        for (name, content_type) in names {
            let response = send(&store, get_with(&format!("/{base}/{name}"), &[])).await;
            assert_eq!(response.status(), StatusCode::OK, "{name}");
            assert_eq!(
                header(&response, CONTENT_TYPE),
                Some(content_type),
                "{name}"
            );
            assert_eq!(header(&response, X_CONTENT_TYPE_OPTIONS), Some("nosniff"));
        }
    }

    #[tokio::test]
    async fn any_origin_may_read_and_see_the_range_headers() {
        let (store, _dir) = store_with(&[(SEGMENT, &numbered(100))]).await;
        let response = send(
            &store,
            get_with(
                &format!("/{SEGMENT}"),
                &[(ORIGIN, "https://shop.example"), (RANGE, "bytes=0-9")],
            ),
        )
        .await;

        assert_eq!(response.status(), StatusCode::PARTIAL_CONTENT);
        assert_eq!(header(&response, ACCESS_CONTROL_ALLOW_ORIGIN), Some("*"));
        let exposed = header(&response, ACCESS_CONTROL_EXPOSE_HEADERS)
            .unwrap()
            .to_ascii_lowercase();
        for name in ["content-range", "content-length", "accept-ranges", "etag"] {
            assert!(exposed.contains(name), "{exposed}");
        }
    }

    #[tokio::test]
    async fn a_preflight_for_a_range_request_is_answered() {
        let (store, _dir) = store_with(&[(SEGMENT, &numbered(100))]).await;
        let preflight = Request::options(format!("/{SEGMENT}"))
            .header(ORIGIN, "https://shop.example")
            .header(ACCESS_CONTROL_REQUEST_METHOD, "GET")
            .header(ACCESS_CONTROL_REQUEST_HEADERS, "range")
            .body(Body::empty())
            .unwrap();

        let response = send(&store, preflight).await;

        assert!(response.status().is_success(), "{}", response.status());
        assert_eq!(header(&response, ACCESS_CONTROL_ALLOW_ORIGIN), Some("*"));
        let methods = header(&response, ACCESS_CONTROL_ALLOW_METHODS).unwrap();
        assert!(
            methods.contains("GET") && methods.contains("HEAD"),
            "{methods}"
        );
        let allowed = header(&response, axum::http::header::ACCESS_CONTROL_ALLOW_HEADERS)
            .unwrap()
            .to_ascii_lowercase();
        assert!(allowed.contains("range"), "{allowed}");
    }

    #[tokio::test]
    async fn uploads_and_anything_outside_videos_are_not_served() {
        let upload = "uploads/0190e4b8-7c1a-7000-8000-000000000001/00000000000000000000";
        let (store, _dir) = store_with(&[
            (SEGMENT, b"segment"),
            (upload, b"private source"),
            ("other/file.mp4", b"x"),
        ])
        .await;
        for path in [
            format!("/{upload}"),
            "/other/file.mp4".to_string(),
            "/".to_string(),
            "/videos".to_string(),
            "/videos/".to_string(),
            "/videos/demo.myshopify.com".to_string(),
            "/videos/demo.myshopify.com/missing.mp4".to_string(),
        ] {
            let response = send(&store, get_with(&path, &[])).await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
            assert_eq!(header(&response, CACHE_CONTROL), None, "{path}");
            assert_eq!(error_code(response).await, "NOT_FOUND", "{path}");
        }
    }

    #[tokio::test]
    async fn names_that_could_leave_the_store_are_not_found() {
        let (store, dir) = store_with(&[(SEGMENT, b"segment")]).await;
        // A file beside the store's directory, which a path that climbs out of it would reach.
        let outside = dir.path().parent().unwrap().join(format!(
            "{}-secret.mp4",
            dir.path().file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&outside, b"secret").unwrap();
        let escaped = outside.file_name().unwrap().to_string_lossy().to_string();
        for path in [
            format!("/videos/../../{escaped}"),
            format!("/videos/..%2f..%2f{escaped}"),
            format!("/videos/%2e%2e/%2e%2e/{escaped}"),
            "/videos/./demo.myshopify.com".to_string(),
            "/videos//demo.myshopify.com".to_string(),
            format!("/{SEGMENT}/"),
            format!("/{}", SEGMENT.replace("/hls/", "//hls/")),
            "/videos/demo.myshopify.com/%00".to_string(),
            "/videos/demo.myshopify.com/a%20b.mp4".to_string(),
        ] {
            let response = send(&store, get_with(&path, &[])).await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{path}");
        }
        std::fs::remove_file(outside).unwrap();
    }

    #[tokio::test]
    async fn a_bucket_store_is_not_served_here() {
        let storage = MediaStorage::S3(S3Config {
            bucket: "media".to_string(),
            endpoint: Some(url::Url::parse("http://127.0.0.1:9").unwrap()),
            region: "us-east-1".to_string(),
            access_key_id: Some("id".to_string()),
            secret_access_key: Some("secret".to_string().into()),
        });
        let base = url::Url::parse("https://cdn.example/media/").unwrap();
        let store = MediaStore::open(&storage, &base).unwrap();

        for method in [Method::GET, Method::HEAD, Method::OPTIONS] {
            let request = Request::builder()
                .method(method.clone())
                .uri(format!("/{SEGMENT}"))
                .header(ORIGIN, "https://shop.example")
                .header(ACCESS_CONTROL_REQUEST_METHOD, "GET")
                .body(Body::empty())
                .unwrap();
            let response = send(&store, request).await;
            assert_eq!(response.status(), StatusCode::NOT_FOUND, "{method}");
        }
    }

    #[tokio::test]
    async fn mounted_under_media_the_objects_are_found_by_their_public_url() {
        let (store, _dir) = store_with(&[(SEGMENT, b"segment")]).await;
        let app = Router::new().nest_service("/media", service(store.clone()));
        let url = url::Url::parse(&store.public_url(&Path::from(SEGMENT))).unwrap();

        let response = app.oneshot(get_with(url.path(), &[])).await.unwrap();

        assert_eq!(response.status(), StatusCode::OK);
        assert_eq!(body(response).await, "segment");
    }

    #[test]
    fn public_names_are_the_videos_ones_in_our_characters() {
        assert_eq!(
            public_name(&format!("/{SEGMENT}")).map(|p| p.to_string()),
            Some(SEGMENT.to_string())
        );
        for path in [
            "/videos",
            "/videos/",
            "/uploads/x",
            "/videos/a/../b",
            "/videos/a%2Fb",
            "/videos/a b",
            "/videos/a\\b",
        ] {
            assert!(public_name(path).is_none(), "{path}");
        }
    }
}
