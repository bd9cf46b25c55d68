//! The analytics API: keys and their revocation, the per-key rate limit, the query parameters,
//! dates as whole days in the shop's timezone, and the metrics of videos, widgets and the shop
//! over events that went through ingestion.

use std::cmp::Ordering;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::analytics::*;
use crate::support::*;

// ---- 1. keys and authentication ---------------------------------------------------------------

#[tokio::test]
async fn a_request_without_a_well_formed_bearer_key_is_unauthorized_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let valid = fixture.key.secret.as_str();
    let hex = &valid[3..];
    let cases = [
        None,
        Some("Basic dXNlcjpwYXNzd29yZA==".to_string()),
        Some(format!("Token {valid}")),
        Some(valid.to_string()),
        Some("Bearer".to_string()),
        Some("Bearer ".to_string()),
        Some(format!("Bearer xk_{hex}")),
        Some(format!("Bearer {hex}")),
        Some(format!("Bearer {}", &valid[..valid.len() - 1])),
        Some(format!("Bearer {valid}0")),
        Some(format!("Bearer vk_{}", hex.to_uppercase())),
        Some(format!("Bearer vk_{}g", &hex[1..])),
    ];

    for path in endpoints(&fixture.video, &fixture.widget) {
        // The key itself is good: only the form of the header is at fault below.
        analytics_ok(&app, &fixture.key, &path).await;
        for case in &cases {
            // Act
            let response = analytics_with(&app, case.as_deref(), &path).await;

            // Assert
            assert_unauthenticated(
                response,
                "UNAUTHORIZED",
                UNAUTHORIZED_MESSAGE,
                &format!("{path} with {case:?}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_accepted_in_any_case_on_every_endpoint() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let key = fixture.key.secret.as_str();

    for path in endpoints(&fixture.video, &fixture.widget) {
        for header in [
            format!("bearer {key}"),
            format!("BEARER {key}"),
            format!("Bearer   {key}"),
        ] {
            // Act
            let response = analytics_with(&app, Some(&header), &path).await;

            // Assert
            assert_eq!(response.status(), StatusCode::OK, "{path} with {header:?}");
        }
    }
}

#[tokio::test]
async fn a_well_formed_unknown_key_is_an_invalid_api_key_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let unknown = format!("vk_{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());

    for path in endpoints(&fixture.video, &fixture.widget) {
        // Act
        let response = analytics_with(&app, Some(&format!("Bearer {unknown}")), &path).await;

        // Assert
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, &path).await;
    }
}

#[tokio::test]
async fn a_revoked_key_is_an_invalid_api_key_at_once_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let kept = create_key(&app, SHOP).await;
    let paths = endpoints(&fixture.video, &fixture.widget);
    // Used first, so the instance has the key cached.
    for path in &paths {
        analytics_ok(&app, &fixture.key, path).await;
    }

    // Act
    revoke_key(&app, SHOP, &fixture.key).await;

    // Assert
    for path in &paths {
        let response = analytics(&app, &fixture.key, path).await;
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, path).await;
        // Only that key: the shop's other key still works.
        analytics_ok(&app, &kept, path).await;
    }
}

#[tokio::test]
async fn uninstalling_a_shop_makes_its_key_an_invalid_api_key_at_once() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let paths = endpoints(&fixture.video, &fixture.widget);
    for path in &paths {
        analytics_ok(&app, &fixture.key, path).await;
    }

    // Act
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);

    // Assert
    for path in &paths {
        let response = analytics(&app, &fixture.key, path).await;
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, path).await;
    }
}

#[tokio::test]
async fn a_key_sees_only_its_own_shops_videos_widgets_and_events() {
    // Arrange
    let app = spawn_app().await;
    let ours = shop_with_key(&app, SHOP).await;
    let theirs = shop_with_key(&app, OTHER_SHOP).await;
    let their_second_video = app.create_video(OTHER_SHOP, json!({})).await;
    let their_target = json!({ "videoId": theirs.video, "widgetId": theirs.widget });
    let our_target = json!({ "videoId": ours.video, "widgetId": ours.widget });
    record(
        &app,
        OTHER_SHOP,
        Activity::new([5, 5, 5, 5], &["9.00"]).events(&their_target),
    )
    .await;
    record(
        &app,
        SHOP,
        Activity::new([1, 1, 0, 0], &[]).events(&our_target),
    )
    .await;

    // Act
    let their_video = analytics(&app, &ours.key, &format!("/video/{}", theirs.video)).await;
    let their_widget = analytics(&app, &ours.key, &format!("/widget/{}", theirs.widget)).await;
    let (videos, _) = analytics_ok(&app, &ours.key, "/videos").await;
    let (widgets, _) = analytics_ok(&app, &ours.key, "/widgets").await;
    let (summary, _) = analytics_ok(&app, &ours.key, "/summary").await;

    // Assert
    assert_not_found(their_video).await;
    assert_not_found(their_widget).await;
    assert_eq!(ids_of(&videos["data"]), vec![ours.video.clone()]);
    assert_eq!(videos["pagination"]["total_count"], json!(1));
    assert!(!videos.to_string().contains(&their_second_video));
    assert_eq!(ids_of(&widgets["data"]), vec![ours.widget.clone()]);
    assert_eq!(widgets["pagination"]["total_count"], json!(1));
    assert_eq!(summary["data"]["impressions"], json!(1));
    assert_eq!(summary["data"]["views"], json!(1));
    assert_eq!(summary["data"]["orders"], json!(0));
}

// ---- 2. revocation across instances -----------------------------------------------------------

#[tokio::test]
async fn a_revoked_key_is_refused_by_every_instance_within_a_second() {
    // Arrange
    let first = spawn_app().await;
    let fixture = shop_with_key(&first, SHOP).await;
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    settings.rate_limit_per_minute = UNLIMITED;
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    // The second instance now has the key cached.
    analytics_ok(&second, &fixture.key, "/summary").await;

    // Act
    revoke_key(&first, SHOP, &fixture.key).await;
    let revoked = Instant::now();

    // Assert
    let (second, key) = (&second, &fixture.key);
    let within = Duration::from_secs(1).saturating_sub(revoked.elapsed());
    let what = "the second instance refuses the key";
    let (response, elapsed) = eventually(what, within, move || async move {
        let response = analytics(second, key, "/summary").await;
        let elapsed = revoked.elapsed();
        if response.status() == StatusCode::UNAUTHORIZED {
            return Ok((response, elapsed));
        }
        assert_eq!(response.status(), StatusCode::OK);
        Err(elapsed)
    })
    .await;
    assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, "second").await;
    assert!(
        elapsed <= Duration::from_secs(1),
        "refused after {elapsed:?}"
    );
}

// ---- 3. rate limit ----------------------------------------------------------------------------

#[tokio::test]
async fn every_answer_after_authentication_carries_the_rate_limit_counting_down() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let requests = [
        ("/videos".to_string(), StatusCode::OK),
        (
            "/summary?start_date=2026-13-01".to_string(),
            StatusCode::BAD_REQUEST,
        ),
        (format!("/video/{}", Uuid::now_v7()), StatusCode::NOT_FOUND),
        ("/videos?limit=0".to_string(), StatusCode::BAD_REQUEST),
        (format!("/widget/{}", fixture.widget), StatusCode::OK),
    ];

    for (n, (path, expected_status)) in requests.iter().enumerate() {
        // Act
        let before = unix_now();
        let response = analytics(&app, &fixture.key, path).await;

        // Assert
        assert_eq!(response.status(), *expected_status, "{path}");
        let headers = response.headers();
        assert_eq!(number_header(headers, "x-ratelimit-limit"), 5, "{path}");
        assert_eq!(
            number_header(headers, "x-ratelimit-remaining"),
            4 - n as u64,
            "{path}"
        );
        let reset = number_header(headers, "x-ratelimit-reset");
        assert!(
            reset > before && reset <= unix_now() + 61,
            "{path}: reset {reset} is not a Unix time within the next minute of {before}"
        );
    }
}

#[tokio::test]
async fn the_request_over_the_limit_is_refused_with_retry_after_matching_the_message() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    for _ in 0..5 {
        analytics_ok(&app, &fixture.key, "/summary").await;
    }

    // Act
    let before = unix_now();
    let response = analytics(&app, &fixture.key, "/summary").await;

    // Assert
    let (status, headers, code, message) = error_of(response).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(code, "RATE_LIMIT_EXCEEDED");
    let retry_after = number_header(&headers, "retry-after");
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    assert_eq!(
        message,
        format!("Too many requests. Please retry after {retry_after} seconds.")
    );
    assert_eq!(number_header(&headers, "x-ratelimit-limit"), 5);
    assert_eq!(number_header(&headers, "x-ratelimit-remaining"), 0);
    let reset = number_header(&headers, "x-ratelimit-reset");
    assert!(
        reset >= before && reset <= unix_now() + 61,
        "reset {reset} at {before}"
    );
    // Still refused: refusals do not wait the quota back.
    let again = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn each_key_of_a_shop_has_its_own_quota() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let second = create_key(&app, SHOP).await;
    for _ in 0..5 {
        analytics_ok(&app, &fixture.key, "/videos").await;
    }
    let spent = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(spent.status(), StatusCode::TOO_MANY_REQUESTS);

    // Act
    let response = analytics(&app, &second, "/videos").await;

    // Assert
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        number_header(response.headers(), "x-ratelimit-remaining"),
        4
    );
    let spent = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(spent.status(), StatusCode::TOO_MANY_REQUESTS);
}

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

// ---- 5. sorting -------------------------------------------------------------------------------

/// One video or widget as the test arranged it: what every sort key compares.
struct Arranged {
    id: String,
    title: String,
    created_at: DateTime<Utc>,
    activity: Activity,
}

fn compare(key: &str, a: &Arranged, b: &Arranged) -> Ordering {
    match key {
        "title" => a.title.cmp(&b.title),
        "created_at" => a.created_at.cmp(&b.created_at),
        metric => a.activity.metric(metric).cmp(&b.activity.metric(metric)),
    }
}

/// Titles and activity with ties on every key, and one object without any events.
fn sortable_activity() -> Vec<(&'static str, Activity)> {
    vec![
        ("Beta", Activity::new([3, 2, 0, 1], &["5.00"])),
        ("Alpha", Activity::new([1, 2, 1, 0], &[])),
        ("Beta", Activity::new([3, 0, 1, 0], &["1.00", "1.50"])),
        ("Gamma", Activity::new([0, 1, 0, 2], &[])),
        ("Alpha", Activity::new([2, 2, 1, 1], &["5.00"])),
        ("Delta", Activity::new([1, 0, 2, 0], &[])),
        ("Beta", Activity::new([3, 1, 0, 1], &["0.10"])),
        ("Alpha", Activity::default()),
    ]
}

/// A shop whose `list` (`videos` or `widgets`) hold [`sortable_activity`], its events recorded.
async fn arrange_sortable(app: &TestApp, list: &str) -> Vec<Arranged> {
    app.create_shop(SHOP).await;
    let mut events = Vec::new();
    let mut ids = Vec::new();
    for (title, activity) in sortable_activity() {
        let id = match list {
            "videos" => app.create_video(SHOP, json!({ "title": title })).await,
            _ => app.create_widget(SHOP, json!({ "title": title })).await,
        };
        let target = match list {
            "videos" => json!({ "videoId": id }),
            _ => json!({ "widgetId": id }),
        };
        events.extend(activity.events(&target));
        ids.push(id);
    }
    record(app, SHOP, events).await;
    let listed = app.admin_list(&format!("/shops/{SHOP}/{list}"), list).await;
    ids.into_iter()
        .zip(sortable_activity())
        .map(|(id, (title, activity))| {
            let admin = listed.iter().find(|o| o["id"] == json!(id)).unwrap();
            Arranged {
                created_at: admin["createdAt"].as_str().unwrap().parse().unwrap(),
                id,
                title: title.to_string(),
                activity,
            }
        })
        .collect()
}

/// Checks the full list at `list` for every sort key in both directions (ties by id ascending),
/// every record's metrics, and that pages of three, concatenated, give the same order; and that
/// the order without a sort is by views, descending.
async fn assert_sorted_by_every_key(app: &TestApp, key: &Key, list: &str, arranged: &[Arranged]) {
    let (default, _) = analytics_ok(app, key, &format!("{list}?limit=100")).await;
    let (explicit, _) = analytics_ok(
        app,
        key,
        &format!("{list}?limit=100&sort_by=views&sort_order=desc"),
    )
    .await;
    assert_eq!(ids_of(&default["data"]), ids_of(&explicit["data"]));
    for sort_by in SORT_KEYS {
        for sort_order in ["asc", "desc"] {
            let mut expected: Vec<&Arranged> = arranged.iter().collect();
            expected.sort_by(|a, b| {
                let order = compare(sort_by, a, b);
                let order = if sort_order == "desc" {
                    order.reverse()
                } else {
                    order
                };
                let (a_id, b_id) = (
                    Uuid::parse_str(&a.id).unwrap(),
                    Uuid::parse_str(&b.id).unwrap(),
                );
                order.then(a_id.cmp(&b_id))
            });
            let expected_ids: Vec<String> = expected.iter().map(|a| a.id.clone()).collect();
            let query = format!("sort_by={sort_by}&sort_order={sort_order}");

            let (full, _) = analytics_ok(app, key, &format!("{list}?{query}&limit=100")).await;
            assert_eq!(ids_of(&full["data"]), expected_ids, "{list}?{query}");
            for (record, arranged) in full["data"].as_array().unwrap().iter().zip(&expected) {
                assert_eq!(record["metrics"], arranged.activity.metrics(), "{record}");
                assert_eq!(record["title"], json!(arranged.title), "{record}");
            }

            let mut paged = Vec::new();
            for page in 1..=3 {
                let (body, _) =
                    analytics_ok(app, key, &format!("{list}?{query}&limit=3&page={page}")).await;
                paged.extend(ids_of(&body["data"]));
            }
            assert_eq!(paged, expected_ids, "{list}?{query} in pages of 3");
        }
    }
}

#[tokio::test]
async fn videos_sort_by_every_key_in_both_directions_with_ties_by_id_and_stable_pages() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let arranged = arrange_sortable(&app, "videos").await;
    let key = create_key(&app, SHOP).await;

    // Act and Assert
    assert_sorted_by_every_key(&app, &key, "/videos", &arranged).await;
}

#[tokio::test]
async fn widgets_sort_by_every_key_in_both_directions_with_ties_by_id_and_stable_pages() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let arranged = arrange_sortable(&app, "widgets").await;
    let key = create_key(&app, SHOP).await;

    // Act and Assert
    assert_sorted_by_every_key(&app, &key, "/widgets", &arranged).await;
}

// ---- 6. days in the shop's timezone -----------------------------------------------------------

#[tokio::test]
async fn a_day_is_a_whole_day_in_the_shops_timezone_with_both_ends_inclusive() {
    // Arrange
    let app = spawn_app_with(back_fill).await;
    app.create_shop_with(SHOP, json!({ "timezone": "Asia/Kathmandu" }))
        .await;
    let video = app.create_video(SHOP, json!({})).await;
    let widget = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let key = create_key(&app, SHOP).await;
    let kathmandu = chrono_tz::Asia::Kathmandu;
    let day = minus(Utc::now().date_naive(), 10);
    // Kathmandu is UTC+05:45 all year: its day starts at 18:15 UTC the day before.
    let midnight = start_of(day, kathmandu);
    let next_midnight = start_of(plus(day, 1), kathmandu);
    let second = chrono::Duration::seconds(1);
    // 01:45 in Kathmandu, still the day before in UTC: a UTC reading would misplace it.
    let small_hours = midnight + chrono::Duration::minutes(105);
    let target = json!({ "videoId": video, "widgetId": widget });
    let view_at = |t: DateTime<Utc>| {
        let mut e = event("view", &target);
        // Sent with the shop's offset: the service must read it as an instant, not a local time.
        e["timestamp"] = json!(t.with_timezone(&kathmandu).to_rfc3339());
        e
    };
    record(
        &app,
        SHOP,
        vec![
            at(event("view", &target), midnight - second), // the day before
            view_at(midnight),                             // the day: its first second
            at(event("view", &target), small_hours),       // the day
            view_at(next_midnight - second),               // the day: its last second
            at(event("view", &target), next_midnight),     // the day after
        ],
    )
    .await;
    let cases = [
        (day, day, 3),
        (minus(day, 1), minus(day, 1), 1),
        (plus(day, 1), plus(day, 1), 1),
        (minus(day, 1), day, 4),
        (day, plus(day, 1), 4),
        (minus(day, 1), plus(day, 1), 5),
        (minus(day, 3), minus(day, 2), 0),
    ];

    for (start, end, views) in cases {
        let query = range(start, end);
        // Act
        let (summary, _) = analytics_ok(&app, &key, &format!("/summary?{query}")).await;
        let (one, _) = analytics_ok(&app, &key, &format!("/video/{video}?{query}")).await;
        let (list, _) = analytics_ok(&app, &key, &format!("/videos?{query}")).await;
        let (widget_one, _) = analytics_ok(&app, &key, &format!("/widget/{widget}?{query}")).await;

        // Assert
        assert_eq!(summary["data"]["views"], json!(views), "{query}");
        assert_eq!(one["data"]["metrics"]["views"], json!(views), "{query}");
        assert_eq!(list["data"][0]["metrics"]["views"], json!(views), "{query}");
        assert_eq!(
            widget_one["data"]["metrics"]["views"],
            json!(views),
            "{query}"
        );
        assert_eq!(
            summary["meta"],
            json!({
                "start_date": format!("{}T18:15:00.000Z", minus(start, 1)),
                "end_date": format!("{end}T18:14:59.999Z"),
            }),
            "{query}"
        );
    }
}

// ---- 7. one video -----------------------------------------------------------------------------

#[tokio::test]
async fn one_video_answers_its_record_with_the_metrics_of_the_range_and_no_pagination() {
    // Arrange
    let app = spawn_app_with(back_fill).await;
    app.create_shop(SHOP).await;
    let video = app
        .create_video(
            SHOP,
            json!({
                "title": "Linen shirt",
                "thumbnail": "https://cdn.example.com/shirt.jpg",
                "duration": 30,
                "productIds": ["gid://shopify/Product/7"],
            }),
        )
        .await;
    let other = app.create_video(SHOP, json!({})).await;
    let key = create_key(&app, SHOP).await;
    let day = minus(Utc::now().date_naive(), 5);
    let target = json!({ "videoId": video });
    let noon = start_of(day, chrono_tz::UTC) + chrono::Duration::hours(12);
    let inside = Activity::new([1, 2, 1, 1], &["7.25"]);
    let mut events: Vec<Value> = inside
        .events(&target)
        .into_iter()
        .map(|e| at(e, noon))
        .collect();
    events.push(at(
        event("view", &target),
        start_of(day, chrono_tz::UTC) - chrono::Duration::seconds(1),
    ));
    events.push(at(event("view", &target), noon + chrono::Duration::days(3)));
    events.push(at(event("view", &json!({ "videoId": other })), noon));
    record(&app, SHOP, events).await;
    let query = range(day, plus(day, 1));

    // Act
    let (body, text) = analytics_ok(&app, &key, &format!("/video/{video}?{query}")).await;

    // Assert
    let data = &body["data"];
    assert_eq!(data["id"], json!(video));
    assert_eq!(data["title"], json!("Linen shirt"));
    assert_eq!(
        data["thumbnail_url"],
        json!("https://cdn.example.com/shirt.jpg")
    );
    assert_eq!(data["duration"].as_f64(), Some(30.0));
    assert_eq!(data["status"], json!("PUBLISHED"));
    assert_eq!(data["product_count"], json!(1));
    assert_eq!(data["metrics"], inside.metrics());
    assert!(text.contains(r#""revenue":7.25"#), "{text}");
    assert_eq!(
        body["meta"],
        json!({
            "start_date": format!("{day}T00:00:00.000Z"),
            "end_date": format!("{}T23:59:59.999Z", plus(day, 1)),
        })
    );
    assert!(body.get("pagination").is_none(), "{body}");
    let (list, _) = analytics_ok(&app, &key, &format!("/videos?{query}")).await;
    let listed = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == json!(video))
        .unwrap();
    assert_eq!(listed, data, "the list and the single record agree");
}

#[tokio::test]
async fn one_video_is_not_found_when_unknown_malformed_or_another_shops() {
    // Arrange
    let app = spawn_app().await;
    let ours = shop_with_key(&app, SHOP).await;
    let theirs = shop_with_key(&app, OTHER_SHOP).await;

    for id in [
        Uuid::now_v7().to_string(),
        "not-a-video".to_string(),
        ours.widget.clone(),
        theirs.video.clone(),
    ] {
        // Act
        let response = analytics(&app, &ours.key, &format!("/video/{id}")).await;

        // Assert
        assert_not_found(response).await;
    }
}

// ---- 8. summary and widgets -------------------------------------------------------------------

#[tokio::test]
async fn the_summary_totals_the_shops_events_with_ctr_and_cvr_to_two_decimals() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let second = app.create_video(SHOP, json!({})).await;
    let first = json!({ "videoId": fixture.video });
    let mut events = Activity::new([2, 2, 1, 1], &["10.00", "0.50"]).events(&first);
    events.extend(Activity::new([1, 1, 0, 0], &[]).events(&json!({ "videoId": second })));
    // An impression of the widget alone still belongs to the shop's totals.
    events.push(event("impression", &json!({ "widgetId": fixture.widget })));
    record(&app, SHOP, events).await;

    // Act
    let (body, text) = analytics_ok(&app, &fixture.key, "/summary").await;

    // Assert
    let data = &body["data"];
    for (name, value) in [
        ("impressions", 4),
        ("views", 3),
        ("clicks", 1),
        ("add_to_cart", 1),
        ("orders", 2),
    ] {
        assert_eq!(data[name], json!(value), "{name}: {data}");
    }
    // 1 click for 4 impressions; 2 orders for 3 views.
    assert!(text.contains(r#""ctr":25.00"#), "{text}");
    assert!(text.contains(r#""cvr":66.67"#), "{text}");
    assert!(text.contains(r#""revenue":10.50"#), "{text}");
    assert!(body["meta"]["start_date"].is_string(), "{body}");
    assert!(body.get("pagination").is_none(), "{body}");
}

#[tokio::test]
async fn the_summary_rates_are_zero_when_their_divisors_are() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let (empty, empty_text) = analytics_ok(&app, &fixture.key, "/summary").await;
    record(
        &app,
        SHOP,
        Activity::new([3, 0, 2, 0], &["4.00"]).events(&json!({ "videoId": fixture.video })),
    )
    .await;

    // Act
    let (body, text) = analytics_ok(&app, &fixture.key, "/summary").await;

    // Assert
    assert_eq!(empty["data"]["views"], json!(0));
    for field in ["ctr", "cvr", "revenue"] {
        assert!(
            empty_text.contains(&format!(r#""{field}":0.00"#)),
            "{empty_text}"
        );
    }
    assert_eq!(body["data"]["clicks"], json!(2));
    assert_eq!(body["data"]["orders"], json!(1));
    // Clicks per 100 impressions, orders per 100 views (there are none).
    assert!(text.contains(r#""ctr":66.67"#), "{text}");
    assert!(text.contains(r#""cvr":0.00"#), "{text}");
}

#[tokio::test]
async fn the_widget_list_filters_by_widget_type_and_refuses_an_unknown_type() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let carousel = app
        .create_widget(SHOP, json!({ "type": "carousel", "title": "C" }))
        .await;
    let story = app
        .create_widget(SHOP, json!({ "type": "story", "title": "S" }))
        .await;
    let product_page = app
        .create_widget(SHOP, json!({ "type": "productpage", "title": "P" }))
        .await;
    let second_story = app
        .create_widget(SHOP, json!({ "type": "story", "title": "S2" }))
        .await;
    let key = create_key(&app, SHOP).await;

    // Act
    let (stories, _) = analytics_ok(
        &app,
        &key,
        "/widgets?widget_type=story&sort_by=title&sort_order=asc",
    )
    .await;
    let (product_pages, _) = analytics_ok(&app, &key, "/widgets?widget_type=productpage").await;
    let (all, _) = analytics_ok(&app, &key, "/widgets?sort_by=title&sort_order=asc").await;
    let unknown = analytics(&app, &key, "/widgets?widget_type=banner").await;

    // Assert
    assert_eq!(
        ids_of(&stories["data"]),
        vec![story.clone(), second_story.clone()]
    );
    assert_eq!(stories["pagination"]["total_count"], json!(2));
    for record in stories["data"].as_array().unwrap() {
        assert_eq!(record["type"], json!("story"));
    }
    assert_eq!(ids_of(&product_pages["data"]), vec![product_page.clone()]);
    assert_eq!(product_pages["data"][0]["type"], json!("productpage"));
    assert_eq!(
        ids_of(&all["data"]),
        vec![carousel, product_page, story, second_story]
    );
    assert_eq!(all["pagination"]["total_count"], json!(4));
    assert_error(
        unknown,
        StatusCode::BAD_REQUEST,
        "INVALID_PARAMETER",
        "widget_type",
    )
    .await;
}

#[tokio::test]
async fn a_widget_record_has_its_id_title_type_status_video_count_and_metrics() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let first = app.create_video(SHOP, json!({})).await;
    let second = app.create_video(SHOP, json!({})).await;
    let widget = app
        .create_widget(
            SHOP,
            json!({ "type": "story", "title": "Home stories", "status": "draft", "videoIds": [first, second] }),
        )
        .await;
    let quiet = app.create_widget(SHOP, json!({ "title": "Quiet" })).await;
    let activity = Activity::new([5, 4, 2, 1], &["12.00", "3.45"]);
    record(
        &app,
        SHOP,
        activity.events(&json!({ "widgetId": widget, "videoId": first })),
    )
    .await;
    let key = create_key(&app, SHOP).await;

    // Act
    let (list, text) = analytics_ok(&app, &key, "/widgets").await;
    let (one, _) = analytics_ok(&app, &key, &format!("/widget/{widget}")).await;

    // Assert
    assert_eq!(ids_of(&list["data"]), vec![widget.clone(), quiet]);
    let record = &list["data"][0];
    assert_eq!(
        *record,
        json!({
            "id": widget,
            "title": "Home stories",
            "type": "story",
            "status": "draft",
            "video_count": 2,
            "metrics": activity.metrics(),
        })
    );
    for name in ["impressions", "views", "clicks", "add_to_cart", "orders"] {
        assert!(record["metrics"][name].is_u64(), "{record}");
    }
    assert!(text.contains(r#""revenue":15.45"#), "{text}");
    assert!(text.contains(r#""revenue":0.00"#), "{text}");
    assert_eq!(
        list["pagination"],
        json!({ "page": 1, "limit": 10, "total_count": 2, "total_pages": 1 })
    );
    assert!(list["meta"]["start_date"].is_string(), "{list}");
    assert_eq!(one["data"], *record);
    assert_eq!(one["meta"], list["meta"]);
    assert!(one.get("pagination").is_none(), "{one}");
}

#[tokio::test]
async fn one_widget_is_not_found_when_unknown_malformed_or_another_shops() {
    // Arrange
    let app = spawn_app().await;
    let ours = shop_with_key(&app, SHOP).await;
    let theirs = shop_with_key(&app, OTHER_SHOP).await;

    for id in [
        Uuid::now_v7().to_string(),
        "not-a-widget".to_string(),
        ours.video.clone(),
        theirs.widget.clone(),
    ] {
        // Act
        let response = analytics(&app, &ours.key, &format!("/widget/{id}")).await;

        // Assert
        assert_not_found(response).await;
    }
}

// ---- 9. money ---------------------------------------------------------------------------------

#[tokio::test]
async fn revenue_is_the_exact_decimal_sum_of_the_orders() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let target = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let mut events: Vec<Value> = (0..30).map(|_| checkout(&target, json!(0.10))).collect();
    events.extend((0..3).map(|_| checkout(&target, json!("19.99"))));
    record(&app, SHOP, events).await;

    for path in endpoints(&fixture.video, &fixture.widget) {
        // Act
        let (body, text) = analytics_ok(&app, &fixture.key, &path).await;

        // Assert: 30 × 0.10 + 3 × 19.99
        assert!(text.contains(r#""revenue":62.97"#), "{path}: {text}");
        assert!(text.contains(r#""orders":33"#), "{path}: {body}");
    }
}

// ---- 10. range limit --------------------------------------------------------------------------

#[tokio::test]
async fn a_range_of_1096_days_is_answered_and_one_of_1097_is_an_invalid_date_range() {
    // Arrange: 2023 to 2025 is 365 + 366 + 365 days.
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;

    // Act
    let three_years = analytics(
        &app,
        &fixture.key,
        "/summary?start_date=2023-01-01&end_date=2025-12-31",
    )
    .await;
    let one_day_more = analytics(
        &app,
        &fixture.key,
        "/summary?start_date=2023-01-01&end_date=2026-01-01",
    )
    .await;

    // Assert
    assert_eq!(three_years.status(), StatusCode::OK);
    assert_error(
        one_day_more,
        StatusCode::BAD_REQUEST,
        "INVALID_DATE_RANGE",
        "at most 1096 days (3 years); 2023-01-01 to 2026-01-01 spans 1097",
    )
    .await;
}
