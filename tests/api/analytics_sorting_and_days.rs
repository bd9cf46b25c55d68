//! The analytics API's lists sorted by every key in both directions, and a day as a whole day in
//! the shop's timezone.

use std::cmp::Ordering;

use chrono::{DateTime, Utc};
use serde_json::json;
use uuid::Uuid;

use crate::support::analytics::*;
use crate::support::*;

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
