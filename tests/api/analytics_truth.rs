//! Every number the analytics API reports, against a plain recount of the events that were sent
//! through the real ingest endpoint (watches among them, each event from a phone, a tablet, a
//! desktop or an unnamed browser, on a page type, in a country, from a source, or not saying),
//! over shops in awkward timezones and random date ranges, each about the events of random
//! filters (`unknown` among their values) and broken down by a random dimension: the lists, the
//! single records, the summary and the time series, their comparisons, attribution splits and
//! watching figures, and their CSV exports. `analytics_truth_series` has the series' own rules.

use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::truth::*;
use crate::support::*;

#[test]
fn every_metric_matches_a_recount_of_the_events_sent() {
    recount_cases(3, (events(window_season(), 1000..2000), queries()));
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
    use futures::stream;
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
    // Where each answer holds its totals.
    let paths = [
        (format!("/api/v1/analytics/video/{video}"), "/data/metrics"),
        ("/api/v1/analytics/summary".to_string(), "/data"),
    ];
    let expect_totals = |revenue: String, orders: usize| {
        let (app, key, paths) = (&app, &key, &paths);
        async move {
            for (path, totals) in paths {
                let answer = get(app, key, path).await;
                let totals = &answer.pointer(totals).unwrap();
                assert_eq!(totals["revenue"], revenue, "{path}: {answer}");
                assert_eq!(totals["orders"], orders, "{path}: {answer}");
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
