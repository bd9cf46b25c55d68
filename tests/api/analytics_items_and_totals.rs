//! The analytics API's one video and one widget, the shop's summary and the widget list, revenue
//! as an exact decimal, and the longest range.

use chrono::Utc;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::support::analytics::*;
use crate::support::*;

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
