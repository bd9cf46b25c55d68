//! The storefront's widget endpoints: contextual-widgets, widget-by-id and widgets-list, their
//! parameters and answers. Signatures, invalidation, ETag/304 and properties are covered in
//! `storefront_cache`.

use crate::support::*;
use chrono::{DateTime, Utc};
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

const SHOP: &str = "storefront-shop.myshopify.com";
const OTHER_SHOP: &str = "other-storefront-shop.myshopify.com";

const LOCATIONS: [&str; 5] = ["home", "product", "collection", "page", "other"];
const SHORT_CACHE: &str = "public, max-age=60, stale-while-revalidate=600";

/// A storefront query, as `(name, value)` pairs.
type Params<'a> = Vec<(&'a str, &'a str)>;
/// A query and the widget (or video) ids it should answer, in order.
type Case<'a> = (Params<'a>, Vec<String>);

/// The global id of product `n`.
fn product_gid(n: u64) -> String {
    format!("gid://shopify/Product/{n}")
}

/// A product as the platform syncs it, every field set.
fn product(n: u64, handle: &str) -> Value {
    json!({
        "id": product_gid(n),
        "title": format!("The {handle}"),
        "handle": handle,
        "image": format!("https://cdn.example.com/{handle}.jpg"),
        "url": format!("https://{SHOP}/products/{handle}"),
    })
}

async fn sync_products(app: &TestApp, shop: &str, products: Value) {
    let path = format!("/shops/{shop}/products");
    let body = json!({ "products": products });
    app.admin_expecting(Method::PUT, &path, &body, StatusCode::OK)
        .await;
}

async fn put_shop(app: &TestApp, shop: &str, settings: Value) {
    let response = app
        .send_admin_json(Method::PUT, &format!("/shops/{shop}"), &settings)
        .await;
    assert!(response.status().is_success(), "{}", response.status());
}

async fn uninstall(app: &TestApp, shop: &str) {
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{shop}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

async fn patch_widget(app: &TestApp, shop: &str, id: &str, body: Value) {
    let response = app
        .send_admin_json(Method::PATCH, &format!("/shops/{shop}/widgets/{id}"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

/// A shop with one published video; returns the video's id.
async fn shop_with_a_video(app: &TestApp) -> String {
    app.create_shop(SHOP).await;
    app.create_video(SHOP, json!({})).await
}

/// A shop with one active widget showing one published video; returns the widget's id.
async fn shop_with_a_widget(app: &TestApp) -> String {
    app.create_shop_showing_a_video(SHOP, json!({})).await.1
}

/// contextual-widgets for `SHOP`; asserts a 200 and returns the body.
async fn contextual(app: &TestApp, params: &[(&str, &str)]) -> Value {
    let response = app.storefront("contextual-widgets", SHOP, params).await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{params:?}: {body}");
    body
}

/// The ids of the widgets contextual-widgets shows for `params`, in order.
async fn shown(app: &TestApp, params: &[(&str, &str)]) -> Vec<String> {
    ids_of(&contextual(app, params).await["widgets"])
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

fn assert_keys(value: &Value, expected: &[&str]) {
    let mut actual: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    actual.sort_unstable();
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    assert_eq!(actual, expected, "{value}");
}

fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text:?} is not ISO 8601: {e}"));
}

/// The widget as the storefront receives it: exactly these keys, of these types, at every level.
fn assert_full_widget_shape(widget: &Value) {
    assert_keys(
        widget,
        &[
            "id",
            "type",
            "title",
            "status",
            "priority",
            "viewStyle",
            "clickBehavior",
            "modalLayout",
            "videos",
        ],
    );
    for key in [
        "id",
        "type",
        "title",
        "status",
        "viewStyle",
        "clickBehavior",
        "modalLayout",
    ] {
        assert!(widget[key].is_string(), "{key} of {widget}");
    }
    assert!(widget["priority"].is_i64(), "priority of {widget}");
    let videos = widget["videos"].as_array().expect("a videos array");
    for (i, video) in videos.iter().enumerate() {
        assert_keys(
            video,
            &[
                "id",
                "title",
                "thumbnail",
                "videoUrl",
                "miniVersionUrl",
                "duration",
                "order",
                "viewCount",
                "products",
                "hasProducts",
            ],
        );
        for key in ["id", "title", "thumbnail", "videoUrl", "miniVersionUrl"] {
            assert!(video[key].is_string(), "{key} of {video}");
        }
        assert!(video["duration"].is_number(), "duration of {video}");
        assert_eq!(video["order"], json!(i + 1), "order of {video}");
        let views = video["viewCount"].as_str().expect("viewCount is a string");
        assert!(
            !views.is_empty() && views.bytes().all(|b| b.is_ascii_digit()),
            "viewCount {views:?} is not a decimal integer"
        );
        let products = video["products"].as_array().expect("a products array");
        assert_eq!(
            video["hasProducts"],
            json!(!products.is_empty()),
            "hasProducts of {video}"
        );
        for product in products {
            assert_keys(product, &["id", "title", "handle", "image", "url"]);
            for key in ["id", "title", "handle", "image", "url"] {
                assert!(product[key].is_string(), "{key} of {product}");
            }
        }
    }
}

async fn assert_empty(response: Response, status: StatusCode) {
    let actual = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(actual, status, "{text}");
    assert!(text.is_empty(), "expected no body, got {text:?}");
}

async fn widget_by_id(app: &TestApp, shop: &str, params: &[(&str, &str)]) -> Response {
    app.storefront("widget-by-id", shop, params).await
}

/// `endpoint` without its parameter `name` answers 400 `MISSING_PARAMETER` naming it.
async fn assert_required(app: &TestApp, endpoint: &str, name: &str) {
    let response = app.storefront(endpoint, SHOP, &[]).await;
    assert_error(response, StatusCode::BAD_REQUEST, "MISSING_PARAMETER", name).await;
}

/// `endpoint` with each of `values` as its parameter `name` (after `with`) answers 400
/// `INVALID_PARAMETER` naming it.
async fn assert_each_invalid(
    app: &TestApp,
    endpoint: &str,
    with: &[(&str, &str)],
    name: &str,
    values: &[&str],
) {
    for value in values {
        let mut params = with.to_vec();
        params.push((name, value));
        let response = app.storefront(endpoint, SHOP, &params).await;
        assert_error(response, StatusCode::BAD_REQUEST, "INVALID_PARAMETER", name).await;
    }
}

// ---------------------------------------------------------------- contextual-widgets: parameters

#[tokio::test]
async fn contextual_widgets_requires_a_location() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    assert_required(&app, "contextual-widgets", "location").await;
}

#[tokio::test]
async fn contextual_widgets_rejects_a_location_outside_the_five_page_types() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    let values = ["checkout", "Home", "cart"];
    assert_each_invalid(&app, "contextual-widgets", &[], "location", &values).await;
}

#[tokio::test]
async fn contextual_widgets_rejects_a_product_id_that_is_neither_a_global_id_nor_a_number() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    let values = ["shirt", "gid://shopify/Collection/5", "12abc", "-3"];
    let on_a_product_page = [("location", "product")];
    assert_each_invalid(
        &app,
        "contextual-widgets",
        &on_a_product_page,
        "product_id",
        &values,
    )
    .await;
}

#[tokio::test]
async fn contextual_widgets_rejects_a_malformed_collection_id() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    let values = ["sale", "gid://shopify/Product/5", "1.5"];
    let on_a_collection_page = [("location", "collection")];
    assert_each_invalid(
        &app,
        "contextual-widgets",
        &on_a_collection_page,
        "collection_id",
        &values,
    )
    .await;
}

#[tokio::test]
async fn contextual_widgets_rejects_a_parameter_given_twice() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act
    let response = app
        .storefront(
            "contextual-widgets",
            SHOP,
            &[("location", "home"), ("location", "home")],
        )
        .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["success"], json!(false), "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("location"), "{message:?}");
}

#[tokio::test]
async fn a_parameter_given_more_than_once_is_refused_on_every_storefront_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let widget = shop_with_a_widget(&app).await;
    let cases: Vec<(&str, Params, &str)> = vec![
        (
            "contextual-widgets",
            vec![
                ("location", "home"),
                ("widget_ids", &widget),
                ("widget_ids", &widget),
            ],
            "widget_ids",
        ),
        (
            "contextual-widgets",
            vec![("location", "home"), ("v", "1"), ("v", "2")],
            "v",
        ),
        (
            "contextual-widgets",
            vec![("location", "home"), ("shop", SHOP)],
            "shop",
        ),
        ("widget-by-id", vec![("id", &widget), ("id", &widget)], "id"),
        (
            "widgets-list",
            vec![("type", "carousel"), ("type", "story")],
            "type",
        ),
        (
            "widgets-list",
            vec![("type", "carousel"), ("path_prefix", "/apps/other")],
            "path_prefix",
        ),
    ];

    for (endpoint, params, name) in cases {
        // Act: signed as the platform signs repeats (values joined), so only the repeat is at fault.
        let response = app.storefront(endpoint, SHOP, &params).await;

        // Assert
        let (status, body) = json_of(response).await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{endpoint} {params:?}: {body}"
        );
        assert_eq!(body["error"]["code"], json!("INVALID_PARAMETER"), "{body}");
        assert_eq!(
            body["error"]["message"],
            json!(format!("Invalid parameter {name}: given more than once")),
            "{endpoint} {params:?}"
        );
    }
    // The one list form: comma-separated.
    let both = format!("{widget},{widget}");
    assert_eq!(
        shown(&app, &[("location", "home"), ("widget_ids", &both)]).await,
        vec![widget.clone()]
    );
    assert_eq!(
        shown(&app, &[("location", "home"), ("widget_ids", &both)]).await,
        vec![widget]
    );
}

#[tokio::test]
async fn a_parameter_of_the_wrong_type_is_named_with_what_it_must_be() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    for (endpoint, params, expected) in [
        (
            "widgets-list",
            vec![("type", "banner")],
            "Invalid parameter type: must be one of carousel, story, productpage, floating, got 'banner'",
        ),
        (
            "contextual-widgets",
            vec![("location", "checkout")],
            "Invalid parameter location: must be one of home, product, collection, page, other, \
             got 'checkout'",
        ),
        (
            "contextual-widgets",
            vec![("location", "product"), ("product_id", "shirt")],
            "Invalid parameter product_id: 'shirt' is neither a Product global id \
             (gid://shopify/Product/123) nor a number",
        ),
    ] {
        // Act
        let response = app.storefront(endpoint, SHOP, &params).await;

        // Assert
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["code"], json!("INVALID_PARAMETER"), "{body}");
        assert_eq!(body["error"]["message"], json!(expected));
    }
}

#[tokio::test]
async fn an_empty_or_blank_parameter_counts_as_absent() {
    // Arrange
    let app = spawn_app().await;
    let widget = shop_with_a_widget(&app).await;

    // Act
    let all = shown(
        &app,
        &[
            ("location", " home "),
            ("product_id", ""),
            ("widget_ids", " "),
            ("v", ""),
        ],
    )
    .await;
    let missing = app
        .storefront("contextual-widgets", SHOP, &[("location", "  ")])
        .await;

    // Assert
    assert_eq!(all, vec![widget]);
    assert_error(
        missing,
        StatusCode::BAD_REQUEST,
        "MISSING_PARAMETER",
        "location",
    )
    .await;
}

// ---------------------------------------------------------------- contextual-widgets: shape

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
            "widgets",
        ],
    );
    assert_eq!(body["location"], json!("home"));
    assert_eq!(
        body["context"],
        json!({ "productId": null, "collectionId": null, "pageHandle": null })
    );
    assert_eq!(body["version"], json!(version.to_string()));
    assert_timestamp(&body["timestamp"]);
    assert_eq!(body["removeBranding"], json!(false));
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

// ---------------------------------------------------------------- contextual-widgets: what shows

#[tokio::test]
async fn contextual_widgets_shows_only_active_widgets_and_published_videos_renumbered() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({ "title": "A" })).await;
    let b = app
        .create_video(SHOP, json!({ "title": "B", "status": "DRAFT" }))
        .await;
    let c = app.create_video(SHOP, json!({ "title": "C" })).await;
    let d = app
        .create_video(SHOP, json!({ "title": "D", "status": "ARCHIVED" }))
        .await;
    let e = app.create_video(SHOP, json!({ "title": "E" })).await;
    let active = app
        .create_widget(SHOP, json!({ "videoIds": [e, b, a, d, c] }))
        .await;
    app.create_widget(SHOP, json!({ "status": "draft", "videoIds": [a] }))
        .await;
    app.create_widget(SHOP, json!({ "status": "archived", "videoIds": [a] }))
        .await;
    app.create_widget(SHOP, json!({ "videoIds": [b, d] })).await;
    app.create_widget(SHOP, json!({})).await;

    // Act
    let body = contextual(&app, &[("location", "home")]).await;

    // Assert
    assert_eq!(ids_of(&body["widgets"]), vec![active]);
    let videos = &body["widgets"][0]["videos"];
    assert_eq!(ids_of(videos), vec![e, a, c]);
    let orders: Vec<&Value> = videos
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["order"])
        .collect();
    assert_eq!(orders, vec![&json!(1), &json!(2), &json!(3)]);
}

#[tokio::test]
async fn contextual_widgets_orders_by_priority_then_by_creation_time() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let low = app
        .create_widget(
            SHOP,
            json!({ "title": "low", "priority": 1, "videoIds": [video] }),
        )
        .await;
    let high_old = app
        .create_widget(
            SHOP,
            json!({ "title": "Z", "priority": 5, "videoIds": [video] }),
        )
        .await;
    let high_new = app
        .create_widget(
            SHOP,
            json!({ "title": "A", "priority": 5, "videoIds": [video] }),
        )
        .await;
    let middle = app
        .create_widget(
            SHOP,
            json!({ "title": "mid", "priority": 3, "videoIds": [video] }),
        )
        .await;
    // A later edit must not make the older widget the newer one.
    patch_widget(&app, SHOP, &high_old, json!({ "title": "Z edited" })).await;

    // Act
    let order = shown(&app, &[("location", "home")]).await;

    // Assert
    assert_eq!(order, vec![high_old, high_new, middle, low]);
}

#[tokio::test]
async fn contextual_widgets_location_rule_admits_only_the_listed_locations_and_empty_admits_all() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let no_rules = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let empty_list = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": [] } }),
        )
        .await;
    let listed = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product", "collection"] } }),
        )
        .await;

    for location in LOCATIONS {
        // Act
        let ids = shown(&app, &[("location", location)]).await;

        // Assert
        let mut expected = vec![no_rules.clone(), empty_list.clone()];
        if location == "product" || location == "collection" {
            expected.push(listed.clone());
        }
        assert_eq!(ids, expected, "at {location}");
    }
}

#[tokio::test]
async fn contextual_widgets_product_rule_matches_the_pages_product_by_gid_number_or_handle() {
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
            json!({ "videoIds": [video], "rules": { "productIds": [product_gid(11)] } }),
        )
        .await;
    let for_hat = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "productIds": ["12"] } }),
        )
        .await;
    let gid_11 = product_gid(11);
    let cases: Vec<Case> = vec![
        (
            vec![("location", "product"), ("product_id", &gid_11)],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "11")],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "shirt")],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "12")],
            vec![for_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "hat")],
            vec![for_hat.clone()],
        ),
        (vec![("location", "product"), ("product_id", "13")], vec![]),
        (
            vec![
                ("location", "product"),
                ("product_handle", "no-such-product"),
            ],
            vec![],
        ),
        (vec![("location", "product")], vec![]),
        (vec![("location", "home")], vec![]),
    ];

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}

#[tokio::test]
async fn contextual_widgets_collection_rule_matches_the_collection_id_as_gid_or_number() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let for_sale = app
        .create_widget(
            SHOP,
            json!({
                "videoIds": [video],
                "rules": { "collectionIds": ["gid://shopify/Collection/22"] },
            }),
        )
        .await;
    let cases: Vec<Case> = vec![
        (
            vec![
                ("location", "collection"),
                ("collection_id", "gid://shopify/Collection/22"),
            ],
            vec![for_sale.clone()],
        ),
        (
            vec![("location", "collection"), ("collection_id", "22")],
            vec![for_sale.clone()],
        ),
        (
            vec![("location", "collection"), ("collection_id", "23")],
            vec![],
        ),
        (vec![("location", "collection")], vec![]),
    ];

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}

#[tokio::test]
async fn contextual_widgets_shows_productpage_widgets_only_on_product_pages() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let carousel = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let productpage = app
        .create_widget(SHOP, json!({ "type": "productpage", "videoIds": [video] }))
        .await;

    for location in LOCATIONS {
        // Act
        let ids = shown(&app, &[("location", location)]).await;

        // Assert
        let expected = if location == "product" {
            vec![carousel.clone(), productpage.clone()]
        } else {
            vec![carousel.clone()]
        };
        assert_eq!(ids, expected, "at {location}");
    }
}

#[tokio::test]
async fn a_floating_widget_is_shown_on_every_page_its_location_rule_allows() {
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let everywhere = app
        .create_widget(SHOP, json!({ "type": "floating", "videoIds": [video] }))
        .await;
    let on_products = app
        .create_widget(
            SHOP,
            json!({ "type": "floating", "videoIds": [video], "rules": { "locations": ["product"] } }),
        )
        .await;

    for location in LOCATIONS {
        let ids = shown(&app, &[("location", location)]).await;
        let expected = if location == "product" {
            vec![everywhere.clone(), on_products.clone()]
        } else {
            vec![everywhere.clone()]
        };
        assert_eq!(ids, expected, "at {location}");
    }
    let (status, body) = json_of(
        app.storefront("widgets-list", SHOP, &[("type", "floating")])
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["widgets"].as_array().unwrap().len(), 2, "{body}");
}

#[tokio::test]
async fn contextual_widgets_product_sourced_widget_shows_the_current_products_published_videos() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(
        &app,
        SHOP,
        json!([
            product(11, "shirt"),
            product(12, "hat"),
            product(13, "socks")
        ]),
    )
    .await;
    let shirt_only = app
        .create_video(SHOP, json!({ "productIds": [product_gid(11)] }))
        .await;
    let shirt_and_hat = app
        .create_video(SHOP, json!({ "productIds": ["11", "12"] }))
        .await;
    app.create_video(
        SHOP,
        json!({ "status": "DRAFT", "productIds": ["11", "13"] }),
    )
    .await;
    app.create_video(SHOP, json!({ "status": "ARCHIVED", "productIds": ["13"] }))
        .await;
    let hat_only = app
        .create_video(SHOP, json!({ "productIds": ["12"] }))
        .await;
    let widget = app
        .create_widget(SHOP, json!({ "sourceType": "product" }))
        .await;

    let cases: Vec<Case> = vec![
        (
            vec![("location", "product"), ("product_id", "11")],
            vec![shirt_only.clone(), shirt_and_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "shirt")],
            vec![shirt_only.clone(), shirt_and_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "12")],
            vec![shirt_and_hat.clone(), hat_only.clone()],
        ),
    ];
    for (params, expected) in cases {
        // Act
        let body = contextual(&app, &params).await;

        // Assert
        assert_eq!(ids_of(&body["widgets"]), vec![widget.clone()], "{params:?}");
        let shown = &body["widgets"][0];
        assert_full_widget_shape(shown);
        assert_eq!(
            sorted(ids_of(&shown["videos"])),
            sorted(expected),
            "{params:?}"
        );
    }

    let nothing_to_show: Vec<Params> = vec![
        // Only unpublished videos are linked to socks.
        vec![("location", "product"), ("product_id", "13")],
        vec![("location", "product"), ("product_id", "14")],
        vec![("location", "product")],
        // Not a product page, whatever product is named.
        vec![("location", "home"), ("product_id", "11")],
        vec![("location", "collection"), ("product_handle", "shirt")],
    ];
    for params in nothing_to_show {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert!(ids.is_empty(), "{params:?}: {ids:?}");
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

// ---------------------------------------------------------------- contextual-widgets: context

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

// ---------------------------------------------------------------- contextual-widgets: snippets

#[tokio::test]
async fn contextual_widgets_widget_id_and_widget_ids_restrict_the_answer_skipping_unknown_ids() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let a = app
        .create_widget(SHOP, json!({ "priority": 1, "videoIds": [video] }))
        .await;
    let b = app
        .create_widget(SHOP, json!({ "priority": 2, "videoIds": [video] }))
        .await;
    let c = app
        .create_widget(SHOP, json!({ "priority": 3, "videoIds": [video] }))
        .await;
    let draft = app
        .create_widget(SHOP, json!({ "status": "draft", "videoIds": [video] }))
        .await;
    let product_only = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product"] } }),
        )
        .await;
    app.create_shop(OTHER_SHOP).await;
    let other_video = app.create_video(OTHER_SHOP, json!({})).await;
    let foreign = app
        .create_widget(OTHER_SHOP, json!({ "videoIds": [other_video] }))
        .await;
    let unknown = Uuid::now_v7().to_string();
    let batch = [
        c.as_str(),
        &draft,
        &product_only,
        &foreign,
        &unknown,
        "nope",
    ]
    .join(",");
    let cases: Vec<Case> = vec![
        (
            vec![("location", "home"), ("widget_id", &a)],
            vec![a.clone()],
        ),
        (
            vec![("location", "home"), ("widget_ids", &batch)],
            vec![c.clone()],
        ),
        (
            vec![
                ("location", "home"),
                ("widget_id", &a),
                ("widget_ids", &batch),
            ],
            vec![c.clone(), a.clone()],
        ),
        (
            vec![("location", "product"), ("widget_ids", &batch)],
            vec![c.clone(), product_only.clone()],
        ),
        (vec![("location", "home"), ("widget_id", &unknown)], vec![]),
        (vec![("location", "home"), ("widget_id", "nope")], vec![]),
        (vec![("location", "home"), ("widget_id", &draft)], vec![]),
        (vec![("location", "home"), ("widget_id", &foreign)], vec![]),
    ];
    assert_eq!(
        shown(&app, &[("location", "home")]).await,
        vec![c.clone(), b, a.clone()],
        "without a restriction"
    );

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}

// ---------------------------------------------------------------- widget-by-id

#[tokio::test]
async fn widget_by_id_returns_the_active_widget_in_full() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(&app, SHOP, json!([product(11, "shirt")])).await;
    let published = app
        .create_video(
            SHOP,
            json!({ "title": "P", "duration": 30, "productIds": ["11"] }),
        )
        .await;
    let draft = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    let other = app.create_video(SHOP, json!({ "title": "Q" })).await;
    let widget = app
        .create_widget(
            SHOP,
            json!({
                "type": "productpage",
                "title": "Shop the look",
                "priority": 7,
                "viewStyle": "large",
                "clickBehavior": "none",
                "modalLayout": "horizontal",
                "videoIds": [draft, published, other],
            }),
        )
        .await;

    // Act
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_keys(&body, &["success", "widget"]);
    assert_eq!(body["success"], json!(true));
    let shown = &body["widget"];
    assert_full_widget_shape(shown);
    assert_eq!(shown["id"], json!(widget));
    assert_eq!(shown["type"], json!("productpage"));
    assert_eq!(shown["title"], json!("Shop the look"));
    assert_eq!(shown["status"], json!("active"));
    assert_eq!(shown["priority"], json!(7));
    assert_eq!(shown["viewStyle"], json!("large"));
    assert_eq!(shown["clickBehavior"], json!("none"));
    assert_eq!(shown["modalLayout"], json!("horizontal"));
    assert_eq!(ids_of(&shown["videos"]), vec![published, other]);
    assert_eq!(shown["videos"][0]["title"], json!("P"));
    assert_eq!(shown["videos"][0]["duration"].as_f64(), Some(30.0));
    assert_eq!(
        shown["videos"][0]["products"],
        json!([product(11, "shirt")])
    );
}

#[tokio::test]
async fn widget_by_id_answers_400_with_an_empty_body_when_id_is_missing() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    for params in [vec![], vec![("location", "home")], vec![("id", "")]] {
        // Act
        let response = widget_by_id(&app, SHOP, &params).await;

        // Assert
        assert_empty(response, StatusCode::BAD_REQUEST).await;
    }
}

#[tokio::test]
async fn widget_by_id_answers_404_with_an_empty_body_when_the_shop_has_no_such_active_widget() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let draft = app
        .create_widget(SHOP, json!({ "status": "draft", "videoIds": [video] }))
        .await;
    let archived = app
        .create_widget(SHOP, json!({ "status": "archived", "videoIds": [video] }))
        .await;
    app.create_shop(OTHER_SHOP).await;
    let other_video = app.create_video(OTHER_SHOP, json!({})).await;
    let foreign = app
        .create_widget(OTHER_SHOP, json!({ "videoIds": [other_video] }))
        .await;
    let unknown = Uuid::now_v7().to_string();

    for id in [
        unknown.as_str(),
        "not-a-widget-id",
        &draft,
        &archived,
        &foreign,
    ] {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", id)]).await;

        // Assert
        assert_empty(response, StatusCode::NOT_FOUND).await;
    }
}

#[tokio::test]
async fn widget_by_id_returns_204_when_rules_exclude_location() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let widget = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product", "page"] } }),
        )
        .await;

    for location in LOCATIONS {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", &widget), ("location", location)]).await;

        // Assert
        if location == "product" || location == "page" {
            let (status, body) = json_of(response).await;
            assert_eq!(status, StatusCode::OK, "at {location}: {body}");
            assert_eq!(body["widget"]["id"], json!(widget));
        } else {
            assert_empty(response, StatusCode::NO_CONTENT).await;
        }
    }
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;
    assert_eq!(response.status(), StatusCode::OK, "without a location");
}

#[tokio::test]
async fn widget_by_id_returns_204_for_a_productpage_widget_off_product_pages() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let widget = app
        .create_widget(SHOP, json!({ "type": "productpage", "videoIds": [video] }))
        .await;

    for location in LOCATIONS {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", &widget), ("location", location)]).await;

        // Assert
        if location == "product" {
            assert_eq!(response.status(), StatusCode::OK);
        } else {
            assert_empty(response, StatusCode::NO_CONTENT).await;
        }
    }
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;
    assert_eq!(response.status(), StatusCode::OK, "without a location");
}

// ---------------------------------------------------------------- widgets-list

#[tokio::test]
async fn widgets_list_requires_a_type() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    assert_required(&app, "widgets-list", "type").await;
}

#[tokio::test]
async fn widgets_list_rejects_a_type_outside_carousel_story_productpage() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    // Act + Assert
    let values = ["banner", "Carousel", "stories"];
    assert_each_invalid(&app, "widgets-list", &[], "type", &values).await;
}

#[tokio::test]
async fn widgets_list_answers_the_active_widgets_of_the_type_in_brief() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let published = app.create_video(SHOP, json!({})).await;
    let also_published = app.create_video(SHOP, json!({})).await;
    let draft_video = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    let manual = app
        .create_widget(
            SHOP,
            json!({
                "title": "Manual",
                "videoIds": [published, draft_video, also_published],
            }),
        )
        .await;
    let by_product = app
        .create_widget(
            SHOP,
            json!({ "title": "By product", "sourceType": "product", "videoIds": [published] }),
        )
        .await;
    app.create_widget(SHOP, json!({ "status": "draft", "videoIds": [published] }))
        .await;
    app.create_widget(
        SHOP,
        json!({ "status": "archived", "videoIds": [published] }),
    )
    .await;
    let story = app
        .create_widget(SHOP, json!({ "type": "story", "videoIds": [published] }))
        .await;

    // Act
    let response = app
        .storefront("widgets-list", SHOP, &[("type", "carousel")])
        .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_keys(&body, &["success", "widgets", "count"]);
    assert_eq!(body["success"], json!(true));
    assert_eq!(
        sorted(ids_of(&body["widgets"])),
        sorted(vec![manual.clone(), by_product.clone()])
    );
    assert_eq!(body["count"], json!(2));
    for summary in body["widgets"].as_array().unwrap() {
        assert_keys(
            summary,
            &[
                "id",
                "title",
                "type",
                "status",
                "sourceType",
                "videoCount",
                "createdAt",
            ],
        );
        assert_eq!(summary["type"], json!("carousel"));
        assert_eq!(summary["status"], json!("active"));
        assert_timestamp(&summary["createdAt"]);
        let created: DateTime<Utc> = summary["createdAt"].as_str().unwrap().parse().unwrap();
        let admin = app
            .send_admin(
                Method::GET,
                &format!("/shops/{SHOP}/widgets/{}", summary["id"].as_str().unwrap()),
            )
            .await;
        let (_, admin) = json_of(admin).await;
        let admin_created: DateTime<Utc> = admin["createdAt"].as_str().unwrap().parse().unwrap();
        assert_eq!(created, admin_created, "{summary}");
        if summary["id"] == json!(manual) {
            assert_eq!(summary["title"], json!("Manual"));
            assert_eq!(summary["sourceType"], json!("manual"));
            assert_eq!(summary["videoCount"], json!(2));
        } else {
            assert_eq!(summary["title"], json!("By product"));
            assert_eq!(summary["sourceType"], json!("product"));
            assert_eq!(summary["videoCount"], json!(1));
        }
    }

    let response = app
        .storefront("widgets-list", SHOP, &[("type", "story")])
        .await;
    let (_, body) = json_of(response).await;
    assert_eq!(ids_of(&body["widgets"]), vec![story]);
    assert_eq!(body["count"], json!(1));
    let response = app
        .storefront("widgets-list", SHOP, &[("type", "productpage")])
        .await;
    let (_, body) = json_of(response).await;
    assert_eq!(body["widgets"], json!([]));
    assert_eq!(body["count"], json!(0));
}

// ---------------------------------------------------------------- all three

/// One valid request of each endpoint, for a shop whose widget is `widget`.
fn each_endpoint(widget: &str) -> Vec<(&'static str, Vec<(&'static str, String)>)> {
    vec![
        ("contextual-widgets", vec![("location", "home".to_string())]),
        ("widget-by-id", vec![("id", widget.to_string())]),
        ("widgets-list", vec![("type", "carousel".to_string())]),
    ]
}

async fn call(app: &TestApp, endpoint: &str, shop: &str, params: &[(&str, String)]) -> Response {
    let params: Vec<(&str, &str)> = params.iter().map(|(k, v)| (*k, v.as_str())).collect();
    app.storefront(endpoint, shop, &params).await
}

#[tokio::test]
async fn every_storefront_endpoint_answers_shop_not_found_for_an_unknown_shop() {
    // Arrange
    let app = spawn_app().await;
    let widget = shop_with_a_widget(&app).await;

    for (endpoint, params) in each_endpoint(&widget) {
        // Act
        let response = call(&app, endpoint, "nobody.myshopify.com", &params).await;

        // Assert
        assert_error(response, StatusCode::NOT_FOUND, "SHOP_NOT_FOUND", "").await;
    }
}

#[tokio::test]
async fn every_storefront_endpoint_answers_shop_not_found_once_the_shop_is_uninstalled() {
    // Arrange
    let app = spawn_app().await;
    let widget = shop_with_a_widget(&app).await;
    for (endpoint, params) in each_endpoint(&widget) {
        let response = call(&app, endpoint, SHOP, &params).await;
        assert_eq!(response.status(), StatusCode::OK, "{endpoint} before");
    }
    uninstall(&app, SHOP).await;

    for (endpoint, params) in each_endpoint(&widget) {
        // Act
        let response = call(&app, endpoint, SHOP, &params).await;

        // Assert
        assert_error(response, StatusCode::NOT_FOUND, "SHOP_NOT_FOUND", "").await;
    }
}

#[tokio::test]
async fn every_storefront_endpoint_sends_etag_and_cache_control_on_200() {
    // Arrange
    let app = spawn_app().await;
    let widget = shop_with_a_widget(&app).await;

    for (endpoint, params) in each_endpoint(&widget) {
        // Act
        let response = call(&app, endpoint, SHOP, &params).await;

        // Assert
        assert_eq!(response.status(), StatusCode::OK, "{endpoint}");
        let headers = response.headers();
        let etag = headers
            .get("etag")
            .unwrap_or_else(|| panic!("{endpoint}: no ETag"))
            .to_str()
            .unwrap();
        assert!(
            etag.ends_with('"') && etag.len() > 2,
            "{endpoint}: ETag {etag:?}"
        );
        assert_eq!(
            headers.get("cache-control").map(|v| v.to_str().unwrap()),
            Some(SHORT_CACHE),
            "{endpoint}"
        );
        let content_type = headers
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        assert!(
            content_type
                .as_deref()
                .is_some_and(|t| t.starts_with("application/json")),
            "{endpoint}: {content_type:?}"
        );
    }
}
