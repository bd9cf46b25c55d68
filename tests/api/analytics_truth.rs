//! Every metric the analytics API reports, against a plain recount of the events that were sent
//! through the real ingest endpoint, over shops in awkward timezones and random date ranges.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;
use proptest::test_runner::TestRunner;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use crate::helpers::*;

const TIMEZONES: [&str; 4] = [
    "UTC",
    "America/New_York",
    "Asia/Kathmandu",
    "Pacific/Marquesas",
];
const KINDS: [&str; 5] = [
    "impression",
    "view",
    "click",
    "add_to_cart",
    "checkout_completed",
];

#[derive(Debug, Clone)]
struct GeneratedEvent {
    shop: usize,
    /// Index into the shop's videos, or none.
    video: Option<usize>,
    widget: Option<usize>,
    kind: usize,
    /// Seconds from the window's start.
    offset: i64,
    /// Cents, for checkouts.
    cents: i64,
}

/// Ten weeks from late August: whole months for the monthly view, partial ones for the daily
/// view, and New York's return to standard time (2026-11-01 06:00 UTC) inside.
fn window_start() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 8, 24, 0, 0, 0).unwrap()
}
const WINDOW_DAYS: u64 = 70;
const WINDOW_SECONDS: i64 = WINDOW_DAYS as i64 * 86_400;

fn events() -> impl Strategy<Value = Vec<GeneratedEvent>> {
    let event = (
        0..4usize,
        proptest::option::of(0..3usize),
        proptest::option::of(0..2usize),
        0..5usize,
        0..WINDOW_SECONDS,
        0..100_000i64,
    )
        .prop_map(
            |(shop, video, widget, kind, offset, cents)| GeneratedEvent {
                shop,
                video,
                widget,
                kind,
                offset,
                cents,
            },
        );
    proptest::collection::vec(event, 50..250)
}

/// Date ranges over the window (a day either side too), as day offsets; one always spans it.
fn ranges() -> impl Strategy<Value = Vec<(u64, u64)>> {
    let range = (0..WINDOW_DAYS + 2, 0..WINDOW_DAYS + 2).prop_map(|(a, b)| (a.min(b), a.max(b)));
    proptest::collection::vec(range, 3).prop_map(|mut ranges| {
        ranges.push((0, WINDOW_DAYS + 1));
        ranges
    })
}

#[derive(Default, Debug, Clone, Copy, PartialEq, Eq)]
struct Counts {
    impressions: u64,
    views: u64,
    clicks: u64,
    add_to_cart: u64,
    orders: u64,
    cents: i64,
}

impl Counts {
    /// The recount of the `events` that `about` keeps.
    fn of(events: &[&GeneratedEvent], about: impl Fn(&GeneratedEvent) -> bool) -> Counts {
        let mut counts = Counts::default();
        events
            .iter()
            .filter(|e| about(e))
            .for_each(|e| counts.add(e));
        counts
    }

    fn add(&mut self, e: &GeneratedEvent) {
        match KINDS[e.kind] {
            "impression" => self.impressions += 1,
            "view" => self.views += 1,
            "click" => self.clicks += 1,
            "add_to_cart" => self.add_to_cart += 1,
            _ => {
                self.orders += 1;
                self.cents += e.cents;
            }
        }
    }

    fn matches(&self, metrics: &Value, raw_revenue: &str) -> bool {
        metrics["impressions"] == self.impressions
            && metrics["views"] == self.views
            && metrics["clicks"] == self.clicks
            && metrics["add_to_cart"] == self.add_to_cart
            && metrics["orders"] == self.orders
            && raw_revenue == format!("{}.{:02}", self.cents / 100, self.cents % 100)
    }
}

/// The text of `"revenue":…` in a raw JSON answer, for the n-th `metrics` (the attribution
/// split's revenues left out).
fn raw_revenues(text: &str) -> Vec<String> {
    let mut rest = text;
    let mut outside = String::new();
    while let Some(at) = rest.find("\"attribution\":") {
        outside.push_str(&rest[..at]);
        let mut depth = 0;
        let end = rest[at..]
            .char_indices()
            .find_map(|(i, c)| {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 1 => return Some(at + i + 1),
                    '}' => depth -= 1,
                    _ => {}
                }
                None
            })
            .unwrap();
        rest = &rest[end..];
    }
    outside.push_str(rest);
    outside
        .split("\"revenue\":")
        .skip(1)
        .map(|rest| rest.split([',', '}']).next().unwrap().to_string())
        .collect()
}

struct World {
    shops: Vec<String>,
    timezones: Vec<Tz>,
    keys: Vec<String>,
    videos: Vec<Vec<String>>,
    widgets: Vec<Vec<String>>,
}

async fn build_world(app: &TestApp, case: usize) -> World {
    let mut world = World {
        shops: vec![],
        timezones: vec![],
        keys: vec![],
        videos: vec![],
        widgets: vec![],
    };
    for (i, tz) in TIMEZONES.iter().enumerate() {
        let shop = format!("truth-{case}-{i}.myshopify.com");
        app.send_admin_json(
            Method::PUT,
            &format!("/shops/{shop}"),
            &json!({ "timezone": tz }),
        )
        .await;
        let mut videos = vec![];
        for v in 0..3 {
            videos.push(
                app.create_video(&shop, json!({ "title": format!("video {v}") }))
                    .await,
            );
        }
        let mut widgets = vec![];
        for _ in 0..2 {
            widgets.push(
                app.create_widget(&shop, json!({ "videoIds": videos }))
                    .await,
            );
        }
        let key = app.create_api_key(&shop, "truth").await;
        world.keys.push(key["key"].as_str().unwrap().to_string());
        world.timezones.push(tz.parse().unwrap());
        world.shops.push(shop);
        world.videos.push(videos);
        world.widgets.push(widgets);
    }
    world
}

async fn send(app: &TestApp, world: &World, events: &[GeneratedEvent]) {
    for shop in 0..world.shops.len() {
        let batch: Vec<Value> = events
            .iter()
            .filter(|e| e.shop == shop)
            .map(|e| {
                let at = window_start() + chrono::Duration::seconds(e.offset);
                let mut json = json!({ "eventType": KINDS[e.kind], "timestamp": at.to_rfc3339() });
                if let Some(v) = e.video {
                    json["videoId"] = json!(world.videos[shop][v]);
                }
                if let Some(w) = e.widget {
                    json["widgetId"] = json!(world.widgets[shop][w]);
                }
                if KINDS[e.kind] == "checkout_completed" {
                    json["revenue"] = json!(format!("{}.{:02}", e.cents / 100, e.cents % 100));
                }
                json
            })
            .collect();
        for chunk in batch.chunks(100) {
            let response = app
                .post_events(&world.shops[shop], &json!({ "events": chunk }))
                .await;
            assert_eq!(response.status(), StatusCode::ACCEPTED);
        }
    }
    let expected = events.len() as u64;
    let shops = world
        .shops
        .iter()
        .map(|s| format!("'{s}'"))
        .collect::<Vec<_>>()
        .join(",");
    // Once the spool is empty every acknowledged event is in, views included, and no more come.
    wait_until_shipped(app, Duration::from_secs(20)).await;
    let n: u64 = clickhouse_query(
        &app.clickhouse_database,
        &format!("SELECT count() FROM events WHERE shop_domain IN ({shops})"),
    )
    .await
    .parse()
    .unwrap();
    assert_eq!(n, expected, "events in ClickHouse");
}

fn local_date(tz: Tz, e: &GeneratedEvent) -> NaiveDate {
    (window_start() + chrono::Duration::seconds(e.offset))
        .with_timezone(&tz)
        .date_naive()
}

async fn get(app: &TestApp, key: &str, path: &str) -> (Value, String) {
    let response = app
        .client
        .get(app.url(path))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK, "{path}");
    let text = response.text().await.unwrap();
    (serde_json::from_str(&text).unwrap(), text)
}

async fn check(app: &TestApp, world: &World, events: &[GeneratedEvent], ranges: &[(u64, u64)]) {
    for shop in 0..world.shops.len() {
        let tz = world.timezones[shop];
        let key = &world.keys[shop];
        for &(a, b) in ranges {
            let first = (window_start().date_naive() - chrono::Days::new(1)) + chrono::Days::new(a);
            let last = (window_start().date_naive() - chrono::Days::new(1)) + chrono::Days::new(b);
            let in_range: Vec<&GeneratedEvent> = events
                .iter()
                .filter(|e| e.shop == shop && (first..=last).contains(&local_date(tz, e)))
                .collect();
            let dates = format!("start_date={first}&end_date={last}");

            // Every video, in the list and one by one.
            let (list, text) = get(
                app,
                key,
                &format!("/api/v1/analytics/videos?{dates}&limit=100&sort_by=title&sort_order=asc"),
            )
            .await;
            let revenues = raw_revenues(&text);
            assert_eq!(list["pagination"]["total_count"], 3);
            for (i, record) in list["data"].as_array().unwrap().iter().enumerate() {
                let v = world.videos[shop]
                    .iter()
                    .position(|id| record["id"] == id.as_str())
                    .unwrap();
                let expected = Counts::of(&in_range, |e| e.video == Some(v));
                assert!(
                    expected.matches(&record["metrics"], &revenues[i]),
                    "shop {shop} {dates} video {v}: {expected:?} vs {record} / {}",
                    revenues[i]
                );
                let (one, text) = get(
                    app,
                    key,
                    &format!("/api/v1/analytics/video/{}?{dates}", world.videos[shop][v]),
                )
                .await;
                assert!(
                    expected.matches(&one["data"]["metrics"], &raw_revenues(&text)[0]),
                    "video/{v}: {one}"
                );
            }
            // Every widget.
            let (list, text) = get(
                app,
                key,
                &format!("/api/v1/analytics/widgets?{dates}&limit=100"),
            )
            .await;
            let revenues = raw_revenues(&text);
            for (i, record) in list["data"].as_array().unwrap().iter().enumerate() {
                let w = world.widgets[shop]
                    .iter()
                    .position(|id| record["id"] == id.as_str())
                    .unwrap();
                let expected = Counts::of(&in_range, |e| e.widget == Some(w));
                assert!(
                    expected.matches(&record["metrics"], &revenues[i]),
                    "widget {w}: {record}"
                );
                let (one, text) = get(
                    app,
                    key,
                    &format!(
                        "/api/v1/analytics/widget/{}?{dates}",
                        world.widgets[shop][w]
                    ),
                )
                .await;
                assert!(
                    expected.matches(&one["data"]["metrics"], &raw_revenues(&text)[0]),
                    "widget/{w}: {one}"
                );
            }
            // The shop's totals: every event, with or without a video.
            let (summary, text) =
                get(app, key, &format!("/api/v1/analytics/summary?{dates}")).await;
            let expected = Counts::of(&in_range, |_| true);
            assert!(
                expected.matches(&summary["data"], &raw_revenues(&text)[0]),
                "summary: {summary}"
            );
            // The effective range is the shop's local days, in UTC.
            let start = tz
                .from_local_datetime(&first.and_hms_opt(0, 0, 0).unwrap())
                .earliest()
                .unwrap();
            assert_eq!(
                summary["meta"]["start_date"],
                start
                    .with_timezone(&Utc)
                    .format("%Y-%m-%dT%H:%M:%S%.3fZ")
                    .to_string()
            );
        }
    }
}

#[test]
fn every_metric_matches_a_recount_of_the_events_sent() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let app = runtime.block_on(spawn_app_with(|s| {
        // Every generated timestamp is kept as sent, whenever the test runs.
        s.event_max_past = Duration::from_secs(50 * 365 * 86_400);
        s.event_max_future = Duration::from_secs(50 * 365 * 86_400);
        s.rate_limit_per_minute = 100000;
    }));
    let mut runner = TestRunner::new(ProptestConfig {
        cases: 6,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    // Each case (shrinking included) gets shops of its own.
    let cases = AtomicUsize::new(0);
    runner
        .run(&(events(), ranges()), |(events, ranges)| {
            let case = cases.fetch_add(1, Ordering::Relaxed);
            runtime.block_on(async {
                let world = build_world(&app, case).await;
                send(&app, &world, &events).await;
                check(&app, &world, &events, &ranges).await;
            });
            Ok(())
        })
        .unwrap();
}

/// A million checkouts of 0.10 sum to exactly 100000.00: money is kept as an exact decimal all
/// the way, where binary floating point would drift (0.1 summed a million times in `f64` is
/// 100000.00000133288). The pipeline's part is shown end to end: a thousand checkouts sent
/// through the ingest endpoint are each stored as exactly 0.10, and the analytics API sums them.
/// The other 999,000 are copies of a row the pipeline wrote, inserted into `events` in one
/// statement, so the same materialized views sum them and the same queries answer; sending them
/// all as requests took minutes and proved nothing more about the sum.
#[tokio::test]
async fn a_million_checkouts_of_ten_cents_sum_to_exactly_one_hundred_thousand() {
    const SENT: usize = 1_000;
    const TOTAL: usize = 1_000_000;
    let drifted: f64 = std::iter::repeat_n(0.1_f64, TOTAL).sum();
    assert_ne!(drifted, 100_000.0, "a float sum would drift at this size");

    let app = spawn_app().await;
    let shop = "million.myshopify.com";
    app.create_shop(shop).await;
    let video = app.create_video(shop, json!({})).await;
    let key = app.create_api_key(shop, "m").await["key"]
        .as_str()
        .unwrap()
        .to_string();

    let one = json!({ "eventType": "checkout_completed", "videoId": video, "revenue": 0.10 });
    let body = serde_json::to_vec(&json!({ "events": vec![one; 100] })).unwrap();
    let url = app.url(&format!(
        "/apps/videoapp_sub/analytics?{}",
        signed(shop, &[])
    ));
    use futures::stream::{self, StreamExt};
    let statuses: Vec<StatusCode> = stream::iter(0..SENT / 100)
        .map(|_| {
            let request = app
                .client
                .post(&url)
                .header("content-type", "application/json")
                .body(body.clone());
            async move { request.send().await.unwrap().status() }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let accepted = statuses
        .iter()
        .filter(|s| **s == StatusCode::ACCEPTED)
        .count();
    let refused: std::collections::BTreeSet<_> = statuses
        .iter()
        .filter(|s| **s != StatusCode::ACCEPTED)
        .collect();
    assert_eq!(accepted, SENT / 100, "also answered: {refused:?}");

    wait_until_shipped(&app, Duration::from_secs(60)).await;
    let db = &app.clickhouse_database;
    assert_eq!(
        clickhouse_query(
            db,
            "SELECT count(), min(revenue_e4), max(revenue_e4) FROM events"
        )
        .await,
        format!("{SENT}\t1000\t1000"),
        "each 0.10 was kept as exactly 1000 ten-thousandths"
    );
    let paths = [
        format!("/api/v1/analytics/video/{video}"),
        "/api/v1/analytics/summary".to_string(),
    ];
    let expect_totals = |revenue: String, orders: usize| {
        let (app, key, paths) = (&app, &key, &paths);
        async move {
            for path in paths {
                let (_, text) = get(app, key, path).await;
                assert_eq!(raw_revenues(&text)[0], revenue, "{path}: {text}");
                assert!(
                    text.contains(&format!("\"orders\":{orders}")),
                    "{path}: {text}"
                );
            }
        }
    };
    // 0.10 each.
    expect_totals(format!("{}.00", SENT / 10), SENT).await;

    // The rest: copies of a row the pipeline wrote, each an event of its own.
    let described = clickhouse_query(db, "DESCRIBE TABLE events").await;
    // Columns computed on insert (a default type such as MATERIALIZED) cannot be written.
    let columns: Vec<&str> = described
        .lines()
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .filter(|fields| fields.get(2).is_none_or(|kind| kind.is_empty()))
        .map(|fields| fields[0])
        .collect();
    let copied: Vec<String> = columns
        .iter()
        .map(|c| match *c {
            "event_id" => "generateUUIDv4()".to_string(),
            other => other.to_string(),
        })
        .collect();
    clickhouse_query(
        db,
        &format!(
            "INSERT INTO events ({}) SELECT {} FROM (SELECT * FROM events LIMIT 1) \
             CROSS JOIN numbers({})",
            columns.join(", "),
            copied.join(", "),
            TOTAL - SENT
        ),
    )
    .await;
    assert_eq!(
        clickhouse_query(db, "SELECT count() FROM events").await,
        TOTAL.to_string()
    );

    expect_totals("100000.00".to_string(), TOTAL).await;
}
