//! The service on a ClickHouse cluster: the local one of scripts/cluster (2 shards × 2 replicas
//! of 18.16 with ZooKeeper; nodes 1 and 2 hold shard 1, nodes 3 and 4 shard 2), with
//! `CLICKHOUSE_CLUSTER` set and the service talking to node 1.
//!
//! The tests stop and start nodes, so they take turns (`CLUSTER`), and each first starts
//! whatever a failed one left stopped. They share one ClickHouse database, migrated once (DDL on
//! a cluster waits for every node: half a minute for the whole schema); each uses shops of its own.

use std::collections::HashSet;
use std::sync::OnceLock;
use std::time::Duration;

use futures::StreamExt;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;
use videoapp::config::Settings;

use crate::support::truth::{events, queries, recount_cases_with, window_season};
use crate::support::*;

/// Held by the test that has the cluster: one at a time.
static CLUSTER: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The database the cluster tests share.
fn cluster_database() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| format!("{CLUSTER_DATABASE_PREFIX}{}", Uuid::new_v4().simple()))
}

const CLUSTER_NAME: &str = "videoapp";

fn cluster_script(args: &[&str]) {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/cluster");
    let output = std::process::Command::new(script)
        .args(args)
        .output()
        .expect("run scripts/cluster");
    assert!(
        output.status.success(),
        "scripts/cluster {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Every node and ZooKeeper running (a test that failed may have left some stopped).
fn whole_cluster() {
    cluster_script(&["start"]);
}

fn stop_node(node: u8) {
    cluster_script(&["stop-node", &node.to_string()]);
}

fn start_node(node: u8) {
    cluster_script(&["start-node", &node.to_string()]);
}

/// The test settings, on the cluster through node 1.
fn on_cluster(settings: &mut Settings) {
    settings.clickhouse_url = Some(cluster_urls()[0].parse().expect("a node URL"));
    settings.clickhouse_cluster = Some(CLUSTER_NAME.to_string());
    settings.clickhouse_database = cluster_database().to_string();
}

async fn spawn_on_cluster() -> TestApp {
    spawn_app_with(on_cluster).await
}

/// The service on the cluster as a process of its own, for metrics of its own.
async fn spawn_process_on_cluster() -> ProcessApp {
    spawn_process_app(&[
        ("CLICKHOUSE_URL", cluster_urls()[0].clone()),
        ("CLICKHOUSE_CLUSTER", CLUSTER_NAME.to_string()),
        ("CLICKHOUSE_DATABASE", cluster_database().to_string()),
    ])
    .await
}

/// The shard (1 or 2) that holds `shop`'s rows: what the `Distributed` tables' key picks.
async fn shard_of(shop: &str) -> u64 {
    let sql = format!("SELECT cityHash64('{shop}') % 2 + 1");
    clickhouse_query(cluster_database(), &sql)
        .await
        .parse()
        .unwrap()
}

/// A fresh shop name (`prefix`-…) that lives on `shard`.
async fn shop_on_shard(prefix: &str, shard: u64) -> String {
    loop {
        let shop = format!(
            "{prefix}-{}.myshopify.com",
            &Uuid::new_v4().simple().to_string()[..8]
        );
        if shard_of(&shop).await == shard {
            return shop;
        }
    }
}

/// One view per event, each with an id of its own.
fn views(n: usize, video: &str) -> Vec<Value> {
    (0..n)
        .map(|_| json!({ "eventId": Uuid::new_v4(), "eventType": "view", "videoId": video }))
        .collect()
}

/// A shop with a video and an analytics key; returns (video id, key).
async fn shop_with_key(app: &impl Service, shop: &str) -> (String, String) {
    let (video, _) = app.create_shop_showing_a_video(shop, json!({})).await;
    let key = app.create_api_key(shop, "cluster").await;
    (video, key["key"].as_str().unwrap().to_string())
}

/// For each of `shards`, a fresh shop (`prefix`-…) on it with a video and an analytics key:
/// (shop, video id, key).
async fn shops_on_shards(
    app: &impl Service,
    prefix: &str,
    shards: &[u64],
) -> Vec<(String, String, String)> {
    let mut shops = vec![];
    for &shard in shards {
        let shop = shop_on_shard(prefix, shard).await;
        let (video, key) = shop_with_key(app, &shop).await;
        shops.push((shop, video, key));
    }
    shops
}

/// Posts `requests` batches of `per_request` views of `video` to `shop`, `in_flight` at a time;
/// returns the ids of the acknowledged events.
async fn post_views(
    app: &impl Service,
    shop: &str,
    video: &str,
    requests: usize,
    per_request: usize,
) -> Vec<String> {
    let batches = futures::stream::iter(0..requests).map(|_| async {
        let batch = views(per_request, video);
        let response = app.post_events(shop, &json!({ "events": batch })).await;
        assert_eq!(
            response.status(),
            StatusCode::ACCEPTED,
            "events acknowledged"
        );
        batch
            .iter()
            .map(|e| e["eventId"].as_str().unwrap().to_string())
            .collect::<Vec<_>>()
    });
    let acknowledged: Vec<Vec<String>> = batches.buffer_unordered(4).collect().await;
    acknowledged.concat()
}

/// (rows, distinct event ids) of `shop` in `events`, through the `Distributed` table.
async fn stored_events(shop: &str) -> (u64, u64) {
    let sql = format!(
        "SELECT count(), uniqExact(event_id) FROM events WHERE shop_domain = '{shop}' FORMAT CSV"
    );
    let text = clickhouse_query(cluster_database(), &sql).await;
    let (rows, ids) = text.split_once(',').unwrap();
    (rows.parse().unwrap(), ids.parse().unwrap())
}

/// `GET /api/v1/analytics/summary` with `key`: its status and body.
async fn summary(app: &impl Service, key: &str) -> (StatusCode, Value) {
    let response = app
        .client
        .get(app.url("/api/v1/analytics/summary"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    json_of(response).await
}

/// The summary's views, asserting a 200.
async fn summary_views(app: &impl Service, key: &str) -> u64 {
    let (status, body) = summary(app, key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["data"]["views"].as_u64().unwrap()
}

/// Rows of `shop` in `events_local` on `node` (1..=4), straight from the node.
async fn rows_on_node(node: usize, shop: &str) -> Result<u64, String> {
    let sql = format!("SELECT count() FROM events_local WHERE shop_domain = '{shop}'");
    let server = &cluster_urls()[node - 1];
    let client = reqwest::Client::new();
    let text = try_clickhouse_query_on(&client, server, cluster_database(), &sql).await?;
    text.parse().map_err(|e| format!("{e}: {text}"))
}

/// Waits until `node` holds `expected` rows of `shop` (replication is asynchronous).
async fn wait_for_rows_on_node(node: usize, shop: &str, expected: u64) {
    let what = format!("node {node} holds {expected} rows of {shop}");
    eventually(&what, Duration::from_secs(60), move || async move {
        let rows = rows_on_node(node, shop).await;
        (rows == Ok(expected)).then_some(()).ok_or(rows)
    })
    .await;
}

#[test]
fn every_metric_matches_a_recount_on_the_cluster() {
    let _turn = CLUSTER.blocking_lock();
    whole_cluster();
    recount_cases_with(
        2,
        (events(window_season(), 200..400), queries()),
        on_cluster,
    );
}

#[tokio::test]
async fn a_replica_killed_mid_load_loses_nothing_and_analytics_keeps_answering() {
    let _turn = CLUSTER.lock().await;
    whole_cluster();
    let app = spawn_on_cluster().await;
    let shops = shops_on_shards(&app, "replica", &[1, 2]).await;

    let mut acknowledged = vec![vec![]; 2];
    for (i, (shop, video, _)) in shops.iter().enumerate() {
        acknowledged[i].extend(post_views(&app, shop, video, 10, 20).await);
    }
    // The second replica of each shard dies while events arrive and are shipped.
    let load = async {
        let mut sent = vec![vec![]; 2];
        for _ in 0..5 {
            for (i, (shop, video, _)) in shops.iter().enumerate() {
                sent[i].extend(post_views(&app, shop, video, 4, 20).await);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        sent
    };
    let kill = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        tokio::task::spawn_blocking(|| {
            stop_node(4);
            stop_node(2);
        })
        .await
        .unwrap();
    };
    let (sent, ()) = tokio::join!(load, kill);
    for (i, ids) in sent.into_iter().enumerate() {
        acknowledged[i].extend(ids);
    }

    wait_until_shipped(&app, Duration::from_secs(60)).await;
    for (i, (shop, _, key)) in shops.iter().enumerate() {
        let expected = acknowledged[i].len() as u64;
        assert_eq!(expected, 10 * 20 + 5 * 4 * 20);
        assert_eq!(stored_events(shop).await, (expected, expected), "{shop}");
        // Answered by the replica left of each shard.
        assert_eq!(summary_views(&app, key).await, expected, "{shop}");
    }

    // Back, each dead replica fetches what it missed.
    tokio::task::spawn_blocking(|| {
        start_node(2);
        start_node(4);
    })
    .await
    .unwrap();
    for (i, (shop, _, _)) in shops.iter().enumerate() {
        let replica = [2, 4][i];
        wait_for_rows_on_node(replica, shop, acknowledged[i].len() as u64).await;
    }
}

#[tokio::test]
async fn a_shard_down_answers_503_while_events_wait_in_the_spool_and_arrive_once() {
    let _turn = CLUSTER.lock().await;
    whole_cluster();
    let app = spawn_process_on_cluster().await;
    let near = shop_on_shard("near", 1).await;
    let far = shop_on_shard("far", 2).await;
    let (near_video, near_key) = shop_with_key(&app, &near).await;
    let (far_video, far_key) = shop_with_key(&app, &far).await;
    let mut near_ids = post_views(&app, &near, &near_video, 2, 10).await;
    let mut far_ids = post_views(&app, &far, &far_video, 2, 10).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    tokio::task::spawn_blocking(|| {
        stop_node(3);
        stop_node(4);
    })
    .await
    .unwrap();

    // No number at all rather than one that misses a shard: even the shop on the shard that
    // answers gets none, since a query cannot know that no row of it is on the other.
    for key in [&near_key, &far_key] {
        let (status, body) = summary(&app, key).await;
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert_eq!(body["error"]["code"], "SERVICE_UNAVAILABLE", "{body}");
    }
    // Ingestion goes on acknowledging; the events wait in the spool.
    let (failures, transient) = ("clickhouse_insert_failures_total", [("kind", "transient")]);
    let before = app.metric(failures, &transient).await.unwrap_or(0.0);
    near_ids.extend(post_views(&app, &near, &near_video, 5, 10).await);
    far_ids.extend(post_views(&app, &far, &far_video, 5, 10).await);
    // Sealed and tried: the shipper has failed to ship them, and they are still there.
    let within = Duration::from_secs(60);
    app.wait_for_metric(failures, &transient, |n| n > before, within)
        .await;
    assert!(
        spooled_segments(&app.spool_dir) > 0,
        "the events wait in the spool"
    );

    tokio::task::spawn_blocking(|| {
        start_node(3);
        start_node(4);
    })
    .await
    .unwrap();
    wait_until_shipped(&app, Duration::from_secs(90)).await;
    for (shop, key, ids) in [(&near, &near_key, &near_ids), (&far, &far_key, &far_ids)] {
        let expected = ids.len() as u64;
        assert_eq!(expected, 70);
        assert_eq!(stored_events(shop).await, (expected, expected), "{shop}");
        assert_eq!(summary_views(&app, key).await, expected, "{shop}");
    }
}

/// A proxy that hands each request to the next of `upstreams` in turn.
async fn round_robin(upstreams: Vec<String>) -> String {
    use axum::extract::{Request, State};
    use axum::response::IntoResponse;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    struct Turns {
        upstreams: Vec<String>,
        next: AtomicUsize,
        client: reqwest::Client,
    }
    async fn forward(State(turns): State<Arc<Turns>>, request: Request) -> impl IntoResponse {
        let turn = turns.next.fetch_add(1, Ordering::Relaxed) % turns.upstreams.len();
        let (parts, body) = request.into_parts();
        let url = format!("{}{}", turns.upstreams[turn], parts.uri);
        let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
        let mut upstream = turns.client.request(parts.method, url).body(body);
        for (name, value) in &parts.headers {
            if name != "host" {
                upstream = upstream.header(name, value);
            }
        }
        let answer = upstream.send().await.unwrap();
        let status = answer.status();
        let headers = answer.headers().clone();
        let body = answer.bytes().await.unwrap();
        (status, headers, body)
    }
    let turns = Arc::new(Turns {
        upstreams,
        next: AtomicUsize::new(0),
        client: reqwest::Client::new(),
    });
    let router = axum::Router::new().fallback(forward).with_state(turns);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, router).await });
    address
}

/// The service as the proxy's clients see it.
struct Proxied(Instance);

impl std::ops::Deref for Proxied {
    type Target = Instance;
    fn deref(&self) -> &Instance {
        &self.0
    }
}

impl Service for Proxied {
    async fn catalog_loads(&self) -> u64 {
        unreachable!("the proxy has no catalog cache of its own")
    }
}

#[tokio::test]
async fn two_instances_behind_a_round_robin_proxy_count_every_event_once() {
    let _turn = CLUSTER.lock().await;
    whole_cluster();
    let first = spawn_on_cluster().await;
    let mut settings = test_settings(&first.database_url, cluster_database());
    on_cluster(&mut settings);
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        cluster_database().to_string(),
    )
    .await;
    let upstreams = vec![first.address.clone(), second.address.clone()];
    let proxy = Proxied(Instance {
        address: round_robin(upstreams).await,
        metrics_address: first.metrics_address.clone(),
        client: reqwest::Client::new(),
        database_url: first.database_url.clone(),
        clickhouse_database: cluster_database().to_string(),
        spool_dir: first.spool_dir.clone(),
    });

    let shops = shops_on_shards(&proxy, "pair", &[1, 2, 1, 2]).await;
    let sent = futures::future::join_all(
        shops
            .iter()
            .map(|(shop, video, _)| post_views(&proxy, shop, video, 20, 15)),
    )
    .await;

    wait_until_shipped(&first, Duration::from_secs(60)).await;
    wait_until_shipped(&second, Duration::from_secs(60)).await;
    for ((shop, _, key), ids) in shops.iter().zip(&sent) {
        let expected = ids.len() as u64;
        assert_eq!(ids.iter().collect::<HashSet<_>>().len(), 300);
        assert_eq!(stored_events(shop).await, (expected, expected), "{shop}");
        // Either instance answers the same.
        assert_eq!(summary_views(&first, key).await, expected, "{shop}");
        assert_eq!(summary_views(&second, key).await, expected, "{shop}");
    }
}

#[tokio::test]
async fn privacy_deletions_reach_every_shard_and_replica() {
    use videoapp::warehouse::privacy::{redact_customer, redact_shop, shop_tables, Customer};

    let _turn = CLUSTER.lock().await;
    whole_cluster();
    let app = spawn_on_cluster().await;
    let near = shop_on_shard("keep", 1).await;
    let far = shop_on_shard("forget", 2).await;
    let (near_video, near_key) = shop_with_key(&app, &near).await;
    let (far_video, _) = shop_with_key(&app, &far).await;
    let customer_views: Vec<Value> = (0..5)
        .map(|_| {
            json!({ "eventId": Uuid::new_v4(), "eventType": "view", "videoId": near_video,
                    "sessionId": "their-session" })
        })
        .collect();
    let signed_in = signed(&near, &[("logged_in_customer_id", "4242")]);
    let url = app.url(&format!("/apps/videoapp_sub/analytics?{signed_in}"));
    let body = json!({ "events": customer_views });
    let response = app.client.post(url).json(&body).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let others = post_views(&app, &near, &near_video, 2, 10).await;
    post_views(&app, &far, &far_video, 2, 10).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;

    let warehouse = warehouse_on(&cluster_urls()[0], cluster_database(), Some(CLUSTER_NAME));
    let customer = Customer {
        ids: vec!["4242".into()],
        order_ids: vec![],
    };
    redact_customer(&warehouse, &near, &customer, i64::MAX)
        .await
        .unwrap();
    redact_shop(&warehouse, &far).await.unwrap();

    // Gone from both replicas of each shard, the raw rows and every aggregate of the shop.
    for node in 1..=4 {
        wait_for_rows_on_node(node, &far, 0).await;
    }
    for node in [1, 2] {
        wait_for_rows_on_node(node, &near, others.len() as u64).await;
    }
    for table in shop_tables() {
        let sql = format!("SELECT count() FROM {table} WHERE shop_domain = '{far}'");
        assert_eq!(
            clickhouse_query(cluster_database(), &sql).await,
            "0",
            "{table}"
        );
    }
    // The shop kept keeps the rest.
    assert_eq!(stored_events(&near).await, (20, 20));
    assert_eq!(
        summary_views(&app, &near_key).await,
        25,
        "aggregates are not redacted per customer"
    );
}

#[tokio::test]
async fn two_batches_that_add_the_same_numbers_both_count() {
    let _turn = CLUSTER.lock().await;
    whole_cluster();
    let app = spawn_on_cluster().await;
    let shops = shops_on_shards(&app, "twice", &[1, 2]).await;
    // Each batch one view of the same video on the same day: different events, whose rows in
    // every aggregate are equal, block for block.
    for _ in 0..2 {
        for (shop, video, _) in &shops {
            post_views(&app, shop, video, 1, 1).await;
        }
        wait_until_shipped(&app, Duration::from_secs(30)).await;
    }
    for (shop, _, key) in &shops {
        assert_eq!(stored_events(shop).await, (2, 2), "{shop}");
        assert_eq!(summary_views(&app, key).await, 2, "{shop}");
    }
}

#[tokio::test]
async fn an_instance_started_while_a_replica_is_down_serves_and_ships() {
    let _turn = CLUSTER.lock().await;
    whole_cluster();
    // The schema is in place (migrated by this instance if no test did it before).
    let first = spawn_on_cluster().await;
    first.shutdown().await;
    tokio::task::spawn_blocking(|| stop_node(4)).await.unwrap();

    // Nothing to migrate: starting asks no node but its own, and ships through the replicas up.
    let app = spawn_on_cluster().await;
    let shop = shop_on_shard("restart", 2).await;
    let (video, key) = shop_with_key(&app, &shop).await;
    let ids = post_views(&app, &shop, &video, 3, 10).await;
    wait_until_shipped(&app, Duration::from_secs(30)).await;
    assert_eq!(stored_events(&shop).await, (30, 30));
    assert_eq!(summary_views(&app, &key).await, ids.len() as u64);
    tokio::task::spawn_blocking(|| start_node(4)).await.unwrap();
}
