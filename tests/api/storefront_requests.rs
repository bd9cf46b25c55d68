//! What every storefront widget request is held to: its parameters (required, well formed, given
//! once, blank counting as absent), the shop it names, and the caching headers of its answer.
//! Signatures, invalidation and ETag/304 are covered in `storefront_cache`.

use crate::support::storefront::*;
use crate::support::*;
use reqwest::{Method, Response, StatusCode};
use serde_json::json;

const SHORT_CACHE: &str = "public, max-age=60, stale-while-revalidate=600";

async fn uninstall(app: &TestApp, shop: &str) {
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{shop}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

/// A shop with one active widget showing one published video; returns the widget's id.
async fn shop_with_a_widget(app: &TestApp) -> String {
    app.create_shop_showing_a_video(SHOP, json!({})).await.1
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

// ---------------------------------------------------------------- parameters

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

// ---------------------------------------------------------------- the shop

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

// ---------------------------------------------------------------- caching headers

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
