//! Captions: WebVTT files per language, attached through the admin API, served with the media,
//! shown on the store, replaced, removed, kept by the sweep and deleted with their video.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::support::media::{media_worker, stored_objects};
use crate::support::*;

const SHOP: &str = "captions-shop.myshopify.com";
const ENGLISH: &str = "WEBVTT\n\n00:00.500 --> 00:02.000\nThree ways to wear it\n";
const PORTUGUESE: &str = "WEBVTT\n\n00:00.500 --> 00:02.000\nTrês maneiras de usar\n";

async fn put_captions(
    app: &TestApp,
    video: &str,
    language: &str,
    body: &str,
) -> (StatusCode, Value) {
    let path = format!("/shops/{SHOP}/videos/{video}/captions/{language}");
    let response = app
        .admin(Method::PUT, &path)
        .header("Content-Type", "text/vtt")
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    json_of(response).await
}

fn languages(video: &Value) -> Vec<&str> {
    video["captions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["language"].as_str().unwrap())
        .collect()
}

fn url_of<'v>(video: &'v Value, language: &str) -> &'v str {
    video["captions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["language"] == language)
        .and_then(|c| c["url"].as_str())
        .unwrap()
}

#[tokio::test]
async fn captions_are_attached_per_language_served_shown_on_the_store_replaced_and_removed() {
    let dir = fresh_media_dir();
    let media_dir = dir.clone();
    let app = spawn_app_with(|s| s.media.media_dir = media_dir).await;
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({})).await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;

    let (status, body) = put_captions(&app, &video, "en", ENGLISH).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = put_captions(&app, &video, "PT-br", PORTUGUESE).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(languages(&body), ["en", "pt-BR"]);

    // Served as WebVTT, for a year, to the store's pages.
    let served = app.client.get(url_of(&body, "pt-BR")).send().await.unwrap();
    assert_eq!(served.status(), StatusCode::OK);
    let headers = served.headers().clone();
    assert_eq!(headers["content-type"], "text/vtt; charset=utf-8");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert!(headers["cache-control"]
        .to_str()
        .unwrap()
        .contains("immutable"));
    assert_eq!(served.text().await.unwrap(), PORTUGUESE);

    // The store's answer carries them with the video.
    let (status, widgets) = json_of(
        app.storefront("contextual-widgets", SHOP, &[("location", "home")])
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{widgets}");
    let shown = &widgets["widgets"][0]["videos"][0];
    assert_eq!(shown["captions"], body["captions"], "{widgets}");

    // Another file in a language replaces the one before, whose object goes.
    let old = url_of(&body, "en").to_string();
    let changed = ENGLISH.replace("Three", "3");
    let (status, body) = put_captions(&app, &video, "en", &changed).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_ne!(url_of(&body, "en"), old);
    assert_eq!(
        app.client.get(&old).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let served = app.client.get(url_of(&body, "en")).send().await.unwrap();
    assert_eq!(served.text().await.unwrap(), changed);

    // Removed: gone from the video, the store and the store's media.
    let gone = url_of(&body, "pt-BR").to_string();
    let path = format!("/shops/{SHOP}/videos/{video}/captions/pt-BR");
    let (status, body) = json_of(app.send_admin(Method::DELETE, &path).await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(languages(&body), ["en"]);
    assert_eq!(
        app.client.get(&gone).send().await.unwrap().status(),
        StatusCode::NOT_FOUND
    );
    let response = app.send_admin(Method::DELETE, &path).await;
    assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "caption").await;

    // The sweep keeps what a video refers to.
    let mut sweeper = media_worker(&app, &dir).await;
    let mut config = (*sweeper.media.config).clone();
    config.sweep_grace = Duration::ZERO;
    sweeper.media.config = std::sync::Arc::new(config);
    sweeper.sweep().await.unwrap();
    let kept = app.client.get(url_of(&body, "en")).send().await.unwrap();
    assert_eq!(kept.status(), StatusCode::OK);

    // Deleting the video deletes its captions.
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}/videos/{video}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
    assert!(
        stored_objects(&dir, &video).is_empty(),
        "{:?}",
        stored_objects(&dir, &video)
    );
}

#[tokio::test]
async fn a_caption_file_that_is_not_webvtt_or_not_sent_as_it_is_refused_naming_the_problem() {
    let app = spawn_app_with(|s| s.media.media_dir = fresh_media_dir()).await;
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({})).await;
    let path = format!("/shops/{SHOP}/videos/{video}/captions/en");

    let srt = "1\n00:00:01,000 --> 00:00:02,000\nHi\n";
    let (status, body) = put_captions(&app, &video, "en", srt).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "INVALID_CAPTIONS");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("WEBVTT"),
        "{body}"
    );

    let (status, body) = put_captions(&app, &video, "english", ENGLISH).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("language"),
        "{body}"
    );

    let response = app
        .admin(Method::PUT, &path)
        .header("Content-Type", "application/json")
        .body(ENGLISH)
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        "text/vtt",
    )
    .await;

    let huge = format!("{ENGLISH}{}", "x".repeat(600 * 1024));
    let (status, body) = put_captions(&app, &video, "en", &huge).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");

    let unknown = uuid::Uuid::new_v4();
    let (status, body) = put_captions(&app, &unknown.to_string(), "en", ENGLISH).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");

    // Nothing was attached by any of them.
    let (_, body) = json_of(
        app.send_admin(Method::GET, &format!("/shops/{SHOP}/videos/{video}"))
            .await,
    )
    .await;
    assert_eq!(body["captions"], json!([]));
}
