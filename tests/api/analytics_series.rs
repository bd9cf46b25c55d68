//! What analysts add to the analytics API: time series by day, week or month, the comparison with
//! an earlier period, the split of carts and orders by attribution, and CSV export.
//! (`analytics_truth` recounts every number over random events; these pin the shapes and rules.)

use chrono::{DateTime, NaiveDate, Utc};
use chrono_tz::Tz;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::analytics::{
    analytics, analytics_ok, assert_not_found, at, back_fill, checkout, end_of, error_of, event,
    header, millis, number_header, record, shop_with_key, spawn_limited_to_five, start_of, Fixture,
    Key, SHOP, UNLIMITED,
};
use crate::support::*;

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn noon(text: &str) -> DateTime<Utc> {
    day(text).and_hms_opt(12, 0, 0).unwrap().and_utc()
}

/// `n` events of `kind` about `target` at noon (UTC) of `date`.
fn events_on(date: &str, kind: &str, target: &Value, n: usize) -> Vec<Value> {
    (0..n)
        .map(|_| at(event(kind, target), noon(date)))
        .collect()
}

async fn spawn() -> TestApp {
    spawn_app_with(|s| {
        back_fill(s);
        s.rate_limit_per_minute = UNLIMITED;
    })
    .await
}

/// `field` of each record of `data`.
fn column(data: &Value, field: &str) -> Vec<Value> {
    let records = data.as_array().unwrap();
    records
        .iter()
        .map(|r| r.pointer(field).cloned().unwrap_or(Value::Null))
        .collect()
}

// ---- time series ------------------------------------------------------------------------------

#[tokio::test]
async fn a_series_has_one_bucket_per_day_week_or_month_clipped_to_the_range_and_zero_filled() {
    // Arrange: views on Thursday 8 and Tuesday 27 October 2026, and on 1 November.
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let video = json!({ "videoId": fixture.video });
    let mut events = events_on("2026-10-08", "view", &video, 2);
    events.extend(events_on("2026-10-27", "view", &video, 1));
    events.extend(events_on("2026-11-01", "view", &video, 4));
    record(&app, SHOP, events).await;
    let series =
        |query: &str| format!("/timeseries?start_date=2026-10-07&end_date=2026-11-01{query}");

    // Act
    let (by_day, _) = analytics_ok(&app, &fixture.key, &series("")).await;
    let (by_week, _) = analytics_ok(&app, &fixture.key, &series("&interval=week")).await;
    let (by_month, _) = analytics_ok(&app, &fixture.key, &series("&interval=month")).await;

    // Assert: days are the default; the first week starts on the range's Wednesday, the next on
    // Mondays; the last bucket ends with the range.
    assert_eq!(by_day["data"].as_array().unwrap().len(), 26);
    assert_eq!(by_day["data"][1]["date"], json!("2026-10-08"));
    assert_eq!(by_day["data"][1]["metrics"]["views"], json!(2));
    assert_eq!(by_day["data"][2]["metrics"]["views"], json!(0));
    assert_eq!(by_day["meta"]["interval"], json!("day"));
    assert_eq!(
        column(&by_week["data"], "/date"),
        [
            json!("2026-10-07"),
            json!("2026-10-12"),
            json!("2026-10-19"),
            json!("2026-10-26")
        ]
    );
    assert_eq!(
        column(&by_week["data"], "/metrics/views"),
        [json!(2), json!(0), json!(0), json!(5)]
    );
    assert_eq!(by_week["meta"]["interval"], json!("week"));
    assert_eq!(
        column(&by_month["data"], "/date"),
        [json!("2026-10-07"), json!("2026-11-01")]
    );
    assert_eq!(
        column(&by_month["data"], "/metrics/views"),
        [json!(3), json!(4)]
    );
    assert_eq!(
        by_month["data"][0]["metrics"]["attribution"]["direct"],
        json!({ "add_to_cart": 0, "orders": 0, "revenue": 0.0 })
    );
    assert_eq!(
        by_month["meta"]["start_date"],
        json!("2026-10-07T00:00:00.000Z")
    );
    assert_eq!(
        by_month["meta"]["end_date"],
        json!("2026-11-01T23:59:59.999Z")
    );
    assert!(
        by_month["data"][0].get("comparison").is_none(),
        "{by_month}"
    );
    assert!(by_month["meta"].get("comparison").is_none(), "{by_month}");
}

#[tokio::test]
async fn a_series_of_one_video_or_one_widget_counts_only_its_events() {
    // Arrange: the fixture's video in its widget, and a second video outside it.
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let other = app.create_video(SHOP, json!({ "title": "Other" })).await;
    let in_widget = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let mut events = events_on("2026-10-08", "click", &in_widget, 3);
    events.extend(events_on(
        "2026-10-08",
        "click",
        &json!({ "videoId": other }),
        5,
    ));
    events.extend(events_on("2026-10-08", "click", &json!({}), 7));
    record(&app, SHOP, events).await;
    let range = "start_date=2026-10-08&end_date=2026-10-08";
    let clicks = async |query: String| {
        let path = format!("/timeseries?{range}{query}");
        let (body, _) = analytics_ok(&app, &fixture.key, &path).await;
        body["data"][0]["metrics"]["clicks"].clone()
    };

    // Act + Assert
    assert_eq!(
        clicks(String::new()).await,
        json!(15),
        "the shop: every event"
    );
    assert_eq!(
        clicks(format!("&video_id={}", fixture.video)).await,
        json!(3)
    );
    assert_eq!(clicks(format!("&video_id={other}")).await, json!(5));
    assert_eq!(
        clicks(format!("&widget_id={}", fixture.widget)).await,
        json!(3)
    );
}

#[tokio::test]
async fn a_series_refuses_two_subjects_an_unknown_interval_and_another_shops_video() {
    // Arrange
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let other = shop_with_key(&app, "series-other.myshopify.com").await;
    let both = format!(
        "/timeseries?video_id={}&widget_id={}",
        fixture.video, fixture.widget
    );

    // Act + Assert
    let (status, _, code, message) = error_of(analytics(&app, &fixture.key, &both).await).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "INVALID_PARAMETER")
    );
    assert!(message.contains("widget_id"), "{message}");
    let hourly = analytics(&app, &fixture.key, "/timeseries?interval=hour").await;
    let (status, _, code, message) = error_of(hourly).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "INVALID_PARAMETER")
    );
    assert!(message.contains("interval"), "{message}");
    for path in [
        format!("/timeseries?video_id={}", other.video),
        format!("/timeseries?widget_id={}", other.widget),
        format!("/timeseries?video_id={}", Uuid::now_v7()),
        "/timeseries?video_id=not-a-uuid".to_string(),
    ] {
        assert_not_found(analytics(&app, &fixture.key, &path).await).await;
    }
}

// ---- comparison -------------------------------------------------------------------------------

/// Two videos with views in 11–20 October 2026 and in the ten days before.
async fn two_periods(app: &TestApp) -> (Fixture, String) {
    let fixture = shop_with_key(app, SHOP).await;
    let second = app.create_video(SHOP, json!({ "title": "Second" })).await;
    let first = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let other = json!({ "videoId": second });
    let mut events = events_on("2026-10-15", "view", &first, 5);
    events.extend(events_on("2026-10-05", "view", &first, 1));
    events.extend(events_on("2026-10-20", "view", &other, 2));
    events.extend(events_on("2026-10-01", "view", &other, 9));
    events.extend(events_on("2026-09-30", "view", &other, 100));
    events.extend(events_on("2026-10-21", "view", &other, 100));
    record(app, SHOP, events).await;
    (fixture, second)
}

const CURRENT: &str = "start_date=2026-10-11&end_date=2026-10-20";

#[tokio::test]
async fn compare_previous_period_puts_the_days_just_before_beside_every_record() {
    // Arrange
    let app = spawn().await;
    let (fixture, second) = two_periods(&app).await;
    let key = &fixture.key;
    let get = async |path: String| analytics_ok(&app, key, &path).await.0;

    // Act
    let videos = get(format!("/videos?{CURRENT}&compare=previous_period")).await;
    let one = get(format!("/video/{second}?{CURRENT}&compare=previous_period")).await;
    let widget = get(format!(
        "/widget/{}?{CURRENT}&compare=previous_period",
        fixture.widget
    ))
    .await;
    let summary = get(format!("/summary?{CURRENT}&compare=previous_period")).await;
    let series = get(format!(
        "/timeseries?{CURRENT}&interval=week&compare=previous_period"
    ))
    .await;

    // Assert: sorted by the current views, each with the views of 1–10 October.
    assert_eq!(
        column(&videos["data"], "/metrics/views"),
        [json!(5), json!(2)]
    );
    assert_eq!(
        column(&videos["data"], "/comparison/metrics/views"),
        [json!(1), json!(9)]
    );
    let utc: Tz = "UTC".parse().unwrap();
    let expected_meta = json!({
        "start_date": millis(start_of(day("2026-10-01"), utc)),
        "end_date": millis(end_of(day("2026-10-10"), utc)),
    });
    for body in [&videos, &one, &widget, &summary, &series] {
        assert_eq!(body["meta"]["comparison"], expected_meta, "{body}");
    }
    assert_eq!(one["data"]["comparison"]["metrics"]["views"], json!(9));
    assert_eq!(widget["data"]["comparison"]["metrics"]["views"], json!(1));
    let compared = &summary["data"]["comparison"]["metrics"];
    assert_eq!(compared["views"], json!(10));
    assert_eq!(compared["impressions"], json!(0));
    assert!(
        compared.get("ctr").is_some() && compared.get("attribution").is_some(),
        "{summary}"
    );
    // Weeks from Sunday 11 October: 11, 12–18, 19–20; compared with 1, 2–8, 9–10 October.
    assert_eq!(
        column(&series["data"], "/comparison/metrics/views"),
        [json!(9), json!(1), json!(0)]
    );
    assert_eq!(
        column(&series["data"], "/metrics/views"),
        [json!(0), json!(5), json!(2)]
    );
}

#[tokio::test]
async fn compare_previous_year_names_the_same_dates_a_year_earlier_with_29_february_as_the_28th() {
    // Arrange
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let path = "/timeseries?start_date=2024-02-28&end_date=2024-03-01&compare=previous_year";

    // Act
    let (series, _) = analytics_ok(&app, &fixture.key, path).await;

    // Assert: 28 Feb – 1 Mar 2024 compares with 28 Feb – 1 Mar 2023, a day shorter.
    assert_eq!(
        series["meta"]["comparison"],
        json!({ "start_date": "2023-02-28T00:00:00.000Z", "end_date": "2023-03-01T23:59:59.999Z" })
    );
    assert_eq!(column(&series["data"], "/date").len(), 3);
    assert_eq!(series["data"][1]["date"], json!("2024-02-29"));
    assert_eq!(
        series["data"][1]["comparison"]["metrics"]["views"],
        json!(0)
    );
}

#[tokio::test]
async fn an_unknown_comparison_is_an_invalid_parameter_on_every_endpoint() {
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    for path in [
        "/videos".to_string(),
        format!("/video/{}", fixture.video),
        "/summary".to_string(),
        "/widgets".to_string(),
        format!("/widget/{}", fixture.widget),
        "/timeseries".to_string(),
    ] {
        let response = analytics(&app, &fixture.key, &format!("{path}?compare=last_week")).await;
        let (status, _, code, message) = error_of(response).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::BAD_REQUEST, "INVALID_PARAMETER"),
            "{path}"
        );
        assert!(message.contains("compare"), "{path}: {message}");
    }
}

// ---- attribution ------------------------------------------------------------------------------

#[tokio::test]
async fn carts_and_orders_are_split_by_the_events_attribution_type_everywhere() {
    // Arrange: two direct carts, one influenced, one without; orders of each kind.
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let target = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let attributed = |mut e: Value, kind: &str| {
        e["attributionType"] = json!(kind);
        at(e, noon("2026-10-08"))
    };
    let events = vec![
        attributed(event("add_to_cart", &target), "direct"),
        attributed(event("add_to_cart", &target), "direct"),
        attributed(event("add_to_cart", &target), "influenced"),
        at(event("add_to_cart", &target), noon("2026-10-08")),
        attributed(checkout(&target, json!("12.30")), "direct"),
        attributed(checkout(&target, json!("45.005")), "influenced"),
        attributed(checkout(&target, json!("0.005")), "influenced"),
        at(checkout(&target, json!("1.10")), noon("2026-10-08")),
    ];
    record(&app, SHOP, events).await;
    let range = "start_date=2026-10-08&end_date=2026-10-08";
    let expected = json!({
        "direct": { "add_to_cart": 2, "orders": 1, "revenue": 12.3 },
        "influenced": { "add_to_cart": 1, "orders": 2, "revenue": 45.01 },
    });

    // Act
    let get = async |path: String| analytics_ok(&app, &fixture.key, &path).await.0;
    let videos = get(format!("/videos?{range}")).await;
    let video = get(format!("/video/{}?{range}", fixture.video)).await;
    let widgets = get(format!("/widgets?{range}")).await;
    let widget = get(format!("/widget/{}?{range}", fixture.widget)).await;
    let summary = get(format!("/summary?{range}")).await;
    let series = get(format!("/timeseries?{range}")).await;

    // Assert
    assert_eq!(videos["data"][0]["metrics"]["attribution"], expected);
    assert_eq!(video["data"]["metrics"]["attribution"], expected);
    assert_eq!(widgets["data"][0]["metrics"]["attribution"], expected);
    assert_eq!(widget["data"]["metrics"]["attribution"], expected);
    assert_eq!(summary["data"]["attribution"], expected);
    assert_eq!(series["data"][0]["metrics"]["attribution"], expected);
    assert_eq!(summary["data"]["add_to_cart"], json!(4));
    assert_eq!(summary["data"]["revenue"], json!(58.41));
}

// ---- CSV --------------------------------------------------------------------------------------

const METRICS: &str = "impressions,views,clicks,add_to_cart,orders,revenue,direct_add_to_cart,\
                       direct_orders,direct_revenue,influenced_add_to_cart,influenced_orders,\
                       influenced_revenue,watch_time_seconds,avg_watch_seconds,completion_rate,\
                       reached_p25,reached_p50,reached_p75,reached_p100";

/// Twelve videos, the n-th with n views on 8 October 2026; the fifth's title needs quoting.
async fn twelve_videos(app: &TestApp) -> Fixture {
    let fixture = shop_with_key(app, SHOP).await;
    let mut events = events_on(
        "2026-10-08",
        "view",
        &json!({ "videoId": fixture.video }),
        1,
    );
    for n in 2..=12 {
        let title = if n == 5 {
            "Spring, \"new\"".to_string()
        } else {
            format!("Video {n}")
        };
        let video = app.create_video(SHOP, json!({ "title": title })).await;
        events.extend(events_on(
            "2026-10-08",
            "view",
            &json!({ "videoId": video }),
            n,
        ));
    }
    events.push(at(
        checkout(&json!({ "videoId": fixture.video }), json!("0.5")),
        noon("2026-10-08"),
    ));
    record(app, SHOP, events).await;
    fixture
}

async fn csv_of(
    app: &TestApp,
    key: &Key,
    path: &str,
    accept: Option<&str>,
) -> (reqwest::header::HeaderMap, String) {
    let mut request = app.client.get(app.url(&format!("/api/v1/analytics{path}")));
    request = request.bearer_auth(&key.secret);
    if let Some(accept) = accept {
        request = request.header("accept", accept);
    }
    let response = request.send().await.unwrap();
    let (status, headers) = (response.status(), response.headers().clone());
    let text = response.text().await.unwrap();
    assert_eq!(status, StatusCode::OK, "{path}: {text}");
    (headers, text)
}

fn records(text: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let header = reader.headers().unwrap().iter().map(String::from).collect();
    let rows = reader
        .records()
        .map(|r| r.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

#[tokio::test]
async fn the_video_list_as_csv_is_every_row_in_order_quoted_as_rfc_4180_and_named_by_its_range() {
    // Arrange
    let app = spawn().await;
    let fixture = twelve_videos(&app).await;
    let path = "/videos?start_date=2026-10-01&end_date=2026-10-08&sort_by=views&limit=5&page=2";

    // Act
    let (headers, text) = csv_of(&app, &fixture.key, &format!("{path}&format=csv"), None).await;
    let (_, by_accept) = csv_of(
        &app,
        &fixture.key,
        path,
        Some("application/json;q=0.5, text/csv"),
    )
    .await;
    let (json_anyway, _) = analytics_ok(&app, &fixture.key, &format!("{path}&format=json")).await;
    let json_by_default = analytics(&app, &fixture.key, path).await;
    let vary = header(json_by_default.headers(), "vary");
    assert_eq!(
        vary.as_deref(),
        Some("accept"),
        "JSON of a list that could be CSV"
    );

    // Assert: the whole list (paging ignored), by views, descending.
    assert_eq!(
        header(&headers, "content-type").as_deref(),
        Some("text/csv; charset=utf-8")
    );
    assert_eq!(
        header(&headers, "content-disposition").as_deref(),
        Some("attachment; filename=\"videoapp-videos-2026-10-01-to-2026-10-08.csv\"")
    );
    assert!(
        text.starts_with(&format!(
            "id,title,status,duration,product_count,{METRICS}\r\n"
        )),
        "{text}"
    );
    assert!(text.ends_with("\r\n"), "{text}");
    assert!(text.contains(",\"Spring, \"\"new\"\"\","), "{text}");
    let (columns, rows) = records(&text);
    assert_eq!(columns.len(), 5 + METRICS.split(',').count());
    assert_eq!(rows.len(), 12);
    let views: Vec<&str> = rows.iter().map(|r| r[6].as_str()).collect();
    assert_eq!(
        views,
        ["12", "11", "10", "9", "8", "7", "6", "5", "4", "3", "2", "1"]
    );
    assert_eq!(rows[7][1], "Spring, \"new\"");
    let last = &rows[11];
    assert_eq!(
        (last[0].as_str(), last[9].as_str(), last[10].as_str()),
        (fixture.video.as_str(), "1", "0.50")
    );
    assert_eq!(by_accept, text);
    assert_eq!(header(&headers, "vary").as_deref(), Some("accept"));
    assert_eq!(
        json_anyway["data"].as_array().unwrap().len(),
        5,
        "format=json wins over Accept"
    );
}

#[tokio::test]
async fn csv_rows_equal_the_json_records_with_the_comparison_columns_when_compared() {
    // Arrange
    let app = spawn().await;
    let (fixture, _) = two_periods(&app).await;
    let path = format!("/widgets?{CURRENT}&compare=previous_period");

    // Act
    let (_, widgets) = csv_of(&app, &fixture.key, &format!("{path}&format=csv"), None).await;
    let (json, _) = analytics_ok(&app, &fixture.key, &path).await;
    let series = format!("/timeseries?{CURRENT}&interval=week&compare=previous_period&format=csv");
    let (headers, series) = csv_of(&app, &fixture.key, &series, None).await;

    // Assert
    let comparison_metrics: Vec<String> = METRICS
        .split(',')
        .map(|m| format!("comparison_{m}"))
        .collect();
    let (columns, rows) = records(&widgets);
    let expected = format!(
        "id,title,type,status,video_count,{METRICS},{}",
        comparison_metrics.join(",")
    );
    assert_eq!(columns.join(","), expected);
    assert_eq!(rows.len(), 1);
    let record = &json["data"][0];
    assert_eq!(rows[0][0], record["id"].as_str().unwrap());
    assert_eq!(rows[0][6], record["metrics"]["views"].to_string());
    let comparison_views = 6 + METRICS.split(',').count();
    assert_eq!(
        rows[0][comparison_views],
        record["comparison"]["metrics"]["views"].to_string()
    );
    let (columns, rows) = records(&series);
    assert_eq!(
        columns.join(","),
        format!("date,{METRICS},{}", comparison_metrics.join(","))
    );
    let dates: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(dates, ["2026-10-11", "2026-10-12", "2026-10-19"]);
    assert_eq!(rows[0][2 + METRICS.split(',').count()], "9");
    assert_eq!(
        header(&headers, "content-disposition").as_deref(),
        Some("attachment; filename=\"videoapp-timeseries-week-2026-10-11-to-2026-10-20.csv\"")
    );
}

#[tokio::test]
async fn a_csv_export_is_one_request_against_the_rate_limit_and_other_formats_are_refused() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    for n in 0..30 {
        app.create_video(SHOP, json!({ "title": format!("Video {n}") }))
            .await;
    }

    // Act
    let (headers, text) = csv_of(&app, &fixture.key, "/videos?format=csv", None).await;
    let refused = analytics(&app, &fixture.key, "/videos?format=xml").await;

    // Assert
    assert_eq!(records(&text).1.len(), 31);
    assert_eq!(number_header(&headers, "x-ratelimit-remaining"), 4);
    assert_eq!(number_header(refused.headers(), "x-ratelimit-remaining"), 3);
    let (status, _, code, message) = error_of(refused).await;
    assert_eq!(
        (status, code.as_str()),
        (StatusCode::BAD_REQUEST, "INVALID_PARAMETER")
    );
    assert!(message.contains("format"), "{message}");
}

#[tokio::test]
async fn ranges_and_comparisons_beyond_the_warehouses_calendar_answer_with_zeros() {
    // Arrange: an event today, which no range below may count.
    let app = spawn().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let video = json!({ "videoId": fixture.video });
    record(&app, SHOP, vec![event("view", &video)]).await;

    for query in [
        // The comparison reaches before year 0; the range itself before 1970.
        "start_date=0001-01-01&end_date=0003-12-31&compare=previous_period",
        "start_date=1969-12-01&end_date=1969-12-31&compare=previous_year",
        // ClickHouse's Date ends in 2105 (2106 on 18.16) and 2149 on current releases.
        "start_date=2200-01-01&end_date=2202-12-31&compare=previous_year",
    ] {
        // Act
        let get = async |path: String| analytics_ok(&app, &fixture.key, &path).await.0;
        let summary = get(format!("/summary?{query}")).await;
        let videos = get(format!("/videos?{query}")).await;
        let series = get(format!("/timeseries?{query}&interval=month")).await;

        // Assert
        assert_eq!(summary["data"]["views"], json!(0), "{query}");
        assert_eq!(
            summary["data"]["comparison"]["metrics"]["views"],
            json!(0),
            "{query}"
        );
        assert_eq!(videos["data"][0]["metrics"]["views"], json!(0), "{query}");
        let views = column(&series["data"], "/metrics/views");
        assert!(views.iter().all(|v| *v == json!(0)), "{query}: {views:?}");
    }
}
