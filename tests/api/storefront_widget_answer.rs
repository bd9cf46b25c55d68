//! What contextual-widgets answers: its shape and types, the catalog version, branding and the
//! attribution window, the products of each video, and the page context it resolves from the
//! query.

use crate::support::storefront::*;
use crate::support::*;
use reqwest::Method;
use serde_json::{json, Value};

async fn put_shop(app: &TestApp, shop: &str, settings: Value) {
    let response = app
        .send_admin_json(Method::PUT, &format!("/shops/{shop}"), &settings)
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

// ---------------------------------------------------------------- shape

#[tokio::test]
async fn contextual_widgets_answers_the_documented_shape_and_types() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(&app, SHOP, json!([product(11, "shirt")])).await;
    let video = app
        .create_video(
            SHOP,
            json!({
                "title": "Unboxing",
                "thumbnail": "https://cdn.example.com/t.jpg",
                "videoUrl": "https://cdn.example.com/v.mp4",
                "miniVersionUrl": "https://cdn.example.com/mini.mp4",
                "duration": 12.5,
                "productIds": ["11"],
            }),
        )
        .await;
    let widget = app
        .create_widget(
            SHOP,
            json!({
                "type": "story",
                "title": "Stories",
                "priority": 3,
                "viewStyle": "compact",
                "clickBehavior": "open_product",
                "modalLayout": "horizontal",
                "videoIds": [video],
            }),
        )
        .await;
    let version = app.catalog_version(SHOP).await;

    // Act
    let body = contextual(&app, &[("location", "home")]).await;

    // Assert
    assert_keys(
        &body,
        &[
            "location",
            "context",
            "version",
            "timestamp",
            "removeBranding",
            "attributionWindowDays",
            "holdoutPercent",
            "widgets",
        ],
    );
    assert_eq!(body["location"], json!("home"));
    assert_eq!(body["holdoutPercent"], json!(0));
    assert_eq!(
        body["context"],
        json!({ "productId": null, "collectionId": null, "pageHandle": null })
    );
    assert_eq!(body["version"], json!(version.to_string()));
    assert_timestamp(&body["timestamp"]);
    assert_eq!(body["removeBranding"], json!(false));
    assert_eq!(body["attributionWindowDays"], json!(7));
    let widgets = body["widgets"].as_array().expect("a widgets array");
    assert_eq!(widgets.len(), 1, "{body}");
    let shown = &widgets[0];
    assert_full_widget_shape(shown);
    assert_eq!(shown["id"], json!(widget));
    assert_eq!(shown["type"], json!("story"));
    assert_eq!(shown["title"], json!("Stories"));
    assert_eq!(shown["status"], json!("active"));
    assert_eq!(shown["priority"], json!(3));
    assert_eq!(shown["viewStyle"], json!("compact"));
    assert_eq!(shown["clickBehavior"], json!("open_product"));
    assert_eq!(shown["modalLayout"], json!("horizontal"));
    let v = &shown["videos"][0];
    assert_eq!(v["id"], json!(video));
    assert_eq!(v["title"], json!("Unboxing"));
    assert_eq!(v["thumbnail"], json!("https://cdn.example.com/t.jpg"));
    assert_eq!(v["videoUrl"], json!("https://cdn.example.com/v.mp4"));
    assert_eq!(
        v["miniVersionUrl"],
        json!("https://cdn.example.com/mini.mp4")
    );
    assert_eq!(v["duration"].as_f64(), Some(12.5));
    assert_eq!(v["order"], json!(1));
    assert_eq!(v["products"], json!([product(11, "shirt")]));
    assert_eq!(v["hasProducts"], json!(true));
}

#[tokio::test]
async fn contextual_widgets_version_is_the_shops_catalog_version_as_a_string() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    sync_products(&app, SHOP, json!([product(1, "a")])).await;

    // Act
    let body = contextual(&app, &[("location", "other")]).await;

    // Assert
    let version = app.catalog_version(SHOP).await;
    assert_eq!(body["version"], json!(version.to_string()));
}

#[tokio::test]
async fn contextual_widgets_remove_branding_follows_the_shop_setting() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    for setting in [true, false] {
        put_shop(&app, SHOP, json!({ "removeBranding": setting })).await;

        // Act
        let body = contextual(&app, &[("location", "home")]).await;

        // Assert
        assert_eq!(body["removeBranding"], json!(setting), "{body}");
    }
}

#[tokio::test]
async fn contextual_widgets_attribution_window_follows_the_shop_setting() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    for days in [1, 30, 7] {
        put_shop(&app, SHOP, json!({ "attributionWindowDays": days })).await;

        // Act
        let body = contextual(&app, &[("location", "home")]).await;

        // Assert
        assert_eq!(body["attributionWindowDays"], json!(days), "{body}");
    }
}

#[tokio::test]
async fn contextual_widgets_video_products_are_the_known_linked_products_in_link_order() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(
        &app,
        SHOP,
        json!([product(11, "shirt"), product(12, "hat")]),
    )
    .await;
    let linked = app
        .create_video(SHOP, json!({ "productIds": ["12", "99", "11"] }))
        .await;
    let only_unknown = app
        .create_video(SHOP, json!({ "productIds": ["99"] }))
        .await;
    let unlinked = app.create_video(SHOP, json!({})).await;
    app.create_widget(
        SHOP,
        json!({ "videoIds": [linked, only_unknown, unlinked] }),
    )
    .await;

    // Act
    let body = contextual(&app, &[("location", "home")]).await;

    // Assert
    let videos = &body["widgets"][0]["videos"];
    assert_eq!(ids_of(videos), vec![linked, only_unknown, unlinked]);
    assert_eq!(
        videos[0]["products"],
        json!([product(12, "hat"), product(11, "shirt")])
    );
    assert_eq!(videos[0]["hasProducts"], json!(true));
    for v in [&videos[1], &videos[2]] {
        assert_eq!(v["products"], json!([]), "{v}");
        assert_eq!(v["hasProducts"], json!(false), "{v}");
    }
}

// ---------------------------------------------------------------- context

#[tokio::test]
async fn contextual_widgets_prefers_product_id_over_product_handle() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    sync_products(
        &app,
        SHOP,
        json!([product(11, "shirt"), product(12, "hat")]),
    )
    .await;
    let for_shirt = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "productIds": ["11"] } }),
        )
        .await;
    app.create_widget(
        SHOP,
        json!({ "videoIds": [video], "rules": { "productIds": ["12"] } }),
    )
    .await;

    // Act
    let body = contextual(
        &app,
        &[
            ("location", "product"),
            ("product_id", "11"),
            ("product_handle", "hat"),
        ],
    )
    .await;

    // Assert
    assert_eq!(
        body["context"],
        json!({
            "productId": product_gid(11),
            "collectionId": null,
            "pageHandle": "shirt",
        })
    );
    assert_eq!(ids_of(&body["widgets"]), vec![for_shirt]);
}

#[tokio::test]
async fn contextual_widgets_context_resolves_the_product_from_a_bare_number_or_the_handle() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;
    sync_products(&app, SHOP, json!([product(11, "shirt")])).await;
    let expected = json!({
        "productId": product_gid(11),
        "collectionId": null,
        "pageHandle": "shirt",
    });

    for params in [
        [("location", "product"), ("product_id", "11")],
        [("location", "product"), ("product_handle", "shirt")],
    ] {
        // Act
        let body = contextual(&app, &params).await;

        // Assert
        assert_eq!(body["context"], expected, "{params:?}");
        assert_eq!(body["location"], json!("product"));
    }
}

#[tokio::test]
async fn contextual_widgets_context_normalises_the_collection_id_and_nulls_absent_values() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act
    let body = contextual(&app, &[("location", "collection"), ("collection_id", "22")]).await;

    // Assert
    assert_eq!(
        body["context"],
        json!({
            "productId": null,
            "collectionId": "gid://shopify/Collection/22",
            "pageHandle": null,
        })
    );
    assert_eq!(body["location"], json!("collection"));
}

#[tokio::test]
async fn contextual_widgets_context_has_no_page_handle_for_a_product_the_catalog_does_not_know() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act
    let body = contextual(&app, &[("location", "product"), ("product_id", "404")]).await;

    // Assert
    assert_eq!(
        body["context"],
        json!({ "productId": product_gid(404), "collectionId": null, "pageHandle": null })
    );
}
