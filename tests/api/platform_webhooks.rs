//! Platform webhooks over HTTP, signed as the platform signs them: base64 HMAC-SHA256 of the raw
//! body under the app's secret. Refused without a matching signature, with a body that is not the
//! topic's payload or names another shop, or sent before the replay window; recorded once per
//! delivery id, and pruned after the retention; the catalog follows the platform's product states
//! in the order of their own times.

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use base64::Engine;
use chrono::{DateTime, SubsecRound, Utc};
use rand::seq::SliceRandom;
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::platform::*;
use crate::support::*;

const OTHER_SHOP: &str = "other-webhook-shop.myshopify.com";

/// `seconds` after a moment an hour before the tests began: inside the replay window.
fn at(seconds: i64) -> DateTime<Utc> {
    static START: LazyLock<DateTime<Utc>> =
        LazyLock::new(|| Utc::now().trunc_subsecs(0) - chrono::TimeDelta::hours(1));
    *START + chrono::TimeDelta::seconds(seconds)
}

/// A product webhook body as the platform sends it (a few of its many fields).
fn product_body(id: u64, title: &str, updated_at: DateTime<Utc>) -> Value {
    json!({
        "id": id,
        "admin_graphql_api_id": format!("gid://shopify/Product/{id}"),
        "title": title,
        "handle": format!("product-{id}"),
        "status": "active",
        "updated_at": updated_at.to_rfc3339(),
        "image": { "src": format!("https://cdn.example.com/{id}.jpg") },
        "variants": [{ "id": id * 10, "price": "19.00" }],
    })
}

async fn deliveries_recorded(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// `(id number, title)` of every product the catalog holds.
async fn products(app: &TestApp) -> Vec<(String, String)> {
    sqlx::query_as("SELECT gid, title FROM products WHERE shop_domain = $1 ORDER BY gid")
        .bind(SHOP)
        .fetch_all(&app.db)
        .await
        .unwrap()
}

fn gid(id: u64) -> String {
    format!("gid://shopify/Product/{id}")
}

#[tokio::test]
async fn a_delivery_whose_signature_is_missing_or_does_not_match_is_refused_and_does_nothing() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let body = product_body(1, "Shirt", at(0));
    let mut tampered = Delivery::new("products/create", &body);
    tampered.body = serde_json::to_vec(&product_body(1, "Free shirt", at(0))).unwrap();
    let mut wrong_secret = Delivery::new("products/create", &body);
    wrong_secret.hmac = Some(hmac_of("another-apps-secret", &wrong_secret.body));
    let mut unsigned = Delivery::new("products/create", &body);
    unsigned.hmac = None;
    let mut not_base64 = Delivery::new("products/create", &body);
    not_base64.hmac = Some("not base64!".into());

    for (case, delivery) in [
        ("tampered body", tampered),
        ("wrong secret", wrong_secret),
        ("no header", unsigned),
        ("not base64", not_base64),
    ] {
        // Act
        let response = delivery.send(&app).await;

        // Assert
        let (status, error) = json_of(response).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}: {error}");
        assert_eq!(error["error"]["code"], json!("INVALID_SIGNATURE"), "{case}");
    }
    wait_until_worked(&app).await;
    assert_eq!(deliveries_recorded(&app).await, 0);
    assert_eq!(products(&app).await, vec![]);
}

#[tokio::test]
async fn a_signed_delivery_with_a_header_or_body_the_service_cannot_take_is_a_400_naming_it() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let unknown_topic = Delivery::new("orders/create", &json!({}));
    let bad_body = Delivery::new("products/update", &json!({ "id": "shirt" }));

    // Act
    let topic = unknown_topic.send(&app).await;
    let body = bad_body.send(&app).await;

    // Assert
    assert_error(
        topic,
        StatusCode::BAD_REQUEST,
        "INVALID_PARAMETER",
        "X-Shopify-Topic",
    )
    .await;
    assert_error(body, StatusCode::BAD_REQUEST, "INVALID_BODY", "id").await;
    assert_eq!(deliveries_recorded(&app).await, 0);
}

#[tokio::test]
async fn the_same_delivery_twice_is_done_once() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let delivery = Delivery::new("products/create", &product_body(1, "Shirt", at(0)));
    let version = app.catalog_version(SHOP).await;

    // Act
    delivery.send_ok(&app).await;
    wait_until_worked(&app).await;
    delivery.send_ok(&app).await;
    wait_until_worked(&app).await;

    // Assert
    assert_eq!(deliveries_recorded(&app).await, 1);
    assert_eq!(products(&app).await, vec![(gid(1), "Shirt".into())]);
    assert_eq!(
        app.catalog_version(SHOP).await,
        version + 1,
        "one catalog write"
    );
}

#[tokio::test]
async fn a_product_state_older_than_the_one_held_or_than_its_deletion_does_not_win() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let deletion = |id: u64, when| {
        let mut d = Delivery::new("products/delete", &json!({ "id": id }));
        d.id = format!("delete-{id}-{when}");
        (d, when)
    };

    // Act: product 1's newer state arrives first; product 2 is deleted, then an update from
    // before the deletion arrives, then one from after it.
    Delivery::new("products/update", &product_body(1, "New", at(20)))
        .send_ok(&app)
        .await;
    Delivery::new("products/update", &product_body(1, "Old", at(10)))
        .send_ok(&app)
        .await;
    Delivery::new("products/create", &product_body(2, "Hat", at(0)))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;
    let (mut delete, when) = deletion(2, 30);
    send_triggered_at(&app, &mut delete, at(when)).await;
    Delivery::new("products/update", &product_body(2, "Late hat", at(25)))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;
    let after_delete = products(&app).await;
    Delivery::new("products/update", &product_body(2, "Hat again", at(40)))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;

    // Assert
    assert_eq!(after_delete, vec![(gid(1), "New".into())]);
    assert_eq!(
        products(&app).await,
        vec![(gid(1), "New".into()), (gid(2), "Hat again".into())]
    );
}

/// Sends `delivery` stamped `X-Shopify-Triggered-At: when`.
async fn send_triggered_at(app: &TestApp, delivery: &mut Delivery, when: DateTime<Utc>) {
    delivery.triggered_at = Some(when);
    delivery.send_ok(app).await;
}

#[tokio::test]
async fn a_burst_of_a_thousand_product_webhooks_leaves_each_products_last_state_on_the_storefront()
{
    // Arrange: 100 products, each with ten states, sent in a shuffled order, ten at a time.
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let ids: Vec<u64> = (1..=100).collect();
    let video = app
        .create_video(
            SHOP,
            json!({ "productIds": ids.iter().map(|id| gid(*id)).collect::<Vec<_>>() }),
        )
        .await;
    app.create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let mut deliveries: Vec<Delivery> = ids
        .iter()
        .flat_map(|&id| {
            (0..10).map(move |state| {
                let title = format!("Product {id} state {state}");
                Delivery::new("products/update", &product_body(id, &title, at(state)))
            })
        })
        .collect();
    deliveries.shuffle(&mut rand::thread_rng());
    let last_state: Vec<(String, String)> = ids
        .iter()
        .map(|id| (gid(*id), format!("Product {id} state 9")))
        .collect();

    // Act
    for chunk in deliveries.chunks(10) {
        futures::future::join_all(chunk.iter().map(|d| d.send_ok(&app))).await;
    }
    let answered = Instant::now();

    // Assert: the storefront shows every product's last state within a second of the last answer.
    let mut expected = last_state.clone();
    expected.sort();
    let within = Duration::from_secs(1).saturating_sub(answered.elapsed());
    let app = &app;
    let expected = &expected;
    eventually(
        "the storefront shows every product's last state",
        within,
        move || async move {
            let response = app
                .storefront("contextual-widgets", SHOP, &[("location", "home")])
                .await;
            let (_, body) = json_of(response).await;
            let shown = body["widgets"][0]["videos"][0]["products"]
                .as_array()
                .cloned();
            let titles: Vec<(String, String)> = shown
                .unwrap_or_default()
                .iter()
                .map(|p| {
                    (
                        p["id"].as_str().unwrap().to_string(),
                        p["title"].as_str().unwrap().to_string(),
                    )
                })
                .collect();
            let mut sorted = titles.clone();
            sorted.sort();
            match sorted == *expected {
                true => Ok(()),
                false => Err(format!("{} products, not every last state", titles.len())),
            }
        },
    )
    .await;
    wait_until_worked(app).await;
    let mut held = products(app).await;
    held.sort();
    let mut expected = last_state;
    expected.sort();
    assert_eq!(held, expected);
    assert_eq!(deliveries_recorded(app).await, 1000);
}

#[tokio::test]
async fn app_uninstalled_uninstalls_the_shop_and_revokes_its_keys() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let key = app.create_api_key(SHOP, "Reporting").await;
    let secret = key["key"].as_str().unwrap().to_string();

    // Act
    Delivery::new("app/uninstalled", &uninstalled_body(SHOP))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;

    // Assert
    let storefront = app
        .storefront("contextual-widgets", SHOP, &[("location", "home")])
        .await;
    assert_error(storefront, StatusCode::NOT_FOUND, "SHOP_NOT_FOUND", "").await;
    let analytics = app
        .client
        .get(app.url("/api/v1/analytics/summary"))
        .bearer_auth(secret)
        .send()
        .await
        .unwrap();
    assert_eq!(analytics.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn work_recorded_by_an_instance_that_stopped_before_doing_it_is_done_after_a_restart() {
    // Arrange: an instance that records deliveries and does no work, as one that died right
    // after its answers.
    let recorder = spawn_app_with(|s| s.webhook_work = false).await;
    recorder.create_shop(SHOP).await;
    Delivery::new("products/create", &product_body(1, "Shirt", at(0)))
        .send_ok(&recorder)
        .await;
    let before = products(&recorder).await;

    // Act
    let restarted = worker_after(recorder).await;
    wait_until_the_service_worked(&restarted).await;

    // Assert
    assert_eq!(before, vec![]);
    assert_eq!(products(&restarted).await, vec![(gid(1), "Shirt".into())]);
}

#[tokio::test]
async fn the_due_work_is_done_at_once_by_one_pass_of_the_worker() {
    // Arrange: an instance without a worker of its own records two deliveries.
    let app = spawn_app_with(|s| s.webhook_work = false).await;
    app.create_shop(SHOP).await;
    for (id, title) in [(1, "Shirt"), (2, "Hat")] {
        Delivery::new("products/create", &product_body(id, title, at(0)))
            .send_ok(&app)
            .await;
    }

    // Act
    let worked = app.work_webhooks().await;

    // Assert: done when the pass returns, and nothing is left due.
    assert_eq!(worked, 2);
    assert_eq!(
        products(&app).await,
        vec![(gid(1), "Shirt".into()), (gid(2), "Hat".into())]
    );
    assert_eq!(app.work_webhooks().await, 0);
}

#[tokio::test]
async fn failed_work_is_retried_with_backoff_and_counted_by_topic() {
    // Arrange: a service of its own, for its metrics; its removal table gone, so a deletion fails.
    let app = spawn_process_app(&[]).await;
    app.create_shop(SHOP).await;
    let db = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    sqlx::query("ALTER TABLE product_removals RENAME TO product_removals_away")
        .execute(&db)
        .await
        .unwrap();
    Delivery::new("products/create", &product_body(1, "Shirt", at(0)))
        .send_ok(&app)
        .await;
    let delete = Delivery::new("products/delete", &json!({ "id": 1 }));

    // Act
    delete.send_ok(&app).await;
    let failed = app
        .wait_for_metric(
            "webhooks_failed_total",
            &[("topic", "products/delete")],
            |v| v >= 1.0,
            Duration::from_secs(10),
        )
        .await;
    let (attempts, error): (i32, Option<String>) =
        sqlx::query_as("SELECT attempts, last_error FROM webhook_deliveries WHERE webhook_id = $1")
            .bind(&delete.id)
            .fetch_one(&db)
            .await
            .unwrap();
    sqlx::query("ALTER TABLE product_removals_away RENAME TO product_removals")
        .execute(&db)
        .await
        .unwrap();

    // Assert
    assert!(failed >= 1.0);
    assert!(attempts >= 1);
    assert!(
        error
            .as_deref()
            .is_some_and(|e| e.contains("product_removals")),
        "last error: {error:?}"
    );
    app.wait_for_metric(
        "webhooks_done_total",
        &[("topic", "products/delete")],
        |v| v == 1.0,
        Duration::from_secs(15),
    )
    .await;
    for topic in ["products/create", "products/delete"] {
        let received = app
            .metric("webhooks_received_total", &[("topic", topic)])
            .await;
        assert_eq!(received, Some(1.0), "{topic}");
    }
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM products")
        .fetch_one(&db)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

/// Whether the storefront still serves `shop` (an uninstalled shop answers `SHOP_NOT_FOUND`).
async fn storefront_serves(app: &TestApp, shop: &str) -> bool {
    let response = app
        .storefront("contextual-widgets", shop, &[("location", "home")])
        .await;
    response.status() == StatusCode::OK
}

#[tokio::test]
async fn a_merchants_session_token_signature_forges_no_uninstall_or_redaction_of_another_shop() {
    // Arrange: the merchant of SHOP gets a session token for their own shop, as App Bridge gives
    // it. Signed with the app's secret, its signature is the HMAC of `header.payload`.
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    app.create_api_key(OTHER_SHOP, "Reporting").await;
    let token = crate::support::platform::session_token_for(SHOP, PROXY_SECRET, |_| {});
    let (signed_part, signature) = token.rsplit_once('.').unwrap();
    let signature = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(signature)
        .unwrap();
    let forged_hmac = base64::engine::general_purpose::STANDARD.encode(signature);
    assert_eq!(forged_hmac, hmac_of(PROXY_SECRET, signed_part.as_bytes()));

    for topic in ["app/uninstalled", "shop/redact"] {
        // Act: the token's signed part as the body, its signature as the HMAC, the other shop in
        // the header.
        let mut forged = Delivery::of_bytes(topic, signed_part.as_bytes().to_vec());
        forged.shop = OTHER_SHOP;
        forged.hmac = Some(forged_hmac.clone());
        let response = forged.send(&app).await;

        // Assert
        assert_error(
            response,
            StatusCode::BAD_REQUEST,
            "INVALID_BODY",
            "body: not JSON",
        )
        .await;
    }
    wait_until_worked(&app).await;
    assert_eq!(deliveries_recorded(&app).await, 0);
    assert!(storefront_serves(&app, OTHER_SHOP).await);
    let keys: i64 = sqlx::query_scalar("SELECT count(*) FROM api_keys WHERE shop_domain = $1")
        .bind(OTHER_SHOP)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(keys, 1);
}

#[tokio::test]
async fn a_signed_body_that_names_another_shop_than_the_header_is_refused_and_does_nothing() {
    // Arrange: genuine payloads of SHOP, delivered as if for OTHER_SHOP.
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let cases = [
        (
            "app/uninstalled",
            uninstalled_body(SHOP),
            "myshopify_domain",
        ),
        (
            "shop/redact",
            json!({ "shop_id": 954889, "shop_domain": SHOP }),
            "shop_domain",
        ),
        (
            "customers/redact",
            json!({
                "shop_id": 954889,
                "shop_domain": SHOP,
                "customer": { "id": 191167, "email": "john@example.com", "phone": "555-625-1199" },
                "orders_to_redact": [299938],
            }),
            "shop_domain",
        ),
    ];

    for (topic, body, field) in cases {
        // Act
        let mut delivery = Delivery::new(topic, &body);
        delivery.shop = OTHER_SHOP;
        let response = delivery.send(&app).await;

        // Assert
        let message =
            format!("{field}: '{SHOP}' is not the shop of X-Shopify-Shop-Domain ({OTHER_SHOP})");
        assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", &message).await;
    }
    wait_until_worked(&app).await;
    assert_eq!(deliveries_recorded(&app).await, 0);
    assert!(storefront_serves(&app, OTHER_SHOP).await);
    assert!(storefront_serves(&app, SHOP).await);
}

#[tokio::test]
async fn a_delivery_sent_before_the_replay_window_or_without_its_time_is_refused_and_a_retry_is_not(
) {
    // Arrange: the default window, 6 hours; the platform retries for 4.
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let hours_ago = |hours| Some(Utc::now() - chrono::TimeDelta::hours(hours));
    let delivery = |triggered_at| {
        let mut d = Delivery::new("products/delete", &json!({ "id": 7 }));
        d.triggered_at = triggered_at;
        d
    };

    // Act
    let too_old = delivery(hours_ago(7)).send(&app).await;
    let ahead = delivery(hours_ago(-1)).send(&app).await;
    let undated = delivery(None).send(&app).await;
    let last_retry = delivery(hours_ago(5));
    last_retry.send_ok(&app).await;

    // Assert
    assert_error(
        too_old,
        StatusCode::BAD_REQUEST,
        "STALE_DELIVERY",
        "is more than 21600 seconds ago (the replay window)",
    )
    .await;
    assert_error(
        ahead,
        StatusCode::BAD_REQUEST,
        "STALE_DELIVERY",
        "is more than 300 seconds ahead of this service's clock",
    )
    .await;
    assert_error(
        undated,
        StatusCode::BAD_REQUEST,
        "INVALID_PARAMETER",
        "X-Shopify-Triggered-At: missing header",
    )
    .await;
    let recorded: Vec<String> = sqlx::query_scalar("SELECT webhook_id FROM webhook_deliveries")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(recorded, vec![last_retry.id]);
}
#[tokio::test]
async fn deliveries_whose_work_ended_before_the_retention_are_pruned_and_the_others_kept() {
    // Arrange: an instance that does no work (and so prunes nothing) records four deliveries:
    // one done and one given up three days ago, one done an hour ago, and one received three
    // days ago whose work is still to be done.
    let recorder = spawn_app_with(|s| s.webhook_work = false).await;
    for (id, received, done, failed) in [
        ("done-long-ago", "3 days", Some("3 days"), None),
        ("given-up-long-ago", "4 days", None, Some("3 days")),
        ("done-lately", "1 hour", Some("1 hour"), None),
        ("still-to-do", "3 days", None, None),
    ] {
        sqlx::query(
            "INSERT INTO webhook_deliveries \
             (webhook_id, shop_domain, topic, work, received_at, next_attempt_at, done_at, \
              failed_at) \
             VALUES ($1, $2, 'app/uninstalled', '{\"kind\": \"uninstall\"}', \
                     now() - $3::interval, now() + interval '1 day', \
                     now() - $4::interval, now() - $5::interval)",
        )
        .bind(id)
        .bind(SHOP)
        .bind(received)
        .bind(done)
        .bind(failed)
        .execute(&recorder.db)
        .await
        .unwrap();
    }

    // Act: an instance that works, with the default retention (48 hours).
    let worker = worker_after(recorder).await;

    // Assert
    let db = &worker.db;
    eventually(
        "only the deliveries within the retention are kept",
        Duration::from_secs(10),
        move || async move {
            let left: Vec<String> =
                sqlx::query_scalar("SELECT webhook_id FROM webhook_deliveries ORDER BY webhook_id")
                    .fetch_all(db)
                    .await
                    .unwrap();
            match left == ["done-lately", "still-to-do"] {
                true => Ok(()),
                false => Err(left),
            }
        },
    )
    .await;
}
