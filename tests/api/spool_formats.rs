//! The spool across releases and damage: a spool of every format any release wrote ships after an
//! upgrade, a segment the service cannot read is set aside while the rest ships, and a damaged
//! record costs that record only. Each test runs the service as a process of its own on a spool
//! filled beforehand, and counts what reached ClickHouse.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use chrono::NaiveDate;
use serde_json::json;
use uuid::Uuid;
use videoapp::ingest::event::{EventType, SpoolEvent};
use videoapp::ingest::spool::{encode_events, encode_record, FORMAT_VERSION};

use crate::support::*;

const SHOP: &str = "spool-formats.myshopify.com";

/// Segments as the releases that wrote each format wrote them (`tests/fixtures/spool/README.md`).
const JSON_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-json.log");
const FORMAT_1_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-1-postcard.log");
const FORMAT_2_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-2-postcard.log");
const FORMAT_3_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-3-postcard.log");
const FORMAT_4_SEGMENT: &[u8] = include_bytes!("../fixtures/spool/format-4-postcard.log");

/// The ids of the events in the JSON and format-1 segments (five each), the format-2 and
/// format-3 ones (three each) and the format-4 one (two).
fn json_ids() -> Vec<String> {
    ids("01935b00-0000-7000-8000-", 5)
}

fn format_1_ids() -> Vec<String> {
    ids("01938e00-0000-7000-8000-", 5)
}

fn format_2_ids() -> Vec<String> {
    ids("0193a3c8-2f5e-7c1a-9b7e-", 3)
}

fn format_3_ids() -> Vec<String> {
    ids("019ad000-6d3a-7b2c-8e4f-", 3)
}

fn format_4_ids() -> Vec<String> {
    ids("019ad400-1a2b-7c3d-8e4f-", 2)
}

fn ids(prefix: &str, n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("{prefix}{i:012}")).collect()
}

/// A spool directory holding `segments` as sealed segments, in this order; returns it and the
/// segments' paths.
fn spool_of(segments: &[&[u8]]) -> (PathBuf, Vec<PathBuf>) {
    let dir = fresh_spool_dir();
    std::fs::create_dir_all(&dir).unwrap();
    let paths = segments
        .iter()
        .enumerate()
        .map(|(i, bytes)| {
            let path = dir.join(format!("{:020}-{}.log", i + 1, Uuid::now_v7()));
            std::fs::write(&path, bytes).unwrap();
            path
        })
        .collect();
    (dir, paths)
}

/// Posts `n` new events for [`SHOP`] in one request; returns their ids.
async fn post_new_events(app: &ProcessApp, n: usize) -> Vec<String> {
    app.create_shop(SHOP).await;
    let ids: Vec<String> = (0..n).map(|_| Uuid::new_v4().to_string()).collect();
    let events: Vec<_> = ids
        .iter()
        .map(|id| json!({ "eventId": id, "eventType": "view", "videoId": "video-1" }))
        .collect();
    let response = app.post_events(SHOP, &json!({ "events": events })).await;
    assert_eq!(response.status(), reqwest::StatusCode::ACCEPTED);
    ids
}

/// Every event id in `events`, each once; fails if any arrived twice.
async fn event_ids_once(database: &str) -> HashSet<String> {
    let ids = clickhouse_query(database, "SELECT toString(event_id) FROM events").await;
    let ids: Vec<String> = ids.lines().map(str::to_string).collect();
    let once: HashSet<String> = ids.iter().cloned().collect();
    assert_eq!(once.len(), ids.len(), "some event arrived twice");
    once
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// An upgrade from any earlier release: the spool holds a segment of each format any release
/// wrote, and new events arrive. Every fixture's events and the new ones reach ClickHouse,
/// exactly once, as they were written (older events without products).
#[tokio::test]
async fn a_spool_of_every_format_any_release_wrote_ships_with_new_events_exactly_once() {
    let segments = [
        JSON_SEGMENT,
        FORMAT_1_SEGMENT,
        FORMAT_2_SEGMENT,
        FORMAT_3_SEGMENT,
        FORMAT_4_SEGMENT,
    ];
    let (spool_dir, _) = spool_of(&segments);
    let app = spawn_process_app_on(spool_dir.clone(), &[]).await;
    let posted = post_new_events(&app, 10).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    let mut expected: HashSet<String> = posted.into_iter().collect();
    expected.extend(json_ids());
    expected.extend(format_1_ids());
    expected.extend(format_2_ids());
    expected.extend(format_3_ids());
    expected.extend(format_4_ids());
    assert_eq!(expected.len(), 28);
    assert_eq!(event_ids_once(&app.clickhouse_database).await, expected);

    let rows = clickhouse_query(
        &app.clickhouse_database,
        "SELECT toString(event_id), toString(local_date), toUnixTimestamp(event_time), \
         toUnixTimestamp(received_at), \
         timestamp_replaced, event_type, attribution, session_id, product_id, customer_id, \
         order_id, revenue_e4, currency, arrayStringConcat(product_ids, ' '), \
         placement, device, country, source, watched_ms, max_percent, lift_group \
         FROM events WHERE shop_domain = 'fixture.myshopify.com' ORDER BY event_time",
    )
    .await;
    let expected_rows = "\
01935b00-0000-7000-8000-000000000001\t2026-11-10\t1794312000\t1794312002\t0\timpression\tnone\tsession-2\t\t\t\t0\t\t					0	0\t
01935b00-0000-7000-8000-000000000002\t2026-11-10\t1794312005\t1794312002\t0\tview\tnone\tsession-2\t\t\t\t0\t\t					0	0\t
01935b00-0000-7000-8000-000000000003\t2026-11-10\t1794312009\t1794312002\t0\tclick\tnone\tsession-2\tgid://shopify/Product/7\t\t\t0\t\t					0	0\t
01935b00-0000-7000-8000-000000000004\t2026-11-10\t1794312030\t1794312031\t0\tadd_to_cart\tinfluenced\tsession-2\tgid://shopify/Product/7\t\t\t0\t\t					0	0\t
01935b00-0000-7000-8000-000000000005\t2026-11-10\t1794312100\t1794312100\t1\tcheckout_completed\tdirect\tsession-2\t\t8123\torder-json-1\t1234567\tEUR\t					0	0\t
01938e00-0000-7000-8000-000000000001\t2026-11-17\t1794916800\t1794916802\t0\timpression\tnone\tsession-2\t\t\t\t0\t\t					0	0\t
01938e00-0000-7000-8000-000000000002\t2026-11-17\t1794916805\t1794916802\t0\tview\tnone\tsession-2\t\t\t\t0\t\t					0	0\t
01938e00-0000-7000-8000-000000000003\t2026-11-17\t1794916809\t1794916802\t0\tclick\tnone\tsession-2\tgid://shopify/Product/7\t\t\t0\t\t					0	0\t
01938e00-0000-7000-8000-000000000004\t2026-11-17\t1794916830\t1794916831\t0\tadd_to_cart\tinfluenced\tsession-2\tgid://shopify/Product/7\t\t\t0\t\t					0	0\t
01938e00-0000-7000-8000-000000000005\t2026-11-17\t1794916900\t1794916900\t1\tcheckout_completed\tdirect\tsession-2\t\t8123\torder-v1-1\t1234567\tEUR\t					0	0\t
0193a3c8-2f5e-7c1a-9b7e-000000000001\t2026-11-20\t1795176000\t1795176002\t0\tview\tnone\tsession-1\t\t\t\t0\t\t					0	0\t
0193a3c8-2f5e-7c1a-9b7e-000000000002\t2026-11-20\t1795176010\t1795176002\t0\tclick\tnone\tsession-1\tgid://shopify/Product/7\t\t\t0\t\t					0	0\t
0193a3c8-2f5e-7c1a-9b7e-000000000003\t2026-11-20\t1795176100\t1795176100\t0\tcheckout_completed\tdirect\tsession-1\t\t8123\torder-1001\t1234567\tEUR\tgid://shopify/Product/7 gid://shopify/Product/9					0	0\t
019ad000-6d3a-7b2c-8e4f-000000000001\t2026-11-29\t1795953600\t1795953602\t0\tclick\tnone\tsession-3\t\t\t\t0\t\t\t\t\t\t\t0\t0\t
019ad000-6d3a-7b2c-8e4f-000000000002\t2026-11-29\t1795953640\t1795953602\t0\twatch\tnone\tsession-3\t\t\t\t0\t\t\tproduct\tmobile\tFR\temail\t36250\t100\t
019ad000-6d3a-7b2c-8e4f-000000000003\t2026-11-29\t1795953700\t1795953602\t0\tview\tnone\tsession-3\t\t\t\t0\t\t\tother\ttablet\tZZ\treferral\t0\t0\t
019ad400-1a2b-7c3d-8e4f-000000000001\t2026-11-30\t1796040000\t1796040002\t0\tsession\tnone\tsession-4\t\t\t\t0\t\t\t\tmobile\tCA\tsocial\t0\t0\tholdout
019ad400-1a2b-7c3d-8e4f-000000000002\t2026-11-30\t1796040300\t1796040300\t0\tcheckout_completed\tnone\tsession-5\t\t\torder-4001\t455000\tCAD\tgid://shopify/Product/11\t\tmobile\tCA\t\t0\t0\texposed";
    assert_eq!(rows, expected_rows);
    assert_eq!(files_in(&spool_dir.join("dead")), Vec::<String>::new());
    assert_eq!(
        files_in(&spool_dir.join("unreadable")),
        Vec::<String>::new()
    );
}

/// After a rollback, the older release finds a segment of a format only a newer one reads,
/// between segments it reads: those ship, and the one it cannot read is moved, untouched, to
/// `unreadable/`, counted and logged at error level.
#[tokio::test]
async fn a_segment_of_a_format_this_release_does_not_know_is_set_aside_and_the_rest_ships() {
    let newer = encode_record(&[FORMAT_VERSION + 1, 1, 2, 3]);
    let (spool_dir, paths) = spool_of(&[JSON_SEGMENT, &newer, FORMAT_1_SEGMENT]);
    let app = spawn_process_app_on(spool_dir.clone(), &[]).await;
    let posted = post_new_events(&app, 4).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    let mut expected: HashSet<String> = posted.into_iter().collect();
    expected.extend(json_ids());
    expected.extend(format_1_ids());
    assert_eq!(event_ids_once(&app.clickhouse_database).await, expected);

    let name = paths[1].file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        files_in(&spool_dir.join("unreadable")),
        std::slice::from_ref(&name)
    );
    assert_eq!(
        std::fs::read(spool_dir.join("unreadable").join(&name)).unwrap(),
        newer
    );
    assert_eq!(files_in(&spool_dir.join("dead")), Vec::<String>::new());
    let (_, readiness) = json_of(app.get("/readyz").await).await;
    assert_eq!(readiness["unreadable_spool_segments"], 1, "{readiness}");
    assert_eq!(readiness["status"], "ready", "{readiness}");
    assert_eq!(
        metric_value(
            &app.process.metrics().await,
            "spool_segments_unreadable_total",
            &[]
        ),
        Some(1.0)
    );
    let logged = app
        .process
        .wait_for_log(
            "a spool segment this release cannot read was set aside; the rest ships",
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(logged["level"], "ERROR", "{logged}");
    assert!(
        logged["error"]
            .as_str()
            .unwrap()
            .contains(&format!("format {}", FORMAT_VERSION + 1)),
        "{logged}"
    );
}

/// One flipped byte in an early record of a sealed segment of many: every other record ships,
/// exactly once; the damaged record's bytes are kept in `dead/`, counted and logged.
#[tokio::test]
async fn a_flipped_byte_in_a_sealed_segment_costs_only_its_record_whose_bytes_are_kept() {
    let event = |n: u32| SpoolEvent {
        event_id: Uuid::now_v7(),
        client_event_id: true,
        shop: "damaged.myshopify.com".into(),
        local_date: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
        event_time: 1_795_176_000 + i64::from(n),
        received_at: 1_795_176_000 + i64::from(n),
        timestamp_replaced: false,
        event_type: EventType::View,
        attribution: None,
        video_id: format!("video-{}", n % 7),
        widget_id: String::new(),
        session_id: format!("session-{n}"),
        customer_id: String::new(),
        product_id: String::new(),
        order_id: String::new(),
        revenue_e4: 0,
        currency: String::new(),
        product_ids: Vec::new(),
        placement: None,
        device: None,
        country: None,
        source: None,
        watched_ms: 0,
        max_percent: 0,
        group: None,
    };
    // 300 records of one to three events.
    let requests: Vec<Vec<SpoolEvent>> = (0..300u32)
        .map(|r| (0..=r % 3).map(|i| event(r * 3 + i)).collect())
        .collect();
    let records: Vec<Vec<u8>> = requests.iter().map(|r| encode_events(r).unwrap()).collect();
    let damaged_record = 2;
    let offset: usize = records[..damaged_record].iter().map(Vec::len).sum();
    let mut segment = records.concat();
    // A byte inside the damaged record's payload.
    segment[offset + 40] ^= 0x20;

    let (spool_dir, paths) = spool_of(&[&segment]);
    let app = spawn_process_app_on(spool_dir.clone(), &[]).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    let expected: HashSet<String> = requests
        .iter()
        .enumerate()
        .filter(|(r, _)| *r != damaged_record)
        .flat_map(|(_, events)| events.iter().map(|e| e.event_id.to_string()))
        .collect();
    assert_eq!(expected.len(), 600 - requests[damaged_record].len());
    assert_eq!(event_ids_once(&app.clickhouse_database).await, expected);

    let stem = paths[0].file_stem().unwrap().to_string_lossy().into_owned();
    let kept = format!("{stem}.{offset}.damaged");
    assert_eq!(
        files_in(&spool_dir.join("dead")),
        std::slice::from_ref(&kept)
    );
    assert_eq!(
        std::fs::read(spool_dir.join("dead").join(&kept)).unwrap(),
        segment[offset..offset + records[damaged_record].len()]
    );
    assert_eq!(
        app.metric("spool_damaged_bytes_total", &[]).await,
        Some(records[damaged_record].len() as f64)
    );
    let logged = app
        .process
        .wait_for_log(
            "damaged records in a spool segment: the records around them shipped, their bytes are kept",
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(logged["level"], "ERROR", "{logged}");
    assert!(!paths[0].exists(), "the shipped segment is deleted");
}

/// A segment whose reads keep failing (here a directory in a segment's place) is retried, then
/// set aside like one of an unknown format; the segments around it ship.
#[tokio::test]
async fn a_segment_whose_reads_keep_failing_is_set_aside_and_the_rest_ships() {
    let (spool_dir, paths) = spool_of(&[FORMAT_1_SEGMENT, &[], FORMAT_2_SEGMENT]);
    std::fs::remove_file(&paths[1]).unwrap();
    std::fs::create_dir(&paths[1]).unwrap();
    let app = spawn_process_app_on(spool_dir.clone(), &[]).await;
    app.wait_for_metric(
        "spool_segments_unreadable_total",
        &[],
        |n| n == 1.0,
        Duration::from_secs(30),
    )
    .await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    let expected: HashSet<String> = format_1_ids().into_iter().chain(format_2_ids()).collect();
    assert_eq!(event_ids_once(&app.clickhouse_database).await, expected);
    let name = paths[1].file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(
        files_in(&spool_dir.join("unreadable")),
        std::slice::from_ref(&name)
    );
    assert!(!paths[1].exists());
    let retried = app
        .process
        .log()
        .iter()
        .filter(|entry| entry["message"] == "cannot read a spool segment; will retry")
        .count();
    assert_eq!(retried, 2, "read three times before it was set aside");
}
