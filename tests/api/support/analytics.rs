//! The analytics API as its tests arrange and ask it: keys, events recorded and shipped, requests
//! with a key, and the dates of a shop's days.

use super::*;
use std::time::Duration;

use chrono::{DateTime, Days, NaiveDate, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;
use reqwest::header::HeaderMap;
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

pub const SHOP: &str = "analytics-shop.myshopify.com";
pub const OTHER_SHOP: &str = "other-analytics-shop.myshopify.com";

pub const UNAUTHORIZED_MESSAGE: &str =
    "Missing or invalid Authorization header. Use: Authorization: Bearer vk_…";
pub const INVALID_KEY_MESSAGE: &str = "Invalid or revoked API key";
pub const NOT_FOUND_MESSAGE: &str = "Resource not found";

/// Requests per key per minute for tests that are not about the limit and make many requests.
pub const UNLIMITED: u32 = 100_000;

/// Lets tests place events on any day of the past year.
pub fn back_fill(settings: &mut videoapp::config::Settings) {
    settings.event_max_past = Duration::from_secs(400 * 86_400);
}

/// Our 404 for an object the key's shop does not have.
pub async fn assert_not_found(response: Response) {
    assert_error(
        response,
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        NOT_FOUND_MESSAGE,
    )
    .await;
}

// ---- arranging --------------------------------------------------------------------------------

pub struct Key {
    id: String,
    pub(crate) secret: String,
}

impl Key {
    /// The key a creation answered with.
    pub fn from_created(body: &Value) -> Key {
        Key {
            id: body["id"].as_str().unwrap().to_string(),
            secret: body["key"].as_str().unwrap().to_string(),
        }
    }
}

pub async fn create_key(app: &impl Service, shop: &str) -> Key {
    Key::from_created(&app.create_api_key(shop, "Reporting").await)
}

pub async fn revoke_key(app: &TestApp, shop: &str, key: &Key) {
    let response = app
        .send_admin(
            Method::DELETE,
            &format!("/shops/{shop}/api-keys/{}", key.id),
        )
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);
}

/// A shop with one video, one widget showing it and one key: what every endpoint needs.
pub struct Fixture {
    pub(crate) key: Key,
    pub(crate) video: String,
    pub(crate) widget: String,
}

pub async fn shop_with_key(app: &impl Service, shop: &str) -> Fixture {
    app.create_shop(shop).await;
    let video = app.create_video(shop, json!({ "title": "Fixture" })).await;
    let widget = app
        .create_widget(shop, json!({ "title": "Fixture", "videoIds": [video] }))
        .await;
    Fixture {
        key: create_key(app, shop).await,
        video,
        widget,
    }
}

/// The five endpoints, below `/api/v1/analytics`, for a video and a widget of the key's shop.
pub fn endpoints(video: &str, widget: &str) -> [String; 5] {
    [
        "/videos".to_string(),
        format!("/video/{video}"),
        "/summary".to_string(),
        "/widgets".to_string(),
        format!("/widget/{widget}"),
    ]
}

/// An event of `kind` about `target` (`{"videoId": …}`, `{"widgetId": …}` or both).
pub fn event(kind: &str, target: &Value) -> Value {
    let mut e = json!({ "eventType": kind });
    merge(&mut e, target.clone());
    e
}

pub fn at(mut e: Value, t: DateTime<Utc>) -> Value {
    e["timestamp"] = json!(t.to_rfc3339());
    e
}

pub fn checkout(target: &Value, revenue: Value) -> Value {
    let mut e = event("checkout_completed", target);
    e["revenue"] = revenue;
    e["currency"] = json!("USD");
    e
}

/// Posts `events` for `shop`, then waits until ClickHouse holds them, both daily views have
/// counted every row (the analytics API reads only the views) and the shipper is done with them.
pub async fn record(app: &impl Service, shop: &str, events: Vec<Value>) {
    let marker = Uuid::new_v4().to_string();
    let events: Vec<Value> = events
        .into_iter()
        .map(|mut e| {
            e["sessionId"] = json!(marker);
            e
        })
        .collect();
    for chunk in events.chunks(100) {
        let response = app.post_events(shop, &json!({ "events": chunk })).await;
        let status = response.status();
        assert_eq!(
            status,
            StatusCode::ACCEPTED,
            "{}",
            response.text().await.unwrap()
        );
    }
    let counted = "sum(impressions + views + clicks + add_to_cart + orders)";
    let sql = format!(
        "SELECT countIf(session_id = '{marker}'), count(), \
         (SELECT {counted} FROM video_daily), (SELECT {counted} FROM widget_daily) FROM events"
    );
    let (database, sql, sent) = (&app.clickhouse_database, &sql, events.len() as u64);
    eventually(
        "the events are counted",
        Duration::from_secs(20),
        move || async move {
            let row = clickhouse_query(database, sql).await;
            let n: Vec<u64> = row.split('\t').map(|v| v.parse().unwrap()).collect();
            match n[0] == sent && n[1] == n[2] && n[1] == n[3] {
                true => Ok(()),
                false => Err(row),
            }
        },
    )
    .await;
    // The shipper records the change after the insert: from then on no cached answer predates
    // these events.
    wait_until_shipped(app, Duration::from_secs(20)).await;
}

/// Counts of each kind of event about one video or widget, and the revenue of each order.
#[derive(Clone, Debug, Default)]
pub struct Activity {
    impressions: usize,
    views: usize,
    clicks: usize,
    add_to_cart: usize,
    revenues: Vec<&'static str>,
}

impl Activity {
    pub fn new(counts: [usize; 4], revenues: &[&'static str]) -> Activity {
        Activity {
            impressions: counts[0],
            views: counts[1],
            clicks: counts[2],
            add_to_cart: counts[3],
            revenues: revenues.to_vec(),
        }
    }

    pub fn events(&self, target: &Value) -> Vec<Value> {
        let mut events = Vec::new();
        for (kind, n) in [
            ("impression", self.impressions),
            ("view", self.views),
            ("click", self.clicks),
            ("add_to_cart", self.add_to_cart),
        ] {
            events.extend((0..n).map(|_| event(kind, target)));
        }
        for revenue in &self.revenues {
            let amount: Value = serde_json::from_str(revenue).unwrap();
            events.push(checkout(target, amount));
        }
        events
    }

    pub fn revenue_cents(&self) -> i64 {
        self.revenues.iter().map(|r| cents(r)).sum()
    }

    /// The value a sort key compares (revenue in cents).
    pub fn metric(&self, name: &str) -> i64 {
        let n = match name {
            "impressions" => self.impressions,
            "views" => self.views,
            "clicks" => self.clicks,
            "add_to_cart" => self.add_to_cart,
            "orders" => self.revenues.len(),
            "revenue" => return self.revenue_cents(),
            other => panic!("no metric {other}"),
        };
        n as i64
    }

    /// The `metrics` object the API should show.
    pub fn metrics(&self) -> Value {
        json!({
            "impressions": self.impressions,
            "views": self.views,
            "clicks": self.clicks,
            "add_to_cart": self.add_to_cart,
            "orders": self.revenues.len(),
            "revenue": self.revenue_cents() as f64 / 100.0,
            // These events carry no attribution.
            "attribution": {
                "direct": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
                "influenced": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
            },
            // Nor is any of them a watch.
            "watch_time_seconds": 0.0,
            "avg_watch_seconds": 0.0,
            "completion_rate": 0.0,
            "reached": { "p25": 0, "p50": 0, "p75": 0, "p100": 0 },
        })
    }
}

/// `"12.5"` → 1250.
pub fn cents(decimal: &str) -> i64 {
    let (whole, fraction) = decimal.split_once('.').unwrap_or((decimal, ""));
    let fraction = format!("{fraction:0<2}");
    whole.parse::<i64>().unwrap() * 100 + fraction[..2].parse::<i64>().unwrap()
}

// ---- asking -----------------------------------------------------------------------------------

/// `GET /api/v1/analytics{path}` with the `Authorization` header set to `authorization`.
pub async fn analytics_with(
    app: &impl Service,
    authorization: Option<&str>,
    path: &str,
) -> Response {
    let mut request = app.client.get(app.url(&format!("/api/v1/analytics{path}")));
    if let Some(value) = authorization {
        request = request.header("authorization", value);
    }
    request.send().await.unwrap()
}

pub async fn analytics(app: &impl Service, key: &Key, path: &str) -> Response {
    analytics_with(app, Some(&format!("Bearer {}", key.secret)), path).await
}

/// A successful answer, as JSON and as the raw text (which shows how numbers are written).
pub async fn analytics_ok(app: &impl Service, key: &Key, path: &str) -> (Value, String) {
    let response = analytics(app, key, path).await;
    let status = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{path}: {text}");
    let body: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"));
    assert_eq!(body["success"], json!(true), "{path}: {text}");
    (body, text)
}

/// The error answer's status, headers, code and message.
pub async fn error_of(response: Response) -> (StatusCode, HeaderMap, String, String) {
    let headers = response.headers().clone();
    let (status, body) = json_of(response).await;
    assert_eq!(body["success"], json!(false), "{body}");
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    (
        status,
        headers,
        text(&body["error"]["code"]),
        text(&body["error"]["message"]),
    )
}

/// A 401 with exactly this code and message, and the `WWW-Authenticate: Bearer` challenge.
pub async fn assert_unauthenticated(response: Response, code: &str, message: &str, case: &str) {
    let (status, headers, actual_code, actual_message) = error_of(response).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}");
    assert_eq!(actual_code, code, "{case}");
    assert_eq!(actual_message, message, "{case}");
    assert_eq!(
        header(&headers, "www-authenticate").as_deref(),
        Some("Bearer"),
        "{case}"
    );
}

pub fn header(headers: &HeaderMap, name: &str) -> Option<String> {
    headers.get(name).map(|v| v.to_str().unwrap().to_string())
}

pub fn number_header(headers: &HeaderMap, name: &str) -> u64 {
    let value = header(headers, name).unwrap_or_else(|| panic!("no {name} header"));
    value
        .parse()
        .unwrap_or_else(|_| panic!("{name}: {value} is not a number"))
}

pub fn unix_now() -> u64 {
    Utc::now().timestamp() as u64
}

// ---- dates ------------------------------------------------------------------------------------

pub fn millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

/// Local midnight of `day` in `tz` (it exists in every zone these tests use).
pub fn start_of(day: NaiveDate, tz: Tz) -> DateTime<Utc> {
    tz.from_local_datetime(&day.and_hms_opt(0, 0, 0).unwrap())
        .earliest()
        .unwrap()
        .with_timezone(&Utc)
}

/// The last millisecond of `day` in `tz`.
pub fn end_of(day: NaiveDate, tz: Tz) -> DateTime<Utc> {
    start_of(plus(day, 1), tz) - chrono::Duration::milliseconds(1)
}

pub fn plus(day: NaiveDate, days: u64) -> NaiveDate {
    day.checked_add_days(Days::new(days)).unwrap()
}

pub fn minus(day: NaiveDate, days: u64) -> NaiveDate {
    day.checked_sub_days(Days::new(days)).unwrap()
}

pub fn today_in(tz: Tz) -> NaiveDate {
    Utc::now().with_timezone(&tz).date_naive()
}

pub fn range(start: NaiveDate, end: NaiveDate) -> String {
    format!("start_date={start}&end_date={end}")
}

pub async fn spawn_limited_to_five() -> TestApp {
    spawn_app_with(|s| s.rate_limit_per_minute = 5).await
}
