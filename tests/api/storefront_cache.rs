//! The storefront's edges: the signature, the snapshot cache and its invalidation, HTTP caching,
//! and a property test that arbitrary input never breaks it.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};

use crate::support::*;

const SHOP: &str = "cache-shop.myshopify.com";
const ENDPOINTS: [&str; 3] = ["contextual-widgets", "widget-by-id", "widgets-list"];

/// Parameters of the endpoint's own that it answers (a widget id that need not exist).
fn own_params(endpoint: &str) -> Vec<(&'static str, &'static str)> {
    match endpoint {
        "widget-by-id" => vec![("id", "x"), ("location", "home")],
        "widgets-list" => vec![("type", "carousel")],
        _ => vec![("location", "home")],
    }
}

/// A shop with a widget showing one video, "First title"; returns the video's id.
async fn shop_with_a_widget(app: &impl Service) -> String {
    let (video, _) = app
        .create_shop_showing_a_video(SHOP, json!({ "title": "First title" }))
        .await;
    video
}

/// Our 401 for a signature that does not hold, its message mentioning `needle`.
async fn assert_bad_signature(response: reqwest::Response, needle: &str) {
    assert_error(
        response,
        StatusCode::UNAUTHORIZED,
        "INVALID_SIGNATURE",
        needle,
    )
    .await;
}

async fn first_video_title(app: &impl Service) -> Value {
    let (status, body) = json_of(
        app.storefront("contextual-widgets", SHOP, &[("location", "home")])
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["widgets"][0]["videos"][0]["title"].clone()
}

/// Polls until the storefront shows the first video titled `title`, for at most `within`.
async fn eventually_titled(app: &impl Service, title: &str, within: Duration) {
    let what = format!("the first video is titled {title:?}");
    eventually(&what, within, move || async move {
        let shown = first_video_title(app).await;
        (shown == title).then_some(()).ok_or(shown)
    })
    .await;
}

async fn rename_video(app: &TestApp, video: &str, title: &str) {
    let path = format!("/shops/{SHOP}/videos/{video}");
    app.admin_expecting(
        Method::PATCH,
        &path,
        &json!({ "title": title }),
        StatusCode::OK,
    )
    .await;
}

/// Changes the catalog behind the service's back: no version bump, no NOTIFY.
async fn rename_video_silently(app: &TestApp, video: &str, title: &str) {
    sqlx::query("UPDATE videos SET title = $1 WHERE id = $2::uuid")
        .bind(title)
        .bind(video)
        .execute(&app.db)
        .await
        .unwrap();
}

// ---- signature -------------------------------------------------------------------------------

#[tokio::test]
async fn tampered_missing_duplicated_or_stale_signatures_are_refused_on_every_endpoint() {
    let app = spawn_app().await;
    shop_with_a_widget(&app).await;
    // The endpoint's own parameters and the shop, signed with `secret` at `at`.
    let signed_with = |endpoint, secret, at| {
        let params = own_params(endpoint).into_iter().chain([("shop", SHOP)]);
        let params: Vec<_> = params
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let secret = videoapp::storefront::signature::ProxySecret::new(secret);
        videoapp::storefront::signature::signed_query(&secret, &params, at)
    };
    let now = chrono::Utc::now();
    for endpoint in ENDPOINTS {
        let good = signed(SHOP, &own_params(endpoint));
        let (name, value) = own_params(endpoint)[0];
        let unsigned: Vec<String> = own_params(endpoint)
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        let bad_queries = [
            good.replace(&format!("{name}={value}"), &format!("{name}=other")),
            good.replace(SHOP, "other-shop.myshopify.com"),
            format!("{good}&v=added"),
            good.split("&signature=").next().unwrap().to_string(),
            format!("{good}&signature=0000"),
            signed_with(endpoint, PROXY_SECRET, now - chrono::Duration::seconds(120)),
            signed_with(endpoint, "not-the-secret", now),
            format!("shop={SHOP}&{}", unsigned.join("&")),
            String::new(),
        ];
        for query in &bad_queries {
            let response = app
                .get(&format!("/apps/videoapp_sub/{endpoint}?{query}"))
                .await;
            assert_bad_signature(response, "signature").await;
        }
        let response = app
            .get(&format!("/apps/videoapp_sub/{endpoint}?{good}"))
            .await;
        assert_ne!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{endpoint} with a good signature"
        );
    }
}

#[tokio::test]
async fn repeated_parameters_are_signed_with_their_values_joined() {
    let app = spawn_app().await;
    shop_with_a_widget(&app).await;
    // `v` twice is signed as `v=1,2` (the platform's rule for repeated keys): the signature holds,
    // and the repeat is what is refused.
    let params = [("location", "home"), ("v", "1"), ("v", "2")];
    let response = app.storefront("contextual-widgets", SHOP, &params).await;
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "INVALID_PARAMETER",
        "v: given more than once",
    )
    .await;
}

#[tokio::test]
async fn the_timestamp_window_is_configurable() {
    let app = spawn_app_with(|s| s.signature_max_age = Duration::from_secs(5)).await;
    shop_with_a_widget(&app).await;
    let secret = videoapp::storefront::signature::ProxySecret::new(PROXY_SECRET);
    let params = [
        ("shop".to_string(), SHOP.to_string()),
        ("location".to_string(), "home".to_string()),
    ];
    let at = |age: i64| {
        videoapp::storefront::signature::signed_query(
            &secret,
            &params,
            chrono::Utc::now() - chrono::Duration::seconds(age),
        )
    };
    let response = app
        .get(&format!("/apps/videoapp_sub/contextual-widgets?{}", at(2)))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    let response = app
        .get(&format!("/apps/videoapp_sub/contextual-widgets?{}", at(20)))
        .await;
    assert_bad_signature(response, "window").await;
    let response = app
        .get(&format!(
            "/apps/videoapp_sub/contextual-widgets?{}",
            at(-20)
        ))
        .await;
    assert_bad_signature(response, "window").await;
}

#[tokio::test]
async fn the_development_flag_accepts_unsigned_requests() {
    let app = spawn_app_with(|s| s.insecure_skip_signature = true).await;
    shop_with_a_widget(&app).await;
    let response = app
        .get(&format!(
            "/apps/videoapp_sub/contextual-widgets?shop={SHOP}&location=home"
        ))
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

// ---- the snapshot cache ----------------------------------------------------------------------

#[tokio::test]
async fn a_warm_cache_answers_without_touching_the_database() {
    let app = spawn_app().await;
    shop_with_a_widget(&app).await;
    assert_eq!(first_video_title(&app).await, "First title");
    let loads = app.catalog.loads();

    // Hold exclusive locks on every catalog table: any query the service made would block.
    let mut blocker = PgConnection::connect(&app.database_url).await.unwrap();
    blocker.execute("BEGIN").await.unwrap();
    blocker
        .execute(
            "LOCK TABLE shops, products, videos, widgets, widget_videos IN ACCESS EXCLUSIVE MODE",
        )
        .await
        .unwrap();

    for endpoint_params in [
        ("contextual-widgets", vec![("location", "home")]),
        ("widgets-list", vec![("type", "carousel")]),
    ] {
        let request = app.storefront(endpoint_params.0, SHOP, &endpoint_params.1);
        let response = tokio::time::timeout(Duration::from_secs(2), request)
            .await
            .expect("answered from the cache while the tables were locked");
        assert_eq!(response.status(), StatusCode::OK);
    }
    assert_eq!(app.catalog.loads(), loads, "no snapshot was loaded");
    blocker.execute("ROLLBACK").await.unwrap();
}

#[tokio::test]
async fn concurrent_misses_for_one_shop_load_it_once() {
    // A process of its own: its cache metrics count this test's requests alone.
    let app = spawn_process_app(&[]).await;
    shop_with_a_widget(&app).await;
    // Nothing may drop the snapshot while the requests below load it: the listener's start-up
    // flush and the notifications of the writes above are behind us. The storefront never asked
    // for the shop, so it starts cold.
    wait_until_listening(&app, Duration::from_secs(30)).await;
    let counters = [
        "catalog_cache_loads_total",
        "catalog_cache_hits_total",
        "catalog_cache_misses_total",
    ];
    let read =
        |metrics: String| counters.map(|name| metric_value(&metrics, name, &[]).unwrap_or(0.0));
    let before = read(app.metrics().await);

    let requests =
        (0..32).map(|_| app.storefront("contextual-widgets", SHOP, &[("location", "home")]));
    for response in futures::future::join_all(requests).await {
        assert_eq!(response.status(), StatusCode::OK);
    }

    let after = read(app.metrics().await);
    let [loads, hits, misses] = [0, 1, 2].map(|i| after[i] - before[i]);
    assert_eq!(loads, 1.0, "one load for 32 requests");
    assert!(misses >= 1.0, "it started cold: {misses} misses");
    assert_eq!(hits + misses, 32.0, "each request counted once");
}

#[tokio::test]
async fn an_admin_write_is_visible_at_once_on_the_same_instance() {
    let app = spawn_app().await;
    let video = shop_with_a_widget(&app).await;
    assert_eq!(first_video_title(&app).await, "First title");
    rename_video(&app, &video, "Second title").await;
    assert_eq!(first_video_title(&app).await, "Second title");
}

#[tokio::test]
async fn a_write_through_one_instance_is_seen_by_another_within_a_second() {
    let first = spawn_app().await;
    let video = shop_with_a_widget(&first).await;
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    // Only the notification can make the second instance see it: the TTL is far away.
    settings.catalog_cache_ttl = Duration::from_secs(3600);
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    // The second instance's listener is live: a notification sent from now on reaches it.
    wait_until_listening(&second, Duration::from_secs(30)).await;
    assert_eq!(first_video_title(&second).await, "First title");

    rename_video(&first, &video, "Renamed elsewhere").await;

    eventually_titled(&second, "Renamed elsewhere", Duration::from_secs(1)).await;
}

#[tokio::test]
async fn the_ttl_bounds_staleness_when_a_notification_is_lost() {
    const TTL: Duration = Duration::from_secs(2);
    let app = spawn_app_with(|s| s.catalog_cache_ttl = TTL).await;
    let video = shop_with_a_widget(&app).await;
    // Only the TTL may refresh the snapshot below: the listener's start-up flush and the
    // notifications of the writes above are behind us, and the change below sends none.
    wait_until_listening(&app, Duration::from_secs(30)).await;
    let loaded = Instant::now();
    assert_eq!(first_video_title(&app).await, "First title");

    rename_video_silently(&app, &video, "Changed silently").await;
    assert_eq!(
        first_video_title(&app).await,
        "First title",
        "served from the cache"
    );

    // The TTL is the behaviour under test, so time passing is what the test waits for: polled,
    // so that a slow machine only makes it later, and the change must not show before it.
    let within = (TTL + Duration::from_secs(10)).saturating_sub(loaded.elapsed());
    let app = &app;
    eventually(
        "the change shows once the TTL is over",
        within,
        move || async move {
            let title = first_video_title(app).await;
            if title == "Changed silently" {
                return Ok(());
            }
            assert_eq!(title, "First title");
            Err(title)
        },
    )
    .await;
    assert!(
        loaded.elapsed() >= TTL,
        "refreshed {:?} after the load, before the TTL",
        loaded.elapsed()
    );
}

#[tokio::test]
async fn the_cache_is_reloaded_when_the_listener_reconnects() {
    let app = spawn_app_with(|s| s.catalog_cache_ttl = Duration::from_secs(3600)).await;
    let video = shop_with_a_widget(&app).await;
    // The listener's start-up invalidation is behind us: only the reconnect can make what is
    // cached now be read again.
    wait_until_listening(&app, Duration::from_secs(30)).await;
    assert_eq!(first_video_title(&app).await, "First title");
    rename_video_silently(&app, &video, "Changed while deaf").await;
    assert_eq!(
        first_video_title(&app).await,
        "First title",
        "served from the cache"
    );

    // Cut the listener's connection, as a Postgres restart or network fault would.
    let name = app.database_url.rsplit('/').next().unwrap().to_string();
    let mut admin = PgConnection::connect(&postgres_admin_url()).await.unwrap();
    let terminated: Vec<(bool,)> = sqlx::query_as(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND query ILIKE 'LISTEN%'",
    )
    .bind(&name)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    assert!(
        !terminated.is_empty(),
        "the listener's connection was found"
    );

    eventually_titled(&app, "Changed while deaf", Duration::from_secs(5)).await;
}

#[tokio::test]
async fn uninstalling_a_shop_takes_it_off_the_storefront_at_once() {
    let app = spawn_app().await;
    shop_with_a_widget(&app).await;
    assert_eq!(first_video_title(&app).await, "First title");
    app.send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    for (endpoint, params) in [
        ("contextual-widgets", [("location", "home")]),
        ("widgets-list", [("type", "carousel")]),
        (
            "widget-by-id",
            [("id", "01a20082-29f1-702f-93f8-69422999f903")],
        ),
    ] {
        let response = app.storefront(endpoint, SHOP, &params).await;
        assert_error(
            response,
            StatusCode::NOT_FOUND,
            "SHOP_NOT_FOUND",
            "not found",
        )
        .await;
    }
}

// ---- HTTP caching ----------------------------------------------------------------------------

#[tokio::test]
async fn a_matching_if_none_match_gets_304_until_the_catalog_changes() {
    let app = spawn_app().await;
    let video = shop_with_a_widget(&app).await;
    let query = |extra: &[(&str, &str)]| {
        let mut params = vec![("location", "home")];
        params.extend_from_slice(extra);
        format!(
            "/apps/videoapp_sub/contextual-widgets?{}",
            signed(SHOP, &params)
        )
    };
    let response = app.get(&query(&[])).await;
    assert_eq!(response.status(), StatusCode::OK);
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    assert_eq!(
        response.headers()["cache-control"],
        "public, max-age=60, stale-while-revalidate=600"
    );

    let revalidate = |etag: String| {
        app.client
            .get(app.url(&query(&[])))
            .header("if-none-match", etag)
            .send()
    };
    let response = revalidate(etag.clone()).await.unwrap();
    assert_eq!(response.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(response.headers()["etag"].to_str().unwrap(), etag);
    assert!(response.bytes().await.unwrap().is_empty());

    // Another page gives another validator.
    let other = app.get(&query(&[("collection_id", "5")])).await;
    assert_ne!(other.headers()["etag"].to_str().unwrap(), etag);

    rename_video(&app, &video, "Changed").await;
    let response = revalidate(etag.clone()).await.unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    assert_ne!(response.headers()["etag"].to_str().unwrap(), etag);
}

#[tokio::test]
async fn a_new_attribution_window_replaces_every_cached_answer_at_once() {
    // Arrange: each answer pinned to the current version (cached a day), and its validator.
    let app = spawn_app().await;
    let (_, widget) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let version = app.catalog_version(SHOP).await.to_string();
    let mut cached = Vec::new();
    for endpoint in ENDPOINTS {
        let mut params = match endpoint {
            "widget-by-id" => vec![("id", widget.as_str()), ("location", "home")],
            _ => own_params(endpoint),
        };
        params.push(("v", &version));
        let url = format!("/apps/videoapp_sub/{endpoint}?{}", signed(SHOP, &params));
        let response = app.get(&url).await;
        assert_eq!(response.headers()["cache-control"], "public, max-age=86400");
        let etag = response.headers()["etag"].to_str().unwrap().to_string();
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::OK, "{endpoint}: {body}");
        assert_eq!(body["attributionWindowDays"], json!(7), "{endpoint}");
        cached.push((endpoint, url, etag));
    }

    // Act
    app.admin_expecting(
        Method::PUT,
        &format!("/shops/{SHOP}"),
        &json!({ "attributionWindowDays": 1 }),
        StatusCode::OK,
    )
    .await;

    // Assert: neither the client's copy nor the service's rendered page is current any more.
    for (endpoint, url, etag) in cached {
        let response = app
            .client
            .get(app.url(&url))
            .header("if-none-match", &etag)
            .send()
            .await
            .unwrap();
        assert_ne!(
            response.headers()["etag"].to_str().unwrap(),
            etag,
            "{endpoint}"
        );
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::OK, "{endpoint}: {body}");
        assert_eq!(body["attributionWindowDays"], json!(1), "{endpoint}");
    }
}

#[tokio::test]
async fn the_current_version_in_v_may_be_cached_for_a_day() {
    let app = spawn_app().await;
    shop_with_a_widget(&app).await;
    let version = app.catalog_version(SHOP).await.to_string();
    for endpoint in ENDPOINTS {
        let mut params = own_params(endpoint);
        params.push(("v", version.as_str()));
        let response = app.storefront(endpoint, SHOP, &params).await;
        if endpoint == "widget-by-id" {
            continue; // no such widget: an empty 404, nothing to cache
        }
        assert_eq!(
            response.headers()["cache-control"],
            "public, max-age=86400",
            "{endpoint}"
        );
    }
    let stale = [("location", "home"), ("v", "1")];
    let response = app.storefront("contextual-widgets", SHOP, &stale).await;
    assert_eq!(
        response.headers()["cache-control"],
        "public, max-age=60, stale-while-revalidate=600"
    );
}

// ---- compression -------------------------------------------------------------------------------

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(data), &mut out).unwrap();
    out
}

fn unbrotli(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli::BrotliDecompress(&mut std::io::Cursor::new(data), &mut out).unwrap();
    out
}

#[tokio::test]
async fn answers_are_compressed_as_the_request_accepts_and_shared_by_every_request_of_a_page() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let mut videos = Vec::new();
    for n in 0..12 {
        let title = format!("A video with a title long enough to be worth compressing, number {n}");
        videos.push(app.create_video(SHOP, json!({ "title": title })).await);
    }
    let widget = app.create_widget(SHOP, json!({ "videoIds": videos })).await;
    let get =
        |endpoint: &'static str, params: Vec<(&'static str, String)>, accept: &'static str| {
            let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
            let url = app.url(&format!(
                "/apps/videoapp_sub/{endpoint}?{}",
                signed(SHOP, &params)
            ));
            let request = app.client.get(url).header("accept-encoding", accept);
            async move {
                let response = request.send().await.unwrap();
                assert_eq!(response.status(), StatusCode::OK, "{endpoint} ({accept})");
                assert_eq!(response.headers()["vary"], "accept-encoding");
                let coding = response
                    .headers()
                    .get("content-encoding")
                    .map(|v| v.to_str().unwrap().to_string());
                (coding, response.bytes().await.unwrap().to_vec())
            }
        };
    let home = || vec![("location", "home".to_string())];

    let (coding, plain) = get("contextual-widgets", home(), "identity").await;
    assert_eq!(coding, None);
    let parsed: Value = serde_json::from_slice(&plain).unwrap();
    assert_eq!(parsed["widgets"][0]["videos"].as_array().unwrap().len(), 12);

    // Every request of the page gets the same body, in the coding it accepts.
    for (accept, expected) in [
        ("gzip, deflate, br", Some("br")),
        ("br;q=0, gzip", Some("gzip")),
        ("gzip;q=0.5, br;q=0.1", Some("br")),
        ("*", Some("br")),
        ("deflate", None),
        ("br;q=0, gzip;q=0", None),
        ("", None),
    ] {
        let (coding, body) = get("contextual-widgets", home(), accept).await;
        assert_eq!(coding.as_deref(), expected, "Accept-Encoding: {accept}");
        let decoded = match coding.as_deref() {
            Some("br") => unbrotli(&body),
            Some("gzip") => gunzip(&body),
            _ => body.clone(),
        };
        assert_eq!(decoded, plain, "Accept-Encoding: {accept}");
        if coding.is_some() {
            assert!(
                body.len() * 3 < plain.len(),
                "{accept}: {} of {} bytes",
                body.len(),
                plain.len()
            );
        }
    }

    // The other endpoints too.
    let (coding, body) = get("widget-by-id", vec![("id", widget.clone())], "gzip").await;
    assert_eq!(coding.as_deref(), Some("gzip"));
    let parsed: Value = serde_json::from_slice(&gunzip(&body)).unwrap();
    assert_eq!(parsed["widget"]["id"], widget.as_str());
    let (coding, body) = get("widgets-list", vec![("type", "carousel".to_string())], "br").await;
    let decoded = match coding.as_deref() {
        Some("br") => unbrotli(&body),
        _ => body,
    };
    let parsed: Value = serde_json::from_slice(&decoded).unwrap();
    assert_eq!(parsed["count"], 1);
}

// ---- bad input never breaks it ---------------------------------------------------------------

fn any_value() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,40}",
        Just(String::new()),
        Just("home".to_string()),
        Just("product".to_string()),
        Just("carousel".to_string()),
        Just("gid://shopify/Product/1".to_string()),
        Just("99999999999999999999999".to_string()),
        Just("01a20082-29f1-702f-93f8-69422999f903".to_string()),
        Just(",,,".to_string()),
        Just("%ZZ".to_string()),
    ]
}

fn any_params() -> impl Strategy<Value = Vec<(String, String)>> {
    let key = prop_oneof![
        Just("location".to_string()),
        Just("product_id".to_string()),
        Just("product_handle".to_string()),
        Just("collection_id".to_string()),
        Just("widget_id".to_string()),
        Just("widget_ids".to_string()),
        Just("v".to_string()),
        Just("id".to_string()),
        Just("type".to_string()),
        Just("shop".to_string()),
        "[a-z_]{1,12}",
    ];
    proptest::collection::vec((key, any_value()), 0..8)
}

#[test]
fn arbitrary_queries_and_ids_get_only_2xx_or_4xx_answers() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime.block_on(async {
        let app = spawn_app().await;
        let video = shop_with_a_widget(&app).await;
        app.create_widget(SHOP, json!({ "type": "productpage", "sourceType": "product" })).await;
        app.create_widget(SHOP, json!({ "type": "story", "videoIds": [video], "rules": { "locations": ["product"], "productIds": ["1"] } })).await;
        app
    });
    let config = ProptestConfig {
        cases: 300,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(endpoint in proptest::sample::select(ENDPOINTS.to_vec()), params in any_params(), sign in any::<bool>(), raw in ".{0,80}")| {
        let status = runtime.block_on(async {
            let query = if sign {
                let mut all = vec![("shop".to_string(), SHOP.to_string())];
                all.extend(params.clone());
                videoapp::storefront::signature::signed_query(
                    &videoapp::storefront::signature::ProxySecret::new(PROXY_SECRET),
                    &all,
                    chrono::Utc::now(),
                )
            } else {
                raw.clone()
            };
            let url = format!("{}/apps/videoapp_sub/{endpoint}?{query}", app.address);
            match reqwest::Url::parse(&url) {
                Ok(url) => app.client.get(url).send().await.map(|r| r.status()).ok(),
                Err(_) => None, // not a URL a client could send
            }
        });
        if let Some(status) = status {
            prop_assert!(status.is_success() || status.is_client_error() || status == StatusCode::NOT_MODIFIED,
                "{endpoint} {params:?} signed={sign} raw={raw:?} -> {status}");
        }
    });
}

/// The app proxy signs the sorted `key=value` pieces joined without a separator, so one signed
/// text can be cut into pairs in more than one way. Shop A's proxy signs `r=1shop=<B>shopz=`
/// beside `shop=<A>`; cut as `r=1`, `shop=<B>`, `shopz=shop=<A>` the same text names shop B.
/// Unknown parameters are refused, so such a query never reaches B's widgets or B's analytics.
#[tokio::test]
async fn a_signature_made_for_one_shop_cannot_be_regrouped_into_another_shops_request() {
    let app = spawn_app().await;
    let shop_b = "victim-shop.myshopify.com";
    app.create_shop_showing_a_video(shop_b, json!({})).await;
    let secret = videoapp::storefront::signature::ProxySecret::new(PROXY_SECRET);
    let as_signed_for_a = [
        ("location", "home"),
        ("logged_in_customer_id", ""),
        ("path_prefix", "/apps/videoapp_sub"),
        ("r", &format!("1shop={shop_b}shopz=")),
        ("shop", SHOP),
    ];
    let as_signed_for_a: Vec<(String, String)> = as_signed_for_a
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let signed_for_a = videoapp::storefront::signature::signed_query(
        &secret,
        &as_signed_for_a,
        chrono::Utc::now(),
    );
    let pairs: Vec<(String, String)> = url::form_urlencoded::parse(signed_for_a.as_bytes())
        .into_owned()
        .collect();
    let value = |key: &str| pairs.iter().find(|(k, _)| k == key).unwrap().1.clone();
    let regrouped: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("location", "home")
        .append_pair("logged_in_customer_id", "")
        .append_pair("path_prefix", "/apps/videoapp_sub")
        .append_pair("r", "1")
        .append_pair("shop", shop_b)
        .append_pair("shopz", &format!("shop={SHOP}"))
        .append_pair("timestamp", &value("timestamp"))
        .append_pair("signature", &value("signature"))
        .finish();

    let widgets = app
        .get(&format!(
            "/apps/videoapp_sub/contextual-widgets?{regrouped}"
        ))
        .await;
    assert_error(
        widgets,
        StatusCode::BAD_REQUEST,
        "UNKNOWN_PARAMETER",
        "r, shopz",
    )
    .await;
    let checkout = json!({
        "eventType": "checkout_completed",
        "videoId": "video-1",
        "widgetId": "widget-1",
        "sessionId": "session-1",
        "orderId": "1001",
        "revenue": 10,
        "currency": "EUR",
    });
    let events = app
        .client
        .post(app.url(&format!("/apps/videoapp_sub/analytics?{regrouped}")))
        .header("content-type", "text/plain")
        .body(checkout.to_string())
        .send()
        .await
        .unwrap();
    assert_error(
        events,
        StatusCode::BAD_REQUEST,
        "UNKNOWN_PARAMETER",
        "r, shopz",
    )
    .await;
}
