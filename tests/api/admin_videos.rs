//! `POST` / `GET /admin/v1/shops/{shop}/videos` and `GET` / `PATCH` / `DELETE …/videos/{id}`.

use crate::support::*;
use chrono::{DateTime, Utc};
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

const SHOP: &str = "videos-shop.myshopify.com";
const OTHER_SHOP: &str = "other-videos-shop.myshopify.com";

async fn post_video(app: &TestApp, shop: &str, body: Value) -> Response {
    app.send_admin_json(Method::POST, &format!("/shops/{shop}/videos"), &body)
        .await
}

async fn video_request(app: &TestApp, method: Method, shop: &str, id: &str) -> Response {
    app.send_admin(method, &format!("/shops/{shop}/videos/{id}"))
        .await
}

async fn patch_video(app: &TestApp, shop: &str, id: &str, body: Value) -> Response {
    app.send_admin_json(Method::PATCH, &format!("/shops/{shop}/videos/{id}"), &body)
        .await
}

/// The video as the service answers it now; asserts it exists.
async fn get_video(app: &TestApp, shop: &str, id: &str) -> Value {
    let (status, body) = json_of(video_request(app, Method::GET, shop, id).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body
}

async fn list_videos(app: &TestApp, shop: &str) -> Vec<Value> {
    app.admin_list(&format!("/shops/{shop}/videos"), "videos")
        .await
}

async fn widget_video_ids(app: &TestApp, shop: &str, id: &str) -> Value {
    let response = app
        .send_admin(Method::GET, &format!("/shops/{shop}/widgets/{id}"))
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["videoIds"].clone()
}

fn full_video() -> Value {
    json!({
        "title": "Summer lookbook",
        "thumbnail": "https://cdn.example.com/summer.jpg",
        "videoUrl": "https://cdn.example.com/summer.mp4",
        "miniVersionUrl": "https://cdn.example.com/summer-mini.mp4",
        "duration": 42.5,
        "status": "PUBLISHED",
        "productIds": ["123", "gid://shopify/Product/456"],
    })
}

/// Creates the shop with one [`full_video`]; the video as created, and its id.
async fn shop_with_a_video(app: &TestApp) -> (Value, String) {
    app.create_shop(SHOP).await;
    let (_, original) = json_of(post_video(app, SHOP, full_video()).await).await;
    let id = original["id"].as_str().unwrap().to_string();
    (original, id)
}

#[tokio::test]
async fn creating_a_video_answers_201_with_a_v7_id_and_the_echoed_fields() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let before = Utc::now() - chrono::Duration::seconds(5);

    // Act
    let response = post_video(&app, SHOP, full_video()).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = Uuid::parse_str(body["id"].as_str().expect("an id")).expect("a UUID");
    assert_eq!(id.get_version_num(), 7, "{id} is not a v7 UUID");
    let created_at: DateTime<Utc> = body["createdAt"]
        .as_str()
        .expect("createdAt")
        .parse()
        .expect("an RFC 3339 timestamp");
    assert!(
        created_at > before && created_at < Utc::now() + chrono::Duration::seconds(5),
        "{created_at}"
    );
    assert_eq!(body["title"], json!("Summer lookbook"));
    assert_eq!(
        body["thumbnail"],
        json!("https://cdn.example.com/summer.jpg")
    );
    assert_eq!(
        body["videoUrl"],
        json!("https://cdn.example.com/summer.mp4")
    );
    assert_eq!(
        body["miniVersionUrl"],
        json!("https://cdn.example.com/summer-mini.mp4")
    );
    assert_eq!(body["duration"], json!(42.5));
    assert_eq!(body["status"], json!("PUBLISHED"));
    assert_eq!(
        body["productIds"],
        json!(["gid://shopify/Product/123", "gid://shopify/Product/456"])
    );
}

#[tokio::test]
async fn a_new_video_is_a_draft_unless_a_status_is_given() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = post_video(
        &app,
        SHOP,
        json!({ "title": "Bare", "videoUrl": "https://cdn.example.com/bare.mp4" }),
    )
    .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["status"], json!("DRAFT"));
    assert_eq!(body["thumbnail"], json!(""));
    assert_eq!(body["miniVersionUrl"], json!(""));
    assert_eq!(body["duration"], json!(0.0));
    assert_eq!(body["productIds"], json!([]));
}

#[tokio::test]
async fn a_video_can_be_read_back_by_its_id() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let (_, created) = json_of(post_video(&app, SHOP, full_video()).await).await;

    // Act
    let read = get_video(&app, SHOP, created["id"].as_str().unwrap()).await;

    // Assert
    assert_eq!(read, created);
}

#[tokio::test]
async fn videos_are_listed_oldest_first() {
    // Arrange: titles in reverse alphabetical order, so sorting by title would show
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let mut created = Vec::new();
    for title in ["C", "B", "A"] {
        created.push(app.create_video(SHOP, json!({ "title": title })).await);
    }
    app.create_video(OTHER_SHOP, json!({ "title": "Not ours" }))
        .await;

    // Act
    let videos = list_videos(&app, SHOP).await;

    // Assert
    assert_eq!(ids_of(&json!(videos)), created);
    let titles: Vec<&str> = videos
        .iter()
        .map(|v| v["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["C", "B", "A"]);
}

#[tokio::test]
async fn patching_a_video_changes_only_the_given_fields() {
    // Arrange
    let app = spawn_app().await;
    let (original, id) = shop_with_a_video(&app).await;

    // Act
    let response = patch_video(
        &app,
        SHOP,
        &id,
        json!({ "title": "Autumn lookbook", "status": "ARCHIVED" }),
    )
    .await;

    // Assert
    let (status, patched) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    let mut expected = without_updated_at(original.clone());
    merge(
        &mut expected,
        json!({ "title": "Autumn lookbook", "status": "ARCHIVED" }),
    );
    assert_eq!(without_updated_at(patched.clone()), expected);
    assert_eq!(get_video(&app, SHOP, &id).await, patched);
}

#[tokio::test]
async fn patching_product_ids_replaces_the_whole_list() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let id = app
        .create_video(SHOP, json!({ "productIds": ["1", "2"] }))
        .await;

    // Act
    let replaced = patch_video(&app, SHOP, &id, json!({ "productIds": ["3", "1"] })).await;
    let (status, body) = json_of(replaced).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let emptied = patch_video(&app, SHOP, &id, json!({ "productIds": [] })).await;

    // Assert
    assert_eq!(
        body["productIds"],
        json!(["gid://shopify/Product/3", "gid://shopify/Product/1"])
    );
    let (status, body) = json_of(emptied).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["productIds"], json!([]));
    assert_eq!(get_video(&app, SHOP, &id).await["productIds"], json!([]));
}

#[tokio::test]
async fn an_invalid_video_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let with = |extra: Value| {
        let mut video = full_video();
        merge(&mut video, extra);
        video
    };
    let without = |field: &str| {
        let mut video = full_video();
        video.as_object_mut().unwrap().remove(field);
        video
    };
    let cases = [
        (with(json!({ "status": "LIVE" })), "status:"),
        (with(json!({ "status": "published" })), "status:"),
        (with(json!({ "duration": -1 })), "duration:"),
        (with(json!({ "duration": 86_401 })), "duration:"),
        (with(json!({ "duration": "long" })), "duration:"),
        (without("title"), "missing field `title`"),
        (with(json!({ "title": "  " })), "title:"),
        (without("videoUrl"), "missing field `videoUrl`"),
        (with(json!({ "videoUrl": "" })), "videoUrl:"),
        (
            with(json!({ "videoUrl": "ftp://cdn.example.com/v.mp4" })),
            "videoUrl:",
        ),
        (with(json!({ "videoUrl": "v.mp4" })), "videoUrl:"),
        (
            with(json!({ "thumbnail": "javascript:alert(1)" })),
            "thumbnail:",
        ),
        (
            with(json!({ "miniVersionUrl": "mini.mp4" })),
            "miniVersionUrl:",
        ),
        (
            with(json!({ "productIds": ["1", "shirt"] })),
            "productIds[1]:",
        ),
        (
            with(json!({ "productIds": ["gid://shopify/Collection/1"] })),
            "productIds[0]:",
        ),
        (
            with(json!({ "productIds": ["1", "gid://shopify/Product/2\u{0}"] })),
            "productIds[1]:",
        ),
        (
            with(json!({ "productIds": ["1", "gid://shopify/Product/1"] })),
            "productIds:",
        ),
        (with(json!({ "colour": "red" })), "colour: unknown field"),
    ];

    for (body, needle) in cases {
        // Act
        let response = post_video(&app, SHOP, body).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_videos(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_control_character_in_a_text_field_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    let (original, id) = shop_with_a_video(&app).await;

    for field in ["title", "thumbnail", "videoUrl", "miniVersionUrl"] {
        for bad in with_control_characters(full_video()[field].as_str().unwrap()) {
            let change = json!({ field: bad });
            let mut video = full_video();
            merge(&mut video, change.clone());

            // Act
            let created = post_video(&app, SHOP, video).await;
            let patched = patch_video(&app, SHOP, &id, change).await;

            // Assert
            assert_control_character_refused(created, field).await;
            assert_control_character_refused(patched, field).await;
        }
    }
    assert_eq!(list_videos(&app, SHOP).await.len(), 1);
    assert_eq!(get_video(&app, SHOP, &id).await, original);
}

#[tokio::test]
async fn a_malformed_video_body_is_an_invalid_body() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = app
        .admin(Method::POST, &format!("/shops/{SHOP}/videos"))
        .header("content-type", "application/json")
        .body(r#"{"title": "x", "videoUrl": "#)
        .send()
        .await
        .unwrap();

    // Assert
    assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", "").await;
    assert!(list_videos(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn an_invalid_patch_is_rejected_naming_the_field_and_changes_nothing() {
    // Arrange
    let app = spawn_app().await;
    let (original, id) = shop_with_a_video(&app).await;
    let version = app.catalog_version(SHOP).await;
    let cases = [
        (json!({ "title": "Changed", "duration": -5 }), "duration:"),
        (json!({ "title": "Changed", "status": "LIVE" }), "status:"),
        (json!({ "title": "" }), "title:"),
        (
            json!({ "title": "Changed", "videoUrl": "nope" }),
            "videoUrl:",
        ),
        (
            json!({ "title": "Changed", "productIds": ["x"] }),
            "productIds[0]:",
        ),
        (
            json!({ "title": "Changed", "id": Uuid::now_v7() }),
            "id: unknown field",
        ),
    ];

    for (body, needle) in cases {
        // Act
        let response = patch_video(&app, SHOP, &id, body).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert_eq!(get_video(&app, SHOP, &id).await, original);
    assert_eq!(app.catalog_version(SHOP).await, version);
}

#[tokio::test]
async fn an_unknown_video_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_video(SHOP, json!({})).await;
    let unknown = Uuid::now_v7().to_string();

    // Act
    let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/videos/{unknown}")).await;

    // Assert
    for response in responses {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
    }
    assert_eq!(list_videos(&app, SHOP).await.len(), 1);
}

#[tokio::test]
async fn a_video_id_that_is_not_a_uuid_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    for id in ["not-a-uuid", "123"] {
        // Act
        let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/videos/{id}")).await;

        // Assert
        for response in responses {
            assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
        }
    }
}

/// The path is read first: a bad id or shop is what the answer names, whatever the body holds.
#[tokio::test]
async fn a_bad_path_is_answered_before_a_bad_body() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let bad_body = json!({ "title": 42, "durationSeconds": "long" });

    // Act
    let bad_id = app
        .send_admin_json(
            Method::PATCH,
            &format!("/shops/{SHOP}/videos/123"),
            &bad_body,
        )
        .await;
    let bad_shop = post_video(&app, "not a shop", bad_body.clone()).await;

    // Assert
    assert_error(bad_id, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
    assert_validation_error(bad_shop, "shop").await;
}

#[tokio::test]
async fn another_shops_video_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let (_, theirs) = json_of(post_video(&app, OTHER_SHOP, full_video()).await).await;
    let id = theirs["id"].as_str().unwrap().to_string();

    // Act
    let responses = get_patch_delete(&app, &format!("/shops/{SHOP}/videos/{id}")).await;

    // Assert
    for response in responses {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
    }
    assert_eq!(get_video(&app, OTHER_SHOP, &id).await, theirs);
    assert!(list_videos(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn videos_of_an_unknown_shop_are_not_found() {
    // Arrange
    let app = spawn_app().await;
    let unknown = "no-such-shop.myshopify.com";

    // Act
    let post = post_video(&app, unknown, full_video()).await;
    let list = app
        .send_admin(Method::GET, &format!("/shops/{unknown}/videos"))
        .await;
    let get = video_request(&app, Method::GET, unknown, &Uuid::now_v7().to_string()).await;

    // Assert
    for response in [post, list, get] {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    }
}

#[tokio::test]
async fn deleting_a_video_answers_204_and_it_is_gone() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let doomed = app.create_video(SHOP, json!({ "title": "Doomed" })).await;
    let kept = app.create_video(SHOP, json!({ "title": "Kept" })).await;

    // Act
    let response = video_request(&app, Method::DELETE, SHOP, &doomed).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(ids_of(&json!(list_videos(&app, SHOP).await)), vec![kept]);
    let again = video_request(&app, Method::DELETE, SHOP, &doomed).await;
    assert_error(again, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
    let get = video_request(&app, Method::GET, SHOP, &doomed).await;
    assert_error(get, StatusCode::NOT_FOUND, "NOT_FOUND", "video").await;
}

#[tokio::test]
async fn deleting_a_video_removes_it_from_every_widget() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({ "title": "A" })).await;
    let b = app.create_video(SHOP, json!({ "title": "B" })).await;
    let c = app.create_video(SHOP, json!({ "title": "C" })).await;
    let first = app
        .create_widget(SHOP, json!({ "videoIds": [a, b, c] }))
        .await;
    let second = app
        .create_widget(SHOP, json!({ "type": "story", "videoIds": [c, b, a] }))
        .await;
    let without_b = app.create_widget(SHOP, json!({ "videoIds": [c, a] })).await;

    // Act
    let response = video_request(&app, Method::DELETE, SHOP, &b).await;

    // Assert
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert_eq!(widget_video_ids(&app, SHOP, &first).await, json!([a, c]));
    assert_eq!(widget_video_ids(&app, SHOP, &second).await, json!([c, a]));
    assert_eq!(
        widget_video_ids(&app, SHOP, &without_b).await,
        json!([c, a])
    );
}

#[tokio::test]
async fn every_video_write_bumps_the_catalog_version_and_a_rejected_one_does_not() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let initial = app.catalog_version(SHOP).await;

    // Act & Assert
    let id = app.create_video(SHOP, json!({})).await;
    let after_create = app.catalog_version(SHOP).await;
    assert!(after_create > initial, "{after_create} after {initial}");

    let rejected = post_video(&app, SHOP, json!({ "title": "", "videoUrl": "x" })).await;
    assert_eq!(rejected.status(), StatusCode::BAD_REQUEST);
    assert_eq!(app.catalog_version(SHOP).await, after_create);

    let patched = patch_video(&app, SHOP, &id, json!({ "title": "Renamed" })).await;
    assert_eq!(patched.status(), StatusCode::OK);
    let after_patch = app.catalog_version(SHOP).await;
    assert!(
        after_patch > after_create,
        "{after_patch} after {after_create}"
    );

    let deleted = video_request(&app, Method::DELETE, SHOP, &id).await;
    assert_eq!(deleted.status(), StatusCode::NO_CONTENT);
    let after_delete = app.catalog_version(SHOP).await;
    assert!(
        after_delete > after_patch,
        "{after_delete} after {after_patch}"
    );

    let missing = video_request(&app, Method::DELETE, SHOP, &id).await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
    assert_eq!(app.catalog_version(SHOP).await, after_delete);
}
