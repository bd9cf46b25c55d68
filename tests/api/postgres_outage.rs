//! Postgres going away is not an outage of the store: the service runs as a process of its own,
//! reaching Postgres through a proxy the test cuts. The storefront keeps serving each shop's
//! last snapshot, the event endpoint keeps acknowledging into the spool, and the analytics API
//! answers 503 with `Retry-After`; once Postgres is back, every acknowledged event reaches
//! ClickHouse once and catalog changes are seen again.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, PgConnection};
use uuid::Uuid;

use crate::support::analytics::{analytics, error_of, number_header, shop_with_key, Fixture};
use crate::support::fault_proxy::{FaultProxy, Mode};
use crate::support::*;

const SHOP: &str = "outage-shop.myshopify.com";
/// Installed, and never asked for before Postgres goes: this instance holds nothing of it.
const UNSEEN_SHOP: &str = "outage-unseen-shop.myshopify.com";

/// `ip:port` of the test Postgres server.
fn postgres_address() -> String {
    let url = url::Url::parse(&postgres_admin_url()).unwrap();
    format!("{}:{}", url.host_str().unwrap(), url.port().unwrap_or(5432))
}

/// The service, reaching Postgres only through `proxy`, with `env` on top of the test settings;
/// view counts are read once, so a storefront answer changes only with the catalog.
async fn service_through(proxy: &FaultProxy, env: &[(&'static str, String)]) -> ProcessApp {
    let mut all = vec![("VIDEOAPP_VIEW_COUNT_REFRESH_SECONDS", "3600".to_string())];
    all.extend(env.iter().cloned());
    spawn_process_app_reaching_postgres(|url| proxy.postgres_url(url), &all).await
}

/// What the shop's storefront shows on its home page: the version and the widgets.
async fn storefront_home(app: &impl Service, shop: &str) -> (StatusCode, Value) {
    let response = app
        .storefront("contextual-widgets", shop, &[("location", "home")])
        .await;
    let (status, body) = json_of(response).await;
    (
        status,
        json!({ "version": body["version"], "widgets": body["widgets"] }),
    )
}

/// Posts `n` views of the fixture's video; returns the answer's status and the events' ids.
async fn post_views(app: &impl Service, fixture: &Fixture, n: usize) -> (StatusCode, Vec<Uuid>) {
    let ids: Vec<Uuid> = (0..n).map(|_| Uuid::new_v4()).collect();
    let events: Vec<Value> = ids
        .iter()
        .map(|id| {
            json!({
                "eventId": id,
                "eventType": "view",
                "videoId": fixture.video,
                "widgetId": fixture.widget,
                "sessionId": "outage-session",
            })
        })
        .collect();
    let response = app.post_events(SHOP, &json!({ "events": events })).await;
    (response.status(), ids)
}

/// Asserts the admin API's answer while Postgres is away: 503 with a code and `Retry-After`,
/// never a 500, and the token is still checked first.
async fn assert_admin_unavailable(app: &impl Service) {
    let path = format!("/shops/{SHOP}/videos");
    let refused = app.get(&format!("/admin/v1{path}")).await;
    assert_eq!(refused.status(), StatusCode::UNAUTHORIZED);
    let response = app.send_admin(Method::GET, &path).await;
    assert!(response.headers().contains_key("retry-after"));
    assert_error(
        response,
        StatusCode::SERVICE_UNAVAILABLE,
        "SERVICE_UNAVAILABLE",
        "retry",
    )
    .await;
}

/// Asserts the analytics API's answer while Postgres is away: 503 with a code and `Retry-After`.
async fn assert_analytics_unavailable(app: &impl Service, fixture: &Fixture, path: &str) {
    let (status, headers, code, _) = error_of(analytics(app, &fixture.key, path).await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{path}");
    assert_eq!(code, "SERVICE_UNAVAILABLE", "{path}");
    assert!(number_header(&headers, "retry-after") >= 1, "{path}");
}

/// Polls until the analytics API answers `path` with 200 again.
async fn analytics_back(app: &impl Service, fixture: &Fixture, path: &str, within: Duration) {
    let what = format!("{path} answers again after Postgres came back");
    eventually(&what, within, move || async move {
        let status = analytics(app, &fixture.key, path).await.status();
        (status == StatusCode::OK).then_some(()).ok_or(status)
    })
    .await;
}

/// The ids of the events ClickHouse holds, sorted.
async fn event_ids_in_clickhouse(app: &impl Service) -> Vec<String> {
    let ids = clickhouse_query(
        &app.clickhouse_database,
        "SELECT toString(event_id) FROM events ORDER BY event_id",
    )
    .await;
    let mut ids: Vec<String> = ids.lines().map(str::to_string).collect();
    ids.sort();
    ids
}

/// Once the spool is empty, ClickHouse holds every acknowledged event exactly once.
async fn assert_delivered_once(app: &impl Service, acknowledged: &[Uuid]) {
    wait_until_shipped(app, Duration::from_secs(90)).await;
    let mut expected: Vec<String> = acknowledged.iter().map(Uuid::to_string).collect();
    expected.sort();
    assert_eq!(event_ids_in_clickhouse(app).await, expected);
}

/// Waits until the shipper has failed to ship since `before` failures: it tried while Postgres
/// was away, so the events it holds stayed in the spool.
async fn shipping_failed(app: &ProcessApp, before: f64) {
    let transient = [("kind", "transient")];
    app.wait_for_metric(
        "clickhouse_insert_failures_total",
        &transient,
        |n| n > before,
        Duration::from_secs(60),
    )
    .await;
}

async fn shipping_failures(app: &ProcessApp) -> f64 {
    let transient = [("kind", "transient")];
    let failures = app.metric("clickhouse_insert_failures_total", &transient);
    failures.await.unwrap_or(0.0)
}

/// The shop, a video, a widget showing it and an analytics key; the storefront, the event
/// endpoint and the analytics API each used once, and the events shipped. Returns the fixture,
/// what the storefront showed, and the ids of the events acknowledged.
async fn a_store_in_use(app: &ProcessApp) -> (Fixture, Value, Vec<Uuid>) {
    let fixture = shop_with_key(app, SHOP).await;
    app.create_shop(UNSEEN_SHOP).await;
    let (status, shown) = storefront_home(app, SHOP).await;
    assert_eq!(status, StatusCode::OK, "{shown}");
    assert_eq!(
        shown["widgets"].as_array().map(Vec::len),
        Some(1),
        "{shown}"
    );
    let (status, acknowledged) = post_views(app, &fixture, 5).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(
        analytics(app, &fixture.key, "/summary").await.status(),
        StatusCode::OK
    );
    wait_until_shipped(app, Duration::from_secs(30)).await;
    (fixture, shown, acknowledged)
}

#[tokio::test]
async fn while_postgres_is_gone_the_store_serves_and_ingests_and_analytics_answers_503() {
    // Arrange: a TTL far away, so only the change listener can refresh a snapshot.
    let proxy = FaultProxy::start(&postgres_address()).await;
    let app = service_through(
        &proxy,
        &[("VIDEOAPP_CATALOG_CACHE_TTL_SECONDS", "3600".to_string())],
    )
    .await;
    let (fixture, shown, mut acknowledged) = a_store_in_use(&app).await;
    let failures = shipping_failures(&app).await;

    // Act: Postgres goes, and the service has found out: it tried again, three times, and was
    // refused each time (its change listener gives up on a connection that fails this way at
    // once).
    proxy.set(Mode::Down);
    proxy
        .wait_for_refusals(proxy.refused() + 3, Duration::from_secs(30))
        .await;

    // Assert: the storefront shows what it showed; the event endpoint acknowledges into the
    // spool; analytics answers 503 with Retry-After; a shop never loaded here is a 503 too.
    let (status, now_shown) = storefront_home(&app, SHOP).await;
    assert_eq!(status, StatusCode::OK, "{now_shown}");
    assert_eq!(now_shown, shown);
    let (status, during) = post_views(&app, &fixture, 5).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    acknowledged.extend(&during);
    for path in ["/summary", "/videos", &format!("/video/{}", fixture.video)] {
        assert_analytics_unavailable(&app, &fixture, path).await;
    }
    assert_admin_unavailable(&app).await;
    let unseen = app
        .storefront("contextual-widgets", UNSEEN_SHOP, &[("location", "home")])
        .await;
    assert_error(
        unseen,
        StatusCode::SERVICE_UNAVAILABLE,
        "SERVICE_UNAVAILABLE",
        "retry",
    )
    .await;
    let unseen_event = json!({ "eventType": "impression", "sessionId": "outage-session" });
    let refused = app.post_events(UNSEEN_SHOP, &unseen_event).await;
    assert!(refused.headers().contains_key("retry-after"));
    assert_error(
        refused,
        StatusCode::SERVICE_UNAVAILABLE,
        "SERVICE_UNAVAILABLE",
        "retry",
    )
    .await;
    shipping_failed(&app, failures).await;
    assert!(
        spooled_segments(&app.spool_dir) > 0,
        "the events wait in the spool"
    );
    assert_eq!(event_ids_in_clickhouse(&app).await.len(), 5, "none shipped");

    // Postgres returns: analytics answers again, a change made by another instance is seen,
    // and every acknowledged event is in ClickHouse once.
    proxy.set(Mode::Up);
    analytics_back(&app, &fixture, "/summary", Duration::from_secs(30)).await;
    let mut db = PgConnection::connect(&app.database_url).await.unwrap();
    let mut tx = db.begin().await.unwrap();
    sqlx::query("UPDATE videos SET title = 'After the outage' WHERE id = $1::uuid")
        .bind(&fixture.video)
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("UPDATE shops SET catalog_version = catalog_version + 1 WHERE domain = $1")
        .bind(SHOP)
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(videoapp::catalog::CHANGES_CHANNEL)
        .bind(SHOP)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let app = &app;
    eventually(
        "the change is seen",
        Duration::from_secs(15),
        move || async move {
            let (status, body) = storefront_home(app, SHOP).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            match body["widgets"][0]["videos"][0]["title"] == "After the outage" {
                true => Ok(()),
                false => Err(body),
            }
        },
    )
    .await;
    assert_delivered_once(app, &acknowledged).await;
}

#[tokio::test]
async fn a_stopped_postgres_makes_no_request_wait_for_it_past_the_catalog_ttl() {
    // Arrange: snapshots due for a reload every second; a request that waited for a Postgres
    // connection would wait 30 s.
    const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(30);
    let proxy = FaultProxy::start(&postgres_address()).await;
    let env = [
        ("VIDEOAPP_CATALOG_CACHE_TTL_SECONDS", "1".to_string()),
        (
            "VIDEOAPP_POSTGRES_ACQUIRE_TIMEOUT_SECONDS",
            ACQUIRE_TIMEOUT.as_secs().to_string(),
        ),
    ];
    let app = service_through(&proxy, &env).await;
    let (fixture, shown, mut acknowledged) = a_store_in_use(&app).await;
    let failures = shipping_failures(&app).await;

    // Act: Postgres stops (connections closed, new ones refused), for several TTLs.
    proxy.set(Mode::Stopped);
    let stopped = Instant::now();
    let mut rounds = 0;
    while stopped.elapsed() < Duration::from_secs(4) || rounds < 3 {
        rounds += 1;
        // Assert: every answer as while Postgres was up (analytics aside), none waiting for it.
        let asked = Instant::now();
        let (status, now_shown) = storefront_home(&app, SHOP).await;
        assert_eq!(status, StatusCode::OK, "round {rounds}: {now_shown}");
        assert_eq!(now_shown, shown, "round {rounds}");
        let (status, during) = post_views(&app, &fixture, 2).await;
        assert_eq!(status, StatusCode::ACCEPTED, "round {rounds}");
        acknowledged.extend(&during);
        assert_analytics_unavailable(&app, &fixture, "/videos").await;
        assert_admin_unavailable(&app).await;
        let took = asked.elapsed();
        assert!(
            took < ACQUIRE_TIMEOUT / 6,
            "round {rounds} took {took:?}: a request waited for Postgres"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    shipping_failed(&app, failures).await;
    assert!(
        spooled_segments(&app.spool_dir) > 0,
        "the events wait in the spool"
    );

    // Postgres starts again: analytics answers, and every acknowledged event lands once.
    proxy.set(Mode::Up);
    analytics_back(&app, &fixture, "/videos", Duration::from_secs(30)).await;
    let (status, now_shown) = storefront_home(&app, SHOP).await;
    assert_eq!((status, now_shown), (StatusCode::OK, shown));
    assert_delivered_once(&app, &acknowledged).await;
    let rename = json!({ "title": "Renamed once back" });
    let path = format!("/shops/{SHOP}/videos/{}", fixture.video);
    app.admin_expecting(Method::PATCH, &path, &rename, StatusCode::OK)
        .await;
    let (_, body) = storefront_home(&app, SHOP).await;
    assert_eq!(
        body["widgets"][0]["videos"][0]["title"],
        "Renamed once back"
    );
}

/// A Postgres that refuses connections for want of resources (too many of them, as during a
/// restart or a failover) is out of reach, as one that is down: 503 with `Retry-After`, not 500.
#[tokio::test]
async fn too_many_connections_is_postgres_out_of_reach() {
    let database_url = fresh_database().await;
    let role = format!("limited_{}", Uuid::new_v4().simple());
    let mut admin = PgConnection::connect(&database_url).await.unwrap();
    sqlx::query(&format!(
        "CREATE ROLE {role} LOGIN PASSWORD 'limited' CONNECTION LIMIT 0"
    ))
    .execute(&mut admin)
    .await
    .unwrap();
    let mut url = url::Url::parse(&database_url).unwrap();
    url.set_username(&role).unwrap();
    url.set_password(Some("limited")).unwrap();

    let refused = PgConnection::connect(url.as_str()).await.unwrap_err();

    let code = refused
        .as_database_error()
        .and_then(|e| e.code())
        .map(|code| code.into_owned());
    assert_eq!(code.as_deref(), Some("53300"), "{refused}");
    assert!(videoapp::db::is_unreachable(&refused));
    sqlx::query(&format!("DROP ROLE {role}"))
        .execute(&mut admin)
        .await
        .unwrap();
}
