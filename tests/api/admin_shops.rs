use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::*;

const SHOP: &str = "shop-one.myshopify.com";

#[tokio::test]
async fn put_creates_a_shop_with_defaults_then_updates_only_the_given_fields() {
    let app = spawn_app().await;

    let response = app
        .send_admin_json(Method::PUT, &format!("/shops/{SHOP}"), &json!({}))
        .await;
    let (status, created) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["domain"], SHOP);
    assert_eq!(created["timezone"], "UTC");
    assert_eq!(created["currency"], "USD");
    assert_eq!(created["removeBranding"], false);
    assert_eq!(created["attributionWindowDays"], 7);

    let response = app
        .send_admin_json(
            Method::PUT,
            &format!("/shops/{SHOP}"),
            &json!({ "name": "One", "timezone": "Asia/Kathmandu", "currency": "EUR" }),
        )
        .await;
    let (status, updated) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    let response = app
        .send_admin_json(
            Method::PUT,
            &format!("/shops/{SHOP}"),
            &json!({ "removeBranding": true }),
        )
        .await;
    let (_, updated) = json_of(response).await;
    assert_eq!(updated["name"], "One");
    assert_eq!(updated["timezone"], "Asia/Kathmandu");
    assert_eq!(updated["currency"], "EUR");
    assert_eq!(updated["removeBranding"], true);
    assert_eq!(updated["createdAt"], created["createdAt"]);

    let response = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    let (status, read) = json_of(response).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read, updated);
}

#[tokio::test]
async fn the_shop_domain_in_the_path_is_normalised_to_lower_case() {
    let app = spawn_app().await;
    let response = app
        .send_admin_json(Method::PUT, "/shops/Mixed-Case.MyShopify.com", &json!({}))
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(body["domain"], "mixed-case.myshopify.com");
    let response = app
        .send_admin(Method::GET, "/shops/mixed-case.myshopify.com")
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn put_refuses_bad_settings_naming_the_field() {
    let app = spawn_app().await;
    let cases = [
        (json!({ "timezone": "Mars/Olympus" }), "timezone"),
        (json!({ "timezone": 5 }), "timezone"),
        (json!({ "currency": "EURO" }), "currency"),
        (json!({ "currency": "usd" }), "currency"),
        (json!({ "removeBranding": "yes" }), "removeBranding"),
        (json!({ "name": "x".repeat(257) }), "name"),
        (json!({ "nmae": "typo" }), "nmae"),
    ];
    for (body, field) in cases {
        let response = app
            .send_admin_json(Method::PUT, &format!("/shops/{SHOP}"), &body)
            .await;
        assert_validation_error(response, field).await;
    }
    // None of them created the shop.
    let response = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_attribution_window_takes_1_7_or_30_days_and_a_reinstall_starts_again_from_7() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    for days in [1, 30, 7] {
        let response = app
            .send_admin_json(
                Method::PUT,
                &format!("/shops/{SHOP}"),
                &json!({ "attributionWindowDays": days }),
            )
            .await;
        let (status, updated) = json_of(response).await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        assert_eq!(updated["attributionWindowDays"], days);
        let response = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
        assert_eq!(json_of(response).await.1["attributionWindowDays"], days);
    }

    // Another field alone keeps the window.
    app.create_shop_with(SHOP, json!({ "attributionWindowDays": 30 }))
        .await;
    let response = app
        .send_admin_json(
            Method::PUT,
            &format!("/shops/{SHOP}"),
            &json!({ "name": "Renamed" }),
        )
        .await;
    assert_eq!(json_of(response).await.1["attributionWindowDays"], 30);

    let reinstalled = uninstalled_and_installed_again(&app).await;
    assert_eq!(reinstalled["attributionWindowDays"], 7);
}

#[tokio::test]
async fn an_attribution_window_other_than_1_7_or_30_days_is_refused_naming_the_field_and_the_values(
) {
    let app = spawn_app().await;
    app.create_shop_with(SHOP, json!({ "attributionWindowDays": 1 }))
        .await;
    for bad in [
        json!(0),
        json!(14),
        json!(-7),
        json!(7.5),
        json!(365),
        json!("7"),
        json!(true),
        json!([7]),
    ] {
        // An update, then a create.
        for shop in [SHOP, "new-shop.myshopify.com"] {
            let response = app
                .send_admin_json(
                    Method::PUT,
                    &format!("/shops/{shop}"),
                    &json!({ "attributionWindowDays": bad }),
                )
                .await;
            let (status, body) = json_of(response).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
            assert_eq!(body["error"]["code"], "VALIDATION_ERROR", "{body}");
            let message = body["error"]["message"].as_str().unwrap();
            assert!(
                message.starts_with("attributionWindowDays: ") && message.contains("1, 7 or 30"),
                "{bad}: {message}"
            );
            if bad == json!(14) {
                // As docs/API.md shows it.
                assert_eq!(
                    message,
                    "attributionWindowDays: must be 1, 7 or 30 (days), got 14"
                );
            }
        }
    }
    let kept = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(json_of(kept).await.1["attributionWindowDays"], 1);
    let never_created = app
        .send_admin(Method::GET, "/shops/new-shop.myshopify.com")
        .await;
    assert_eq!(never_created.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_holdout_takes_0_to_50_percent_reaches_the_storefront_and_a_reinstall_starts_again_from_0(
) {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let response = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(json_of(response).await.1["holdoutPercent"], 0);
    for percent in [json!(10), json!(50), json!(25.0), json!(0)] {
        let response = app
            .send_admin_json(
                Method::PUT,
                &format!("/shops/{SHOP}"),
                &json!({ "holdoutPercent": percent }),
            )
            .await;
        let (status, updated) = json_of(response).await;
        assert_eq!(status, StatusCode::OK, "{updated}");
        assert_eq!(updated["holdoutPercent"].as_f64(), percent.as_f64());
    }

    // The loader learns it with the widgets; another field alone keeps it.
    app.create_shop_with(SHOP, json!({ "holdoutPercent": 20 }))
        .await;
    let response = app
        .send_admin_json(
            Method::PUT,
            &format!("/shops/{SHOP}"),
            &json!({ "name": "Renamed" }),
        )
        .await;
    assert_eq!(json_of(response).await.1["holdoutPercent"], 20);
    let widgets = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    let (status, answer) = json_of(widgets).await;
    assert_eq!(status, StatusCode::OK, "{answer}");
    assert_eq!(answer["holdoutPercent"], 20, "{answer}");

    let reinstalled = uninstalled_and_installed_again(&app).await;
    assert_eq!(reinstalled["holdoutPercent"], 0);
}

#[tokio::test]
async fn a_holdout_outside_0_to_50_percent_is_refused_naming_the_field_and_the_range() {
    let app = spawn_app().await;
    app.create_shop_with(SHOP, json!({ "holdoutPercent": 5 }))
        .await;
    for bad in [
        json!(51),
        json!(-1),
        json!(100),
        json!(10.5),
        json!("10"),
        json!(null),
        json!(true),
    ] {
        let response = app
            .send_admin_json(
                Method::PUT,
                &format!("/shops/{SHOP}"),
                &json!({ "holdoutPercent": bad }),
            )
            .await;
        let (status, body) = json_of(response).await;
        if bad.is_null() {
            // Absent and null keep the value, as every setting of a PUT.
            assert_eq!(status, StatusCode::OK, "{body}");
            continue;
        }
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(body["error"]["code"], "VALIDATION_ERROR", "{body}");
        let message = body["error"]["message"].as_str().unwrap();
        assert!(message.starts_with("holdoutPercent: "), "{bad}: {message}");
        if bad == json!(51) {
            assert_eq!(
                message,
                "holdoutPercent: must be a whole number of percent from 0 (no holdout) to 50, got 51"
            );
        }
    }
    let kept = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(json_of(kept).await.1["holdoutPercent"], 5);
}

#[tokio::test]
async fn a_path_that_is_not_a_shop_domain_is_refused() {
    let app = spawn_app().await;
    for bad in [
        "example.com",
        "a.b.myshopify.com",
        "-a.myshopify.com",
        "shop%00.myshopify.com",
        "shop.myshopify.com%00",
        "sh%0Aop.myshopify.com",
    ] {
        let response = app
            .send_admin_json(Method::PUT, &format!("/shops/{bad}"), &json!({}))
            .await;
        assert_validation_error(response, "shop").await;
    }
}

#[tokio::test]
async fn a_control_character_in_the_name_is_refused_naming_it() {
    let app = spawn_app().await;
    app.create_shop_with(SHOP, json!({ "name": "Linen & Co" }))
        .await;
    for bad in with_control_characters("Linen & Co") {
        // A create, then an update.
        for shop in ["new-shop.myshopify.com", SHOP] {
            let response = app
                .send_admin_json(
                    Method::PUT,
                    &format!("/shops/{shop}"),
                    &json!({ "name": bad }),
                )
                .await;
            assert_control_character_refused(response, "name").await;
        }
    }
    let kept = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(json_of(kept).await.1["name"], json!("Linen & Co"));
    let never_created = app
        .send_admin(Method::GET, "/shops/new-shop.myshopify.com")
        .await;
    assert_eq!(never_created.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn malformed_bodies_get_our_error_shape() {
    let app = spawn_app().await;
    let path = app.url(&format!("/admin/v1/shops/{SHOP}"));
    let send = |content_type: &'static str, body: &'static str| {
        app.client
            .put(&path)
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let response = send("application/json", "{\"name\": ").await.unwrap();
    assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", "JSON").await;
    let response = send("application/json", "\"a string\"").await.unwrap();
    assert_validation_error(response, "body").await;
    let response = send("text/plain", "{}").await.unwrap();
    assert_error(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        "application/json",
    )
    .await;
    let big =
        Box::leak(format!("{{\"name\": \"{}\"}}", "x".repeat(2 * 1024 * 1024)).into_boxed_str());
    let response = send("application/json", big).await.unwrap();
    assert_error(
        response,
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        "bytes",
    )
    .await;
}

#[tokio::test]
async fn an_unknown_shop_is_not_found() {
    let app = spawn_app().await;
    let response = app
        .send_admin(Method::GET, "/shops/nobody.myshopify.com")
        .await;
    assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    let response = app
        .send_admin(Method::DELETE, "/shops/nobody.myshopify.com")
        .await;
    assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    let response = app
        .send_admin(Method::GET, "/shops/nobody.myshopify.com/videos")
        .await;
    assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
}

#[tokio::test]
async fn deleting_a_shop_removes_its_catalog_and_revokes_its_keys() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop("other.myshopify.com").await;
    app.send_admin_json(
        Method::PUT,
        &format!("/shops/{SHOP}/products"),
        &json!({ "products": [{ "id": "1", "title": "P", "handle": "p" }] }),
    )
    .await;
    let video = app.create_video(SHOP, json!({})).await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let other_video = app.create_video("other.myshopify.com", json!({})).await;
    for s in [SHOP, "other.myshopify.com"] {
        app.create_api_key(s, "k").await;
    }

    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);

    let response = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(response.status(), StatusCode::NOT_FOUND);
    for table in ["products", "videos", "widgets"] {
        let count: i64 = sqlx::query_scalar(&format!(
            "SELECT count(*) FROM {table} WHERE shop_domain = $1"
        ))
        .bind(SHOP)
        .fetch_one(&app.db)
        .await
        .unwrap();
        assert_eq!(count, 0, "{table} rows left behind");
    }
    let widget_links: i64 = sqlx::query_scalar("SELECT count(*) FROM widget_videos")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(widget_links, 0);
    let live_keys: Vec<(String, bool)> =
        sqlx::query_as("SELECT shop_domain, revoked_at IS NULL FROM api_keys ORDER BY shop_domain")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(
        live_keys,
        vec![
            ("other.myshopify.com".to_string(), true),
            (SHOP.to_string(), false)
        ],
        "the deleted shop's key is revoked, the other shop's is not"
    );
    // The other shop is untouched.
    let response = app
        .send_admin(
            Method::GET,
            &format!("/shops/other.myshopify.com/videos/{other_video}"),
        )
        .await;
    assert_eq!(response.status(), StatusCode::OK);

    // Reinstalling starts from an empty catalog with default settings, keys stay revoked.
    let response = app
        .send_admin_json(Method::PUT, &format!("/shops/{SHOP}"), &json!({}))
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(body["name"], "");
    let response = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/videos"))
        .await;
    let (_, body) = json_of(response).await;
    assert_eq!(body["videos"], json!([]));
    let response = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/api-keys"))
        .await;
    let (_, body) = json_of(response).await;
    assert!(body["apiKeys"][0]["revokedAt"].is_string(), "{body}");
}

#[tokio::test]
async fn every_catalog_write_bumps_the_version_and_a_reinstall_never_reuses_one() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let mut last = app.catalog_version(SHOP).await;
    let mut expect_bump = |now: i64, what: &str| {
        assert!(
            now > last,
            "{what} did not bump the version ({last} -> {now})"
        );
        last = now;
    };
    app.send_admin_json(
        Method::PUT,
        &format!("/shops/{SHOP}"),
        &json!({ "removeBranding": true }),
    )
    .await;
    expect_bump(app.catalog_version(SHOP).await, "shop settings");
    let video = app.create_video(SHOP, json!({})).await;
    expect_bump(app.catalog_version(SHOP).await, "video create");
    let widget = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    expect_bump(app.catalog_version(SHOP).await, "widget create");
    app.send_admin_json(
        Method::PATCH,
        &format!("/shops/{SHOP}/widgets/{widget}"),
        &json!({ "priority": 3 }),
    )
    .await;
    expect_bump(app.catalog_version(SHOP).await, "widget patch");
    app.send_admin(Method::DELETE, &format!("/shops/{SHOP}/videos/{video}"))
        .await;
    expect_bump(app.catalog_version(SHOP).await, "video delete");

    app.send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    app.create_shop(SHOP).await;
    expect_bump(app.catalog_version(SHOP).await, "reinstall");
}

#[tokio::test]
async fn catalog_writes_notify_other_instances_on_commit() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let mut listener = sqlx::postgres::PgListener::connect(&app.database_url)
        .await
        .unwrap();
    listener.listen("videoapp_catalog").await.unwrap();

    app.create_video(SHOP, json!({})).await;

    let notification = tokio::time::timeout(std::time::Duration::from_secs(5), listener.recv())
        .await
        .expect("a notification within 5 s")
        .unwrap();
    assert_eq!(notification.payload(), SHOP);
}

/// The shop uninstalled, then put again with no settings: the reinstalled shop the admin API
/// answers.
async fn uninstalled_and_installed_again(app: &TestApp) -> Value {
    app.send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    let response = app
        .send_admin_json(Method::PUT, &format!("/shops/{SHOP}"), &json!({}))
        .await;
    let (status, reinstalled) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{reinstalled}");
    reinstalled
}
