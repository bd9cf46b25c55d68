//! Numbers by placement, device, country and source: `breakdown=` on the summary, one video, one
//! widget and the time series, and the four filters on every endpoint, JSON and CSV.

use chrono::{Duration as Days, Utc};
use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::analytics::*;
use crate::support::*;

const PHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 \
    (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const DESKTOP: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
    Gecko) Chrome/120.0 Safari/537.36";

/// A shop whose events were sent from a phone (from an email, seen on product pages in France),
/// from a desktop (from a search, on the home page in the US), and from nowhere in particular.
struct Arranged {
    app: TestApp,
    fixture: Fixture,
    /// `start_date=…&end_date=…`: the day of the events.
    day: String,
    date: chrono::NaiveDate,
}

async fn arranged() -> Arranged {
    let app = spawn_app_with(back_fill).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let date = Utc::now().date_naive() - Days::days(2);
    let when = date.and_hms_opt(12, 0, 0).unwrap().and_utc();
    let target = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let with = |kind: &str, extra: Value| {
        let mut e = at(event(kind, &target), when);
        merge(&mut e, extra);
        e
    };
    let phone = json!({ "placement": "product", "country": "FR", "source": "email" });
    let desktop = json!({ "placement": "home", "country": "US", "source": "search" });
    let watch = |ms: u64, percent: u64, place: &Value| {
        let mut figures = json!({ "watchedMs": ms, "maxPercent": percent });
        merge(&mut figures, place.clone());
        with("watch", figures)
    };
    let mut order = with("checkout_completed", phone.clone());
    merge(
        &mut order,
        json!({ "revenue": "20.00", "currency": "USD", "orderId": "o-1" }),
    );
    let sent: [(Option<&str>, Vec<Value>); 3] = [
        (
            Some(PHONE),
            [
                vec![with("impression", phone.clone()); 3],
                vec![with("view", phone.clone()); 2],
                vec![with("click", phone.clone()); 2],
                vec![watch(10_000, 100, &phone), order],
            ]
            .concat(),
        ),
        (
            Some(DESKTOP),
            vec![
                with("impression", desktop.clone()),
                with("view", desktop.clone()),
                watch(4_000, 30, &desktop),
            ],
        ),
        (None, vec![with("click", json!({}))]),
    ];
    for (agent, events) in sent {
        let url = app.url(&format!(
            "/apps/videoapp_sub/analytics?{}",
            signed(SHOP, &[])
        ));
        let mut request = app.client.post(url).json(&json!({ "events": events }));
        if let Some(agent) = agent {
            request = request.header("user-agent", agent);
        }
        assert_eq!(request.send().await.unwrap().status(), StatusCode::ACCEPTED);
    }
    wait_until_shipped(&app, std::time::Duration::from_secs(20)).await;
    Arranged {
        app,
        fixture,
        day: format!("start_date={date}&end_date={date}"),
        date,
    }
}

/// The phone's numbers: three impressions, two views, two clicks, an order of 20.00, and one
/// watch of 10 s to the end.
fn phone_metrics() -> Value {
    json!({
        "impressions": 3, "views": 2, "clicks": 2, "add_to_cart": 0, "orders": 1, "revenue": 20.0,
        "attribution": {
            "direct": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
            "influenced": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
        },
        "watch_time_seconds": 10.0, "avg_watch_seconds": 5.0, "completion_rate": 50.0,
        "reached": { "p25": 1, "p50": 1, "p75": 1, "p100": 1 },
    })
}

/// The desktop's: an impression, a view, and a watch of 4 s to 30%.
fn desktop_metrics() -> Value {
    json!({
        "impressions": 1, "views": 1, "clicks": 0, "add_to_cart": 0, "orders": 0, "revenue": 0.0,
        "attribution": {
            "direct": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
            "influenced": { "add_to_cart": 0, "orders": 0, "revenue": 0.0 },
        },
        "watch_time_seconds": 4.0, "avg_watch_seconds": 0.0, "completion_rate": 0.0,
        "reached": { "p25": 1, "p50": 0, "p75": 0, "p100": 0 },
    })
}

/// The click that said nothing, from no known device.
fn unknown_metrics() -> Value {
    let mut metrics = zero_metrics();
    metrics["clicks"] = json!(1);
    metrics
}

fn zero_metrics() -> Value {
    let mut metrics = desktop_metrics();
    for (name, zero) in [
        ("impressions", json!(0)),
        ("views", json!(0)),
        ("watch_time_seconds", json!(0.0)),
    ] {
        metrics[name] = zero;
    }
    metrics["reached"]["p25"] = json!(0);
    metrics
}

fn with_rates(mut metrics: Value, ctr: f64, cvr: f64) -> Value {
    metrics["ctr"] = json!(ctr);
    metrics["cvr"] = json!(cvr);
    metrics
}

#[tokio::test]
async fn a_summary_broken_down_by_device_has_an_entry_per_device_ordered_by_views() {
    let a = arranged().await;
    let key = &a.fixture.key;
    let (body, _) =
        analytics_ok(&a.app, key, &format!("/summary?{}&breakdown=device", a.day)).await;
    assert_eq!(
        body["data"],
        json!([
            { "device": "mobile", "metrics": with_rates(phone_metrics(), 66.67, 50.0) },
            { "device": "desktop", "metrics": with_rates(desktop_metrics(), 0.0, 0.0) },
            { "device": "unknown", "metrics": with_rates(unknown_metrics(), 0.0, 0.0) },
        ])
    );
    // By clicks, ascending: ties by the value.
    let path = format!(
        "/summary?{}&breakdown=device&sort_by=clicks&sort_order=asc",
        a.day
    );
    let (body, _) = analytics_ok(&a.app, key, &path).await;
    let order: Vec<&str> = (body["data"].as_array().unwrap().iter())
        .map(|e| e["device"].as_str().unwrap())
        .collect();
    assert_eq!(order, ["desktop", "unknown", "mobile"]);

    // Filtered instead: the plain shape, with that device's numbers, from one filter or two.
    for (filters, expected) in [
        ("device=mobile", with_rates(phone_metrics(), 66.67, 50.0)),
        (
            "device=mobile&source=email",
            with_rates(phone_metrics(), 66.67, 50.0),
        ),
        (
            "device=desktop&placement=home&country=US",
            with_rates(desktop_metrics(), 0.0, 0.0),
        ),
        ("device=unknown", with_rates(unknown_metrics(), 0.0, 0.0)),
        (
            "device=desktop&source=email",
            with_rates(zero_metrics(), 0.0, 0.0),
        ),
    ] {
        let (body, _) = analytics_ok(&a.app, key, &format!("/summary?{}&{filters}", a.day)).await;
        assert_eq!(body["data"], expected, "{filters}");
    }
}

#[tokio::test]
async fn lists_keep_what_their_filters_name_and_one_video_or_widget_breaks_down() {
    let a = arranged().await;
    let (key, video, widget) = (&a.fixture.key, &a.fixture.video, &a.fixture.widget);
    for (path, expected) in [
        ("/videos?source=email", phone_metrics()),
        ("/videos?device=desktop&placement=home", desktop_metrics()),
        ("/widgets?country=US", desktop_metrics()),
        (
            "/widgets?country=FR&placement=product&source=email",
            phone_metrics(),
        ),
        ("/videos?placement=cart", zero_metrics()),
    ] {
        let (body, _) = analytics_ok(&a.app, key, &format!("{path}&{}", a.day)).await;
        assert_eq!(body["data"][0]["metrics"], expected, "{path}");
        let one = match path.starts_with("/videos") {
            true => format!("/video/{video}?{}", &path[8..]),
            false => format!("/widget/{widget}?{}", &path[9..]),
        };
        let (body, _) = analytics_ok(&a.app, key, &format!("{one}&{}", a.day)).await;
        assert_eq!(body["data"]["metrics"], expected, "{one}");
    }
    let compared = format!("{}&breakdown=country&compare=previous_period", a.day);
    for path in [format!("/video/{video}"), format!("/widget/{widget}")] {
        let (body, _) = analytics_ok(&a.app, key, &format!("{path}?{compared}")).await;
        let nothing = json!({ "metrics": zero_metrics() });
        assert_eq!(
            body["data"],
            json!([
                { "country": "FR", "metrics": phone_metrics(), "comparison": nothing },
                { "country": "US", "metrics": desktop_metrics(), "comparison": nothing },
                { "country": "unknown", "metrics": unknown_metrics(), "comparison": nothing },
            ]),
            "{path}"
        );
        assert!(
            body["meta"]["comparison"]["start_date"].is_string(),
            "{body}"
        );
    }
}

#[tokio::test]
async fn a_series_broken_down_has_a_series_per_value_in_json_and_in_csv() {
    let a = arranged().await;
    let key = &a.fixture.key;
    let (first, last) = (a.date - Days::days(1), a.date + Days::days(1));
    let range = format!("start_date={first}&end_date={last}");
    let path = format!("/timeseries?{range}&breakdown=placement&sort_by=impressions");
    let (body, _) = analytics_ok(&a.app, key, &path).await;
    let data = body["data"].as_array().unwrap();
    let placements: Vec<&str> = data
        .iter()
        .map(|s| s["placement"].as_str().unwrap())
        .collect();
    assert_eq!(placements, ["product", "home", "unknown"]);
    assert_eq!(data[0]["metrics"], phone_metrics());
    let series = data[0]["series"].as_array().unwrap();
    let dates: Vec<&str> = series.iter().map(|b| b["date"].as_str().unwrap()).collect();
    assert_eq!(
        dates,
        [first.to_string(), a.date.to_string(), last.to_string()]
    );
    assert_eq!(series[1]["metrics"], phone_metrics());
    assert_eq!(series[0]["metrics"], zero_metrics());
    assert_eq!(body["meta"]["interval"], "day");

    // Filtered on a phone, the plain series: the phone's numbers on the day.
    let (body, _) = analytics_ok(&a.app, key, &format!("/timeseries?{range}&device=mobile")).await;
    assert_eq!(body["data"][1]["metrics"], phone_metrics());
    assert_eq!(body["data"][0]["metrics"], zero_metrics());

    let response = analytics(&a.app, key, &format!("{path}&format=csv")).await;
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers()["content-disposition"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        disposition.contains("timeseries-day-by-placement"),
        "{disposition}"
    );
    let text = response.text().await.unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[0].starts_with("placement,date,impressions,views,"),
        "{}",
        lines[0]
    );
    assert_eq!(lines.len(), 1 + 3 * 3);
    assert!(
        lines[2].starts_with(&format!("product,{},3,2,2,0,1,20.00,", a.date)),
        "{text}"
    );
    assert!(
        lines[9].starts_with(&format!("unknown,{last},0,0,0,")),
        "{text}"
    );
}

#[tokio::test]
async fn bad_dimensions_are_refused_naming_the_parameter() {
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let key = &fixture.key;
    for (path, code, needle) in [
        ("/summary?device=phone", "INVALID_PARAMETER", "device"),
        ("/summary?country=fr", "INVALID_PARAMETER", "country"),
        ("/videos?placement=footer", "INVALID_PARAMETER", "placement"),
        ("/timeseries?source=tv", "INVALID_PARAMETER", "source"),
        ("/summary?breakdown=color", "INVALID_PARAMETER", "breakdown"),
        (
            "/summary?breakdown=device&sort_by=title",
            "INVALID_PARAMETER",
            "sort_by",
        ),
        (
            "/summary?device=mobile&device=tablet",
            "INVALID_PARAMETER",
            "more than once",
        ),
        ("/videos?breakdown=device", "UNKNOWN_PARAMETER", "breakdown"),
    ] {
        let response = analytics(&app, key, path).await;
        assert_error(response, StatusCode::BAD_REQUEST, code, needle).await;
    }
}
