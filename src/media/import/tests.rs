//! The import's fetch against a real server on a loopback port, and its checks of URLs and
//! addresses.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use bytes::Bytes;
use reqwest::header::LOCATION;

use super::*;

const VIDEO: &[u8] = b"\x00\x00\x00\x18ftypmp42 not really a video, but bytes to compare";

fn loopback_allowed(max_bytes: u64) -> ImportRules {
    ImportRules {
        max_bytes,
        allow_loopback_http: true,
    }
}

fn production(max_bytes: u64) -> ImportRules {
    ImportRules {
        max_bytes,
        allow_loopback_http: false,
    }
}

/// A real server on a loopback port, counting the requests it receives.
struct Remote {
    port: u16,
    requests: Arc<AtomicUsize>,
}

impl Remote {
    fn url(&self, path: &str) -> Url {
        Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).unwrap()
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

async fn remote() -> Remote {
    let requests = Arc::new(AtomicUsize::new(0));
    let app = Router::new()
        .route("/video.mp4", get(|| async { VIDEO }))
        .route("/hop/{n}", get(hop))
        .route("/to", get(redirect_to))
        .route("/status/{code}", get(status))
        .route("/large-declared/{length}", get(large_declared))
        .route("/large-chunked/{length}", get(large_chunked))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&requests),
            count,
        ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    Remote { port, requests }
}

async fn count(
    State(requests): State<Arc<AtomicUsize>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    requests.fetch_add(1, Ordering::SeqCst);
    next.run(request).await
}

/// `/hop/{n}` redirects to `/hop/{n-1}`, and `/hop/0` to the video: `n + 1` redirects.
async fn hop(UrlPath(n): UrlPath<u32>) -> Response {
    let next = match n {
        0 => "/video.mp4".to_string(),
        n => format!("/hop/{}", n - 1),
    };
    (StatusCode::FOUND, [(LOCATION, next)]).into_response()
}

#[derive(serde::Deserialize)]
struct Target {
    target: String,
}

async fn redirect_to(Query(Target { target }): Query<Target>) -> Response {
    (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, target)]).into_response()
}

/// A URL of `remote` that redirects to `target`.
fn redirecting_to(remote: &Remote, target: &str) -> Url {
    let mut url = remote.url("/to");
    url.query_pairs_mut().append_pair("target", target);
    url
}

async fn status(UrlPath(code): UrlPath<u16>) -> StatusCode {
    StatusCode::from_u16(code).unwrap()
}

/// Declares `length` bytes, sends one small chunk, then never finishes: only a client that
/// refuses on the declared length returns.
async fn large_declared(UrlPath(length): UrlPath<u64>) -> Response {
    let first =
        futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"0123")) });
    let body = Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()));
    Response::builder()
        .header(axum::http::header::CONTENT_LENGTH, length)
        .body(body)
        .unwrap()
}

/// Sends `length` bytes with no declared length, then never finishes: only a client that
/// counts what it receives returns.
async fn large_chunked(UrlPath(length): UrlPath<usize>) -> Response {
    let bytes = Bytes::from(vec![7u8; length]);
    let first = futures::stream::once(async move { Ok::<_, std::io::Error>(bytes) });
    Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending())).into_response()
}

fn refusal(result: Result<u64, ImportError>) -> Refusal {
    match result {
        Err(ImportError::Refused(refusal)) => refusal,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Fails the test instead of hanging when a refusal that should come at once does not.
async fn within_moments<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(20), future)
        .await
        .expect("the fetch should have ended at once")
}

#[tokio::test]
async fn a_file_on_an_allowed_loopback_server_is_fetched_whole() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = loopback_allowed(1024);
    let url = check_url(remote.url("/video.mp4").as_str(), &rules).unwrap();

    let size = fetch(&url, &dest, &rules).await.unwrap();

    assert_eq!(size, VIDEO.len() as u64);
    assert_eq!(std::fs::read(&dest).unwrap(), VIDEO);
}

#[tokio::test]
async fn the_name_localhost_is_resolved_and_fetched_when_loopback_is_allowed() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let url = Url::parse(&format!("http://localhost:{}/video.mp4", remote.port)).unwrap();

    let size = fetch(&url, &dest, &loopback_allowed(1024)).await.unwrap();

    assert_eq!(size, VIDEO.len() as u64);
}

#[tokio::test]
async fn loopback_is_refused_when_not_allowed_by_address_and_by_name() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = production(1024);
    for url in [
        format!("https://127.0.0.1:{}/video.mp4", remote.port),
        format!("https://localhost:{}/video.mp4", remote.port),
        format!("https://[::1]:{}/video.mp4", remote.port),
        format!("https://[::ffff:127.0.0.1]:{}/video.mp4", remote.port),
    ] {
        let refused = refusal(fetch(&Url::parse(&url).unwrap(), &dest, &rules).await);
        assert_eq!(refused.code, "IMPORT_URL_REFUSED", "{url}");
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(refused.message.contains("loopback"), "{}", refused.message);
    }
    assert_eq!(remote.requests(), 0);
    assert!(!dest.exists());

    let at_request_time = check_url(&format!("https://127.0.0.1:{}/v.mp4", remote.port), &rules);
    assert_eq!(at_request_time.unwrap_err().code, "IMPORT_URL_REFUSED");
}

#[tokio::test]
async fn plain_http_is_refused_unless_allowed_and_then_only_to_loopback() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");

    let refused = check_url("http://videos.example.com/v.mp4", &production(1024)).unwrap_err();
    assert_eq!(refused.code, "INVALID_URL");
    assert!(refused.message.contains("https"), "{}", refused.message);

    let refused = refusal(fetch(&remote.url("/video.mp4"), &dest, &production(1024)).await);
    assert_eq!(refused.code, "IMPORT_URL_REFUSED");
    assert_eq!(remote.requests(), 0);

    // Allowed for loopback, plain http still goes nowhere else.
    let refused = check_url("http://192.0.2.7/v.mp4", &loopback_allowed(1024)).unwrap_err();
    assert_eq!(refused.code, "IMPORT_URL_REFUSED");
    assert!(
        refused.message.contains("plain http"),
        "{}",
        refused.message
    );
}

#[tokio::test]
async fn three_redirects_are_followed_and_a_fourth_is_refused() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = loopback_allowed(1024);

    let size = fetch(&remote.url("/hop/2"), &dest, &rules).await.unwrap();
    assert_eq!(size, VIDEO.len() as u64);
    assert_eq!(remote.requests(), 4);

    let refused = refusal(fetch(&remote.url("/hop/3"), &dest, &rules).await);
    assert_eq!(refused.code, "IMPORT_URL_REFUSED");
    assert!(refused.message.contains("redirects"), "{}", refused.message);
    // The fourth redirect's target is never asked for.
    assert_eq!(remote.requests(), 4 + 4);
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_redirect_to_a_private_link_local_or_metadata_address_is_refused_before_connecting() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = loopback_allowed(1024);
    for (target, problem) in [
        ("https://10.1.2.3/v.mp4", "a private address"),
        ("https://192.168.0.10/v.mp4", "a private address"),
        ("https://100.64.0.1/v.mp4", "a private address"),
        ("https://169.254.10.20/v.mp4", "a link-local address"),
        ("https://[fe80::1]/v.mp4", "a link-local address"),
        (
            "https://169.254.169.254/latest/meta-data/",
            "a cloud metadata address",
        ),
        (
            "https://[fd00:ec2::254]/latest/meta-data/",
            "a cloud metadata address",
        ),
        (
            "https://[::ffff:169.254.169.254]/latest/",
            "a cloud metadata address",
        ),
        ("https://[fd12:3456::1]/v.mp4", "a private address"),
        ("http://10.1.2.3/v.mp4", "plain http"),
    ] {
        let url = redirecting_to(&remote, target);

        let refused = refusal(within_moments(fetch(&url, &dest, &rules)).await);

        assert_eq!(refused.code, "IMPORT_URL_REFUSED", "{target}");
        assert!(
            refused.message.contains(problem),
            "{target}: {}",
            refused.message
        );
    }
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_file_declared_larger_than_the_limit_is_refused_at_once() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");

    let url = remote.url("/large-declared/1001");
    let refused = refusal(within_moments(fetch(&url, &dest, &loopback_allowed(1000))).await);

    assert_eq!(refused.code, "FILE_TOO_LARGE");
    assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
    assert!(
        refused.message.contains("1001 bytes"),
        "{}",
        refused.message
    );
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_stream_without_a_length_is_refused_once_it_passes_the_limit_and_its_bytes_removed() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");

    let url = remote.url("/large-chunked/1001");
    let refused = refusal(within_moments(fetch(&url, &dest, &loopback_allowed(1000))).await);

    assert_eq!(refused.code, "FILE_TOO_LARGE");
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_file_of_exactly_the_limit_is_taken() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = loopback_allowed(VIDEO.len() as u64);

    let size = fetch(&remote.url("/video.mp4"), &dest, &rules)
        .await
        .unwrap();

    assert_eq!(size, VIDEO.len() as u64);
}

#[tokio::test]
async fn a_remote_4xx_is_refused_with_its_status_and_a_5xx_is_worth_retrying() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let dest = dir.path().join("source");
    let rules = loopback_allowed(1000);

    let refused = refusal(fetch(&remote.url("/status/404"), &dest, &rules).await);
    assert_eq!(refused.code, "IMPORT_FAILED");
    assert!(refused.message.contains("404"), "{}", refused.message);

    for code in [503, 429] {
        let failed = fetch(&remote.url(&format!("/status/{code}")), &dest, &rules).await;
        assert!(
            matches!(failed, Err(ImportError::Failed(_))),
            "{code}: {failed:?}"
        );
    }
    assert!(!dest.exists());
}

#[tokio::test]
async fn a_failure_to_connect_is_worth_retrying_and_its_message_shows_no_query() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let url = Url::parse(&format!("http://127.0.0.1:{port}/v.mp4?token=hush-hush")).unwrap();

    let failed = fetch(&url, &dir.path().join("source"), &loopback_allowed(1000)).await;

    let Err(ImportError::Failed(cause)) = failed else {
        panic!("expected a failure to retry, got {failed:?}");
    };
    let shown = format!("{cause:#}");
    assert!(shown.contains("127.0.0.1"), "{shown}");
    assert!(!shown.contains("hush-hush"), "{shown}");
}

#[tokio::test]
async fn a_redirect_to_a_url_with_a_user_name_is_refused() {
    let remote = remote().await;
    let dir = tempfile::tempdir().unwrap();
    let target = format!("http://me:secret@127.0.0.1:{}/video.mp4", remote.port);
    let url = redirecting_to(&remote, &target);

    let refused = refusal(fetch(&url, &dir.path().join("source"), &loopback_allowed(1000)).await);

    assert_eq!(refused.code, "IMPORT_URL_REFUSED");
    assert!(refused.message.contains("user name"), "{}", refused.message);
    assert_eq!(remote.requests(), 1);
}

#[test]
fn urls_that_are_not_absolute_https_with_a_host_and_no_user_are_invalid() {
    let rules = production(1000);
    for (url, problem) in [
        ("videos/v.mp4", "relative URL"),
        ("ftp://files.example.com/v.mp4", "https"),
        ("file:///etc/passwd", "https"),
        (
            "https://user:pass@videos.example.com/v.mp4",
            "user name or password",
        ),
        (
            "https://user@videos.example.com/v.mp4",
            "user name or password",
        ),
        ("https://", "empty host"),
        ("data:video/mp4;base64,AAAA", "https"),
    ] {
        let refused = check_url(url, &rules).unwrap_err();
        assert_eq!(refused.code, "INVALID_URL", "{url}");
        assert_eq!(refused.status, StatusCode::BAD_REQUEST);
        assert!(refused.message.starts_with("url: "), "{}", refused.message);
        assert!(
            refused.message.contains(problem),
            "{url}: {}",
            refused.message
        );
    }
    let long = format!("https://videos.example.com/{}", "a".repeat(MAX_URL_BYTES));
    assert_eq!(check_url(&long, &rules).unwrap_err().code, "INVALID_URL");
}

#[test]
fn a_public_https_url_is_taken_as_given_without_its_fragment() {
    let url = check_url(
        " https://videos.example.com/v.mp4?sig=abc#t=10 ",
        &production(1000),
    )
    .unwrap();
    assert_eq!(url.as_str(), "https://videos.example.com/v.mp4?sig=abc");
    assert!(check_url("https://93.184.215.14/v.mp4", &production(1000)).is_ok());
    assert!(check_url("https://[2606:4700::1111]/v.mp4", &production(1000)).is_ok());
}

#[test]
fn every_address_that_is_not_the_public_internet_is_refused() {
    let rules = production(1000);
    for ip in [
        "0.0.0.0",
        "0.1.2.3",
        "10.0.0.1",
        "100.64.0.1",
        "100.127.255.254",
        "127.0.0.1",
        "127.255.255.254",
        "169.254.0.1",
        "169.254.169.254",
        "100.100.100.200",
        "172.16.0.1",
        "172.31.255.255",
        "192.0.0.192",
        "192.0.2.1",
        "192.168.1.1",
        "198.18.0.1",
        "198.51.100.1",
        "203.0.113.1",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "::",
        "::1",
        "::ffff:10.0.0.1",
        "::ffff:127.0.0.1",
        "::10.0.0.1",
        "64:ff9b::a9fe:a9fe",
        "fc00::1",
        "fd00:ec2::254",
        "fe80::1",
        "fec0::1",
        "ff02::1",
        "100::1",
        "2001::1",
        "2001:db8::1",
        "2002:a00:1::1",
        "3fff::1",
    ] {
        let address: IpAddr = ip.parse().unwrap();
        assert!(
            address_problem(address, false, &rules).is_some(),
            "{ip} was let through"
        );
    }
    for ip in [
        "1.1.1.1",
        "8.8.8.8",
        "93.184.215.14",
        "100.128.0.1",
        "172.32.0.1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
        "2606:4700::1111",
        "2a00:1450:4001::1",
    ] {
        let address: IpAddr = ip.parse().unwrap();
        assert_eq!(
            address_problem(address, false, &rules),
            None,
            "{ip} was refused"
        );
    }
}

#[test]
fn loopback_is_allowed_only_by_the_setting_and_nothing_else_with_it() {
    let allowed = loopback_allowed(1000);
    assert_eq!(
        address_problem("127.0.0.1".parse().unwrap(), true, &allowed),
        None
    );
    assert_eq!(
        address_problem("::1".parse().unwrap(), true, &allowed),
        None
    );
    assert!(address_problem("10.0.0.1".parse().unwrap(), false, &allowed).is_some());
    assert!(address_problem("8.8.8.8".parse().unwrap(), true, &allowed).is_some());
}
