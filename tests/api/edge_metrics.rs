//! What callers choose freely (methods, paths, request ids) stays out of metric labels, echoed
//! headers and logs.

use std::collections::BTreeSet;

use rand::distributions::{Alphanumeric, DistString};
use rand::Rng;
use reqwest::header::HeaderValue;
use reqwest::{Method, StatusCode};

use crate::support::*;

/// A method name no standard method has: 10 to 24 characters of the HTTP token set.
fn made_up_method(rng: &mut impl Rng) -> String {
    const TOKEN: &[u8] =
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789!#$%&'*+-.^_`|~";
    let len = rng.gen_range(10..=24);
    (0..len)
        .map(|_| TOKEN[rng.gen_range(0..TOKEN.len())] as char)
        .collect()
}

/// Paths of routes the service has (some with template parameters filled in by the caller).
fn matched_paths(rng: &mut impl Rng) -> [String; 7] {
    let word = Alphanumeric.sample_string(rng, 12).to_lowercase();
    [
        "/healthz".to_string(),
        "/readyz".to_string(),
        "/openapi.json".to_string(),
        format!("/admin/v1/shops/{word}.myshopify.com"),
        format!("/admin/v1/shops/{word}.myshopify.com/videos/{word}"),
        format!("/api/v1/analytics/video/{word}"),
        "/apps/videoapp_sub/widgets-list".to_string(),
    ]
}

/// Sends a batch of requests under caller-chosen names: made-up methods on unmatched and
/// matched paths (each route in turn), standard ones on unmatched paths. Returns the names it
/// made up.
async fn caller_chosen_batch(app: &ProcessApp, rng: &mut impl Rng, n: usize) -> Vec<String> {
    let mut chosen = Vec::new();
    for i in 0..n {
        let method = made_up_method(rng);
        let segment = Alphanumeric.sample_string(rng, 16);
        let unmatched = format!("/zz{segment}/{}", Alphanumeric.sample_string(rng, 8));
        let requests = [
            (method.as_str(), unmatched.clone()),
            (method.as_str(), matched_paths(rng)[i % 7].clone()),
            ("GET", unmatched.clone()),
            ("POST", unmatched.clone()),
        ];
        for (method, path) in requests {
            let method = Method::from_bytes(method.as_bytes()).unwrap();
            let response = app.client.request(method, app.url(&path)).send().await;
            assert!(response.unwrap().status().is_client_error(), "{path}");
        }
        chosen.extend([method, segment]);
    }
    chosen
}

/// The samples of a Prometheus text, without their values.
fn series(metrics: &str) -> BTreeSet<&str> {
    metrics
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| line.rsplit_once(' ').unwrap().0)
        .collect()
}

#[tokio::test]
async fn caller_chosen_methods_and_paths_add_no_series() {
    const WARM_UP: usize = 40;
    const LATER: usize = 300;
    let app = spawn_process_app(&[]).await;
    // The change listener's first flush adds its series whenever it connects: before the
    // warm-up, so that a slow start does not count as a series the batch added.
    let flushed = |n: f64| n >= 1.0;
    let within = std::time::Duration::from_secs(30);
    app.wait_for_metric("catalog_cache_flushes_total", &[], flushed, within)
        .await;
    let mut rng = rand::thread_rng();
    let mut chosen = caller_chosen_batch(&app, &mut rng, WARM_UP).await;
    let warm = app.metrics().await;

    chosen.extend(caller_chosen_batch(&app, &mut rng, LATER).await);
    let metrics = app.metrics().await;
    let (now, then) = (series(&metrics), series(&warm));
    let added: Vec<_> = now.symmetric_difference(&then).collect();
    assert!(
        added.is_empty(),
        "series changed by the later batch: {added:#?}"
    );
    assert_eq!(metrics.lines().count(), warm.lines().count());
    for chosen in &chosen {
        assert!(
            !metrics.contains(chosen.as_str()),
            "{chosen:?} in\n{metrics}"
        );
    }

    // Each batch round sends one request of each kind, every one counted under fixed labels.
    let rounds = (WARM_UP + LATER) as f64;
    let unmatched = |method| {
        [
            ("method", method),
            ("route", "unmatched"),
            ("status", "404"),
        ]
    };
    for method in ["other", "GET", "POST"] {
        let value = metric_value(&metrics, "http_requests_total", &unmatched(method));
        assert_eq!(
            value,
            Some(rounds),
            "{method} on unmatched paths:\n{metrics}"
        );
    }
    let counted = |wanted: &dyn Fn(&str) -> bool| -> f64 {
        metrics
            .lines()
            .filter(|line| line.starts_with("http_requests_total{") && wanted(line))
            .map(|line| line.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
            .sum()
    };
    // Refused with 405, or 401 where authentication comes first, under the route's template.
    let on_routes = counted(&|line| {
        line.contains(r#"method="other""#) && !line.contains(r#"route="unmatched""#)
    });
    assert_eq!(on_routes, rounds, "made-up methods on routes:\n{metrics}");
    assert_eq!(
        counted(&|_| true),
        rounds * 4.0,
        "every request counted:\n{metrics}"
    );
}

/// `method /healthz` sent with `x-request-id: id`: its status and the request id it carries.
async fn healthz_with_request_id(
    app: &impl Service,
    method: Method,
    id: HeaderValue,
) -> (StatusCode, String) {
    let request = app.client.request(method, app.url("/healthz"));
    let response = request.header("x-request-id", id).send().await.unwrap();
    let echoed = response.headers()["x-request-id"].to_str().unwrap();
    (response.status(), echoed.to_string())
}

/// The `x-request-id` of the answer to `GET /healthz` sent with `id`.
async fn echoed_request_id(app: &impl Service, id: HeaderValue) -> String {
    let (status, echoed) = healthz_with_request_id(app, Method::GET, id).await;
    assert_eq!(status, StatusCode::OK);
    echoed
}

fn is_new_uuid(id: &str) -> bool {
    uuid::Uuid::parse_str(id).is_ok_and(|uuid| uuid.get_version_num() == 4)
}

#[tokio::test]
async fn a_long_or_unusual_request_id_is_replaced_by_a_uuid() {
    let app = spawn_app().await;
    let safe = "ABCXYZabcxyz0189._:-";
    let of_length = |n| safe.chars().cycle().take(n).collect::<String>();
    // The largest the head limit lets through (a longer one is 431: `edge_limits`).
    let (huge, one_too_many) = (vec![b'a'; 30 * 1024], of_length(129));
    let replaced: [&[u8]; 8] = [
        &huge,
        one_too_many.as_bytes(),
        b"two words",
        b"\"quoted\"",
        "caf\u{e9} \u{2603}".as_bytes(),
        b"tab\there",
        br"line\r\nbreak",
        b"",
    ];
    for given in replaced {
        let echoed = echoed_request_id(&app, HeaderValue::from_bytes(given).unwrap()).await;
        assert!(
            is_new_uuid(&echoed),
            "{:?} answered with {echoed:?}",
            String::from_utf8_lossy(given)
        );
    }
    for kept in [
        of_length(128),
        of_length(1),
        "0f8fad5b-d9cb-469f-a165-70867728950e".into(),
    ] {
        let echoed = echoed_request_id(&app, HeaderValue::from_str(&kept).unwrap()).await;
        assert_eq!(echoed, kept);
    }
}

#[tokio::test]
async fn a_replaced_request_id_is_never_logged_and_its_replacement_is() {
    let app = spawn_process_app(&[("RUST_LOG", "info,videoapp::telemetry=debug".into())]).await;
    let forged = HeaderValue::from_static(r#"x" level="error" message="forged line"#);
    // A 405 is logged (at debug) by the layer that logs every failure.
    let (status, echoed) = healthz_with_request_id(&app, Method::DELETE, forged).await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(is_new_uuid(&echoed), "{echoed}");

    let line = app
        .process
        .wait_for_log("request refused", std::time::Duration::from_secs(10))
        .await;
    assert_eq!(line["request_id"], echoed, "{line}");
    assert_eq!(line["method"], "DELETE", "{line}");
    assert_eq!(line["route"], "/healthz", "{line}");
    let log = serde_json::Value::from(app.process.log()).to_string();
    assert!(!log.contains("forged line"), "{log}");
}
