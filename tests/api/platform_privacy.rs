//! The mandatory privacy webhooks, proven by reading Postgres and ClickHouse afterwards: a data
//! request's report holds exactly the events the platform's signed customer id bound to the
//! customer; a customer's redaction deletes their raw events (and those of the orders it names)
//! and their reports, also events still on their way when it arrives, and leaves the aggregates
//! and every other customer's events; a shop's redaction leaves no row of the shop anywhere, also
//! with events on their way, and every row of another shop. A `logged_in_customer_id` that is not
//! a customer id is refused, however it is signed.

use std::time::{Duration, Instant};

use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;
use videoapp::storefront::signature::canonical_message;

use crate::support::fault_proxy::{FaultProxy, Mode};
use crate::support::platform::{wait_until_worked, worker_after, Delivery, SHOP};
use crate::support::*;

const OTHER_SHOP: &str = "other-webhook-shop.myshopify.com";
const SHIPPED_WITHIN: Duration = Duration::from_secs(30);
/// A deletion is a mutation per table, run by ClickHouse's background pool behind the merges of
/// every other test's tables: on a busy server one may take as long as the warehouse waits for it
/// (60 s) and be retried once.
const DELETED_WITHIN: Duration = Duration::from_secs(150);

/// What the customer (42) did, and what others did, with the ids of each event.
struct Activity {
    /// Bound to 42 by the platform's signed id, in session "a".
    bound: Vec<String>,
    /// A guest checkout of order 9001 (the platform's order of 42), in session "b".
    order: String,
    /// Customer 43 in the same session "a"; a logged-out browser in "a" before the login; and a
    /// logged-out browser, in session "x", whose body claims to be 42.
    others: Vec<String>,
}

fn event(kind: &str, session: &str, video: &str, extra: Value) -> (String, Value) {
    let id = Uuid::new_v4().to_string();
    let mut e = json!({ "eventId": id, "eventType": kind, "sessionId": session, "videoId": video });
    merge(&mut e, extra);
    (id, e)
}

/// `events` posted for `shop` as the app proxy sends them for `customer` (`None`: logged out).
async fn post_as(app: &impl Service, shop: &str, customer: Option<&str>, events: &[Value]) {
    let signed_in = signed(shop, &[("logged_in_customer_id", customer.unwrap_or(""))]);
    let url = app.url(&format!("/apps/videoapp_sub/analytics?{signed_in}"));
    let body = json!({ "events": events });
    let response = app.client.post(url).json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

fn ids(events: &[(String, Value)]) -> Vec<String> {
    events.iter().map(|(id, _)| id.clone()).collect()
}

fn bodies(events: &[(String, Value)]) -> Vec<Value> {
    events.iter().map(|(_, e)| e.clone()).collect()
}

/// Sends the activity for `shop`'s `video` and waits until ClickHouse holds it.
async fn act(app: &TestApp, shop: &str, video: &str) -> Activity {
    let checkout = json!({ "orderId": 9002, "revenue": 19.5, "currency": "USD" });
    let bound = [
        event("view", "a", video, json!({})),
        event("add_to_cart", "a", video, json!({})),
        event("checkout_completed", "a", video, checkout),
    ];
    let guest_checkout = json!({ "orderId": 9001, "revenue": 5, "currency": "USD" });
    let order = event("checkout_completed", "b", video, guest_checkout);
    let theirs = [event("view", "a", video, json!({}))];
    let before_login = [event("impression", "a", video, json!({}))];
    let claimer = [event("view", "x", video, json!({ "customerId": 42 }))];
    post_as(app, shop, Some("42"), &bodies(&bound)).await;
    post_as(app, shop, Some("43"), &bodies(&theirs)).await;
    let logged_out = [
        &before_login[..],
        &claimer[..],
        std::slice::from_ref(&order),
    ]
    .concat();
    post_as(app, shop, None, &bodies(&logged_out)).await;
    wait_until_shipped(app, SHIPPED_WITHIN).await;
    Activity {
        bound: ids(&bound),
        order: order.0,
        others: [ids(&theirs), ids(&before_login), ids(&claimer)].concat(),
    }
}

async fn ch(app: &impl Service, sql: &str) -> String {
    clickhouse_query(&app.clickhouse_database, sql).await
}

/// The ids of the shop's raw events, sorted as text.
async fn raw_event_ids(app: &impl Service, shop: &str) -> Vec<String> {
    let sql = format!(
        "SELECT toString(event_id) FROM events WHERE shop_domain = '{shop}' ORDER BY event_id"
    );
    let text = ch(app, &sql).await;
    sorted(text.lines().map(String::from).collect())
}

/// How many of the shop's raw events are bound to `customer`.
async fn events_of(app: &impl Service, shop: &str, customer: &str) -> u64 {
    let sql = format!(
        "SELECT count() FROM events WHERE shop_domain = '{shop}' AND customer_id = '{customer}'"
    );
    ch(app, &sql).await.parse().unwrap()
}

/// How many deletions ClickHouse was asked for in `table`, of those whose command is `like`.
async fn mutations(app: &impl Service, table: &str, like: &str) -> u64 {
    let database = &app.clickhouse_database;
    let sql = format!(
        "SELECT count() FROM system.mutations \
         WHERE database = '{database}' AND table = '{table}' AND command LIKE '{like}'"
    );
    ch(app, &sql).await.parse().unwrap()
}

/// Every aggregate's totals for the shop, as text: what a customer's redaction must not change.
async fn aggregates(app: &impl Service, shop: &str) -> String {
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

/// A service whose ClickHouse is reached through a fault proxy, each of `shops` showing a video.
async fn behind_a_proxy(shops: &[&str]) -> (FaultProxy, TestApp, Vec<String>) {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_app_with(|s| s.clickhouse_url = Some(proxy.url.parse().unwrap())).await;
    let mut videos = Vec::new();
    for shop in shops {
        videos.push(app.create_shop_showing_a_video(shop, json!({})).await.0);
    }
    (proxy, app, videos)
}

/// Whether every ClickHouse row a redaction deletes is gone: if not, what is left.
type Deleted<'a> =
    &'a dyn Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + 'a>>;

/// When a redaction arrives, for events received before it.
#[derive(Clone, Copy, PartialEq)]
enum Arrives {
    /// The events wait in the spool, ClickHouse away: the shipper has tried and failed.
    WhileSpooled,
    /// A batch of them is going in: the shipper has read the redactions (none yet) and waits to
    /// claim its events.
    WhileGoingIn,
}

/// Sends `delivery` when events are on their way (ClickHouse is away, and the shipper has failed
/// to insert them), as `arrives` says; holds the shipper's batch (its claims wait on a lock)
/// until the redaction's ClickHouse deletion is done (`deleted`), so that the batch goes in after
/// it; then waits until the spool is empty and every delivery is done.
/// Whether a transaction of the test's database waits for a lock on `table`.
fn lock_awaited(table: &str) -> String {
    format!(
        "SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_class c ON c.oid = l.relation \
         WHERE c.relname = '{table}' AND NOT l.granted \
         AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
    )
}

async fn redact_while_events_are_on_their_way(
    app: &TestApp,
    proxy: &FaultProxy,
    (delivery, arrives): (&Delivery, Arrives),
    deleted: Deleted<'_>,
) {
    proxy
        .wait_for_refusals(proxy.refused() + 2, SHIPPED_WITHIN)
        .await;
    let mut shipper_held = app.db.begin().await.unwrap();
    sqlx::query("LOCK TABLE event_claims IN SHARE MODE")
        .execute(&mut *shipper_held)
        .await
        .unwrap();
    let started = Instant::now();
    let wait_for = |sql: String, what: &'static str| async move {
        let (sql, db) = (&sql, &app.db);
        let within = SHIPPED_WITHIN.saturating_sub(started.elapsed());
        eventually(what, within, move || async move {
            let holds: bool = sqlx::query_scalar(sql).fetch_one(db).await.unwrap();
            holds.then_some(()).ok_or(holds)
        })
        .await
    };
    if arrives == Arrives::WhileGoingIn {
        proxy.set(Mode::Up);
        wait_for(
            lock_awaited("event_claims"),
            "the shipper never tried again",
        )
        .await;
    }
    delivery.send_ok(app).await;
    if arrives == Arrives::WhileSpooled {
        let failed = "SELECT EXISTS (SELECT 1 FROM webhook_deliveries \
                      WHERE topic LIKE '%redact' AND done_at IS NULL AND last_error IS NOT NULL)";
        wait_for(failed.to_string(), "the redaction never ran").await;
        proxy.set(Mode::Up);
    }
    let within = DELETED_WITHIN.saturating_sub(started.elapsed());
    eventually("the redaction's rows were deleted", within, deleted).await;
    let on_their_way = spooled_segments(&app.spool_dir);
    assert!(
        on_their_way > 0,
        "events are on their way after the deletion"
    );
    shipper_held.commit().await.unwrap();
    wait_until_shipped(app, SHIPPED_WITHIN).await;
    wait_until_worked(app).await;
}

#[tokio::test]
async fn a_data_request_reports_exactly_the_events_the_platform_bound_to_the_customer() {
    // Arrange: 42 and 43 in one session; a browser, logged out, that says it is 42.
    let app = spawn_app().await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let activity = act(&app, SHOP, &video).await;
    let request = json!({
        "shop_id": 954889,
        "shop_domain": SHOP,
        "orders_requested": [9001, 9002],
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
    let events = reports[0]["events"].as_array().unwrap();
    let reported: Vec<String> = (events.iter())
        .map(|e| e["eventId"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(sorted(reported), sorted(activity.bound));
    assert!(events.iter().all(|e| e["customerId"] == json!("42")));
    let checkout = (events.iter())
        .find(|e| e["eventType"] == json!("checkout_completed"))
        .unwrap();
    assert_eq!(checkout["orderId"], json!("9002"));
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

    // Assert: theirs, and their order's, are gone; the others' stay, the browser's claim too.
    assert_eq!(raw_event_ids(&app, SHOP).await, sorted(activity.others));
    assert!(!raw_event_ids(&app, SHOP).await.contains(&activity.order));
    assert_eq!(aggregates(&app, SHOP).await, before);
}

#[tokio::test]
async fn a_customer_redaction_deletes_their_reports_and_their_events_still_spooled() {
    customer_redaction_with_events_on_their_way(Arrives::WhileSpooled).await;
}

#[tokio::test]
async fn a_customer_redaction_deletes_their_events_of_a_batch_going_in_meanwhile() {
    customer_redaction_with_events_on_their_way(Arrives::WhileGoingIn).await;
}

async fn customer_redaction_with_events_on_their_way(arrives: Arrives) {
    // Arrange: 42 and 43 each have events in ClickHouse and a report; then, with ClickHouse
    // away, 50 more events each are on their way when 42's redaction arrives.
    let (proxy, app, videos) = behind_a_proxy(&[SHOP]).await;
    let views = |session: &str, n: usize| -> Vec<Value> {
        let view = |_| event("view", session, &videos[0], json!({})).1;
        (0..n).map(view).collect()
    };
    post_as(&app, SHOP, Some("42"), &views("s-42", 3)).await;
    post_as(&app, SHOP, Some("43"), &views("s-43", 3)).await;
    wait_until_shipped(&app, SHIPPED_WITHIN).await;
    for (customer, request) in [(42, 1), (43, 2)] {
        let body = json!({ "shop_id": 954889, "shop_domain": SHOP, "customer": { "id": customer },
                           "data_request": { "id": request } });
        Delivery::new("customers/data_request", &body)
            .send_ok(&app)
            .await;
    }
    wait_until_worked(&app).await;
    proxy.set(Mode::Down);
    post_as(&app, SHOP, Some("42"), &views("s-42", 50)).await;
    post_as(&app, SHOP, Some("43"), &views("s-43", 50)).await;

    // Act
    let redact = json!({ "shop_id": 954889, "shop_domain": SHOP, "customer": { "id": 42 }, "orders_to_redact": [] });
    let redact = Delivery::new("customers/redact", &redact);
    let deleted = || {
        Box::pin(async {
            match events_of(&app, SHOP, "42").await {
                0 => Ok(()),
                n => Err(format!("{n} events of the customer")),
            }
        }) as _
    };
    redact_while_events_are_on_their_way(&app, &proxy, (&redact, arrives), &deleted).await;

    // Assert: nothing of 42 survives, in ClickHouse, in the reports or in finished work; every
    // event and the report of 43 do.
    assert_eq!(events_of(&app, SHOP, "42").await, 0);
    assert_eq!(events_of(&app, SHOP, "43").await, 53);
    let reports: Vec<String> =
        sqlx::query_scalar("SELECT customer_id FROM privacy_reports ORDER BY customer_id")
            .fetch_all(&app.db)
            .await
            .unwrap();
    assert_eq!(reports, ["43"]);
    let naming_42: Vec<String> = sqlx::query_scalar(
        "SELECT topic FROM webhook_deliveries WHERE work -> 'customer' -> 'ids' ? '42'",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(naming_42, ["customers/redact"]);
    // Spooled, they were dropped before the insert; going in, the batch's rows were deleted.
    let batch_deletions = mutations(&app, "events", "%batch_id%").await;
    assert_eq!(batch_deletions, u64::from(arrives == Arrives::WhileGoingIn));
}

/// The count of each table's rows of `shop` in Postgres.
async fn postgres_rows(app: &TestApp, shop: &str) -> Vec<(&'static str, i64)> {
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
        ("redacted_customers", "shop_domain"),
        ("webhook_deliveries", "shop_domain"),
    ] {
        let sql = format!("SELECT count(*) FROM {table} WHERE {column} = $1");
        let n: i64 = sqlx::query_scalar(&sql)
            .bind(shop)
            .fetch_one(&app.db)
            .await
            .unwrap();
        counts.push((table, n));
    }
    counts
}

#[tokio::test]
async fn a_shop_redaction_leaves_no_row_of_the_shop_and_every_row_of_another() {
    shop_redaction_with_events_on_their_way(Arrives::WhileSpooled).await;
}

#[tokio::test]
async fn a_shop_redaction_leaves_no_row_of_a_batch_going_in_meanwhile() {
    shop_redaction_with_events_on_their_way(Arrives::WhileGoingIn).await;
}

async fn shop_redaction_with_events_on_their_way(arrives: Arrives) {
    // Arrange: two shops with a catalog, a key, events, a report, a customer's redaction and
    // deliveries; then, with ClickHouse away, events of both wait in the spool.
    let (proxy, app, videos) = behind_a_proxy(&[SHOP, OTHER_SHOP]).await;
    for (shop, video) in [SHOP, OTHER_SHOP].into_iter().zip(&videos) {
        app.create_api_key(shop, "Reporting").await;
        act(&app, shop, video).await;
        for (topic, body) in [
            (
                "customers/data_request",
                json!({ "shop_id": 954889, "shop_domain": shop, "customer": { "id": 42 }, "data_request": { "id": 1 } }),
            ),
            (
                "customers/redact",
                json!({ "shop_id": 954889, "shop_domain": shop, "customer": { "id": 43 } }),
            ),
        ] {
            let mut delivery = Delivery::new(topic, &body);
            delivery.shop = shop;
            delivery.send_ok(&app).await;
        }
    }
    wait_until_worked(&app).await;
    let other_before = postgres_rows(&app, OTHER_SHOP).await;
    let other_events = raw_event_ids(&app, OTHER_SHOP).await;
    // An aggregate by one dimension counts each event once per dimension: one of them is read.
    let views_in = |table: &str| {
        let one = if table.ends_with("_by_dimension") {
            " AND dimension = 'device'"
        } else {
            ""
        };
        format!("SELECT sum(views) FROM {table} WHERE shop_domain = '{OTHER_SHOP}'{one}")
    };
    let mut other_views = Vec::new();
    for table in videoapp::warehouse::AGGREGATES {
        let views: u64 = ch(&app, &views_in(table)).await.parse().unwrap();
        other_views.push((table, views));
    }
    proxy.set(Mode::Down);
    let mut on_the_way = Vec::new();
    for (shop, video) in [SHOP, OTHER_SHOP].into_iter().zip(&videos) {
        let events: Vec<(String, Value)> = (0..5)
            .map(|_| event("view", "late", video, json!({})))
            .collect();
        post_as(&app, shop, Some("44"), &bodies(&events)).await;
        on_the_way.push(ids(&events));
    }

    // Act: the merchant uninstalls the app; the platform asks for the shop's redaction later.
    let uninstalled = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    assert_eq!(uninstalled.status(), StatusCode::NO_CONTENT);
    let mut redact = Delivery::new("shop/redact", &json!({ "shop_id": 1, "shop_domain": SHOP }));
    redact.shop = SHOP;
    let deleted = || {
        Box::pin(async {
            for table in videoapp::warehouse::privacy::shop_tables() {
                let sql = format!("SELECT count() FROM {table} WHERE shop_domain = '{SHOP}'");
                let rows = ch(&app, &sql).await;
                if rows != "0" {
                    return Err(format!("{rows} rows of the shop in {table}"));
                }
            }
            Ok(())
        }) as _
    };
    redact_while_events_are_on_their_way(&app, &proxy, (&redact, arrives), &deleted).await;

    // Assert: Postgres holds only the redaction's own delivery, ClickHouse nothing of the shop.
    for (table, n) in postgres_rows(&app, SHOP).await {
        let expected = i64::from(table == "webhook_deliveries");
        assert_eq!(n, expected, "{table}");
    }
    for table in videoapp::warehouse::privacy::shop_tables() {
        let sql = format!("SELECT count() FROM {table} WHERE shop_domain = '{SHOP}'");
        assert_eq!(ch(&app, &sql).await, "0", "{table}");
    }
    // Spooled, they were dropped before the insert; going in, the shop was deleted again (once
    // for each attempt of that insert, and a retried attempt is the shipper's right).
    let shop_deletions = mutations(&app, "video_daily", "%").await;
    match arrives {
        Arrives::WhileGoingIn => assert!(shop_deletions >= 2, "{shop_deletions} deletions"),
        Arrives::WhileSpooled => assert_eq!(shop_deletions, 1),
    }
    // The other shop keeps every row, and gains its events that were on their way.
    let other_after = postgres_rows(&app, OTHER_SHOP).await;
    for ((table, before), (_, after)) in other_before.iter().zip(&other_after) {
        match *table {
            "event_claims" => assert_eq!(*after, before + 5, "{table}"),
            "analytics_days" => assert!(after >= before, "{table}"),
            // An insert that failed keeps its marks until their lease.
            "analytics_inserts" => {}
            _ => assert_eq!(after, before, "{table}"),
        }
    }
    let expected = sorted([other_events, on_the_way[1].clone()].concat());
    assert_eq!(raw_event_ids(&app, OTHER_SHOP).await, expected);
    for (table, before) in other_views {
        let after: u64 = ch(&app, &views_in(table)).await.parse().unwrap();
        assert_eq!(after, before + 5, "{table}");
    }
}

/// A signed analytics request whose query is `pairs` (and the signature of `signed_as`).
async fn post_resplit(app: &TestApp, signed_as: &str, pairs: &[(&str, &str)]) -> Response {
    let signature = signed_as.rsplit_once("&signature=").unwrap().1;
    let signed_pairs: Vec<(String, String)> = url::form_urlencoded::parse(signed_as.as_bytes())
        .into_owned()
        .filter(|(key, _)| key != "signature")
        .collect();
    let signed_pairs = signed_pairs.iter().map(|(k, v)| (k.as_str(), v.as_str()));
    // Split another way, the same signed string: the signature holds.
    assert_eq!(
        canonical_message(pairs.iter().copied()),
        canonical_message(signed_pairs)
    );
    let mut query = url::form_urlencoded::Serializer::new(String::new());
    query.extend_pairs(pairs);
    query.append_pair("signature", signature);
    let url = app.url(&format!("/apps/videoapp_sub/analytics?{}", query.finish()));
    let body = json!({ "eventType": "view" });
    app.client.post(url).json(&body).send().await.unwrap()
}

#[tokio::test]
async fn a_logged_in_customer_id_that_is_not_a_customer_id_is_refused_however_signed() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let post = |customer: &str| {
        let signed_in = signed(SHOP, &[("logged_in_customer_id", customer)]);
        let url = app.url(&format!("/apps/videoapp_sub/analytics?{signed_in}"));
        app.client
            .post(url)
            .json(&json!({ "eventType": "view" }))
            .send()
    };
    let refused = |response| {
        let needle = "logged_in_customer_id";
        assert_error(
            response,
            StatusCode::BAD_REQUEST,
            "INVALID_PARAMETER",
            needle,
        )
    };

    // Act / Assert: a customer id is digits, at most 20 of them.
    assert_eq!(post("42").await.unwrap().status(), StatusCode::ACCEPTED);
    assert_eq!(post("").await.unwrap().status(), StatusCode::ACCEPTED);
    let twenty = "12345678901234567890";
    assert_eq!(post(twenty).await.unwrap().status(), StatusCode::ACCEPTED);
    for not_an_id in [
        "abc",
        "gid://shopify/Customer/42",
        "4 2",
        "-42",
        "123456789012345678901",
    ] {
        refused(post(not_an_id).await.unwrap()).await;
    }

    // A logged-out shopper's query split again, so that the customer id takes in the next piece.
    let logged_out = signed(SHOP, &[("logged_in_customer_id", "")]);
    let timestamp = url::form_urlencoded::parse(logged_out.as_bytes())
        .find(|(key, _)| key == "timestamp")
        .unwrap()
        .1
        .into_owned();
    let smuggled = [
        ("logged_in_customer_id", "path_prefix=/apps/videoapp_sub"),
        ("shop", SHOP),
        ("timestamp", timestamp.as_str()),
    ];
    refused(post_resplit(&app, &logged_out, &smuggled).await).await;
    // And a logged-in one's, so that 42 takes in what follows it.
    let logged_in = signed(SHOP, &[("logged_in_customer_id", "42")]);
    let timestamp = url::form_urlencoded::parse(logged_in.as_bytes())
        .find(|(key, _)| key == "timestamp")
        .unwrap()
        .1
        .into_owned();
    let smuggled = [
        ("logged_in_customer_id", "42path_prefix=/apps/videoapp_sub"),
        ("shop", SHOP),
        ("timestamp", timestamp.as_str()),
    ];
    refused(post_resplit(&app, &logged_in, &smuggled).await).await;
}

/// A redaction's record exists only to catch what was on its way when it arrived: 30 days after
/// its request the worker forgets it, so nothing of the shop or the customer stays for good.
#[tokio::test]
async fn the_records_of_redactions_are_forgotten_thirty_days_after_their_request() {
    // Arrange: an instance that does no work records a shop's and two customers' redactions,
    // one of each past 30 days.
    let recorder = spawn_app_with(|s| s.webhook_work = false).await;
    for (shop, age) in [(SHOP, "31 days"), (OTHER_SHOP, "29 days")] {
        sqlx::query(
            "INSERT INTO redacted_shops (shop_domain, redacted_at) \
             VALUES ($1, now() - $2::interval)",
        )
        .bind(shop)
        .bind(age)
        .execute(&recorder.db)
        .await
        .unwrap();
    }
    for (customer, age) in [("42", "31 days"), ("43", "29 days")] {
        sqlx::query(
            "INSERT INTO redacted_customers \
             (shop_domain, customer_id, customer_ids, order_ids, redacted_at) \
             VALUES ($1, $2, ARRAY[$2], ARRAY[]::text[], now() - $3::interval)",
        )
        .bind("third-shop.myshopify.com")
        .bind(customer)
        .bind(age)
        .execute(&recorder.db)
        .await
        .unwrap();
    }

    // Act: an instance that works.
    let worker = worker_after(recorder).await;

    // Assert
    let left = || async {
        let shops: Vec<String> =
            sqlx::query_scalar("SELECT shop_domain FROM redacted_shops ORDER BY 1")
                .fetch_all(&worker.db)
                .await
                .unwrap();
        let customers: Vec<String> =
            sqlx::query_scalar("SELECT customer_id FROM redacted_customers ORDER BY 1")
                .fetch_all(&worker.db)
                .await
                .unwrap();
        (shops, customers)
    };
    let left = &left;
    eventually(
        "only the redactions within their time are kept",
        Duration::from_secs(10),
        move || async move {
            let (shops, customers) = left().await;
            match shops == [OTHER_SHOP] && customers == ["43"] {
                true => Ok(()),
                false => Err((shops, customers)),
            }
        },
    )
    .await;
}

/// The platform asks for a shop's redaction only after its uninstall. A `shop/redact` for an
/// installed shop (a captured delivery sent again: its id and time are not signed) erases
/// nothing, and is not retried.
#[tokio::test]
async fn a_shop_redaction_for_an_installed_shop_erases_nothing() {
    // Arrange: an installed shop with a catalog, a key and events.
    let app = spawn_app().await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    app.create_api_key(SHOP, "Reporting").await;
    act(&app, SHOP, &video).await;
    let before = raw_event_ids(&app, SHOP).await;
    assert!(!before.is_empty());

    // Act
    let mut redact = Delivery::new("shop/redact", &json!({ "shop_id": 1, "shop_domain": SHOP }));
    redact.shop = SHOP;
    redact.send_ok(&app).await;
    wait_until_worked(&app).await;

    // Assert: the shop, its key, its catalog and its events are all there; nothing is recorded
    // as redacted.
    assert_eq!(raw_event_ids(&app, SHOP).await, before);
    let shop = app.send_admin(Method::GET, &format!("/shops/{SHOP}")).await;
    assert_eq!(shop.status(), StatusCode::OK);
    assert_eq!(
        app.admin_list(&format!("/shops/{SHOP}/videos"), "videos")
            .await
            .len(),
        1
    );
    let keys: i64 = sqlx::query_scalar("SELECT count(*) FROM api_keys WHERE shop_domain = $1")
        .bind(SHOP)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(keys, 1);
    let redacted: i64 = sqlx::query_scalar("SELECT count(*) FROM redacted_shops")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(redacted, 0);
}

/// A data request worked on while the customer's redaction (of an earlier request, on another
/// instance) deletes their events reads the events only once no redaction can be half-way: it
/// never keeps a report of events the redaction removes.
#[tokio::test]
async fn a_data_request_racing_a_redaction_reports_none_of_the_events_it_removes() {
    // Arrange: 42's events are held; the redactions are locked as a redaction's deletion of
    // reports locks them, so the data request waits for it.
    let app = spawn_app().await;
    let (video, _) = app.create_shop_showing_a_video(SHOP, json!({})).await;
    let activity = act(&app, SHOP, &video).await;
    assert!(!activity.bound.is_empty());
    let mut redaction = app.db.begin().await.unwrap();
    sqlx::query("LOCK TABLE redacted_customers IN SHARE ROW EXCLUSIVE MODE")
        .execute(&mut *redaction)
        .await
        .unwrap();

    // Act: the data request arrives and its worker waits on the lock; meanwhile the redaction,
    // asked for an hour before, is recorded, deletes 42's events and ends.
    let request = json!({
        "shop_id": 954889,
        "shop_domain": SHOP,
        "customer": { "id": 42 },
        "data_request": { "id": 7777 },
    });
    Delivery::new("customers/data_request", &request)
        .send_ok(&app)
        .await;
    let (sql, db) = (&lock_awaited("redacted_customers"), &app.db);
    eventually("the request waited", SHIPPED_WITHIN, move || async move {
        let waiting: bool = sqlx::query_scalar(sql).fetch_one(db).await.unwrap();
        waiting.then_some(()).ok_or(waiting)
    })
    .await;
    sqlx::query(
        "INSERT INTO redacted_customers \
         (shop_domain, customer_id, customer_ids, order_ids, redacted_at) \
         VALUES ($1, '42', ARRAY['42'], ARRAY[]::text[], now() - interval '1 hour')",
    )
    .bind(SHOP)
    .execute(&mut *redaction)
    .await
    .unwrap();
    let warehouse = warehouse_on(&clickhouse_url(), &app.clickhouse_database, None);
    let customer = videoapp::warehouse::privacy::Customer {
        ids: vec!["42".into()],
        order_ids: vec![],
    };
    videoapp::warehouse::privacy::redact_customer(&warehouse, SHOP, &customer, i64::MAX)
        .await
        .unwrap();
    assert_eq!(events_of(&app, SHOP, "42").await, 0);
    redaction.commit().await.unwrap();
    wait_until_worked(&app).await;

    // Assert: the report was written after the redaction, and holds none of its events.
    let reports = app
        .admin_list(&format!("/shops/{SHOP}/privacy-reports"), "reports")
        .await;
    assert_eq!(reports.len(), 1, "{reports:?}");
    assert_eq!(reports[0]["events"], json!([]), "{reports:?}");
}
