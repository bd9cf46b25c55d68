//! The public port against slow and idle clients, over raw TCP: the header, body and idle
//! timeouts, bodies announced larger than their endpoint takes, the connection cap, callers
//! refused before their body is read, and the memory budget of webhook bodies; and request heads
//! over its limits.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::platform::Delivery;
use crate::support::*;

const SHOP: &str = "edge-shop.myshopify.com";
/// Beyond a timeout, how late the close may come on a busy two-core machine.
const MARGIN: Duration = Duration::from_millis(1500);
/// A few bytes short of a request line.
const HALF_A_REQUEST_LINE: &[u8] = b"GET /healthz HT";
const HEALTHZ: &[u8] = b"GET /healthz HTTP/1.1\r\nHost: videoapp\r\n\r\n";

async fn connect(app: &TestApp) -> TcpStream {
    let address = app.address.trim_start_matches("http://");
    TcpStream::connect(address)
        .await
        .expect("the service accepts")
}

/// Waits until the service closes `stream`, discarding what it sends; how long that took.
async fn closed_within(stream: &mut (impl AsyncRead + Unpin), within: Duration) -> Duration {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    let closed = async { while let Ok(1..) = stream.read(&mut buf).await {} };
    tokio::time::timeout(within, closed)
        .await
        .unwrap_or_else(|_| panic!("still open after {within:?}"));
    start.elapsed()
}

/// One response from `stream`: its status and its JSON body (`Null` if it has none).
async fn read_response(
    stream: &mut (impl AsyncRead + Unpin),
    within: Duration,
) -> (StatusCode, Value) {
    let read = async {
        let mut received = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(end) = received.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&received[..end]).to_ascii_lowercase();
                let length: usize = head
                    .lines()
                    .find_map(|line| line.strip_prefix("content-length:"))
                    .map_or(0, |n| n.trim().parse().expect("a length"));
                if received.len() >= end + 4 + length {
                    let status = head[9..12].parse().expect("a status line");
                    let body = &received[end + 4..end + 4 + length];
                    let body = serde_json::from_slice(body).unwrap_or(Value::Null);
                    return (StatusCode::from_u16(status).unwrap(), body);
                }
            }
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => panic!("closed before a whole response: {received:?}"),
                Ok(n) => received.extend_from_slice(&buf[..n]),
            }
        }
    };
    tokio::time::timeout(within, read)
        .await
        .unwrap_or_else(|_| panic!("no response within {within:?}"))
}

fn events_target() -> String {
    format!("/apps/videoapp_sub/analytics?{}", signed(SHOP, &[]))
}

fn admin_target() -> String {
    format!("/admin/v1/shops/{SHOP}/videos")
}

/// A JSON `POST` head to `target` announcing `length` bytes of body.
fn post_head(target: &str, length: u64) -> Vec<u8> {
    format!(
        "POST {target} HTTP/1.1\r\nHost: videoapp\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n\
         Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    )
    .into_bytes()
}

#[tokio::test]
async fn a_request_head_that_stops_halfway_is_closed_at_the_header_timeout() {
    let timeout = Duration::from_secs(1);
    let app = spawn_app_with(|s| {
        s.header_read_timeout = timeout;
        s.idle_timeout = Duration::from_secs(30);
    })
    .await;
    // A fresh connection that sends half a request line, one that sends nothing, and a kept-alive
    // one that sends half of its second request.
    let mut halfway = connect(&app).await;
    halfway.write_all(HALF_A_REQUEST_LINE).await.unwrap();
    let mut silent = connect(&app).await;
    let mut kept_alive = connect(&app).await;
    kept_alive.write_all(HEALTHZ).await.unwrap();
    let (status, _) = read_response(&mut kept_alive, Duration::from_secs(5)).await;
    assert_eq!(status, StatusCode::OK);
    kept_alive.write_all(HALF_A_REQUEST_LINE).await.unwrap();

    let start = Instant::now();
    let deadline = start + timeout + MARGIN;
    for stream in [&mut halfway, &mut silent, &mut kept_alive] {
        closed_within(stream, deadline.saturating_duration_since(Instant::now())).await;
    }
    // Not before the timeout either: it is the header timeout, not something quicker.
    assert!(start.elapsed() >= timeout / 2, "{:?}", start.elapsed());
}

/// Sends `target` a head announcing 100 bytes, then a byte a second: the answer, how long after
/// the head it came, and whether the connection was closed after it.
async fn trickle_a_body(
    app: &TestApp,
    target: String,
    within: Duration,
) -> (StatusCode, Value, Duration) {
    let (mut read, mut write) = connect(app).await.into_split();
    write.write_all(&post_head(&target, 100)).await.unwrap();
    let start = Instant::now();
    let sender = tokio::spawn(async move {
        while write.write_all(b" ").await.is_ok() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    });
    let (status, body) = read_response(&mut read, within).await;
    let took = start.elapsed();
    // The rest of the body is not waited for: the connection closes.
    closed_within(&mut read, MARGIN).await;
    sender.abort();
    (status, body, took)
}

#[tokio::test]
async fn a_body_sent_a_byte_a_second_is_answered_408_at_the_body_timeout() {
    let timeout = Duration::from_secs(2);
    let app = spawn_app_with(|s| s.body_read_timeout = timeout).await;
    let (events, admin) = tokio::join!(
        trickle_a_body(&app, events_target(), timeout + MARGIN),
        trickle_a_body(&app, admin_target(), timeout + MARGIN),
    );
    for (status, body, took) in [events, admin] {
        assert_eq!(status, StatusCode::REQUEST_TIMEOUT, "{body}");
        assert_eq!(body["success"], false);
        assert_eq!(body["error"]["code"], "REQUEST_TIMEOUT", "{body}");
        assert!(took >= timeout - Duration::from_millis(100), "{took:?}");
    }
}

#[tokio::test]
async fn a_body_announced_larger_than_the_endpoint_takes_is_refused_before_it_is_sent() {
    // The body read timeout (30 s by default) is never waited for.
    let app = spawn_app().await;
    for target in [events_target(), admin_target()] {
        let mut stream = connect(&app).await;
        stream
            .write_all(&post_head(&target, 99_999_999_999))
            .await
            .unwrap();
        let (status, body) = read_response(&mut stream, Duration::from_secs(2)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{target}: {body}");
        assert_eq!(body["error"]["code"], "PAYLOAD_TOO_LARGE", "{body}");
    }
}

#[tokio::test]
async fn an_idle_kept_alive_connection_is_closed_at_the_idle_timeout() {
    let idle = Duration::from_secs(2);
    // A header timeout shorter than the idle one does not cut the idle connection short.
    let app = spawn_app_with(|s| {
        s.header_read_timeout = Duration::from_secs(1);
        s.idle_timeout = idle;
    })
    .await;
    let mut stream = connect(&app).await;
    stream.write_all(HEALTHZ).await.unwrap();
    let (status, _) = read_response(&mut stream, Duration::from_secs(5)).await;
    assert_eq!(status, StatusCode::OK);
    let took = closed_within(&mut stream, idle + MARGIN).await;
    assert!(took >= idle - Duration::from_millis(100), "{took:?}");
}

#[tokio::test]
async fn connections_beyond_the_cap_wait_until_one_closes() {
    let app = spawn_app_with(|s| s.max_connections = 2).await;
    let mut first = connect(&app).await;
    let mut second = connect(&app).await;
    for stream in [&mut first, &mut second] {
        stream.write_all(HEALTHZ).await.unwrap();
        let (status, _) = read_response(stream, Duration::from_secs(5)).await;
        assert_eq!(status, StatusCode::OK);
    }
    // The kernel completes the third handshake, but the service does not take it up.
    let mut third = connect(&app).await;
    third.write_all(HEALTHZ).await.unwrap();
    let mut byte = [0u8; 1];
    let early = tokio::time::timeout(Duration::from_millis(500), third.peek(&mut byte)).await;
    assert!(early.is_err(), "served beyond the cap: {early:?}");

    drop(first);
    let (status, _) = read_response(&mut third, Duration::from_secs(5)).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn healthz_answers_beside_two_thousand_slow_loris_connections_until_they_are_reclaimed() {
    let timeout = Duration::from_secs(1);
    let app = spawn_app_with(|s| s.header_read_timeout = timeout).await;
    let mut held = Vec::with_capacity(2000);
    for _ in 0..2000 {
        let mut stream = connect(&app).await;
        // Closed already, if opening the others took longer than the timeout: reclaimed too.
        let _ = stream
            .write_all(b"GET /healthz HTTP/1.1\r\nHost: videoapp\r\n")
            .await;
        held.push(stream);
    }
    let answered = tokio::time::timeout(timeout, app.get("/healthz")).await;
    let status = answered.expect("healthz answers at once").status();
    assert_eq!(status, StatusCode::OK);
    let deadline = Instant::now() + timeout + MARGIN;
    for stream in &mut held {
        closed_within(stream, deadline.saturating_duration_since(Instant::now())).await;
    }
}

/// A request head over the service's limits is answered with the JSON error body, not hyper's
/// empty one: the request target over 8 KiB, over 64 header fields, or over 32 KiB of them.
#[tokio::test]
async fn an_oversized_request_head_is_answered_414_or_431_with_an_error_body() {
    let app = spawn_app().await;
    let at_limit = format!("/{}", "a".repeat(videoapp::serve::MAX_URI_BYTES - 1));
    let response = app.get(&at_limit).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    let over = format!("{at_limit}a");
    assert_error(
        app.get(&over).await,
        StatusCode::URI_TOO_LONG,
        "URI_TOO_LONG",
        "8192",
    )
    .await;

    let with_headers = |count: usize, size: usize| {
        let mut request = app.client.get(app.url("/healthz"));
        for i in 0..count {
            request = request.header(format!("x-filler-{i}"), "v".repeat(size));
        }
        request.send()
    };
    // reqwest adds `accept` and `host`: 62 of ours is 64 fields in all.
    assert_eq!(with_headers(62, 10).await.unwrap().status(), StatusCode::OK);
    for response in [with_headers(63, 10).await, with_headers(1, 33 * 1024).await] {
        let response = response.unwrap();
        // Answered before the router, yet with a request id of its own.
        let id = response.headers()["x-request-id"].to_str().unwrap();
        assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");
        assert_error(
            response,
            StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
            "HEADERS_TOO_LARGE",
            "64 fields or 32768 bytes",
        )
        .await;
    }
}

/// A `POST` head to `target` with `headers`, announcing `length` bytes of JSON body.
fn post_head_with(target: &str, headers: &[(&str, String)], length: u64) -> Vec<u8> {
    let mut head = format!("POST {target} HTTP/1.1\r\nHost: videoapp\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!(
        "Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ));
    head.into_bytes()
}

/// A webhook head announcing `length` bytes, whose HMAC matches no body.
fn unsigned_webhook_head(length: u64) -> Vec<u8> {
    let headers = [
        ("X-Shopify-Topic", "products/update".to_string()),
        ("X-Shopify-Shop-Domain", SHOP.to_string()),
        ("X-Shopify-Webhook-Id", uuid::Uuid::new_v4().to_string()),
        ("X-Shopify-Triggered-At", chrono::Utc::now().to_rfc3339()),
        (
            "X-Shopify-Hmac-Sha256",
            "bm90IHRoZSBITUFDIG9mIGl0".to_string(),
        ),
    ];
    post_head_with("/webhooks/shopify", &headers, length)
}

#[tokio::test]
async fn a_caller_that_can_be_refused_from_its_head_is_refused_before_its_body_is_waited_for() {
    // Arrange: the body read timeout (30 s by default) is never reached if nothing waits for the
    // body; the platform settings on, so the dashboard checks session tokens.
    let app = spawn_app_with(crate::support::platform::platform_settings).await;
    app.create_shop(SHOP).await;
    let bad_bearer = [("Authorization", "Bearer not-a-token".to_string())];
    let unsigned_events = format!("/apps/videoapp_sub/analytics?shop={SHOP}&timestamp=1");
    let cases = [
        (admin_target(), &bad_bearer[..], "UNAUTHORIZED"),
        (
            format!("/app/api/shops/{SHOP}/videos"),
            &bad_bearer[..],
            "INVALID_SESSION_TOKEN",
        ),
        (unsigned_events, &[][..], "INVALID_SIGNATURE"),
    ];

    for (target, headers, code) in cases {
        // Act: a head announcing a body that never comes.
        let mut stream = connect(&app).await;
        stream
            .write_all(&post_head_with(&target, headers, 100))
            .await
            .unwrap();

        // Assert
        let (status, body) = read_response(&mut stream, Duration::from_secs(2)).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{target}: {body}");
        assert_eq!(body["error"]["code"], code, "{target}: {body}");
    }
}

/// One unsigned webhook's answer, sent whole: its status and error code.
async fn unsigned_webhook(app: &TestApp) -> (StatusCode, Value) {
    let mut stream = connect(app).await;
    stream.write_all(&unsigned_webhook_head(2)).await.unwrap();
    stream.write_all(b"{}").await.unwrap();
    let (status, body) = read_response(&mut stream, Duration::from_secs(2)).await;
    (status, body["error"]["code"].clone())
}

#[tokio::test]
async fn slow_unsigned_webhook_bodies_that_fill_the_memory_budget_turn_others_away_until_they_close(
) {
    // Arrange: a budget of 4 MiB, and four uploads announcing 1 MiB each, with an HMAC that
    // matches nothing, that send a byte and then wait.
    let app = spawn_app_with(|s| s.webhook_body_budget_bytes = 4 * 1024 * 1024).await;
    app.create_shop(SHOP).await;
    let mut slow = Vec::new();
    for _ in 0..4 {
        let mut stream = connect(&app).await;
        stream
            .write_all(&unsigned_webhook_head(1024 * 1024))
            .await
            .unwrap();
        stream.write_all(b"{").await.unwrap();
        slow.push(stream);
    }

    // Act: another unsigned webhook, until the four are all being read (it is 401 before).
    let refused = eventually("the webhook is refused", Duration::from_secs(5), || async {
        let asked = Instant::now();
        let (status, code) = unsigned_webhook(&app).await;
        if status == StatusCode::SERVICE_UNAVAILABLE {
            return Ok((asked.elapsed(), code));
        }
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{code}");
        Err(status)
    })
    .await;
    let signed = Delivery::new("products/delete", &serde_json::json!({ "id": 7 }));
    let while_full = signed.send(&app).await;
    let video = serde_json::json!({
        "title": "Beside the full budget",
        "videoUrl": "https://cdn.example.com/v.mp4",
    });
    let admin = app
        .send_admin_json(
            reqwest::Method::POST,
            &format!("/shops/{SHOP}/videos"),
            &video,
        )
        .await;

    // Assert: refused at once with a 503 that says when to come back, counted; other callers
    // served; and once the slow uploads close, webhooks are taken again.
    assert_eq!(refused.1, "SERVICE_BUSY");
    assert!(refused.0 < Duration::from_secs(1), "{:?}", refused.0);
    assert_eq!(while_full.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(while_full.headers()["retry-after"], "5");
    let (status, body) = json_of(while_full).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(body["error"]["code"], "SERVICE_BUSY", "{body}");
    assert_eq!(admin.status(), StatusCode::CREATED);
    let metrics = app.metrics().await;
    let busy = metric_value(&metrics, "webhooks_refused_total", &[("reason", "busy")]);
    assert!(busy.is_some_and(|n| n >= 2.0), "{busy:?}");

    drop(slow);
    let (app, signed) = (&app, &signed);
    eventually(
        "webhooks are taken again",
        Duration::from_secs(5),
        move || async move {
            let status = signed.send(app).await.status();
            if status == StatusCode::OK {
                return Ok(());
            }
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
            Err(status)
        },
    )
    .await;
}
