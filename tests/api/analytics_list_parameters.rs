//! The analytics API's video list: its defaults, its dates and ranges, its paging and sorting
//! parameters and how bad ones are named, its totals and pages, and its records' fields.

use chrono::NaiveDate;
use reqwest::StatusCode;
use serde_json::json;

use crate::support::analytics::*;
use crate::support::*;

// ---- 4. the video list ------------------------------------------------------------------------

#[tokio::test]
async fn the_video_list_defaults_to_page_one_of_ten_by_views_descending_over_thirty_days() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let mut videos = Vec::new();
    let mut events = Vec::new();
    for views in 0..12 {
        let video = app
            .create_video(SHOP, json!({ "title": format!("Video {views}") }))
            .await;
        let target = json!({ "videoId": video });
        events.extend((0..views).map(|_| event("view", &target)));
        videos.push(video);
    }
    record(&app, SHOP, events).await;
    let key = create_key(&app, SHOP).await;

    // Act
    let today = today_in(chrono_tz::UTC);
    let (body, _) = analytics_ok(&app, &key, "/videos").await;
    let today_after = today_in(chrono_tz::UTC);

    // Assert
    let expected: Vec<String> = videos.iter().rev().take(10).cloned().collect();
    assert_eq!(ids_of(&body["data"]), expected);
    assert_eq!(body["data"][0]["metrics"]["views"], json!(11));
    assert_eq!(
        body["pagination"],
        json!({ "page": 1, "limit": 10, "total_count": 12, "total_pages": 2 })
    );
    let meta_for = |day: NaiveDate| {
        json!({
            "start_date": format!("{}T00:00:00.000Z", minus(day, 30)),
            "end_date": format!("{day}T23:59:59.999Z"),
        })
    };
    assert!(
        body["meta"] == meta_for(today) || body["meta"] == meta_for(today_after),
        "{}",
        body["meta"]
    );
}

#[tokio::test]
async fn the_default_range_is_today_and_the_thirty_days_before_it_inclusive() {
    // Arrange
    let app = spawn_app_with(back_fill).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let today = today_in(chrono_tz::UTC);
    let first_day = start_of(minus(today, 30), chrono_tz::UTC);
    let target = json!({ "videoId": fixture.video });
    record(
        &app,
        SHOP,
        vec![
            at(event("view", &target), first_day),
            at(
                event("view", &target),
                first_day - chrono::Duration::seconds(1),
            ),
            event("view", &target),
        ],
    )
    .await;

    // Act
    let (summary, _) = analytics_ok(&app, &fixture.key, "/summary").await;
    let (one, _) = analytics_ok(&app, &fixture.key, &format!("/video/{}", fixture.video)).await;

    // Assert
    assert_eq!(summary["data"]["views"], json!(2), "{summary}");
    assert_eq!(one["data"]["metrics"]["views"], json!(2), "{one}");
}

#[tokio::test]
async fn meta_gives_the_ranges_instants_in_utc_with_milliseconds_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;

    for path in endpoints(&fixture.video, &fixture.widget) {
        // Act
        let (body, _) = analytics_ok(
            &app,
            &fixture.key,
            &format!("{path}?start_date=2026-10-22&end_date=2026-11-21"),
        )
        .await;

        // Assert
        assert_eq!(
            body["meta"],
            json!({
                "start_date": "2026-10-22T00:00:00.000Z",
                "end_date": "2026-11-21T23:59:59.999Z",
            }),
            "{path}"
        );
    }
}

#[tokio::test]
async fn dates_of_a_new_york_shop_are_new_york_days() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop_with(SHOP, json!({ "timezone": "America/New_York" }))
        .await;
    let video = app.create_video(SHOP, json!({})).await;
    let key = create_key(&app, SHOP).await;
    let ny = chrono_tz::America::New_York;

    // Act
    let today = today_in(ny);
    let (defaults, _) = analytics_ok(&app, &key, "/videos").await;
    let today_after = today_in(ny);
    let (explicit, _) = analytics_ok(
        &app,
        &key,
        &format!("/video/{video}?start_date=2026-10-22&end_date=2026-11-21"),
    )
    .await;

    // Assert
    let meta_for = |day: NaiveDate| {
        json!({
            "start_date": millis(start_of(minus(day, 30), ny)),
            "end_date": millis(end_of(day, ny)),
        })
    };
    assert!(
        defaults["meta"] == meta_for(today) || defaults["meta"] == meta_for(today_after),
        "{} for {today}",
        defaults["meta"]
    );
    // New York leaves summer time on 2026-11-01: the range starts at -04:00 and ends at -05:00.
    assert_eq!(
        explicit["meta"],
        json!({
            "start_date": "2026-10-22T04:00:00.000Z",
            "end_date": "2026-11-22T04:59:59.999Z",
        })
    );
}

#[tokio::test]
async fn a_date_that_is_not_a_real_yyyy_mm_dd_is_invalid_date_on_every_endpoint() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let bad_dates = [
        "2026-13-01",
        "2026-02-30",
        "2026/02/01",
        "2026-2-1",
        "2026-02-01T00:00:00Z",
        "yesterday",
    ];

    for path in endpoints(&fixture.video, &fixture.widget) {
        for bad in bad_dates {
            for query in [
                format!("start_date={bad}&end_date=2026-03-01"),
                format!("start_date=2026-01-01&end_date={bad}"),
                format!("start_date={bad}"),
                format!("end_date={bad}"),
            ] {
                // Act
                let response = analytics(&app, &fixture.key, &format!("{path}?{query}")).await;

                // Assert
                let (status, _, code, message) = error_of(response).await;
                assert_eq!(
                    (status, code.as_str()),
                    (StatusCode::BAD_REQUEST, "INVALID_DATE"),
                    "{path}?{query}"
                );
                assert!(
                    message.contains("YYYY-MM-DD"),
                    "{path}?{query}: {message:?} does not state the format"
                );
            }
        }
    }
}

#[tokio::test]
async fn an_end_date_before_the_start_date_is_an_invalid_date_range_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;

    for path in endpoints(&fixture.video, &fixture.widget) {
        // Act
        let reversed = analytics(
            &app,
            &fixture.key,
            &format!("{path}?start_date=2026-05-02&end_date=2026-05-01"),
        )
        .await;
        let one_day = analytics(
            &app,
            &fixture.key,
            &format!("{path}?start_date=2026-05-02&end_date=2026-05-02"),
        )
        .await;

        // Assert
        assert_error(reversed, StatusCode::BAD_REQUEST, "INVALID_DATE_RANGE", "").await;
        assert_eq!(one_day.status(), StatusCode::OK, "{path}");
    }
}

#[tokio::test]
async fn paging_and_sorting_parameters_out_of_range_are_invalid_parameters_named_in_the_message() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let cases = [
        ("page=0", "page"),
        ("page=x", "page"),
        ("page=-1", "page"),
        ("page=1.5", "page"),
        ("limit=0", "limit"),
        ("limit=101", "limit"),
        ("limit=x", "limit"),
        ("sort_by=likes", "sort_by"),
        ("sort_by=VIEWS", "sort_by"),
        ("sort_order=up", "sort_order"),
        ("sort_order=descending", "sort_order"),
    ];

    for list in ["/videos", "/widgets"] {
        for (query, parameter) in cases {
            // Act
            let response = analytics(&app, &fixture.key, &format!("{list}?{query}")).await;

            // Assert
            assert_error(
                response,
                StatusCode::BAD_REQUEST,
                "INVALID_PARAMETER",
                parameter,
            )
            .await;
        }
        // The bounds themselves are allowed.
        for query in ["page=1", "limit=1", "limit=100", "sort_order=asc"] {
            analytics_ok(&app, &fixture.key, &format!("{list}?{query}")).await;
        }
    }
}

#[tokio::test]
async fn a_parameter_of_the_wrong_type_is_named_with_what_it_must_be() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let cases = [
        (
            "/videos?limit=abc",
            "Invalid parameter limit: must be an integer from 1 to 100, got 'abc'",
        ),
        (
            "/widgets?page=x",
            "Invalid parameter page: must be an integer ≥ 1, got 'x'",
        ),
        (
            "/videos?sort_by=likes",
            "Invalid parameter sort_by: must be one of views, clicks, impressions, add_to_cart, \
             orders, revenue, title, created_at, got 'likes'",
        ),
        (
            "/videos?sort_order=up",
            "Invalid parameter sort_order: must be one of desc, asc, got 'up'",
        ),
        (
            "/widgets?widget_type=banner",
            "Invalid parameter widget_type: must be one of carousel, story, productpage, floating, got 'banner'",
        ),
    ];

    for (path, expected) in cases {
        // Act
        let response = analytics(&app, &fixture.key, path).await;

        // Assert
        let (status, _, code, message) = error_of(response).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}");
        assert_eq!(code, "INVALID_PARAMETER", "{path}");
        assert_eq!(message, expected, "{path}");
    }
}

#[tokio::test]
async fn an_empty_parameter_counts_as_absent() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;

    // Act
    let (body, _) = analytics_ok(
        &app,
        &fixture.key,
        "/videos?page=&limit=%20&sort_by=&start_date=&end_date=+",
    )
    .await;

    // Assert
    assert_eq!(
        body["pagination"],
        json!({ "page": 1, "limit": 10, "total_count": 1, "total_pages": 1 })
    );
}

#[tokio::test]
async fn a_parameter_given_more_than_once_is_an_invalid_parameter_on_every_endpoint() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let mut cases: Vec<(String, &str)> = Vec::new();
    for path in endpoints(&fixture.video, &fixture.widget) {
        cases.push((
            format!("{path}?start_date=2026-01-01&start_date=2026-01-01"),
            "start_date",
        ));
        cases.push((
            format!("{path}?end_date=2026-01-02&start_date=2026-01-01&end_date=2026-01-03"),
            "end_date",
        ));
    }
    for list in ["/videos", "/widgets"] {
        cases.push((format!("{list}?limit=5&limit=5"), "limit"));
        cases.push((format!("{list}?page=1&sort_by=title&page=2"), "page"));
        cases.push((format!("{list}?sort_by=title&sort_by=views"), "sort_by"));
        cases.push((
            format!("{list}?sort_order=asc&sort_order=desc"),
            "sort_order",
        ));
    }
    cases.push((
        "/widgets?widget_type=story&widget_type=story".to_string(),
        "widget_type",
    ));

    for (path, name) in &cases {
        // Act
        let response = analytics(&app, &fixture.key, path).await;

        // Assert
        let (status, _, code, message) = error_of(response).await;
        assert_eq!(
            (status, code.as_str()),
            (StatusCode::BAD_REQUEST, "INVALID_PARAMETER"),
            "{path}"
        );
        assert_eq!(
            message,
            format!("Invalid parameter {name}: given more than once"),
            "{path}"
        );
    }
}

#[tokio::test]
async fn total_count_counts_every_video_of_the_shop_whatever_its_status_or_events() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let watched = app
        .create_video(SHOP, json!({ "status": "PUBLISHED" }))
        .await;
    let draft = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    let archived = app
        .create_video(SHOP, json!({ "status": "ARCHIVED" }))
        .await;
    app.create_video(OTHER_SHOP, json!({})).await;
    record(
        &app,
        SHOP,
        vec![event("view", &json!({ "videoId": watched }))],
    )
    .await;
    let key = create_key(&app, SHOP).await;

    // Act
    let (body, _) = analytics_ok(&app, &key, "/videos").await;

    // Assert
    assert_eq!(body["pagination"]["total_count"], json!(3));
    assert_eq!(body["pagination"]["total_pages"], json!(1));
    let data = body["data"].as_array().unwrap();
    assert_eq!(data[0]["id"], json!(watched));
    let mut quiet: Vec<(String, String)> = data[1..]
        .iter()
        .map(|r| {
            assert_eq!(r["metrics"], Activity::default().metrics(), "{r}");
            (
                r["id"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    quiet.sort();
    let mut expected = vec![
        (draft, "DRAFT".to_string()),
        (archived, "ARCHIVED".to_string()),
    ];
    expected.sort();
    assert_eq!(quiet, expected);
}

#[tokio::test]
async fn total_pages_rounds_up_and_a_page_past_the_end_is_empty() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    for _ in 0..7 {
        app.create_video(SHOP, json!({})).await;
    }
    let key = create_key(&app, SHOP).await;

    // Act
    let (last, _) = analytics_ok(&app, &key, "/videos?limit=3&page=3").await;
    let (past, _) = analytics_ok(&app, &key, "/videos?limit=3&page=4").await;
    let (far, _) = analytics_ok(&app, &key, "/videos?limit=3&page=1000000").await;
    let (whole, _) = analytics_ok(&app, &key, "/videos?limit=7").await;

    // Assert
    assert_eq!(ids_of(&last["data"]).len(), 1);
    assert_eq!(
        last["pagination"],
        json!({ "page": 3, "limit": 3, "total_count": 7, "total_pages": 3 })
    );
    assert_eq!(past["data"], json!([]));
    assert_eq!(
        past["pagination"],
        json!({ "page": 4, "limit": 3, "total_count": 7, "total_pages": 3 })
    );
    assert_eq!(far["data"], json!([]));
    assert_eq!(far["pagination"]["total_count"], json!(7));
    assert_eq!(ids_of(&whole["data"]).len(), 7);
    assert_eq!(whole["pagination"]["total_pages"], json!(1));
}

#[tokio::test]
async fn a_video_record_has_every_field_of_the_spec_with_its_json_type() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let products = [
        "gid://shopify/Product/1001",
        "gid://shopify/Product/1002",
        "gid://shopify/Product/1003",
    ];
    let sold = app
        .create_video(
            SHOP,
            json!({
                "title": "Summer dress",
                "thumbnail": "https://cdn.example.com/dress.jpg",
                "duration": 12.5,
                "productIds": products,
            }),
        )
        .await;
    let quiet = app
        .create_video(SHOP, json!({ "title": "Draft", "status": "DRAFT" }))
        .await;
    let activity = Activity::new([4, 3, 2, 1], &["19.99"]);
    record(&app, SHOP, activity.events(&json!({ "videoId": sold }))).await;
    let key = create_key(&app, SHOP).await;

    // Act
    let (body, text) = analytics_ok(&app, &key, "/videos").await;

    // Assert
    assert_eq!(ids_of(&body["data"]), vec![sold.clone(), quiet.clone()]);
    let record = &body["data"][0];
    assert_eq!(record["id"], json!(sold));
    assert_eq!(record["title"], json!("Summer dress"));
    assert_eq!(
        record["thumbnail_url"],
        json!("https://cdn.example.com/dress.jpg")
    );
    assert!(record["duration"].is_number(), "{record}");
    assert_eq!(record["duration"].as_f64(), Some(12.5));
    assert_eq!(record["status"], json!("PUBLISHED"));
    assert_eq!(record["product_count"], json!(3));
    assert!(record["product_count"].is_u64(), "{record}");
    let metrics = &record["metrics"];
    for name in ["impressions", "views", "clicks", "add_to_cart", "orders"] {
        assert!(
            metrics[name].is_u64(),
            "{name} is not an integer: {metrics}"
        );
    }
    assert!(metrics["revenue"].is_number(), "{metrics}");
    assert_eq!(*metrics, activity.metrics());
    let keys: Vec<&String> = record.as_object().unwrap().keys().collect();
    for field in [
        "id",
        "title",
        "thumbnail_url",
        "duration",
        "status",
        "product_count",
        "metrics",
    ] {
        assert!(record.get(field).is_some(), "{field} missing from {keys:?}");
    }
    assert_eq!(body["data"][1]["status"], json!("DRAFT"));
    assert_eq!(body["data"][1]["product_count"], json!(0));
    // Money is written with two decimals, as an exact decimal number.
    assert!(text.contains(r#""revenue":19.99"#), "{text}");
    assert!(text.contains(r#""revenue":0.00"#), "{text}");
    for field in ["page", "limit", "total_count", "total_pages"] {
        assert!(body["pagination"][field].is_u64(), "{}", body["pagination"]);
    }
    assert!(body["meta"]["start_date"].is_string());
    assert!(body["meta"]["end_date"].is_string());
}
