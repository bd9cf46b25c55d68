//! The storefront's viewCount: read from ClickHouse's daily view, at most once per interval per
//! shop, and still served (last known) while ClickHouse is down.

use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::fault_proxy::{FaultProxy, Mode};
use crate::helpers::*;

const SHOP: &str = "counts-shop.myshopify.com";

async fn shop_with_a_video(app: &TestApp) -> String {
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({})).await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    video
}

async fn view_count(app: &TestApp) -> Value {
    let response = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["widgets"][0]["videos"][0]["viewCount"].clone()
}

async fn post_views(app: &TestApp, video: &str, n: usize) {
    let events: Vec<Value> = (0..n)
        .map(|_| json!({ "eventType": "view", "videoId": video }))
        .collect();
    let response = app.post_events(SHOP, &json!({ "events": events })).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

async fn wait_for_rows(app: &TestApp, n: u64) {
    let started = Instant::now();
    loop {
        let rows: u64 = clickhouse_query(&app.clickhouse_database, "SELECT count() FROM events")
            .await
            .parse()
            .unwrap();
        if rows >= n {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "events did not land"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn eventually_view_count(app: &TestApp, expected: &str) {
    let started = Instant::now();
    loop {
        if view_count(app).await == expected {
            return;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "viewCount never became {expected}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn view_count_is_the_videos_lifetime_views_as_a_string() {
    let app = spawn_app_with(|s| s.view_count_refresh = Duration::from_secs(1)).await;
    let video = shop_with_a_video(&app).await;
    assert_eq!(view_count(&app).await, "0");
    post_views(&app, &video, 3).await;
    app.post_events(SHOP, &json!({ "eventType": "click", "videoId": video }))
        .await;
    wait_for_rows(&app, 4).await;
    eventually_view_count(&app, "3").await;
}

#[tokio::test]
async fn view_counts_are_read_at_most_once_a_minute_per_shop() {
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    assert_eq!(view_count(&app).await, "0");
    post_views(&app, &video, 2).await;
    wait_for_rows(&app, 2).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The views are in ClickHouse, but this shop's counts were read less than a minute ago.
    assert_eq!(view_count(&app).await, "0");
}

#[tokio::test]
async fn the_storefront_serves_the_last_known_counts_while_clickhouse_is_down() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_app_with(|s| {
        s.clickhouse_url = Some(proxy.url.parse().unwrap());
        s.view_count_refresh = Duration::from_secs(1);
    })
    .await;
    let video = shop_with_a_video(&app).await;
    post_views(&app, &video, 2).await;
    wait_for_rows(&app, 2).await;
    eventually_view_count(&app, "2").await;

    proxy.set(Mode::Down);
    post_views(&app, &video, 3).await; // acknowledged and spooled
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(700)).await;
        // Refreshes fail; the storefront answers with what it knew.
        assert_eq!(view_count(&app).await, "2");
    }

    proxy.set(Mode::Up);
    eventually_view_count(&app, "5").await;
}
