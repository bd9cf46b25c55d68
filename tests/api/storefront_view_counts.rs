//! The storefront's viewCount: read from ClickHouse's daily view, at most once per interval per
//! shop, and still served (last known) while ClickHouse is down.

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::fault_proxy::{FaultProxy, Mode};
use crate::support::*;

const SHOP: &str = "counts-shop.myshopify.com";

async fn view_count_of(app: &impl Service, shop: &str) -> Value {
    let response = app
        .storefront("contextual-widgets", shop, &[("location", "home")])
        .await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["widgets"][0]["videos"][0]["viewCount"].clone()
}

async fn view_count(app: &impl Service) -> Value {
    view_count_of(app, SHOP).await
}

async fn post_views_to(app: &impl Service, shop: &str, video: &str, n: usize) {
    let events: Vec<Value> = (0..n)
        .map(|_| json!({ "eventType": "view", "videoId": video }))
        .collect();
    let response = app.post_events(shop, &json!({ "events": events })).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

async fn post_views(app: &impl Service, video: &str, n: usize) {
    post_views_to(app, SHOP, video, n).await;
}

/// Waits until every acknowledged event is in ClickHouse, its daily views included (the spool is
/// empty), and checks that `events` holds `n` rows.
async fn wait_for_rows(app: &impl Service, n: u64) {
    wait_until_shipped(app, Duration::from_secs(10)).await;
    let rows = clickhouse_query(&app.clickhouse_database, "SELECT count() FROM events").await;
    assert_eq!(rows, n.to_string());
}

async fn eventually_view_count_of(app: &impl Service, shop: &str, expected: &str) {
    let what = format!("viewCount of {shop} is {expected}");
    eventually(&what, Duration::from_secs(10), move || async move {
        let count = view_count_of(app, shop).await;
        (count == expected).then_some(()).ok_or(count)
    })
    .await;
}

async fn eventually_view_count(app: &impl Service, expected: &str) {
    eventually_view_count_of(app, SHOP, expected).await;
}

#[tokio::test]
async fn view_count_is_the_videos_lifetime_views_as_a_string() {
    let app = spawn_app_with(|s| s.view_count_refresh = Duration::from_secs(1)).await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
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
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let other = "counts-other.myshopify.com";
    let (other_video, _) = app.create_shop_showing_a_video(other, json!({})).await;
    assert_eq!(view_count(&app).await, "0");
    post_views(&app, &video, 2).await;
    post_views_to(&app, other, &other_video, 1).await;
    wait_for_rows(&app, 3).await;
    // The views are in ClickHouse, but this shop's counts were read less than a minute ago: a
    // request now may not read them again, not even in the background.
    assert_eq!(view_count(&app).await, "0");
    // Another shop's first read, begun after that request, has come back with the views…
    eventually_view_count_of(&app, other, "1").await;
    // …and this shop still answers with what it read before them.
    assert_eq!(view_count(&app).await, "0");
}

#[tokio::test]
async fn the_storefront_serves_the_last_known_counts_while_clickhouse_is_down() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    // A process of its own, so that the refresh failures it counts are this test's alone.
    let app = spawn_process_app(&[
        ("CLICKHOUSE_URL", proxy.url.clone()),
        ("VIDEOAPP_VIEW_COUNT_REFRESH_SECONDS", "1".to_string()),
    ])
    .await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    post_views(&app, &video, 2).await;
    wait_for_rows(&app, 2).await;
    eventually_view_count(&app, "2").await;

    proxy.set(Mode::Down);
    post_views(&app, &video, 3).await; // acknowledged and spooled
                                       // Refreshes fail; the storefront answers with what it knew, until three have failed.
    let failures = "storefront_view_count_refresh_failures_total";
    let failed_before = app.metric(failures, &[]).await.unwrap_or(0.0);
    let app = &app;
    eventually(
        "the view counts were refreshed (and refused) three times",
        Duration::from_secs(30),
        move || async move {
            let failed = app.metric(failures, &[]).await.unwrap_or(0.0);
            if failed >= failed_before + 3.0 {
                return Ok(());
            }
            assert_eq!(view_count(app).await, "2");
            Err(failed)
        },
    )
    .await;
    assert_eq!(view_count(app).await, "2");
    assert!(
        spooled_segments(&app.spool_dir) > 0,
        "the new views wait in the spool"
    );

    proxy.set(Mode::Up);
    eventually_view_count(app, "5").await;
}
