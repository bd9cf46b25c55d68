//! The dashboard's API, `/app/api`: the admin and analytics handlers behind the platform's session
//! token. Every refusal of the token is a 401; a token may only reach its own shop; what the
//! dashboard writes and reads is what the admin and analytics APIs write and read.

use std::time::{Duration, Instant};

use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::analytics::{analytics_ok, checkout, create_key, event, record, Key};
use crate::support::platform::{
    demo_store, platform_settings, session_token_for, wait_until_worked, CLIENT_ID,
};
use crate::support::*;
use sha2::Digest;

const SHOP: &str = "dashboard-shop.myshopify.com";
const OTHER_SHOP: &str = "other-dashboard-shop.myshopify.com";

fn token() -> String {
    session_token_for(SHOP, PROXY_SECRET, |_| {})
}

async fn dashboard_app() -> TestApp {
    let app = spawn_app_with(platform_settings).await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    app
}

async fn call(
    app: &TestApp,
    method: Method,
    path: &str,
    token: Option<&str>,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut request = app
        .client
        .request(method, app.url(&format!("/app/api{path}")));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request.json(&body);
    }
    json_of(request.send().await.unwrap()).await
}

async fn get(app: &TestApp, path: &str) -> Value {
    let (status, body) = call(app, Method::GET, path, Some(&token()), None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {body}");
    body
}

#[tokio::test]
async fn every_refused_session_token_is_a_401_on_every_kind_of_call() {
    // Arrange
    let app = dashboard_app().await;
    let now = Utc::now().timestamp();
    let tokens = [
        ("no token", None),
        (
            "bad signature",
            Some(session_token_for(SHOP, "not-the-secret", |_| {})),
        ),
        (
            "expired",
            Some(session_token_for(SHOP, PROXY_SECRET, |c| {
                c["exp"] = json!(now - 30)
            })),
        ),
        (
            "wrong audience",
            Some(session_token_for(SHOP, PROXY_SECRET, |c| {
                c["aud"] = json!("someone-else")
            })),
        ),
        (
            "another shop's",
            Some(session_token_for(OTHER_SHOP, PROXY_SECRET, |_| {})),
        ),
    ];
    let calls = [
        (Method::GET, format!("/shops/{SHOP}/videos")),
        (Method::POST, format!("/shops/{SHOP}/widgets")),
        (Method::GET, format!("/shops/{SHOP}/api-keys")),
    ];

    for (case, token) in &tokens {
        for (method, path) in &calls {
            // Act
            let (status, body) = call(
                &app,
                method.clone(),
                path,
                token.as_deref(),
                Some(json!({})),
            )
            .await;

            // Assert
            assert_eq!(
                status,
                StatusCode::UNAUTHORIZED,
                "{case} {method} {path}: {body}"
            );
            assert_eq!(
                body["error"]["code"], "INVALID_SESSION_TOKEN",
                "{case}: {body}"
            );
        }
    }
    // The analytics calls name no shop: only the token's own checks apply.
    for (case, token) in &tokens[..4] {
        let (status, body) = call(
            &app,
            Method::GET,
            "/analytics/summary",
            token.as_deref(),
            None,
        )
        .await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}: {body}");
    }
}

#[tokio::test]
async fn what_the_dashboard_writes_is_what_the_admin_api_reads() {
    // Arrange
    let app = dashboard_app().await;
    let video = json!({ "title": "Autumn lookbook", "videoUrl": "https://cdn.example/a.mp4" });

    // Act
    let (created, body) = call(
        &app,
        Method::POST,
        &format!("/shops/{SHOP}/videos"),
        Some(&token()),
        Some(video),
    )
    .await;
    let (invalid, refusal) = call(
        &app,
        Method::POST,
        &format!("/shops/{SHOP}/widgets"),
        Some(&token()),
        Some(json!({ "type": "carousel", "title": "x", "videoIds": ["not-a-uuid"] })),
    )
    .await;

    // Assert
    assert_eq!(created, StatusCode::CREATED, "{body}");
    let id = body["id"].as_str().unwrap();
    let admin = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{id}"))
        .await;
    let (status, read) = json_of(admin).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read, body);
    // Validation names the field, as the admin API's does.
    assert_eq!(invalid, StatusCode::BAD_REQUEST, "{refusal}");
    assert!(
        refusal["error"]["message"]
            .as_str()
            .unwrap()
            .contains("videoIds"),
        "{refusal}"
    );
    // The other shop's catalog is out of reach even by id.
    let (status, _) = call(
        &app,
        Method::GET,
        &format!("/shops/{OTHER_SHOP}/videos/{id}"),
        Some(&token()),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

/// The `attributionWindowDays` of each storefront answer of `shop`, which shows `widget`.
async fn storefront_windows(app: &TestApp, shop: &str, widget: &str) -> Vec<Value> {
    let mut windows = Vec::new();
    for (endpoint, params) in [
        ("contextual-widgets", [("location", "home")]),
        ("widget-by-id", [("id", widget)]),
        ("widgets-list", [("type", "carousel")]),
    ] {
        let (status, body) = json_of(app.storefront(endpoint, shop, &params).await).await;
        assert_eq!(status, StatusCode::OK, "{endpoint}: {body}");
        windows.push(body["attributionWindowDays"].clone());
    }
    windows
}

#[tokio::test]
async fn the_merchant_changes_the_attribution_window_and_the_storefront_answers_with_it_at_once() {
    // Arrange
    let app = dashboard_app().await;
    let (_, widget) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let (_, other_widget) = app.create_shop_showing_a_video(OTHER_SHOP, json!({})).await;
    assert_eq!(
        storefront_windows(&app, SHOP, &widget).await,
        [json!(7), json!(7), json!(7)]
    );
    let before = app.catalog_version(SHOP).await;

    // Act
    let (status, shop) = call(
        &app,
        Method::PATCH,
        &format!("/shops/{SHOP}"),
        Some(&token()),
        Some(json!({ "attributionWindowDays": 30 })),
    )
    .await;

    // Assert
    assert_eq!(status, StatusCode::OK, "{shop}");
    assert_eq!(shop["attributionWindowDays"], 30);
    assert_eq!(shop["name"], "Test shop", "the other settings are kept");
    assert!(app.catalog_version(SHOP).await > before);
    assert_eq!(get(&app, &format!("/shops/{SHOP}")).await, shop);
    let admin = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(json_of(admin).await.1, shop);
    assert_eq!(
        storefront_windows(&app, SHOP, &widget).await,
        [json!(30), json!(30), json!(30)]
    );
    assert_eq!(
        storefront_windows(&app, OTHER_SHOP, &other_widget).await,
        [json!(7), json!(7), json!(7)]
    );
}

#[tokio::test]
async fn the_dashboard_changes_only_the_merchants_settings_and_names_the_field_it_refuses() {
    // Arrange
    let app = dashboard_app().await;
    let path = format!("/shops/{SHOP}");
    let refused = [
        (
            json!({ "attributionWindowDays": 14 }),
            "attributionWindowDays",
        ),
        (
            json!({ "attributionWindowDays": "30" }),
            "attributionWindowDays",
        ),
        (json!({ "removeBranding": true }), "removeBranding"),
        (json!({ "timezone": "Europe/Paris" }), "timezone"),
    ];

    for (body, field) in refused {
        // Act
        let (status, refusal) = call(&app, Method::PATCH, &path, Some(&token()), Some(body)).await;

        // Assert
        assert_eq!(status, StatusCode::BAD_REQUEST, "{refusal}");
        assert_eq!(refusal["error"]["code"], "VALIDATION_ERROR", "{refusal}");
        let message = refusal["error"]["message"].as_str().unwrap();
        assert!(message.contains(field), "{message}");
    }
    let (status, _) = call(
        &app,
        Method::PATCH,
        &format!("/shops/{OTHER_SHOP}"),
        Some(&token()),
        Some(json!({ "attributionWindowDays": 1 })),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    for shop in [SHOP, OTHER_SHOP] {
        let read = app.send_admin(Method::GET, &format!("/shops/{shop}")).await;
        let read = json_of(read).await.1;
        assert_eq!(
            (
                &read["attributionWindowDays"],
                &read["removeBranding"],
                &read["timezone"]
            ),
            (&json!(7), &json!(false), &json!("UTC")),
            "{shop}: {read}"
        );
    }
}

#[tokio::test]
async fn a_key_created_in_the_dashboard_answers_and_is_refused_within_a_second_of_its_revocation() {
    // Arrange
    let app = dashboard_app().await;

    // Act
    let (status, created) = call(
        &app,
        Method::POST,
        &format!("/shops/{SHOP}/api-keys"),
        Some(&token()),
        Some(json!({ "name": "Looker" })),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let key = Key::from_created(&created);
    analytics_ok(&app, &key, "/summary").await;
    let listed = get(&app, &format!("/shops/{SHOP}/api-keys")).await;
    let (revoked, _) = call(
        &app,
        Method::DELETE,
        &format!("/shops/{SHOP}/api-keys/{}", created["id"].as_str().unwrap()),
        Some(&token()),
        None,
    )
    .await;
    let revoked_at = Instant::now();

    // Assert
    assert_eq!(listed["apiKeys"][0]["name"], "Looker", "{listed}");
    assert!(
        listed["apiKeys"][0].get("key").is_none(),
        "a key is shown once: {listed}"
    );
    assert_eq!(revoked, StatusCode::NO_CONTENT);
    let within = Duration::from_secs(1).saturating_sub(revoked_at.elapsed());
    let (app, key) = (&app, &key);
    eventually("the revoked key is refused", within, move || async move {
        let response = app
            .client
            .get(app.url("/api/v1/analytics/summary"))
            .bearer_auth(&key.secret)
            .send()
            .await
            .unwrap();
        match response.status() {
            StatusCode::UNAUTHORIZED => Ok(()),
            status => Err(status),
        }
    })
    .await;
}

#[tokio::test]
async fn the_dashboards_analytics_are_the_analytics_apis_numbers() {
    // Arrange
    let app = dashboard_app().await;
    let video = app.create_video(SHOP, json!({ "title": "Counted" })).await;
    let widget = app
        .create_widget(SHOP, json!({ "title": "Home", "videoIds": [video] }))
        .await;
    let target = json!({ "videoId": video, "widgetId": widget });
    let events = vec![
        event("impression", &target),
        event("view", &target),
        event("click", &target),
        checkout(&target, json!("42.50")),
    ];
    record(&app, SHOP, events).await;
    let key = create_key(&app, SHOP).await;
    let today = Utc::now().date_naive();
    let range = format!(
        "start_date={}&end_date={today}",
        today - chrono::Days::new(6)
    );

    for path in [
        format!("/summary?{range}&compare=previous_period"),
        format!("/videos?{range}&sort_by=revenue"),
        format!("/widgets?{range}"),
        format!("/timeseries?{range}&interval=day&video_id={video}"),
    ] {
        // Act
        let from_dashboard = get(&app, &format!("/analytics{path}")).await;
        let (from_api, _) = analytics_ok(&app, &key, &path).await;

        // Assert
        assert_eq!(from_dashboard, from_api, "{path}");
    }
    let summary = get(&app, &format!("/analytics/summary?{range}")).await;
    assert_eq!(summary["data"]["revenue"], json!(42.5), "{summary}");
}

#[tokio::test]
async fn a_session_of_a_shop_that_is_not_installed_finds_no_shop() {
    // Arrange
    let app = spawn_app_with(platform_settings).await;

    // Act
    let (status, body) = call(
        &app,
        Method::GET,
        &format!("/shops/{SHOP}"),
        Some(&token()),
        None,
    )
    .await;
    let (changed, change) = call(
        &app,
        Method::PATCH,
        &format!("/shops/{SHOP}"),
        Some(&token()),
        Some(json!({ "attributionWindowDays": 30 })),
    )
    .await;

    // Assert
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(changed, StatusCode::NOT_FOUND, "{change}");
    let read = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(
        read.status(),
        StatusCode::NOT_FOUND,
        "a change creates no shop"
    );
}

#[tokio::test]
async fn the_dashboard_page_loads_its_bundle_and_app_bridge_only_when_embedded() {
    // Arrange: a built bundle of its own.
    let built = std::env::temp_dir().join(format!("dashboard-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&built).unwrap();
    std::fs::write(built.join("dashboard.js"), "console.log('dashboard')").unwrap();
    std::fs::write(built.join("boot.js"), "console.log('boot')").unwrap();
    let dir = built.clone();
    let app = spawn_app_with(move |s| {
        platform_settings(s);
        s.dashboard_dir = dir;
    })
    .await;
    app.create_shop("dashboard-shop.myshopify.com").await;
    let page = |query: &'static str| {
        let url = app.url(&format!("/app{query}"));
        let client = app.client.clone();
        async move { client.get(url).send().await.unwrap() }
    };

    // Act
    let outside = page("?shop=dashboard-shop.myshopify.com").await;
    let csp = outside.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    let outside = outside.text().await.unwrap();
    let embedded = page("?shop=dashboard-shop.myshopify.com&host=YWRtaW4&embedded=1")
        .await
        .text()
        .await
        .unwrap();
    let script = app
        .client
        .get(app.url("/app/assets/dashboard.js"))
        .send()
        .await
        .unwrap();
    let script_type = script.headers()["content-type"]
        .to_str()
        .unwrap()
        .to_string();
    let script = script.text().await.unwrap();
    let missing = app
        .client
        .get(app.url("/app/assets/dashboard.css"))
        .send()
        .await
        .unwrap();
    let other = app
        .client
        .get(app.url("/app/assets/secrets.txt"))
        .send()
        .await
        .unwrap();

    // Assert
    // The shell names each script by its content, the first calls' script first (it starts them
    // while the bundle loads); the stylesheet is not built.
    let hash = |text: &[u8]| hex::encode(&sha2::Sha256::digest(text)[..8]);
    let (boot, bundle) = (
        hash(b"console.log('boot')"),
        hash(b"console.log('dashboard')"),
    );
    assert!(
        outside.contains(&format!(
            r#"<script src="/app/assets/boot.{boot}.js" async></script><script src="/app/assets/dashboard.{bundle}.js" defer>"#
        )),
        "{outside}"
    );
    assert!(
        outside.contains(r#"<link rel="stylesheet" href="/app/assets/dashboard.css">"#),
        "{outside}"
    );
    assert!(outside.contains(&format!(r#"data-client-id="{}""#, CLIENT_ID)));
    assert!(!outside.contains("app-bridge.js"), "{outside}");
    assert!(embedded.contains("app-bridge.js"), "{embedded}");
    assert!(
        embedded.contains(r#"<meta name="shopify-api-key""#),
        "{embedded}"
    );
    assert_eq!(
        csp,
        "script-src 'self' https://cdn.shopify.com/shopifycloud/; style-src 'self' 'unsafe-inline'; object-src 'none'; \
         base-uri 'none'; frame-ancestors https://dashboard-shop.myshopify.com \
         https://admin.shopify.com;"
    );
    assert_eq!(script, "console.log('dashboard')");
    assert!(script_type.starts_with("text/javascript"), "{script_type}");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert!(missing.text().await.unwrap().contains("npm run build"));
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}

/// The bundle as the shell names it (by content) is kept by browsers for a year and sent
/// compressed; another build's name is not found; the plain name is asked again each time.
#[tokio::test]
async fn the_bundle_is_named_by_its_content_cached_for_a_year_and_sent_compressed() {
    // Arrange: a built bundle of its own, large enough to compress.
    let built = std::env::temp_dir().join(format!("dashboard-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&built).unwrap();
    let script = "console.log('dashboard');\n".repeat(2_000);
    std::fs::write(built.join("dashboard.js"), &script).unwrap();
    std::fs::write(built.join("dashboard.css"), "body{margin:0}").unwrap();
    let dir = built.clone();
    let app = spawn_app_with(move |s| {
        platform_settings(s);
        s.dashboard_dir = dir;
    })
    .await;
    let hash = hex::encode(&sha2::Sha256::digest(script.as_bytes())[..8]);
    let get = |path: String, coding: &'static str| {
        let request = app
            .client
            .get(app.url(&path))
            .header("accept-encoding", coding);
        async move { request.send().await.unwrap() }
    };

    let shell = || async {
        get("/app?shop=x.myshopify.com".into(), "identity")
            .await
            .text()
            .await
            .unwrap()
    };

    // Act
    let first_shell = shell().await;
    let named = get(format!("/app/assets/dashboard.{hash}.js"), "gzip, br").await;
    let gzipped = get(format!("/app/assets/dashboard.{hash}.js"), "gzip").await;
    let plain = get("/app/assets/dashboard.js".into(), "identity").await;
    let stale = get("/app/assets/dashboard.0123456789abcdef.js".into(), "gzip").await;
    std::fs::write(built.join("dashboard.js"), "console.log('rebuilt')").unwrap();
    let rebuilt = shell().await;

    // Assert
    assert!(
        first_shell.contains(&format!("/app/assets/dashboard.{hash}.js")),
        "{first_shell}"
    );
    let header = |r: &reqwest::Response, name: &str| {
        r.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    assert_eq!(named.status(), StatusCode::OK);
    assert_eq!(
        header(&named, "cache-control").as_deref(),
        Some("public, max-age=31536000, immutable")
    );
    assert_eq!(header(&named, "content-encoding").as_deref(), Some("br"));
    assert_eq!(header(&named, "vary").as_deref(), Some("accept-encoding"));
    let compressed = named.bytes().await.unwrap();
    assert!(
        compressed.len() * 10 < script.len(),
        "{} bytes",
        compressed.len()
    );
    let mut unzipped = String::new();
    std::io::Read::read_to_string(
        &mut flate2::read::GzDecoder::new(&gzipped.bytes().await.unwrap()[..]),
        &mut unzipped,
    )
    .unwrap();
    assert_eq!(unzipped, script);
    assert_eq!(header(&plain, "cache-control").as_deref(), Some("no-cache"));
    assert_eq!(header(&plain, "content-encoding"), None);
    assert_eq!(plain.text().await.unwrap(), script);
    assert_eq!(stale.status(), StatusCode::NOT_FOUND);
    let new_hash = hex::encode(&sha2::Sha256::digest(b"console.log('rebuilt')")[..8]);
    assert!(
        rebuilt.contains(&format!("/app/assets/dashboard.{new_hash}.js")),
        "{rebuilt}"
    );
}

/// A `?shop=` the service does not know never widens who may frame the dashboard beyond the
/// platform's admin; one that is not a shop domain at all, or none, lets nothing frame it.
#[tokio::test]
async fn only_a_shop_the_service_knows_may_frame_the_dashboard_beside_the_admin() {
    let app = spawn_app_with(platform_settings).await;
    app.create_shop("framing-shop.myshopify.com").await;
    let policy = |query: &'static str| {
        let url = app.url(&format!("/app{query}"));
        let client = app.client.clone();
        async move {
            let response = client.get(url).send().await.unwrap();
            let policy = response.headers()["content-security-policy"]
                .to_str()
                .unwrap()
                .to_string();
            let ancestors = policy
                .split(';')
                .find_map(|d| d.trim().strip_prefix("frame-ancestors "))
                .map(str::to_string);
            (policy, ancestors)
        }
    };

    let loads = app.catalog.loads();
    let (known_policy, known) = policy("?shop=framing-shop.myshopify.com").await;
    let (_, unknown) = policy("?shop=attacker-shop.myshopify.com").await;
    let (_, not_a_shop) = policy("?shop=evil.example%20https://evil.example").await;
    let (_, none) = policy("").await;

    assert_eq!(
        known.as_deref(),
        Some("https://framing-shop.myshopify.com https://admin.shopify.com")
    );
    assert_eq!(unknown.as_deref(), Some("https://admin.shopify.com"));
    // A page anyone may ask for loads no catalog snapshot, for a made-up shop or a real one.
    assert_eq!(app.catalog.loads(), loads);
    for ancestors in [not_a_shop, none] {
        assert_eq!(ancestors.as_deref(), Some("'none'"));
    }
    assert!(
        known_policy.contains("script-src 'self' https://cdn.shopify.com/shopifycloud/;"),
        "{known_policy}"
    );
    assert!(
        known_policy.contains("style-src 'self' 'unsafe-inline';"),
        "{known_policy}"
    );
}

#[tokio::test]
async fn the_demo_store_stands_in_for_the_admin_with_tokens_the_service_accepts() {
    // Arrange
    let app = dashboard_app().await;
    let base = demo_store(&app, SHOP, true).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();

    // Act
    let open = client.get(format!("{base}/admin")).send().await.unwrap();
    let token = client
        .get(format!("{base}/admin/session-token"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let videos = client
        .get(format!("{base}/app/api/shops/{SHOP}/videos"))
        .bearer_auth(&token)
        .send()
        .await
        .unwrap();

    // The admin opens the app with a session token in its URL, as the platform does.
    let location = open.headers()["location"].to_str().unwrap().to_string();
    let launch_token = location
        .strip_prefix(&format!("/app?shop={SHOP}&id_token="))
        .unwrap_or_default()
        .to_string();
    let with_launch_token = client
        .get(format!("{base}/app/api/shops/{SHOP}/videos"))
        .bearer_auth(&launch_token)
        .send()
        .await
        .unwrap();

    // Assert
    assert_eq!(open.status(), StatusCode::SEE_OTHER);
    assert!(!launch_token.is_empty(), "{location}");
    for answer in [videos, with_launch_token] {
        let (status, body) = json_of(answer).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body, json!({ "videos": [] }));
    }
}

#[tokio::test]
async fn the_first_run_checklist_ticks_each_step_from_what_the_service_sees() {
    let app = dashboard_app().await;
    let path = format!("/shops/{SHOP}/onboarding");
    let done = |body: &Value| -> Vec<(String, bool)> {
        body["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["id"].as_str().unwrap().to_string(),
                    s["done"].as_bool().unwrap(),
                )
            })
            .collect()
    };
    let expect = |embed, video, widget, numbers| {
        [
            ("embed", embed),
            ("video", video),
            ("widget", widget),
            ("numbers", numbers),
        ]
        .map(|(id, done)| (id.to_string(), done))
        .to_vec()
    };
    let wait_for = |expected: Vec<(String, bool)>| {
        let app = &app;
        let path = &path;
        async move {
            let expected = &expected;
            eventually(
                "the checklist",
                Duration::from_secs(30),
                move || async move {
                    let body = get(app, path).await;
                    match done(&body) == *expected {
                        true => Ok(body),
                        false => Err(body),
                    }
                },
            )
            .await
        }
    };

    let first = get(&app, &path).await;
    assert_eq!(done(&first), expect(false, false, false, false));
    assert_eq!(
        first["themeEditorPath"],
        "/themes/current/editor?context=apps&template=index&activateAppId=videoapp-client-id/videoapp-embed"
    );

    // The store's pages ask for widgets: the embed is on.
    let response = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    wait_for(expect(true, false, false, false)).await;

    // A draft video shows nowhere, and nor does an active widget of drafts.
    let draft = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    app.create_widget(SHOP, json!({ "videoIds": [draft] }))
        .await;
    wait_for(expect(true, false, false, false)).await;
    let video = app.create_video(SHOP, json!({})).await;
    wait_for(expect(true, true, false, false)).await;
    app.create_widget(SHOP, json!({ "status": "draft", "videoIds": [video] }))
        .await;
    // A draft widget shows nothing on the store yet.
    wait_for(expect(true, true, false, false)).await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    wait_for(expect(true, true, true, false)).await;

    let target = json!({ "videoId": video });
    record(&app, SHOP, vec![event("impression", &target)]).await;
    wait_for(expect(true, true, true, true)).await;

    // Nothing of it ticks another shop's steps.
    let other_token = session_token_for(OTHER_SHOP, PROXY_SECRET, |_| {});
    let other_path = format!("/shops/{OTHER_SHOP}/onboarding");
    let (status, other) = call(&app, Method::GET, &other_path, Some(&other_token), None).await;
    assert_eq!(status, StatusCode::OK, "{other}");
    assert_eq!(done(&other), expect(false, false, false, false));

    // Uninstalled and installed again: the platform took the app embed out with the app, so
    // the step waits for the store's pages again; the numbers held stay.
    let removed = app
        .admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .send()
        .await
        .unwrap();
    assert!(removed.status().is_success(), "{}", removed.status());
    app.create_shop(SHOP).await;
    wait_for(expect(false, false, false, true)).await;
    let response = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    assert_eq!(response.status(), StatusCode::OK);
    wait_for(expect(true, false, false, true)).await;
}

#[tokio::test]
async fn the_demo_theme_editor_turns_the_app_embed_on_and_the_stores_pages_then_load_videoapp() {
    let app = dashboard_app().await;
    let base = demo_store(&app, SHOP, false).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = |path: &'static str| {
        let (client, base) = (client.clone(), base.clone());
        async move {
            let response = client.get(format!("{base}{path}")).send().await.unwrap();
            assert_eq!(response.status(), StatusCode::OK, "{path}");
            response.text().await.unwrap()
        }
    };

    // Off, as on a new store: the pages carry no loader.
    assert!(!page("/").await.contains("data-videoapp-loader"));
    // The checklist's deep link selects the app embed.
    let onboarding = get(&app, &format!("/shops/{SHOP}/onboarding")).await;
    let link = format!("/admin{}", onboarding["themeEditorPath"].as_str().unwrap());
    let editor = client.get(format!("{base}{link}")).send().await.unwrap();
    let editor = editor.text().await.unwrap();
    assert!(
        editor.contains(r#"class="embed selected" data-demo-embed="off""#),
        "{editor}"
    );

    let saved = client
        .post(format!("{base}/admin/themes/current/editor"))
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("embed=on")
        .send()
        .await
        .unwrap();
    assert_eq!(saved.status(), StatusCode::SEE_OTHER);
    assert!(page("/admin/themes/current/editor?saved=1")
        .await
        .contains(r#"data-demo-embed="on""#));
    assert!(page("/").await.contains("data-videoapp-loader"));
}

#[tokio::test]
async fn the_demo_admins_product_and_app_changes_reach_the_service_as_signed_webhooks() {
    // Arrange: the demo store's platform holds the demo catalog; the service holds none of it.
    let app = dashboard_app().await;
    let base = demo_store(&app, SHOP, true).await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let post = |path: &str, form: &'static [(&'static str, &'static str)]| {
        client.post(format!("{base}{path}")).form(form).send()
    };
    let titles = || async {
        let rows: Vec<(String, String)> =
            sqlx::query_as("SELECT gid, title FROM products WHERE shop_domain = $1 ORDER BY gid")
                .bind(SHOP)
                .fetch_all(&app.db)
                .await
                .unwrap();
        rows
    };
    let gid = |n: u64| format!("gid://shopify/Product/{n}");

    // Act: rename one product, and add then delete another, as a merchant does in the admin.
    let renamed = post(
        "/admin/products/1001",
        &[("title", "Linen Shirt, washed"), ("status", "active")],
    )
    .await
    .unwrap();
    post(
        "/admin/products/1002",
        &[("title", "Summer Dress"), ("status", "active")],
    )
    .await
    .unwrap();
    wait_until_worked(&app).await;
    let both = titles().await;
    post("/admin/products/1002", &[("action", "delete")])
        .await
        .unwrap();
    post(
        "/admin/products/1001",
        &[("title", "Linen Shirt, washed"), ("status", "draft")],
    )
    .await
    .unwrap();
    wait_until_worked(&app).await;
    let none = titles().await;
    let listed = client
        .get(format!("{base}/admin/products"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let uninstalled = post("/admin/apps/videoapp/uninstall", &[]).await.unwrap();
    wait_until_worked(&app).await;

    // Assert: each change was taken as the platform's webhook, and done.
    assert_eq!(renamed.status(), StatusCode::SEE_OTHER);
    let location = renamed.headers()["location"].to_str().unwrap();
    assert!(location.contains("products%2Fupdate"), "{location}");
    assert_eq!(
        both,
        vec![
            (gid(1001), "Linen Shirt, washed".to_string()),
            (gid(1002), "Summer Dress".to_string()),
        ]
    );
    assert_eq!(none, vec![]);
    assert!(listed.contains("Linen Shirt, washed"), "{listed}");
    assert!(!listed.contains("Summer Dress"), "{listed}");
    assert_eq!(uninstalled.status(), StatusCode::SEE_OTHER);
    let topics: Vec<String> =
        sqlx::query_scalar("SELECT topic FROM webhook_deliveries ORDER BY received_at")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(
        topics,
        [
            "products/update",
            "products/update",
            "products/delete",
            "products/update",
            "app/uninstalled"
        ]
    );
    let storefront = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    assert_eq!(storefront.status(), StatusCode::NOT_FOUND);
}
