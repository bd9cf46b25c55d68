//! `POST` / `GET /admin/v1/shops/{shop}/widgets` and `GET` / `PATCH` / `DELETE …/widgets/{id}`.

use crate::support::*;
use chrono::{DateTime, Utc};
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

const SHOP: &str = "widgets-shop.myshopify.com";
const OTHER_SHOP: &str = "other-widgets-shop.myshopify.com";

async fn post_widget(app: &TestApp, shop: &str, body: Value) -> Response {
    app.send_admin_json(Method::POST, &format!("/shops/{shop}/widgets"), &body)
        .await
}

async fn widget_request(app: &TestApp, method: Method, shop: &str, id: &str) -> Response {
    app.send_admin(method, &format!("/shops/{shop}/widgets/{id}"))
        .await
}

async fn patch_widget(app: &TestApp, shop: &str, id: &str, body: Value) -> Response {
    app.send_admin_json(Method::PATCH, &format!("/shops/{shop}/widgets/{id}"), &body)
        .await
}

/// The widget as the service answers it now; asserts it exists.
async fn get_widget(app: &TestApp, shop: &str, id: &str) -> Value {
    let (status, body) = json_of(widget_request(app, Method::GET, shop, id).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn list_widgets(app: &TestApp, shop: &str) -> Vec<Value> {
    app.admin_list(&format!("/shops/{shop}/widgets"), "widgets")
        .await
}

/// Creates a widget from `body` exactly as given and returns the service's answer.
async fn created_widget(app: &TestApp, shop: &str, body: Value) -> Value {
    let (status, widget) = json_of(post_widget(app, shop, body).await).await;
    assert_eq!(status, StatusCode::CREATED, "{widget}");
    widget
}

/// Every writable field with a value other than its default.
fn full_widget(video_ids: &[&str]) -> Value {
    json!({
        "type": "productpage",
        "title": "Shop the look",
        "status": "archived",
        "priority": 7,
        "viewStyle": "large",
        "clickBehavior": "open_product",
        "modalLayout": "horizontal",
        "sourceType": "product",
        "videoIds": video_ids,
        "rules": {
            "locations": ["product", "collection"],
            "productIds": ["gid://shopify/Product/11"],
            "collectionIds": ["gid://shopify/Collection/22"],
        },
    })
}

#[tokio::test]
async fn creating_a_widget_with_only_a_type_applies_the_defaults() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = post_widget(&app, SHOP, json!({ "type": "story" })).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = Uuid::parse_str(body["id"].as_str().expect("an id")).expect("a UUID");
    assert_eq!(id.get_version_num(), 7, "{id} is not a v7 UUID");
    body["createdAt"]
        .as_str()
        .expect("createdAt")
        .parse::<DateTime<Utc>>()
        .expect("an RFC 3339 timestamp");
    assert_eq!(body["type"], json!("story"));
    assert_eq!(body["title"], json!(""));
    assert_eq!(body["status"], json!("draft"));
    assert_eq!(body["priority"], json!(0));
    assert_eq!(body["viewStyle"], json!("default"));
    assert_eq!(body["clickBehavior"], json!("open_modal"));
    assert_eq!(body["modalLayout"], json!("vertical"));
    assert_eq!(body["sourceType"], json!("manual"));
    assert_eq!(body["videoIds"], json!([]));
    assert_eq!(
        body["rules"],
        json!({ "locations": [], "productIds": [], "collectionIds": [] })
    );
}

#[tokio::test]
async fn every_widget_field_round_trips() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({})).await;
    let sent = full_widget(&[&video]);

    // Act
    let created = created_widget(&app, SHOP, sent.clone()).await;
    let read = get_widget(&app, SHOP, created["id"].as_str().unwrap()).await;

    // Assert
    for (field, value) in sent.as_object().unwrap() {
        assert_eq!(&created[field], value, "{field} as created");
    }
    assert_eq!(read, created);
}

#[tokio::test]
async fn a_widget_keeps_its_videos_in_the_given_order() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({ "title": "A" })).await;
    let b = app.create_video(SHOP, json!({ "title": "B" })).await;
    let c = app.create_video(SHOP, json!({ "title": "C" })).await;

    // Act
    let created = created_widget(
        &app,
        SHOP,
        json!({ "type": "carousel", "videoIds": [c, a, b] }),
    )
    .await;

    // Assert
    assert_eq!(created["videoIds"], json!([c, a, b]));
    let read = get_widget(&app, SHOP, created["id"].as_str().unwrap()).await;
    assert_eq!(read["videoIds"], json!([c, a, b]));
}

#[tokio::test]
async fn an_unknown_enum_value_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let cases = [
        (json!({ "type": "banner" }), "type:"),
        (json!({ "type": "Carousel" }), "type:"),
        (json!({ "type": "story", "status": "live" }), "status:"),
        (
            json!({ "type": "story", "viewStyle": "huge" }),
            "viewStyle:",
        ),
        (
            json!({ "type": "story", "clickBehavior": "open_cart" }),
            "clickBehavior:",
        ),
        (
            json!({ "type": "story", "modalLayout": "diagonal" }),
            "modalLayout:",
        ),
        (
            json!({ "type": "story", "sourceType": "collection" }),
            "sourceType:",
        ),
        (
            json!({ "type": "story", "rules": { "locations": ["home", "checkout"] } }),
            "rules.locations[1]: unknown variant",
        ),
        (json!({ "type": "story", "priority": "high" }), "priority:"),
        (
            json!({ "type": "story", "colour": "red" }),
            "colour: unknown field",
        ),
        (
            json!({ "type": "story", "rules": { "where": ["home"] } }),
            "rules.where: unknown field",
        ),
        (json!({ "title": "No type" }), "missing field `type`"),
    ];

    for (body, needle) in cases {
        // Act
        let response = post_widget(&app, SHOP, body).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_control_character_in_the_title_is_rejected_naming_it() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let original = created_widget(&app, SHOP, full_widget(&[])).await;
    let id = original["id"].as_str().unwrap().to_string();

    for bad in with_control_characters("Shop the look") {
        // Act
        let created = post_widget(&app, SHOP, json!({ "type": "story", "title": bad })).await;
        let patched = patch_widget(&app, SHOP, &id, json!({ "title": bad })).await;

        // Assert
        assert_control_character_refused(created, "title").await;
        assert_control_character_refused(patched, "title").await;
    }
    assert_eq!(list_widgets(&app, SHOP).await.len(), 1);
    assert_eq!(get_widget(&app, SHOP, &id).await, original);
}

#[tokio::test]
async fn a_malformed_widget_body_is_an_invalid_body() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = app
        .admin(Method::POST, &format!("/shops/{SHOP}/widgets"))
        .header("content-type", "application/json")
        .body(r#"{"type": "story",}"#)
        .send()
        .await
        .unwrap();

    // Assert
    assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", "").await;
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_video_listed_twice_is_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({})).await;
    let b = app.create_video(SHOP, json!({})).await;

    // Act
    let response = post_widget(
        &app,
        SHOP,
        json!({ "type": "story", "videoIds": [a, b, a] }),
    )
    .await;

    // Assert
    assert_validation_error(response, "videoIds:").await;
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_video_of_another_shop_is_rejected_naming_video_ids() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let ours = app.create_video(SHOP, json!({})).await;
    let foreign = app.create_video(OTHER_SHOP, json!({})).await;

    // Act
    let response = post_widget(
        &app,
        SHOP,
        json!({ "type": "story", "videoIds": [ours, foreign] }),
    )
    .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"]["code"], json!("VALIDATION_ERROR"));
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("videoIds:"), "{message}");
    assert!(
        message.contains(&foreign),
        "{message} does not name {foreign}"
    );
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn an_unknown_video_is_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let ours = app.create_video(SHOP, json!({})).await;
    let unknown = Uuid::now_v7().to_string();

    // Act
    let unknown_id = post_widget(
        &app,
        SHOP,
        json!({ "type": "story", "videoIds": [ours, unknown] }),
    )
    .await;
    let not_a_uuid =
        post_widget(&app, SHOP, json!({ "type": "story", "videoIds": ["nope"] })).await;

    // Assert
    assert_validation_error(unknown_id, &format!("videoIds: video {unknown}")).await;
    assert_validation_error(not_a_uuid, "videoIds[0]:").await;
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn rule_product_and_collection_ids_are_normalised_from_bare_numbers() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let created = created_widget(
        &app,
        SHOP,
        json!({
            "type": "carousel",
            "rules": {
                "productIds": ["11", "gid://shopify/Product/12"],
                "collectionIds": ["21"],
            },
        }),
    )
    .await;

    // Assert
    let expected = json!({
        "locations": [],
        "productIds": ["gid://shopify/Product/11", "gid://shopify/Product/12"],
        "collectionIds": ["gid://shopify/Collection/21"],
    });
    assert_eq!(created["rules"], expected);
    let read = get_widget(&app, SHOP, created["id"].as_str().unwrap()).await;
    assert_eq!(read["rules"], expected);
}

#[tokio::test]
async fn a_bad_rule_product_or_collection_id_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let cases = [
        (
            json!({ "productIds": ["11", "shirt"] }),
            "rules.productIds[1]:",
        ),
        (
            json!({ "productIds": ["gid://shopify/Collection/1"] }),
            "rules.productIds[0]:",
        ),
        (
            json!({ "collectionIds": ["21", "0"] }),
            "rules.collectionIds[1]:",
        ),
        (
            json!({ "collectionIds": ["gid://shopify/Product/21"] }),
            "rules.collectionIds[0]:",
        ),
        (json!({ "productIds": ["11\u{0}"] }), "rules.productIds[0]:"),
        (
            json!({ "collectionIds": ["gid://shopify/Collection/\u{0}21"] }),
            "rules.collectionIds[0]:",
        ),
    ];

    for (rules, needle) in cases {
        // Act
        let response = post_widget(&app, SHOP, json!({ "type": "story", "rules": rules })).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn patching_a_widget_replaces_video_ids_and_rules_wholesale_and_leaves_other_fields() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({})).await;
    let b = app.create_video(SHOP, json!({})).await;
    let c = app.create_video(SHOP, json!({})).await;
    let mut original_body = full_widget(&[&a, &b]);
    merge(
        &mut original_body,
        json!({
            "rules": {
                "locations": ["product"],
                "productIds": ["11", "12"],
                "collectionIds": ["21"],
            },
        }),
    );
    let original = created_widget(&app, SHOP, original_body).await;
    let id = original["id"].as_str().unwrap().to_string();

    // Act
    let response = patch_widget(
        &app,
        SHOP,
        &id,
        json!({
            "videoIds": [c, a],
            "rules": { "productIds": ["13"] },
        }),
    )
    .await;

    // Assert
    let (status, patched) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let mut expected = without_updated_at(original.clone());
    merge(
        &mut expected,
        json!({
            "videoIds": [c, a],
            "rules": {
                "locations": [],
                "productIds": ["gid://shopify/Product/13"],
                "collectionIds": [],
            },
        }),
    );
    assert_eq!(without_updated_at(patched.clone()), expected);
    assert_eq!(get_widget(&app, SHOP, &id).await, patched);
}

#[tokio::test]
async fn patching_scalar_fields_keeps_the_videos_and_rules() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({})).await;
    let b = app.create_video(SHOP, json!({})).await;
    let original = created_widget(&app, SHOP, full_widget(&[&b, &a])).await;
    let id = original["id"].as_str().unwrap().to_string();
    let change = json!({
        "type": "carousel",
        "title": "Renamed",
        "status": "active",
        "priority": -3,
        "viewStyle": "compact",
        "clickBehavior": "none",
        "modalLayout": "vertical",
        "sourceType": "manual",
    });

    // Act
    let response = patch_widget(&app, SHOP, &id, change.clone()).await;

    // Assert
    let (status, patched) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let mut expected = without_updated_at(original.clone());
    merge(&mut expected, change);
    assert_eq!(without_updated_at(patched.clone()), expected);
    assert_eq!(get_widget(&app, SHOP, &id).await, patched);
}

#[tokio::test]
async fn a_patch_that_fails_validation_changes_nothing() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let a = app.create_video(SHOP, json!({})).await;
    let b = app.create_video(SHOP, json!({})).await;
    let foreign = app.create_video(OTHER_SHOP, json!({})).await;
    let original = created_widget(&app, SHOP, full_widget(&[&a, &b])).await;
    let id = original["id"].as_str().unwrap().to_string();
    let version = app.catalog_version(SHOP).await;
    let cases = [
        (
            json!({ "title": "Changed", "priority": 99, "videoIds": [b, foreign] }),
            "videoIds:",
        ),
        (
            json!({ "title": "Changed", "videoIds": [b, Uuid::now_v7()] }),
            "videoIds:",
        ),
        (
            json!({ "title": "Changed", "videoIds": [b, b] }),
            "videoIds:",
        ),
        (json!({ "title": "Changed", "status": "live" }), "status:"),
        (
            json!({ "title": "Changed", "rules": { "locations": ["nowhere"] } }),
            "rules.locations[0]:",
        ),
        (
            json!({ "title": "Changed", "rules": { "productIds": ["x"] } }),
            "rules.productIds[0]:",
        ),
        (json!({ "title": "x".repeat(257) }), "title:"),
    ];

    for (body, needle) in cases {
        // Act
        let response = patch_widget(&app, SHOP, &id, body).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert_eq!(get_widget(&app, SHOP, &id).await, original);
    assert_eq!(app.catalog_version(SHOP).await, version);
}

#[tokio::test]
async fn an_unknown_widget_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_widget(SHOP, json!({})).await;
    let unknown = Uuid::now_v7().to_string();

    // Act
    let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/widgets/{unknown}")).await;

    // Assert
    for response in responses {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "widget").await;
    }
    assert_eq!(list_widgets(&app, SHOP).await.len(), 1);
}

#[tokio::test]
async fn a_widget_id_that_is_not_a_uuid_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    for id in ["not-a-uuid", "42"] {
        // Act
        let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/widgets/{id}")).await;

        // Assert
        for response in responses {
            assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "widget").await;
        }
    }
}

#[tokio::test]
async fn another_shops_widget_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let video = app.create_video(OTHER_SHOP, json!({})).await;
    let theirs = created_widget(&app, OTHER_SHOP, full_widget(&[&video])).await;
    let id = theirs["id"].as_str().unwrap().to_string();

    // Act
    let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/widgets/{id}")).await;

    // Assert
    for response in responses {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "widget").await;
    }
    assert_eq!(get_widget(&app, OTHER_SHOP, &id).await, theirs);
    assert!(list_widgets(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn widgets_of_an_unknown_shop_are_not_found() {
    // Arrange
    let app = spawn_app().await;
    let unknown = "no-such-shop.myshopify.com";

    // Act
    let post = post_widget(&app, unknown, json!({ "type": "story" })).await;
    let list = app
        .send_admin(Method::GET, &format!("/shops/{unknown}/widgets"))
        .await;
    let get = widget_request(&app, Method::GET, unknown, &Uuid::now_v7().to_string()).await;

    // Assert
    for response in [post, list, get] {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    }
}

#[tokio::test]
async fn widgets_are_listed_oldest_first() {
    // Arrange: priorities and titles against creation order, so sorting by either would show
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let mut created = Vec::new();
    for (title, priority) in [("C", 1), ("B", 2), ("A", 3)] {
        created.push(
            app.create_widget(SHOP, json!({ "title": title, "priority": priority }))
                .await,
        );
    }
    app.create_widget(OTHER_SHOP, json!({ "title": "Not ours" }))
        .await;

    // Act
    let widgets = list_widgets(&app, SHOP).await;

    // Assert
    assert_eq!(ids_of(&json!(widgets)), created);
}

#[tokio::test]
async fn deleting_a_widget_answers_204_and_keeps_its_videos() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({})).await;
    let doomed = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let kept = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let version = app.catalog_version(SHOP).await;

    // Act
    let response = widget_request(&app, Method::DELETE, SHOP, &doomed).await;

    // Assert
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(app.catalog_version(SHOP).await > version);
    assert_eq!(
        ids_of(&json!(list_widgets(&app, SHOP).await)),
        vec![kept.clone()]
    );
    let get = widget_request(&app, Method::GET, SHOP, &doomed).await;
    assert_error(get, StatusCode::NOT_FOUND, "NOT_FOUND", "widget").await;
    assert_eq!(
        get_widget(&app, SHOP, &kept).await["videoIds"],
        json!([video])
    );
    let videos = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{video}"))
        .await;
    assert_eq!(videos.status(), StatusCode::OK);
}
