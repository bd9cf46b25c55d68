//! Counted once: a repeated `eventId` (a client's retry) and a repeated order (a reloaded
//! thank-you page), on one instance, across instances and across restarts; and the platform's
//! signed customer id as the event's identity.

use std::time::Duration;

use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::*;

const SHOP: &str = "repeat-shop.myshopify.com";
const SHIPPED_WITHIN: Duration = Duration::from_secs(20);

async fn scalar(database: &str, sql: &str) -> String {
    clickhouse_query(database, sql).await
}

fn view(event_id: Uuid) -> Value {
    json!({ "eventType": "view", "eventId": event_id, "videoId": "video-1", "widgetId": "widget-1" })
}

fn order(event_id: Uuid, order_id: &str, revenue: &str) -> Value {
    json!({
        "eventType": "checkout_completed", "eventId": event_id, "orderId": order_id,
        "revenue": revenue, "currency": "USD", "videoId": "video-1",
        "productIds": ["gid://shopify/Product/1001", "1002"],
    })
}

async fn post_accepted(app: &impl Service, body: &Value) {
    let response = app.post_events(SHOP, body).await;
    assert_eq!(response.status(), 202, "{:?}", response.text().await);
}

/// The daily aggregate's views, orders and revenue (× 10 000) of `video-1`.
async fn video_totals(database: &str) -> String {
    scalar(
        database,
        "SELECT sum(views), sum(orders), sum(revenue_e4) FROM video_daily WHERE video_id = 'video-1'",
    )
    .await
}

#[tokio::test]
async fn the_same_event_posted_five_times_is_acknowledged_each_time_and_counted_once() {
    // A process of its own, so that the repeats it counts are this test's alone.
    let app = spawn_process_app(&[]).await;
    app.create_shop(SHOP).await;
    let repeated = Uuid::new_v4();
    for _ in 0..3 {
        post_accepted(&app, &view(repeated)).await;
    }
    // Twice more in one batch, beside an event of its own.
    let other = Uuid::new_v4();
    post_accepted(
        &app,
        &json!({ "events": [view(repeated), view(other), view(repeated)] }),
    )
    .await;
    wait_until_shipped(&app, SHIPPED_WITHIN).await;

    let db = &app.clickhouse_database;
    assert_eq!(scalar(db, "SELECT count() FROM events").await, "2");
    assert_eq!(
        scalar(
            db,
            &format!("SELECT count() FROM events WHERE event_id = toUUID('{repeated}')")
        )
        .await,
        "1"
    );
    assert_eq!(video_totals(db).await, "2\t0\t0");

    // Events without an id are each their own, however alike.
    let anonymous = json!({ "eventType": "view", "videoId": "video-1" });
    post_accepted(&app, &anonymous).await;
    post_accepted(&app, &anonymous).await;
    wait_until_shipped(&app, SHIPPED_WITHIN).await;
    assert_eq!(video_totals(db).await, "4\t0\t0");

    let metrics = app.metrics().await;
    // Four of the five copies were repeats; the anonymous events are not.
    assert_eq!(
        metric_value(&metrics, "events_repeated_total", &[("kind", "event_id")]),
        Some(4.0),
        "repeats are counted as such:\n{metrics}"
    );
    assert_eq!(
        metric_value(&metrics, "events_shipped_total", &[]),
        Some(4.0),
        "{metrics}"
    );
}

#[tokio::test]
async fn an_order_sent_twice_counts_once_in_orders_and_revenue() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    // A reloaded thank-you page: a new event id, the same order.
    post_accepted(&app, &order(Uuid::new_v4(), "order-1", "59.90")).await;
    post_accepted(&app, &order(Uuid::new_v4(), "order-1", "59.90")).await;
    // Both copies in one batch, and one other order.
    post_accepted(
        &app,
        &json!({ "events": [
            order(Uuid::new_v4(), "order-2", "10.05"),
            order(Uuid::new_v4(), "order-2", "10.05"),
            order(Uuid::new_v4(), "order-1", "59.90"),
        ] }),
    )
    .await;
    wait_until_shipped(&app, SHIPPED_WITHIN).await;

    let db = &app.clickhouse_database;
    assert_eq!(video_totals(db).await, "0\t2\t699500");
    assert_eq!(
        scalar(
            db,
            "SELECT DISTINCT arrayStringConcat(product_ids, ' ') FROM events"
        )
        .await,
        "gid://shopify/Product/1001 gid://shopify/Product/1002",
        "the order's products are kept as global ids"
    );
}

#[tokio::test]
async fn a_repeat_that_reaches_another_instance_or_a_restarted_one_counts_once() {
    let first = spawn_app().await;
    first.create_shop(SHOP).await;
    let second = spawn_with_settings(
        test_settings(&first.database_url, &first.clickhouse_database),
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    let repeated = Uuid::new_v4();
    let reloaded_order = "order-7";
    post_accepted(&first, &view(repeated)).await;
    post_accepted(&second, &view(repeated)).await;
    post_accepted(&first, &order(Uuid::new_v4(), reloaded_order, "5")).await;
    post_accepted(&second, &order(Uuid::new_v4(), reloaded_order, "5")).await;
    wait_until_shipped(&first, SHIPPED_WITHIN).await;
    wait_until_shipped(&second, SHIPPED_WITHIN).await;
    let db = first.clickhouse_database.clone();
    assert_eq!(video_totals(&db).await, "1\t1\t50000");

    // Both instances restart (a deploy); the shopper's browser retries once more.
    first.shutdown().await;
    second.shutdown().await;
    let restarted = spawn_with_settings(
        test_settings(&first.database_url, &db),
        first.database_url.clone(),
        db.clone(),
    )
    .await;
    post_accepted(&restarted, &view(repeated)).await;
    post_accepted(&restarted, &order(Uuid::new_v4(), reloaded_order, "5")).await;
    post_accepted(&restarted, &view(Uuid::new_v4())).await;
    wait_until_shipped(&restarted, SHIPPED_WITHIN).await;
    assert_eq!(video_totals(&db).await, "2\t1\t50000");
}

#[tokio::test]
async fn the_platforms_signed_customer_id_is_the_events_customer() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let post = |customer: &'static str, claimed: &'static str| {
        let url = app.url(&format!(
            "/apps/videoapp_sub/analytics?{}",
            signed(SHOP, &[("logged_in_customer_id", customer)])
        ));
        let body = json!({ "eventType": "view", "sessionId": claimed, "customerId": claimed });
        let client = app.client.clone();
        async move {
            let response = client.post(url).json(&body).send().await.unwrap();
            assert_eq!(response.status(), 202);
        }
    };
    post("7001", "someone-else").await;
    // Not logged in: the platform sends the parameter empty, and the event has no customer,
    // whatever the client claims.
    post("", "guest-42").await;
    wait_until_shipped(&app, SHIPPED_WITHIN).await;
    assert_eq!(
        scalar(
            &app.clickhouse_database,
            "SELECT session_id, customer_id FROM events ORDER BY session_id"
        )
        .await,
        "guest-42\t\nsomeone-else\t7001"
    );
}
