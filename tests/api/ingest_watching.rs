//! What an event says beyond its type: the page type, country and traffic source the loader
//! sends, the device the service reads from the request, and a watch's figures, each checked at
//! the edge and stored as sent (a watch held to three times its video's duration).

use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{json, Value};

use crate::support::*;

const SHOP: &str = "watching.myshopify.com";
const IPHONE: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 \
    (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const WINDOWS: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like \
    Gecko) Chrome/120.0 Safari/537.36";

async fn post_as(app: &TestApp, user_agent: Option<&str>, body: &Value) -> reqwest::Response {
    let url = app.url(&format!(
        "/apps/videoapp_sub/analytics?{}",
        signed(SHOP, &[])
    ));
    let mut request = app.client.post(url).json(body);
    if let Some(agent) = user_agent {
        request = request.header("user-agent", agent);
    }
    request.send().await.unwrap()
}

/// An hour ago, and `seconds` more: events in time order.
fn earlier(seconds: i64) -> String {
    let at = chrono::Utc::now() - chrono::Duration::hours(1) + chrono::Duration::seconds(seconds);
    at.to_rfc3339()
}

async fn rows(app: &TestApp, columns: &str) -> String {
    wait_until_shipped(app, Duration::from_secs(20)).await;
    // The event type last: the answer's trailing tabs (empty values) would be trimmed away.
    let sql = format!("SELECT {columns}, event_type FROM events ORDER BY event_time");
    clickhouse_query(&app.clickhouse_database, &sql).await
}

#[tokio::test]
async fn events_keep_their_place_country_and_source_and_the_device_is_read_from_the_request() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let at = |s: i64| earlier(s);
    let events = json!({ "events": [
        { "eventType": "impression", "videoId": "v", "placement": "product", "country": "FR",
          "source": "email", "timestamp": at(1),
          // The body's say on the device is no say: the request's user agent decides.
          "device": "desktop" },
        { "eventType": "click", "videoId": "v", "placement": "home", "country": "US",
          "source": "paid", "timestamp": at(2) },
        { "eventType": "view", "videoId": "v", "timestamp": at(3) },
    ]});
    let response = post_as(&app, Some(IPHONE), &events).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    let tablet = "Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) \
        Chrome/120.0 Safari/537.36";
    for (agent, second) in [(Some(tablet), 4), (Some(WINDOWS), 5), (None, 6)] {
        let event = json!({ "eventType": "view", "videoId": "v", "timestamp": at(second) });
        assert_eq!(
            post_as(&app, agent, &event).await.status(),
            StatusCode::ACCEPTED
        );
    }

    let stored = rows(&app, "placement, device, country, source").await;
    assert_eq!(
        stored,
        "product\tmobile\tFR\temail\timpression\n\
         home\tmobile\tUS\tpaid\tclick\n\
         \tmobile\t\t\tview\n\
         \ttablet\t\t\tview\n\
         \tdesktop\t\t\tview\n\
         \t\t\t\tview"
    );
}

#[tokio::test]
async fn a_watch_keeps_its_figures_and_is_held_to_three_times_its_videos_duration() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let video = app.create_video(SHOP, json!({ "duration": 20.5 })).await;
    let watch = |ms: u64, percent: u64, second: i64| {
        json!({ "eventType": "watch", "videoId": video, "widgetId": "w", "watchedMs": ms,
                "maxPercent": percent, "timestamp": earlier(second) })
    };
    let events = json!({ "events": [
        watch(12_345, 60, 1),
        // A player left looping: 3 × 20.5 s is all it counts.
        watch(3_600_000, 100, 2),
        watch(0, 0, 3),
    ]});
    assert_eq!(
        post_as(&app, Some(WINDOWS), &events).await.status(),
        StatusCode::ACCEPTED
    );
    // A video the catalog does not know keeps what was sent.
    let unknown = json!({ "eventType": "watch", "videoId": "elsewhere", "watchedMs": 99_000,
        "maxPercent": 95, "timestamp": earlier(4) });
    assert_eq!(
        post_as(&app, None, &unknown).await.status(),
        StatusCode::ACCEPTED
    );

    let stored = rows(&app, "watched_ms, max_percent, device").await;
    assert_eq!(
        stored,
        "12345\t60\tdesktop\twatch\n\
         61500\t100\tdesktop\twatch\n\
         0\t0\tdesktop\twatch\n\
         99000\t95\t\twatch"
    );
}

#[tokio::test]
async fn unknown_places_countries_sources_and_bad_watch_figures_are_refused_naming_the_field() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let watch =
        json!({ "eventType": "watch", "videoId": "v", "watchedMs": 1000, "maxPercent": 50 });
    let with = |extra: Value| {
        let mut event = watch.clone();
        merge(&mut event, extra);
        event
    };
    let without = |field: &str| {
        let mut event = watch.clone();
        event.as_object_mut().unwrap().remove(field);
        event
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({ "eventType": "view", "placement": "footer" }),
            "placement",
            "unknown variant",
        ),
        (
            json!({ "eventType": "view", "placement": "Home" }),
            "placement",
            "unknown variant",
        ),
        (
            json!({ "eventType": "view", "country": "usa" }),
            "country",
            "'usa' is not a country code",
        ),
        (
            json!({ "eventType": "view", "country": "us" }),
            "country",
            "'us' is not a country code",
        ),
        (
            json!({ "eventType": "view", "country": "XX" }),
            "country",
            "'XX' is not a country code",
        ),
        (
            json!({ "eventType": "view", "country": 1 }),
            "country",
            "country",
        ),
        (
            json!({ "eventType": "view", "source": "tv" }),
            "source",
            "unknown variant",
        ),
        (
            with(json!({ "maxPercent": 101 })),
            "maxPercent",
            "from 0 to 100",
        ),
        (
            with(json!({ "maxPercent": -1 })),
            "maxPercent",
            "maxPercent",
        ),
        (
            with(json!({ "maxPercent": 50.5 })),
            "maxPercent",
            "maxPercent",
        ),
        (with(json!({ "watchedMs": -1 })), "watchedMs", "watchedMs"),
        (with(json!({ "watchedMs": 1.5 })), "watchedMs", "watchedMs"),
        (
            with(json!({ "watchedMs": 5_000_000_000u64 })),
            "watchedMs",
            "watchedMs",
        ),
        (
            json!({ "events": [watch.clone(), with(json!({ "maxPercent": 200 }))] }),
            "events[1].maxPercent",
            "from 0 to 100",
        ),
    ];
    for (body, field, needle) in cases {
        let response = post_as(&app, None, &body).await;
        let (status, error) = json_of(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {error}");
        assert_eq!(error["error"]["code"], "INVALID_EVENT", "{body}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(field), "{body}: {message}");
        assert!(message.contains(needle), "{body}: {message}");
    }
    // Nothing of them was kept: the good events after them are all there is. A watch's figures
    // count on a watch only, and a watch without them counts as nothing played.
    let click =
        json!({ "eventType": "click", "watchedMs": 5, "maxPercent": 5, "timestamp": earlier(2) });
    let mut bare = without("watchedMs");
    bare.as_object_mut().unwrap().remove("maxPercent");
    bare["timestamp"] = json!(earlier(3));
    let mut first = watch.clone();
    first["timestamp"] = json!(earlier(1));
    for event in [first, click, bare] {
        assert_eq!(
            post_as(&app, None, &event).await.status(),
            StatusCode::ACCEPTED
        );
    }
    let stored = rows(&app, "watched_ms, max_percent").await;
    assert_eq!(stored, "1000\t50\twatch\n0\t0\tclick\n0\t0\twatch");
}

/// A shop's holdout: a visit's `session` event and any event with the browser's `group` are
/// kept with it; a group that is not one, or a type that is not one, is refused naming the field.
#[tokio::test]
async fn sessions_and_the_holdout_group_are_kept_and_an_unknown_group_is_refused() {
    let app = spawn_app().await;
    app.create_shop_with(SHOP, json!({ "holdoutPercent": 10 }))
        .await;
    for (body, field, needle) in [
        (
            json!({ "eventType": "session", "group": "control" }),
            "group",
            "unknown variant",
        ),
        (
            json!({ "eventType": "session", "group": "Holdout" }),
            "group",
            "unknown variant",
        ),
        (
            json!({ "eventType": "visit" }),
            "eventType",
            "unknown variant",
        ),
    ] {
        let (status, error) = json_of(post_as(&app, None, &body).await).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {error}");
        let message = error["error"]["message"].as_str().unwrap();
        assert!(message.starts_with(field), "{body}: {message}");
        assert!(message.contains(needle), "{body}: {message}");
    }

    let events = json!({ "events": [
        { "eventType": "session", "sessionId": "s-1", "group": "holdout", "source": "social",
          "timestamp": earlier(1) },
        { "eventType": "session", "sessionId": "s-2", "group": "exposed", "timestamp": earlier(2) },
        { "eventType": "impression", "videoId": "v", "sessionId": "s-2", "group": "exposed",
          "timestamp": earlier(3) },
        { "eventType": "checkout_completed", "sessionId": "s-1", "group": "holdout",
          "orderId": "o-1", "revenue": 25.5, "currency": "USD", "timestamp": earlier(4) },
        { "eventType": "session", "sessionId": "s-3", "timestamp": earlier(5) },
    ]});
    let response = post_as(&app, Some(IPHONE), &events).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);

    let stored = rows(&app, "session_id, lift_group, source, revenue_e4").await;
    assert_eq!(
        stored,
        "s-1\tholdout\tsocial\t0\tsession\n\
         s-2\texposed\t\t0\tsession\n\
         s-2\texposed\t\t0\timpression\n\
         s-1\tholdout\t\t255000\tcheckout_completed\n\
         s-3\t\t\t0\tsession"
    );
}
