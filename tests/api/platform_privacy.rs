//! The mandatory privacy webhooks, proven by reading Postgres and ClickHouse afterwards: a data
//! request's report holds every event held for the customer (theirs, their orders', and the rest
//! of their sessions) and nothing else; a customer's redaction deletes exactly those raw events
//! and leaves the aggregates; a shop's redaction leaves no row of the shop anywhere, and every
//! row of another shop.

use std::time::Duration;

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::helpers::*;
use crate::platform_webhooks::{wait_until_worked, Delivery, SHOP};

const OTHER_SHOP: &str = "other-webhook-shop.myshopify.com";

/// What the customer (42) did, and what others did, with the ids of each event.
struct Activity {
    /// Session "a": browsing, then logged in as 42; session "b": a guest checkout of order 9001.
    customers: Vec<String>,
    /// Customer 43, in session "c".
    others: Vec<String>,
}

fn event(kind: &str, session: &str, video: &str, extra: Value) -> (String, Value) {
    let id = Uuid::new_v4().to_string();
    let mut e = json!({ "eventId": id, "eventType": kind, "sessionId": session, "videoId": video });
    for (key, value) in extra.as_object().unwrap() {
        e[key] = value.clone();
    }
    (id, e)
}

/// Sends the activity for `shop`'s `video` and waits until ClickHouse holds it.
async fn act(app: &TestApp, shop: &str, video: &str) -> Activity {
    let ours = [
        event("view", "a", video, json!({})),
        event("add_to_cart", "a", video, json!({ "customerId": 42 })),
        event(
            "checkout_completed",
            "b",
            video,
            json!({ "orderId": 9001, "revenue": 19.5, "currency": "USD" }),
        ),
    ];
    let theirs = [event("view", "c", video, json!({ "customerId": 43 }))];
    let events: Vec<Value> = ours.iter().chain(&theirs).map(|(_, e)| e.clone()).collect();
    let response = app.post_events(shop, &json!({ "events": events })).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    wait_until_shipped(app, Duration::from_secs(20)).await;
    Activity {
        customers: ours.into_iter().map(|(id, _)| id).collect(),
        others: theirs.into_iter().map(|(id, _)| id).collect(),
    }
}

async fn ch(app: &TestApp, sql: &str) -> String {
    clickhouse_query(&app.clickhouse_database, sql).await
}

/// The ids of the shop's raw events, sorted.
async fn raw_event_ids(app: &TestApp, shop: &str) -> Vec<String> {
    let sql = format!(
        "SELECT toString(event_id) FROM events WHERE shop_domain = '{shop}' ORDER BY event_id"
    );
    let text = ch(app, &sql).await;
    text.lines().map(String::from).collect()
}

/// Every aggregate's totals for the shop, as text: what a customer's redaction must not change.
async fn aggregates(app: &TestApp, shop: &str) -> String {
    let mut all = String::new();
    for table in videoapp::warehouse::AGGREGATES {
        let sql = format!(
            "SELECT count() > 0, sum(impressions), sum(views), sum(clicks), sum(add_to_cart), \
             sum(orders), sum(revenue_e4), sum(direct_orders), sum(influenced_add_to_cart) \
             FROM {table} WHERE shop_domain = '{shop}'"
        );
        all += &format!("{table}: {}\n", ch(app, &sql).await);
    }
    all
}

fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

#[tokio::test]
async fn a_data_request_reports_every_event_held_for_the_customer_to_the_merchant() {
    // Arrange
    let app = spawn_app().await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let activity = act(&app, SHOP, &video).await;
    let request = json!({
        "shop_id": 954889,
        "shop_domain": SHOP,
        "orders_requested": [9001],
        "customer": { "id": 42, "email": "john@example.com", "phone": "555-625-1199" },
        "data_request": { "id": 9999 },
    });

    // Act
    Delivery::new("customers/data_request", &request)
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;
    let response = app
        .send_admin(Method::GET, &format!("/shops/{SHOP}/privacy-reports"))
        .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let reports = body["reports"].as_array().unwrap();
    assert_eq!(reports.len(), 1, "{body}");
    assert_eq!(reports[0]["dataRequestId"], json!("9999"));
    assert_eq!(reports[0]["customerId"], json!("42"));
    let reported: Vec<String> = reports[0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sorted(reported), sorted(activity.customers));
    let checkout = reports[0]["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["eventType"] == json!("checkout_completed"))
        .cloned()
        .unwrap();
    assert_eq!(checkout["orderId"], json!("9001"));
    assert_eq!(checkout["revenue"], json!("19.5"));
}

#[tokio::test]
async fn a_customer_redaction_deletes_their_raw_events_and_leaves_the_aggregates() {
    // Arrange
    let app = spawn_app().await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let activity = act(&app, SHOP, &video).await;
    let before = aggregates(&app, SHOP).await;
    let redact = json!({
        "shop_id": 954889,
        "shop_domain": SHOP,
        "customer": { "id": 42, "email": "john@example.com", "phone": "555-625-1199" },
        "orders_to_redact": [9001],
    });

    // Act
    Delivery::new("customers/redact", &redact)
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;

    // Assert
    assert_eq!(raw_event_ids(&app, SHOP).await, sorted(activity.others));
    assert_eq!(aggregates(&app, SHOP).await, before);
}

#[tokio::test]
async fn a_shop_redaction_leaves_no_row_of_the_shop_and_every_row_of_another() {
    // Arrange: two shops with a catalog, a key, events, a report and deliveries.
    let app = spawn_app().await;
    let mut before_other = (String::new(), Vec::new());
    for shop in [SHOP, OTHER_SHOP] {
        let (video, _) = app.create_shop_showing_a_video(shop, json!({})).await;
        app.create_api_key(shop, "Reporting").await;
        act(&app, shop, &video).await;
        let mut request = Delivery::new(
            "customers/data_request",
            &json!({
                "shop_id": 954889,
                "shop_domain": shop,
                "customer": { "id": 42 },
                "data_request": { "id": 1 },
            }),
        );
        request.shop = shop;
        request.send_ok(&app).await;
    }
    wait_until_worked(&app).await;
    before_other.0 = aggregates(&app, OTHER_SHOP).await;
    before_other.1 = raw_event_ids(&app, OTHER_SHOP).await;
    let postgres_rows = |shop: &'static str| {
        let db = app.db.clone();
        async move {
            let mut counts = Vec::new();
            for (table, column) in [
                ("shops", "domain"),
                ("products", "shop_domain"),
                ("videos", "shop_domain"),
                ("widgets", "shop_domain"),
                ("api_keys", "shop_domain"),
                ("event_claims", "shop_domain"),
                ("order_claims", "shop_domain"),
                ("analytics_days", "shop_domain"),
                ("analytics_inserts", "shop_domain"),
                ("product_removals", "shop_domain"),
                ("privacy_reports", "shop_domain"),
                ("webhook_deliveries", "shop_domain"),
            ] {
                let sql = format!("SELECT count(*) FROM {table} WHERE {column} = $1");
                let n: i64 = sqlx::query_scalar(&sql)
                    .bind(shop)
                    .fetch_one(&db)
                    .await
                    .unwrap();
                counts.push((table, n));
            }
            counts
        }
    };
    let other_before = postgres_rows(OTHER_SHOP).await;

    // Act
    let mut redact = Delivery::new("shop/redact", &json!({ "shop_id": 1, "shop_domain": SHOP }));
    redact.shop = SHOP;
    redact.send_ok(&app).await;
    wait_until_worked(&app).await;

    // Assert: Postgres holds only the redaction's own delivery, ClickHouse nothing of the shop.
    for (table, n) in postgres_rows(SHOP).await {
        let expected = i64::from(table == "webhook_deliveries");
        assert_eq!(n, expected, "{table}");
    }
    for table in [
        "events",
        "video_daily",
        "video_monthly",
        "video_yearly",
        "widget_daily",
        "widget_monthly",
        "shop_daily",
        "video_daily_by_video",
    ] {
        let sql = format!("SELECT count() FROM {table} WHERE shop_domain = '{SHOP}'");
        assert_eq!(ch(&app, &sql).await, "0", "{table}");
    }
    assert_eq!(postgres_rows(OTHER_SHOP).await, other_before);
    assert_eq!(aggregates(&app, OTHER_SHOP).await, before_other.0);
    assert_eq!(raw_event_ids(&app, OTHER_SHOP).await, before_other.1);
}
