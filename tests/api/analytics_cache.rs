//! What the analytics lists keep in memory: a sorted list asked again (another page, the CSV, the
//! same page) is served from memory, and so are the totals of the days before today while events
//! arrive today; neither once what it was computed from has moved: events landed on one of its
//! days through any instance, or a catalog write; nor what was computed while a batch of the
//! shop's events was going in.

use serde_json::{json, Value};

use chrono::{Duration, Utc};
use uuid::Uuid;
use videoapp::warehouse::changes;

use crate::support::analytics::{
    analytics_ok, at, event, record, shop_with_key, Fixture, SHOP, UNLIMITED,
};
use crate::support::*;

/// A service of its own, so that its cache counters count only this test's requests.
async fn isolated_service() -> ProcessApp {
    spawn_process_app(&[("VIDEOAPP_RATE_LIMIT_PER_MINUTE", UNLIMITED.to_string())]).await
}

/// `(hits, misses)` of one of the caches (`videos`, `widgets`, `video_catalog`, `past_totals`)
/// so far.
async fn cache_counts(app: &ProcessApp, cache: &str) -> (f64, f64) {
    let count = async |outcome: &str| {
        let name = format!("analytics_cache_{outcome}_total");
        app.metric(&name, &[("cache", cache)]).await.unwrap_or(0.0)
    };
    (count("hits").await, count("misses").await)
}

fn views(n: usize, target: &Value) -> Vec<Value> {
    vec![event("view", target); n]
}

fn target(fixture: &Fixture) -> Value {
    json!({ "videoId": fixture.video, "widgetId": fixture.widget })
}

#[tokio::test]
async fn a_listing_asked_again_is_served_from_memory_until_events_land() {
    // Arrange
    let app = isolated_service().await;
    let fixture = shop_with_key(&app, SHOP).await;
    record(&app, SHOP, views(2, &target(&fixture))).await;
    let (first, _) = analytics_ok(&app, &fixture.key, "/videos").await;

    // Act
    let (again, _) = analytics_ok(&app, &fixture.key, "/videos?page=1&limit=10").await;
    let counts_after_again = cache_counts(&app, "videos").await;
    record(&app, SHOP, views(3, &target(&fixture))).await;
    let (after_events, _) = analytics_ok(&app, &fixture.key, "/videos").await;

    // Assert
    assert_eq!(first["data"][0]["metrics"]["views"], json!(2));
    assert_eq!(again["data"], first["data"]);
    assert_eq!(counts_after_again, (1.0, 1.0), "(hits, misses)");
    assert_eq!(after_events["data"][0]["metrics"]["views"], json!(5));
    assert_eq!(cache_counts(&app, "videos").await, (1.0, 2.0));
}

#[tokio::test]
async fn the_other_sort_keys_pages_and_the_csv_of_one_range_share_a_listing_per_order() {
    // Arrange
    let app = isolated_service().await;
    let fixture = shop_with_key(&app, SHOP).await;
    for title in ["Second", "Third"] {
        app.create_video(SHOP, json!({ "title": title })).await;
    }
    record(&app, SHOP, views(1, &target(&fixture))).await;

    // Act
    analytics_ok(&app, &fixture.key, "/videos?limit=1&page=1").await;
    analytics_ok(&app, &fixture.key, "/videos?limit=1&page=3").await;
    let csv = app
        .client
        .get(app.url("/api/v1/analytics/videos?format=csv"))
        .bearer_auth(&fixture.key.secret)
        .send()
        .await
        .unwrap();
    let csv_rows = csv.text().await.unwrap().lines().count();
    let (by_title, _) =
        analytics_ok(&app, &fixture.key, "/videos?sort_by=title&sort_order=asc").await;
    analytics_ok(&app, &fixture.key, "/widgets?widget_type=carousel").await;
    analytics_ok(&app, &fixture.key, "/widgets").await;

    // Assert
    assert_eq!(csv_rows, 4, "a header and three videos");
    let titles: Vec<&str> = by_title["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["title"].as_str().unwrap())
        .collect();
    assert_eq!(titles, ["Fixture", "Second", "Third"]);
    assert_eq!(
        cache_counts(&app, "videos").await,
        (2.0, 2.0),
        "(hits, misses)"
    );
    assert_eq!(
        cache_counts(&app, "widgets").await,
        (1.0, 1.0),
        "(hits, misses)"
    );
    // Sorting by title computed a list afresh, from the videos read for the first.
    assert_eq!(cache_counts(&app, "video_catalog").await, (1.0, 1.0));
}

#[tokio::test]
async fn a_video_created_after_a_listing_was_kept_is_in_the_next_answer() {
    // Arrange
    let app = isolated_service().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let (before, _) = analytics_ok(&app, &fixture.key, "/videos").await;

    // Act
    let created = app.create_video(SHOP, json!({ "title": "New" })).await;
    let (after, _) = analytics_ok(&app, &fixture.key, "/videos").await;

    // Assert
    assert_eq!(before["pagination"]["total_count"], json!(1));
    assert_eq!(after["pagination"]["total_count"], json!(2));
    assert!(ids_of(&after["data"]).contains(&created));
}

#[tokio::test]
async fn events_another_instance_ships_change_the_listing_this_instance_kept() {
    // Arrange
    let first = isolated_service().await;
    let fixture = shop_with_key(&first, SHOP).await;
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    settings.rate_limit_per_minute = UNLIMITED;
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    record(&first, SHOP, views(1, &target(&fixture))).await;
    let (kept, _) = analytics_ok(&first, &fixture.key, "/videos").await;

    // Act
    record(&second, SHOP, views(4, &target(&fixture))).await;
    let (after, _) = analytics_ok(&first, &fixture.key, "/videos").await;

    // Assert
    assert_eq!(kept["data"][0]["metrics"]["views"], json!(1));
    assert_eq!(after["data"][0]["metrics"]["views"], json!(5));
    assert_eq!(cache_counts(&first, "videos").await, (0.0, 2.0));
    second.shutdown().await;
}

#[tokio::test]
async fn the_days_before_today_are_summed_once_while_events_arrive_today() {
    // Arrange: views two days ago and today, over a range of the last week.
    let app = isolated_service().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let two_days_ago = Utc::now() - Duration::days(2);
    let earlier = |n| -> Vec<Value> {
        let views = views(n, &target(&fixture)).into_iter();
        views.map(|e| at(e, two_days_ago)).collect()
    };
    record(&app, SHOP, earlier(2)).await;
    record(&app, SHOP, views(1, &target(&fixture))).await;
    let week = format!(
        "/videos?start_date={}",
        (Utc::now() - Duration::days(6)).date_naive()
    );
    let (first, _) = analytics_ok(&app, &fixture.key, &week).await;

    // Act
    record(&app, SHOP, views(1, &target(&fixture))).await;
    let (after_today, _) = analytics_ok(&app, &fixture.key, &week).await;
    let past_after_today = cache_counts(&app, "past_totals").await;
    record(&app, SHOP, earlier(3)).await;
    let (after_late, _) = analytics_ok(&app, &fixture.key, &week).await;

    // Assert
    assert_eq!(first["data"][0]["metrics"]["views"], json!(3));
    assert_eq!(after_today["data"][0]["metrics"]["views"], json!(4));
    assert_eq!(
        past_after_today,
        (1.0, 1.0),
        "(hits, misses) of the past days' totals"
    );
    assert_eq!(after_late["data"][0]["metrics"]["views"], json!(7));
    assert_eq!(cache_counts(&app, "past_totals").await, (1.0, 2.0));
    assert_eq!(cache_counts(&app, "videos").await, (0.0, 3.0));
}

#[tokio::test]
async fn nothing_computed_while_a_batch_of_the_shop_goes_in_is_kept() {
    // Arrange: views two days ago and today, over a range of the last week; then a batch of the
    // shop's events starts going in, as the shipper marks it.
    let app = isolated_service().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let two_days_ago = views(2, &target(&fixture)).into_iter();
    let two_days_ago = two_days_ago.map(|e| at(e, Utc::now() - Duration::days(2)));
    record(&app, SHOP, two_days_ago.collect()).await;
    record(&app, SHOP, views(1, &target(&fixture))).await;
    let week = format!(
        "/videos?start_date={}",
        (Utc::now() - Duration::days(6)).date_naive()
    );
    let db = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    let (insert, lease) = (Uuid::now_v7(), std::time::Duration::from_secs(60));
    changes::inserting(&db, insert, &[SHOP], lease)
        .await
        .unwrap();

    // Act: asked twice while it goes in; then it lands, and a mark whose lease ran out (a
    // shipper that stopped) is left behind.
    let (while_going_in, _) = analytics_ok(&app, &fixture.key, &week).await;
    analytics_ok(&app, &fixture.key, &week).await;
    let lists_while_going_in = cache_counts(&app, "videos").await;
    let pasts_while_going_in = cache_counts(&app, "past_totals").await;
    let today = Utc::now().date_naive();
    changes::days_landed(&db, Some(insert), &[(SHOP, today)])
        .await
        .unwrap();
    let stopped = std::time::Duration::ZERO;
    changes::inserting(&db, Uuid::now_v7(), &[SHOP], stopped)
        .await
        .unwrap();
    let (after, _) = analytics_ok(&app, &fixture.key, &week).await;
    analytics_ok(&app, &fixture.key, &week).await;

    // Assert
    assert_eq!(while_going_in["data"][0]["metrics"]["views"], json!(3));
    assert_eq!(after["data"], while_going_in["data"]);
    assert_eq!(lists_while_going_in, (0.0, 2.0), "(hits, misses) of lists");
    assert_eq!(pasts_while_going_in, (0.0, 2.0), "(hits, misses) of pasts");
    assert_eq!(cache_counts(&app, "videos").await, (1.0, 3.0));
    assert_eq!(cache_counts(&app, "past_totals").await, (0.0, 3.0));
}
