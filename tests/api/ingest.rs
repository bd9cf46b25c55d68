//! Event ingestion against the real servers: every test ends by counting rows in ClickHouse.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::stream::{self, StreamExt};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::fault_proxy::{FaultProxy, Mode};
use crate::support::*;

const SHOP: &str = "ingest-shop.myshopify.com";

async fn count(database: &str, filter: &str) -> u64 {
    clickhouse_query(database, &format!("SELECT count() FROM events {filter}"))
        .await
        .parse()
        .unwrap()
}

/// Waits until the app's spool holds nothing, never seeing more than `expected` rows in `events`
/// on the way, then checks that `events` holds exactly `expected`. With the spool empty every
/// acknowledged event was inserted and every insert returned: nothing late (a retried batch, a
/// replay) can still add to it.
async fn expect_rows(app: &impl Service, expected: u64, within: Duration) {
    let database = &app.clickhouse_database;
    let spool = &app.spool_dir;
    eventually("the spool drained", within, move || async move {
        if spooled_segments(spool) == 0 {
            return Ok(());
        }
        let n = count(database, "").await;
        assert!(
            n <= expected,
            "{n} rows, more than the {expected} acknowledged"
        );
        Err(format!("{n} of {expected} rows, and still spooled"))
    })
    .await;
    assert_eq!(count(database, "").await, expected);
}

async fn no_duplicate_event_ids(database: &str) {
    let duplicates = clickhouse_query(
        database,
        "SELECT count() FROM (SELECT event_id FROM events GROUP BY event_id HAVING count() > 1)",
    )
    .await;
    assert_eq!(duplicates, "0", "some event arrived twice");
}

fn event(n: usize) -> Value {
    let kinds = [
        "impression",
        "view",
        "click",
        "add_to_cart",
        "checkout_completed",
    ];
    let kind = kinds[n % kinds.len()];
    let event_id = Uuid::new_v4();
    let mut e = json!({
        "eventId": event_id,
        "eventType": kind,
        "videoId": format!("video-{}", n % 7),
        "widgetId": format!("widget-{}", n % 3),
        "sessionId": format!("session-{}", n % 50),
    });
    if kind == "checkout_completed" {
        e["revenue"] = json!(0.10);
        e["currency"] = json!("USD");
        // Each order its own (an order is counted once), numeric as the platform's are.
        e["orderId"] = json!(event_id.as_u64_pair().0 >> 12);
    }
    e
}

fn event_id(event: &Value) -> Uuid {
    Uuid::parse_str(event["eventId"].as_str().unwrap()).unwrap()
}

fn spool_files(app: &impl Service) -> usize {
    spooled_segments(&app.spool_dir)
}

/// Posts `requests` batches of `per_request` events with up to 32 in flight; returns the ids of
/// the acknowledged events and the statuses of the rest.
async fn post_many(
    app: &impl Service,
    requests: usize,
    per_request: usize,
) -> (Vec<Uuid>, Vec<StatusCode>) {
    let results: Vec<(StatusCode, Vec<Uuid>)> = stream::iter(0..requests)
        .map(|r| async move {
            let events: Vec<Value> = (0..per_request)
                .map(|i| event(r * per_request + i))
                .collect();
            let ids = events
                .iter()
                .map(|e| Uuid::parse_str(e["eventId"].as_str().unwrap()).unwrap())
                .collect();
            let response = app.post_events(SHOP, &json!({ "events": events })).await;
            (response.status(), ids)
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let mut acknowledged = Vec::new();
    let mut refused = Vec::new();
    for (status, ids) in results {
        if status == StatusCode::ACCEPTED {
            acknowledged.extend(ids);
        } else {
            refused.push(status);
        }
    }
    (acknowledged, refused)
}

// ---- 6a ---------------------------------------------------------------------------------------

#[tokio::test]
async fn events_posted_concurrently_arrive_exactly_once_and_the_views_agree_with_the_raw_rows() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    let (acknowledged, refused) = post_many(&app, 100, 20).await;
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(acknowledged.len(), 2000);

    expect_rows(&app, 2000, Duration::from_secs(30)).await;
    no_duplicate_event_ids(&app.clickhouse_database).await;
    let db = &app.clickhouse_database;
    let raw = clickhouse_query(
        db,
        "SELECT countIf(event_type = 'impression'), countIf(event_type = 'view'), countIf(event_type = 'click'), \
         countIf(event_type = 'add_to_cart'), countIf(event_type = 'checkout_completed'), \
         sumIf(revenue_e4, event_type = 'checkout_completed') FROM events",
    )
    .await;
    for view in ["video_daily", "widget_daily"] {
        let summed = clickhouse_query(
            db,
            &format!("SELECT sum(impressions), sum(views), sum(clicks), sum(add_to_cart), sum(orders), sum(revenue_e4) FROM {view}"),
        )
        .await;
        assert_eq!(summed, raw, "{view} disagrees with the raw rows");
    }
    // 400 checkouts of 0.10 each: exactly 40.00, kept as 400000 ten-thousandths.
    assert!(raw.ends_with("\t400000"), "{raw}");
}

// ---- 6b ---------------------------------------------------------------------------------------

#[tokio::test]
async fn events_acknowledged_while_clickhouse_is_unreachable_arrive_exactly_once_when_it_returns() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_app_with(|s| s.clickhouse_url = Some(proxy.url.parse().unwrap())).await;
    app.create_shop(SHOP).await;
    proxy.set(Mode::Down);

    let (acknowledged, refused) = post_many(&app, 30, 10).await;
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(acknowledged.len(), 300);
    // The shipper has tried, and been refused, twice since the last acknowledgement.
    proxy
        .wait_for_refusals(proxy.refused() + 2, Duration::from_secs(30))
        .await;
    assert_eq!(
        count(&app.clickhouse_database, "").await,
        0,
        "nothing can have arrived"
    );
    assert!(spool_files(&app) > 0, "the events wait in the spool");

    proxy.set(Mode::Up);
    expect_rows(&app, 300, Duration::from_secs(30)).await;
    no_duplicate_event_ids(&app.clickhouse_database).await;
}

/// The marks of inserts into ClickHouse that still count for `SHOP` (`changes::inserting`).
async fn marks_counting(db: &sqlx::PgPool) -> i64 {
    let sql = "SELECT count(*) FROM analytics_inserts WHERE shop_domain = $1 AND until > now()";
    let query = sqlx::query_scalar(sql).bind(SHOP);
    query.fetch_one(db).await.unwrap()
}

/// Waits until the service has seen an insert fail: a batch's first attempt is an insert, so from
/// then on no answer to it can still be on its way.
async fn an_insert_failed(app: &ProcessApp, within: Duration) {
    let (failures, failed) = ([("kind", "transient")], |n: f64| n >= 1.0);
    app.wait_for_metric(
        "clickhouse_insert_failures_total",
        &failures,
        failed,
        within,
    )
    .await;
}

#[tokio::test]
async fn an_insert_marks_its_shop_as_being_written_until_it_returns() {
    // Arrange
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_process_app(&[("CLICKHOUSE_URL", proxy.url.clone())]).await;
    app.create_shop(SHOP).await;
    let db = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    proxy.set(Mode::Down);

    // Act: the insert cannot return while ClickHouse is away; then one that does.
    let (away, _) = post_many(&app, 2, 10).await;
    let within = Duration::from_secs(30);
    an_insert_failed(&app, within).await;
    let while_away = marks_counting(&db).await;
    proxy.set(Mode::Up);
    expect_rows(&app, away.len() as u64, within).await;
    let after_landing = marks_counting(&db).await;
    let (answered, _) = post_many(&app, 2, 10).await;
    expect_rows(&app, (away.len() + answered.len()) as u64, within).await;

    // Assert: an attempt that never returned may still be writing, so its marks stay until
    // their lease runs out; one that returned takes its own back.
    assert!(while_away > 0, "the shop is marked while its batch goes in");
    assert_eq!(
        marks_counting(&db).await,
        after_landing,
        "the answered insert's marks are gone"
    );
}

#[tokio::test]
async fn an_insert_that_never_answered_keeps_its_marks_after_its_batch_lands() {
    // Arrange: ClickHouse does every insert, but the service never hears that it did, so for all
    // the service knows each may still be writing.
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_process_app(&[("CLICKHOUSE_URL", proxy.url.clone())]).await;
    app.create_shop(SHOP).await;
    let db = sqlx::PgPool::connect(&app.database_url).await.unwrap();
    proxy.set(Mode::SwallowResponses);

    // Act: answers come back once the shipper has seen an insert fail.
    let (acknowledged, _) = post_many(&app, 2, 10).await;
    let within = Duration::from_secs(30);
    an_insert_failed(&app, within).await;
    proxy.set(Mode::Up);
    expect_rows(&app, acknowledged.len() as u64, within).await;

    // Assert: the retry found its rows landed and recorded the days; the unanswered inserts'
    // marks stay until their lease (the insert timeout and a minute) runs out.
    let days: i64 =
        sqlx::query_scalar("SELECT count(*) FROM analytics_days WHERE shop_domain = $1")
            .bind(SHOP)
            .fetch_one(&db)
            .await
            .unwrap();
    assert!(
        marks_counting(&db).await > 0,
        "the unanswered inserts are still marked"
    );
    assert!(days > 0, "the batch's days are recorded");
}

#[tokio::test]
async fn a_batch_that_landed_without_an_answer_is_not_counted_twice() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_app_with(|s| s.clickhouse_url = Some(proxy.url.parse().unwrap())).await;
    app.create_shop(SHOP).await;
    // ClickHouse does every insert, but the service never hears that it did.
    proxy.set(Mode::SwallowResponses);

    let (acknowledged, _) = post_many(&app, 10, 10).await;
    assert_eq!(acknowledged.len(), 100);
    let database = &app.clickhouse_database;
    eventually(
        "the swallowed inserts did land",
        Duration::from_secs(20),
        move || async move {
            let n = count(database, "").await;
            (n >= 100).then_some(()).ok_or(n)
        },
    )
    .await;
    assert!(
        spool_files(&app) > 0,
        "unacknowledged batches are still spooled"
    );

    proxy.set(Mode::Up);
    // The retries find their rows already there and insert nothing.
    expect_rows(&app, 100, Duration::from_secs(30)).await;
    no_duplicate_event_ids(&app.clickhouse_database).await;
    let views = clickhouse_query(
        &app.clickhouse_database,
        "SELECT sum(impressions + views + clicks + add_to_cart + orders) FROM video_daily",
    )
    .await;
    assert_eq!(views, "100", "the views count each event once too");
}

// ---- 6c ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_service_killed_mid_load_delivers_every_acknowledged_event_exactly_once_after_restart() {
    let database_url = fresh_database().await;
    let clickhouse_database = fresh_clickhouse_database();
    let spool_dir = fresh_spool_dir();
    let env = vec![
        ("DATABASE_URL", database_url.clone()),
        ("CLICKHOUSE_URL", clickhouse_url()),
        ("CLICKHOUSE_DATABASE", clickhouse_database.clone()),
        ("VIDEOAPP_SPOOL_DIR", spool_dir.display().to_string()),
        ("VIDEOAPP_BATCH_MAX_AGE_MS", "50".to_string()),
        ("VIDEOAPP_BATCH_MAX_ROWS", "200".to_string()),
    ];
    let mut service = spawn_binary(&env);
    let client = reqwest::Client::new();
    let admin = client
        .put(format!("{}/admin/v1/shops/{SHOP}", service.address))
        .bearer_auth(ADMIN_TOKEN)
        .json(&json!({}))
        .send()
        .await
        .unwrap();
    assert!(admin.status().is_success());

    // Load from 16 senders until the kill; each remembers what was acknowledged.
    let address = service.address.clone();
    let acknowledged_so_far = Arc::new(AtomicUsize::new(0));
    let senders: Vec<_> = (0..16)
        .map(|_| {
            let client = client.clone();
            let address = address.clone();
            let so_far = acknowledged_so_far.clone();
            tokio::spawn(async move {
                let mut acknowledged = Vec::new();
                for r in 0.. {
                    let events: Vec<Value> = (0..5).map(|i| event(r * 5 + i)).collect();
                    let url = format!(
                        "{address}/apps/videoapp_sub/analytics?{}",
                        signed(SHOP, &[])
                    );
                    match client
                        .post(url)
                        .json(&json!({ "events": events }))
                        .send()
                        .await
                    {
                        Ok(r) if r.status() == StatusCode::ACCEPTED => {
                            acknowledged.extend(events.iter().map(event_id));
                            so_far.fetch_add(events.len(), Ordering::SeqCst);
                        }
                        Ok(_) => {}
                        Err(_) => break, // the service is gone
                    }
                }
                acknowledged
            })
        })
        .collect();
    // Kill it mid-load: once the load has run a while, some of it has reached ClickHouse and
    // some is still spooled.
    let (acknowledged_so_far, database, spool) =
        (&acknowledged_so_far, &clickhouse_database, &spool_dir);
    eventually(
        "the load got going",
        Duration::from_secs(60),
        move || async move {
            let acknowledged = acknowledged_so_far.load(Ordering::SeqCst);
            if acknowledged >= 1000 && count(database, "").await > 0 && spooled_segments(spool) > 0
            {
                return Ok(());
            }
            Err(format!("{acknowledged} acknowledged"))
        },
    )
    .await;
    service.child.kill().unwrap(); // SIGKILL
    service.child.wait().unwrap();
    let mut acknowledged: Vec<Uuid> = Vec::new();
    for sender in senders {
        acknowledged.extend(sender.await.unwrap());
    }
    assert!(
        acknowledged.len() > 100,
        "the load ran ({} acknowledged)",
        acknowledged.len()
    );

    let restarted = spawn_binary(&env);
    let expected: HashSet<Uuid> = acknowledged.iter().copied().collect();
    let (expected, database) = (&expected, &clickhouse_database);
    eventually(
        "every acknowledged event landed",
        Duration::from_secs(30),
        move || async move {
            let landed: HashSet<Uuid> =
                clickhouse_query(database, "SELECT toString(event_id) FROM events")
                    .await
                    .lines()
                    .map(|l| Uuid::parse_str(l).unwrap())
                    .collect();
            match expected.is_subset(&landed) {
                true => Ok(()),
                false => Err(format!(
                    "{} acknowledged events missing",
                    expected.difference(&landed).count()
                )),
            }
        },
    )
    .await;
    // Let the replay finish, then: nothing twice (acknowledged or not).
    wait_until_spool_empty(&spool_dir, Duration::from_secs(30)).await;
    no_duplicate_event_ids(&clickhouse_database).await;
    drop(restarted);
}

// ---- 6d ---------------------------------------------------------------------------------------

#[tokio::test]
async fn a_full_spool_sheds_load_with_503_and_loses_nothing_it_acknowledged() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let app = spawn_app_with(|s| {
        s.clickhouse_url = Some(proxy.url.parse().unwrap());
        s.spool_max_bytes = 40000;
    })
    .await;
    app.create_shop(SHOP).await;
    proxy.set(Mode::Down);

    let mut acknowledged = 0;
    let mut shed = None;
    for r in 0..500 {
        let events: Vec<Value> = (0..10).map(|i| event(r * 10 + i)).collect();
        let response = app.post_events(SHOP, &json!({ "events": events })).await;
        match response.status() {
            StatusCode::ACCEPTED => acknowledged += 10,
            StatusCode::SERVICE_UNAVAILABLE => {
                shed = Some(response);
                break;
            }
            other => panic!("unexpected {other}"),
        }
    }
    let shed = shed.expect("the spool filled up");
    let retry_after: u64 = shed.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1);
    let (_, body) = json_of(shed).await;
    assert_eq!(body["error"]["code"], "SPOOL_FULL");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&format!("{retry_after} seconds")),
        "{body}"
    );
    assert!(acknowledged > 0);

    proxy.set(Mode::Up);
    expect_rows(&app, acknowledged, Duration::from_secs(30)).await;
    no_duplicate_event_ids(&app.clickhouse_database).await;
    // Drained, it accepts again.
    let response = app.post_events(SHOP, &event(0)).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
}

// ---- 6e ---------------------------------------------------------------------------------------

#[tokio::test]
async fn bad_input_gets_a_4xx_naming_the_problem_and_writes_nothing() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let long = "x".repeat(257);
    let cases: Vec<(Value, &str, &str)> = vec![
        (json!({}), "INVALID_EVENT", "eventType"),
        (json!({ "eventType": "like" }), "INVALID_EVENT", "eventType"),
        (json!({ "eventType": 3 }), "INVALID_EVENT", "eventType"),
        (
            json!({ "eventType": "view", "attributionType": "organic" }),
            "INVALID_EVENT",
            "attributionType",
        ),
        (
            json!({ "eventType": "view", "timestamp": "21/11/2026" }),
            "INVALID_EVENT",
            "timestamp",
        ),
        (
            json!({ "eventType": "view", "timestamp": "2026-11-21" }),
            "INVALID_EVENT",
            "timestamp",
        ),
        (
            json!({ "eventType": "view", "sessionId": long }),
            "INVALID_EVENT",
            "sessionId",
        ),
        (
            json!({ "eventType": "view", "customerId": long }),
            "INVALID_EVENT",
            "customerId",
        ),
        (
            json!({ "eventType": "view", "videoId": long }),
            "INVALID_EVENT",
            "videoId",
        ),
        (
            json!({ "eventType": "view", "widgetId": long }),
            "INVALID_EVENT",
            "widgetId",
        ),
        (
            json!({ "eventType": "view", "videoId": { "id": 1 } }),
            "INVALID_EVENT",
            "videoId",
        ),
        (
            json!({ "eventType": "checkout_completed", "orderId": long }),
            "INVALID_EVENT",
            "orderId",
        ),
        (
            json!({ "eventType": "checkout_completed", "revenue": -5 }),
            "INVALID_EVENT",
            "revenue",
        ),
        (
            json!({ "eventType": "checkout_completed", "revenue": "ten" }),
            "INVALID_EVENT",
            "revenue",
        ),
        (
            json!({ "eventType": "checkout_completed", "revenue": 1.23456 }),
            "INVALID_EVENT",
            "revenue",
        ),
        (
            json!({ "eventType": "checkout_completed", "currency": "DOLLARS" }),
            "INVALID_EVENT",
            "currency",
        ),
        (
            json!({ "eventType": "click", "productId": "shirt" }),
            "INVALID_EVENT",
            "productId",
        ),
        (
            json!({ "eventType": "view", "eventId": "not-a-uuid" }),
            "INVALID_EVENT",
            "eventId",
        ),
        (json!({ "events": [] }), "INVALID_BODY", "events"),
        (json!({ "events": "view" }), "INVALID_BODY", "events"),
        (
            json!({ "events": (0..101).map(event).collect::<Vec<_>>() }),
            "INVALID_BODY",
            "101",
        ),
        (
            json!({ "events": [event(1), { "eventType": "nope" }] }),
            "INVALID_EVENT",
            "events[1].eventType",
        ),
        (json!([event(1)]), "INVALID_BODY", "body"),
    ];
    for (body, code, needle) in cases {
        let response = app.post_events(SHOP, &body).await;
        assert_error(response, StatusCode::BAD_REQUEST, code, needle).await;
    }

    let url = app.url(&format!(
        "/apps/videoapp_sub/analytics?{}",
        signed(SHOP, &[])
    ));
    let send = |content_type: &'static str, body: Vec<u8>| {
        app.client
            .post(&url)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let response = send("application/json", b"{\"eventType\": \"view\"".to_vec())
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "INVALID_BODY",
        "malformed JSON",
    )
    .await;
    let oversize = format!(
        "{{\"eventType\":\"view\",\"pad\":\"{}\"}}",
        "x".repeat(70 * 1024)
    );
    let response = send("application/json", oversize.into_bytes())
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::PAYLOAD_TOO_LARGE,
        "PAYLOAD_TOO_LARGE",
        "65536",
    )
    .await;
    let response = send("application/xml", b"<event/>".to_vec()).await.unwrap();
    assert_error(
        response,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "UNSUPPORTED_MEDIA_TYPE",
        "application/json",
    )
    .await;
    let unsigned = app.url(&format!("/apps/videoapp_sub/analytics?shop={SHOP}"));
    let response = app
        .client
        .post(unsigned)
        .json(&event(1))
        .send()
        .await
        .unwrap();
    assert_error(
        response,
        StatusCode::UNAUTHORIZED,
        "INVALID_SIGNATURE",
        "signature",
    )
    .await;
    let response = app
        .post_events("unknown-shop.myshopify.com", &event(1))
        .await;
    assert_error(
        response,
        StatusCode::NOT_FOUND,
        "SHOP_NOT_FOUND",
        "not found",
    )
    .await;

    // Nothing of any of them was spooled or stored: a good event sent after them all is shipped,
    // and it is all there is (the spool ships in order, and is empty once it is in).
    let good = event(1);
    assert_eq!(
        app.post_events(SHOP, &good).await.status(),
        StatusCode::ACCEPTED
    );
    expect_rows(&app, 1, Duration::from_secs(10)).await;
    assert_eq!(
        clickhouse_query(
            &app.clickhouse_database,
            "SELECT toString(event_id) FROM events"
        )
        .await,
        good["eventId"].as_str().unwrap()
    );
}

// ---- what the service adds ----------------------------------------------------------------------

#[tokio::test]
async fn text_plain_beacons_single_events_and_numeric_ids_are_accepted() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let url = app.url(&format!(
        "/apps/videoapp_sub/analytics?{}",
        signed(SHOP, &[("logged_in_customer_id", "42")])
    ));
    let response = app
        .client
        .post(url)
        .header("content-type", "text/plain;charset=UTF-8")
        .body(r#"{"eventType":"click","customerId":42,"orderId":7,"productId":"1001","attributionType":"direct"}"#)
        .send()
        .await
        .unwrap();
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body["success"], true);
    assert_eq!(body["message"], "Event recorded");
    assert!(chrono::DateTime::parse_from_rfc3339(body["timestamp"].as_str().unwrap()).is_ok());

    let (status, body) = json_of(
        app.post_events(SHOP, &json!({ "events": [event(1), event(2)] }))
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(body["message"], "Events recorded");
    assert_eq!(body["count"], 2);

    expect_rows(&app, 3, Duration::from_secs(10)).await;
    let row = clickhouse_query(
        &app.clickhouse_database,
        "SELECT customer_id, order_id, product_id, attribution, shop_domain FROM events WHERE event_type = 'click' AND customer_id = '42'",
    )
    .await;
    assert_eq!(
        row,
        format!("42\t7\tgid://shopify/Product/1001\tdirect\t{SHOP}")
    );
}

#[tokio::test]
async fn events_are_dated_in_the_shops_timezone_and_far_timestamps_are_replaced() {
    let app = spawn_app().await;
    app.send_admin_json(
        reqwest::Method::PUT,
        &format!("/shops/{SHOP}"),
        &json!({ "timezone": "Pacific/Marquesas" }),
    )
    .await;
    let now = chrono::Utc::now();
    let recent = now - chrono::Duration::hours(3);
    let ancient = now - chrono::Duration::days(30);
    let future = now + chrono::Duration::days(3);
    let body = json!({ "events": [
        { "eventType": "view", "videoId": "recent", "timestamp": recent.to_rfc3339() },
        { "eventType": "view", "videoId": "ancient", "timestamp": ancient.to_rfc3339() },
        { "eventType": "view", "videoId": "future", "timestamp": future.to_rfc3339() },
    ]});
    assert_eq!(
        app.post_events(SHOP, &body).await.status(),
        StatusCode::ACCEPTED
    );
    expect_rows(&app, 3, Duration::from_secs(10)).await;

    let rows = clickhouse_query(
        &app.clickhouse_database,
        "SELECT video_id, toString(local_date), toUnixTimestamp(event_time), timestamp_replaced FROM events ORDER BY video_id",
    )
    .await;
    let marquesas = chrono_tz::Pacific::Marquesas;
    let expected_recent_date = recent.with_timezone(&marquesas).date_naive().to_string();
    let lines: Vec<Vec<&str>> = rows.lines().map(|l| l.split('\t').collect()).collect();
    let by_id = |id: &str| lines.iter().find(|l| l[0] == id).unwrap().clone();
    let r = by_id("recent");
    assert_eq!(r[1], expected_recent_date);
    assert_eq!(r[2], recent.timestamp().to_string());
    assert_eq!(r[3], "0");
    for id in ["ancient", "future"] {
        let row = by_id(id);
        assert_eq!(row[3], "1", "{id} was replaced by the receive time");
        let stored: i64 = row[2].parse().unwrap();
        assert!((stored - now.timestamp()).abs() < 60, "{id}: {stored}");
    }
}

#[tokio::test]
async fn the_timestamp_window_is_configurable_for_back_fills() {
    let app = spawn_app_with(|s| s.event_max_past = Duration::from_secs(400 * 86_400)).await;
    app.create_shop(SHOP).await;
    let old = chrono::Utc::now() - chrono::Duration::days(300);
    let body = json!({ "eventType": "view", "timestamp": old.to_rfc3339() });
    assert_eq!(
        app.post_events(SHOP, &body).await.status(),
        StatusCode::ACCEPTED
    );
    expect_rows(&app, 1, Duration::from_secs(10)).await;
    let stored = clickhouse_query(
        &app.clickhouse_database,
        "SELECT toUnixTimestamp(event_time), timestamp_replaced FROM events",
    )
    .await;
    assert_eq!(stored, format!("{}\t0", old.timestamp()));
}

// ---- shutdown and replay -----------------------------------------------------------------------

#[tokio::test]
async fn shutdown_ships_what_it_can_and_the_next_start_ships_the_rest_exactly_once() {
    let proxy = FaultProxy::start(&clickhouse_url()).await;
    let spool_dir = fresh_spool_dir();
    let spool = spool_dir.display().to_string();
    let first = spawn_app_with(|s| {
        s.clickhouse_url = Some(proxy.url.parse().unwrap());
        s.spool_dir = spool_dir.clone();
        s.shutdown_grace = Duration::from_secs(1);
    })
    .await;
    first.create_shop(SHOP).await;
    proxy.set(Mode::Down);
    let (acknowledged, _) = post_many(&first, 10, 10).await;
    assert_eq!(acknowledged.len(), 100);

    let started = Instant::now();
    first.shutdown().await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "shutdown kept to its grace period"
    );
    assert_eq!(count(&first.clickhouse_database, "").await, 0);
    assert!(
        spooled_segments(&spool_dir) > 0,
        "the events stayed spooled"
    );

    proxy.set(Mode::Up);
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    settings.spool_dir = spool.into();
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    expect_rows(&second, 100, Duration::from_secs(20)).await;
    no_duplicate_event_ids(&second.clickhouse_database).await;

    // With ClickHouse up, a shutdown ships everything before it returns.
    let (acknowledged, _) = post_many(&second, 5, 10).await;
    assert_eq!(acknowledged.len(), 50);
    second.shutdown().await;
    assert_eq!(count(&second.clickhouse_database, "").await, 150);
}

/// The sample `name{labels}` in Prometheus `text`, which must be there.
fn sample(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    metric_value(text, name, labels)
        .unwrap_or_else(|| panic!("{name}{labels:?} missing from /metrics:\n{text}"))
}

#[tokio::test]
async fn ingestion_is_measured() {
    // A process of its own: its metrics count this test's events and nothing else.
    let app = spawn_process_app(&[]).await;
    app.create_shop(SHOP).await;
    let (acknowledged, refused) = post_many(&app, 2, 5).await;
    assert!(refused.is_empty(), "{refused:?}");
    assert_eq!(acknowledged.len(), 10);
    let invalid = app.post_events(SHOP, &json!({ "eventType": "like" })).await;
    assert_eq!(invalid.status(), StatusCode::BAD_REQUEST);
    expect_rows(&app, 10, Duration::from_secs(10)).await;
    // The spool's gauges settle once the shipper has released what it shipped and looked again.
    let settled = Duration::from_secs(10);
    app.wait_for_metric("spool_bytes", &[], |v| v == 0.0, settled)
        .await;
    app.wait_for_metric(
        "spool_oldest_segment_age_seconds",
        &[],
        |v| v == 0.0,
        settled,
    )
    .await;

    let metrics = app.metrics().await;
    let value = |name: &str, labels: &[(&str, &str)]| sample(&metrics, name, labels);
    assert_eq!(value("events_accepted_total", &[]), 10.0);
    assert_eq!(
        value("events_rejected_total", &[("reason", "invalid")]),
        1.0
    );
    assert_eq!(value("events_shipped_total", &[]), 10.0);
    // Each batch shipped records its rows, and took one insert.
    let batches = value("ingest_batch_rows_count", &[]);
    assert!((1.0..=10.0).contains(&batches), "{batches} batches");
    assert_eq!(value("ingest_batch_rows_sum", &[]), 10.0);
    assert_eq!(
        value("clickhouse_insert_duration_seconds_count", &[]),
        batches
    );
    // Two requests accepted: two records, each acknowledged once, in one or two synced groups.
    assert_eq!(value("spool_group_commit_records_sum", &[]), 2.0);
    assert_eq!(value("spool_append_wait_seconds_count", &[]), 2.0);
    let groups = value("spool_group_commit_records_count", &[]);
    assert!((1.0..=2.0).contains(&groups), "{groups} groups");
    assert_eq!(value("spool_sync_duration_seconds_count", &[]), groups);
}

// ---- dead letters -------------------------------------------------------------------------------

#[tokio::test]
async fn a_batch_clickhouse_rejects_as_malformed_is_set_aside_and_the_pipe_keeps_flowing() {
    // A process of its own, so that its dead-letter count is this test's alone.
    let app = spawn_process_app(&[]).await;
    app.create_shop(SHOP).await;
    let db = &app.clickhouse_database;
    // Make ClickHouse read our rows wrongly: a fixed-width column where we send a string.
    clickhouse_query(
        db,
        "ALTER TABLE events MODIFY COLUMN currency FixedString(3)",
    )
    .await;
    assert_eq!(
        app.post_events(SHOP, &event(4)).await.status(),
        StatusCode::ACCEPTED
    );

    let dead = app.spool_dir.join("dead");
    let dead = &dead;
    eventually(
        "the rejected batch was set aside",
        Duration::from_secs(15),
        move || async move {
            let set_aside = std::fs::read_dir(dead)
                .unwrap()
                .any(|e| e.unwrap().path().extension().is_some_and(|x| x == "reason"));
            set_aside.then_some(()).ok_or(set_aside)
        },
    )
    .await;
    clickhouse_query(db, "ALTER TABLE events MODIFY COLUMN currency String").await;
    assert_eq!(
        app.post_events(SHOP, &event(1)).await.status(),
        StatusCode::ACCEPTED
    );
    expect_rows(&app, 1, Duration::from_secs(15)).await;
    let metrics = app.metrics().await;
    assert_eq!(
        sample(&metrics, "events_dead_lettered_total", &[]),
        1.0,
        "dead letters are counted"
    );
    assert_eq!(
        sample(
            &metrics,
            "clickhouse_insert_failures_total",
            &[("kind", "rejected")]
        ),
        1.0
    );
    assert_eq!(sample(&metrics, "events_shipped_total", &[]), 1.0);
}

#[tokio::test]
async fn spool_records_that_are_not_events_are_set_aside_and_the_rest_ships() {
    // A segment left by an earlier process: good records, then one of this release's format
    // whose payload is not events.
    let spool_dir = fresh_spool_dir();
    std::fs::create_dir_all(&spool_dir).unwrap();
    let segment = [
        PREVIOUS_RELEASE_SEGMENT.to_vec(),
        videoapp::ingest::spool::encode_record(&[videoapp::ingest::spool::FORMAT_VERSION, 0xff]),
    ]
    .concat();
    std::fs::write(
        spool_dir.join(format!("{:020}-{}.log", 1, Uuid::now_v7())),
        segment,
    )
    .unwrap();

    let dir = spool_dir.clone();
    let app = spawn_app_with(move |s| s.spool_dir = dir).await;
    expect_rows(&app, 3, Duration::from_secs(15)).await;
    let dead: Vec<_> = std::fs::read_dir(spool_dir.join("dead"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert!(dead[0].to_string_lossy().ends_with(".undecodable"));
}

/// A sealed segment as the release that introduced today's spool format wrote it: a view and a
/// click in one record, an order with revenue and products in the next.
const PREVIOUS_RELEASE_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-2-postcard.log");

#[tokio::test]
async fn a_spool_written_by_the_previous_release_ships_after_an_upgrade() {
    let spool_dir = fresh_spool_dir();
    std::fs::create_dir_all(&spool_dir).unwrap();
    std::fs::write(
        spool_dir.join("00000000000000000001-0193a3c8-2f5e-7c1a-9b7e-3f1f2a4b5c6d.log"),
        PREVIOUS_RELEASE_SEGMENT,
    )
    .unwrap();

    let dir = spool_dir.clone();
    let app = spawn_app_with(move |s| s.spool_dir = dir).await;
    wait_until_shipped(&app, Duration::from_secs(15)).await;
    let rows = clickhouse_query(
        &app.clickhouse_database,
        "SELECT shop_domain, toString(local_date), event_type, attribution, session_id, \
         product_id, customer_id, order_id, revenue_e4, currency, arrayStringConcat(product_ids, ' ') \
         FROM events ORDER BY event_time",
    )
    .await;
    assert_eq!(
        rows,
        "fixture.myshopify.com\t2026-11-20\tview\tnone\tsession-1\t\t\t\t0\t\t\n\
         fixture.myshopify.com\t2026-11-20\tclick\tnone\tsession-1\tgid://shopify/Product/7\t\t\t0\t\t\n\
         fixture.myshopify.com\t2026-11-20\tcheckout_completed\tdirect\tsession-1\t\t8123\torder-1001\t1234567\tEUR\t\
         gid://shopify/Product/7 gid://shopify/Product/9"
    );
    assert_eq!(
        std::fs::read_dir(spool_dir.join("dead")).unwrap().count(),
        0
    );
}
