//! `GET /api/v1/analytics/lift`: a shop's holdout, each group's sessions, orders and revenue as
//! the browsers sent them, and the lifts with their intervals, in JSON and CSV.

use std::time::Duration;

use chrono::{Duration as Days, Utc};
use reqwest::StatusCode;
use serde_json::{json, Value};
use videoapp::analytics::lift::{self, GroupFigures};

use crate::support::analytics::*;
use crate::support::*;

/// Two hours ago, and `seconds` more.
fn earlier(seconds: i64) -> String {
    (Utc::now() - Days::hours(2) + Days::seconds(seconds)).to_rfc3339()
}

fn session(id: &str, group: Option<&str>, second: i64) -> Value {
    json!({ "eventType": "session", "sessionId": id, "group": group, "timestamp": earlier(second) })
}

fn order(id: &str, session: &str, group: Option<&str>, revenue: &str, second: i64) -> Value {
    json!({ "eventType": "checkout_completed", "sessionId": session, "group": group,
            "orderId": id, "revenue": revenue, "currency": "USD", "timestamp": earlier(second) })
}

/// Four visits shown the widgets, two of them buying (one twice), and two kept from them, one
/// buying; a visit and an order of a browser outside the holdout count in neither group.
async fn arranged() -> (TestApp, Fixture) {
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    app.create_shop_with(SHOP, json!({ "holdoutPercent": 25 }))
        .await;
    let (exposed, holdout) = (Some("exposed"), Some("holdout"));
    let events = vec![
        // A visit says where it came from, as every event of the loader does.
        json!({ "eventType": "session", "sessionId": "e-1", "group": "exposed",
                "source": "social", "country": "CA", "timestamp": earlier(1) }),
        session("e-2", exposed, 2),
        session("e-3", exposed, 3),
        session("e-4", exposed, 4),
        session("h-1", holdout, 5),
        session("h-2", holdout, 6),
        session("n-1", None, 7),
        order("o-1", "e-1", exposed, "30.00", 10),
        order("o-2", "e-2", exposed, "10.00", 11),
        order("o-3", "e-2", exposed, "5.00", 12),
        order("o-4", "h-1", holdout, "20.00", 13),
        order("o-5", "n-1", None, "99.00", 14),
    ];
    let response = app.post_events(SHOP, &json!({ "events": events })).await;
    assert_eq!(response.status(), StatusCode::ACCEPTED);
    wait_until_shipped(&app, Duration::from_secs(20)).await;
    (app, fixture)
}

/// The figures as the statistics module sees them: each session's revenue, in ten-thousandths.
fn figures(sessions: u64, revenues: &[i64]) -> GroupFigures {
    GroupFigures {
        sessions,
        orders: 0,
        revenue_e4: revenues.iter().sum(),
        revenue_e4_squares: revenues.iter().map(|r| (*r as f64) * (*r as f64)).sum(),
    }
}

#[tokio::test]
async fn the_lift_shows_each_groups_visits_orders_and_revenue_and_the_lifts_in_json_and_csv() {
    // Arrange
    let (app, fixture) = arranged().await;
    let exposed = GroupFigures {
        orders: 3,
        ..figures(4, &[300_000, 150_000])
    };
    let holdout = GroupFigures {
        orders: 1,
        ..figures(2, &[200_000])
    };
    let two = |x: f64| format!("{x:.2}");
    let four = |x: f64| format!("{x:.4}");
    let conversion = lift::conversion_lift(&exposed, &holdout).unwrap();
    let revenue = lift::revenue_per_session_lift(&exposed, &holdout).unwrap();

    // Act
    let (body, text) = analytics_ok(&app, &fixture.key, "/lift").await;

    // Assert: the groups exactly, money and rates with two decimals.
    let data = &body["data"];
    assert_eq!(
        data["exposed"],
        json!({ "sessions": 4, "orders": 3, "conversion_rate": 75.0, "revenue": 45.0,
                "revenue_per_session": 11.25, "aov": 15.0 }),
        "{text}"
    );
    assert_eq!(
        data["holdout"],
        json!({ "sessions": 2, "orders": 1, "conversion_rate": 50.0, "revenue": 20.0,
                "revenue_per_session": 10.0, "aov": 20.0 }),
        "{text}"
    );
    assert!(text.contains(r#""revenue_per_session":11.25"#), "{text}");
    // The lifts as the statistics say, rounded: +50% conversion, +12.5% revenue per session.
    assert_eq!(two(conversion.value), "50.00");
    assert_eq!(two(revenue.value), "12.50");
    let lift_text = |name: &str, i: &lift::Interval| {
        format!(
            r#""{name}":{{"value":{},"ci_low":{},"ci_high":{},"p_value":{}}}"#,
            two(i.value),
            two(i.ci_low),
            two(i.ci_high),
            four(i.p_value)
        )
    };
    assert!(
        text.contains(&lift_text("conversion_rate", &conversion)),
        "{text}"
    );
    assert!(
        text.contains(&lift_text("revenue_per_session", &revenue)),
        "{text}"
    );
    assert_eq!(data["enough_data"], json!(false));
    assert!(body["meta"]["start_date"].is_string(), "{text}");
    // Visits count in no other figure: a source seen on visits only is no entry of a breakdown.
    let (sources, text) = analytics_ok(&app, &fixture.key, "/summary?breakdown=source").await;
    let named: Vec<&str> = (sources["data"].as_array().unwrap().iter())
        .map(|entry| entry["source"].as_str().unwrap())
        .collect();
    assert_eq!(named, ["unknown"], "{text}");

    // The same as one CSV row.
    let response = analytics(&app, &fixture.key, "/lift?format=csv").await;
    assert_eq!(response.status(), StatusCode::OK);
    let disposition = response.headers()["content-disposition"].to_str().unwrap();
    assert!(disposition.contains("videoapp-lift-"), "{disposition}");
    let csv = response.text().await.unwrap();
    let lines: Vec<&str> = csv.split("\r\n").collect();
    assert_eq!(
        lines[0],
        "exposed_sessions,exposed_orders,exposed_conversion_rate,exposed_revenue,\
         exposed_revenue_per_session,exposed_aov,holdout_sessions,holdout_orders,\
         holdout_conversion_rate,holdout_revenue,holdout_revenue_per_session,holdout_aov,\
         conversion_rate_lift,conversion_rate_ci_low,conversion_rate_ci_high,\
         conversion_rate_p_value,revenue_per_session_lift,revenue_per_session_ci_low,\
         revenue_per_session_ci_high,revenue_per_session_p_value,enough_data"
    );
    let row = format!(
        "4,3,75.00,45.00,11.25,15.00,2,1,50.00,20.00,10.00,20.00,{},{},{},{},{},{},{},{},false",
        two(conversion.value),
        two(conversion.ci_low),
        two(conversion.ci_high),
        four(conversion.p_value),
        two(revenue.value),
        two(revenue.ci_low),
        two(revenue.ci_high),
        four(revenue.p_value),
    );
    assert_eq!(lines[1], row);
    assert_eq!(lines[2], "");
}

/// Without a holdout there is nothing to compare: zeros, and no lift.
#[tokio::test]
async fn a_shop_without_a_holdout_has_zeros_and_no_lift_and_bad_ranges_are_refused_as_elsewhere() {
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;

    let (body, text) = analytics_ok(&app, &fixture.key, "/lift").await;
    let zero = json!({ "sessions": 0, "orders": 0, "conversion_rate": 0.0, "revenue": 0.0,
                       "revenue_per_session": 0.0, "aov": 0.0 });
    assert_eq!(body["data"]["exposed"], zero, "{text}");
    assert_eq!(body["data"]["holdout"], zero, "{text}");
    assert_eq!(
        body["data"]["lift"],
        json!({ "conversion_rate": null, "revenue_per_session": null })
    );
    assert_eq!(body["data"]["enough_data"], json!(false));

    let response = analytics(&app, &fixture.key, "/lift?start_date=2026-02-30").await;
    let (status, _, code, message) = error_of(response).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(code, "INVALID_DATE");
    assert!(message.contains("start_date"), "{message}");
    let response = analytics_with(&app, None, "/lift").await;
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
}

/// The proof by simulation, through the lift's own query and statistics over events in
/// ClickHouse: populations with a known true lift are drawn many times, each draw a shop of its
/// own. Each session converts with its group's probability and each order's value is log-normal
/// (mean 60, σ 0.8) in both groups, so revenue per session lifts exactly as conversion does. The
/// draws come from a hash of (draw, group, session), so every run draws the same populations.
///
/// 1,000 draws of a +20% lift must be covered by the 95% intervals 93–97% of the time (the
/// spread of 1,000 draws is ±0.7%), and 1,000 draws of no lift must be called significant
/// (p < 0.05) at most 6.5% of the time. An interval a fifth too narrow covers about 89%.
#[tokio::test]
async fn drawn_many_times_the_intervals_cover_a_known_lift_95_percent_of_the_time_and_no_lift_is_rarely_significant(
) {
    use futures::StreamExt;
    use videoapp::analytics::dates::DateRange;
    use videoapp::analytics::queries::lift_groups;
    use videoapp::catalog::domain::ShopDomain;

    // Arrange: a schema without the aggregates' views (nothing here reads them), then two
    // thousand shops of 5,000 sessions in each group, their sessions and orders on one day.
    const DRAWS: u64 = 2_000;
    const SESSIONS: u64 = 5_000;
    let warehouse = fresh_warehouse();
    videoapp::warehouse::migrations::apply(&warehouse, videoapp::warehouse::migrations::MIGRATIONS)
        .await
        .unwrap();
    let database = warehouse.database().to_string();
    let views = "SELECT name FROM system.tables \
                 WHERE database = currentDatabase() AND engine = 'MaterializedView'";
    for view in clickhouse_query(&database, views).await.lines() {
        clickhouse_query(&database, &format!("DROP TABLE {view}")).await;
    }
    // Draws below 1,000 lift conversion by 20% over a holdout's 3%; the others not at all.
    let population = format!(
        "SELECT concat('draw-', toString(draw), '.myshopify.com') AS shop, \
                if(g = 0, 'exposed', 'holdout') AS grp, concat(grp, '-', toString(s)) AS session, \
                if(g = 1, 0.03, if(draw < 1000, 0.036, 0.03)) AS p, \
                cityHash64(draw, g, s, 1) / 18446744073709551616.0 AS u, \
                (cityHash64(draw, g, s, 2) + 1) / 18446744073709551617.0 AS u1, \
                cityHash64(draw, g, s, 3) / 18446744073709551616.0 AS u2 \
         FROM (SELECT intDiv(number, {two_n}) AS draw, intDiv(number % {two_n}, {SESSIONS}) AS g, \
                      number % {SESSIONS} AS s FROM numbers({rows}))",
        two_n = 2 * SESSIONS,
        rows = DRAWS * 2 * SESSIONS
    );
    let columns = "shop_domain, local_date, event_time, received_at, event_type, session_id, \
                   lift_group, revenue_e4, currency";
    let sessions = format!(
        "INSERT INTO events ({columns}) \
         SELECT shop, toDate('2026-06-01'), toDateTime('2026-06-01 12:00:00'), \
                toDateTime('2026-06-01 12:00:00'), 'session', session, grp, 0, '' \
         FROM ({population})"
    );
    // σ 0.8 and mean 60: μ = ln 60 − σ²/2.
    let orders = format!(
        "INSERT INTO events ({columns}) \
         SELECT shop, toDate('2026-06-01'), toDateTime('2026-06-01 12:30:00'), \
                toDateTime('2026-06-01 12:30:00'), 'checkout_completed', session, grp, \
                toInt64(round(exp(log(60) - 0.32 + 0.8 * sqrt(-2 * log(u1)) * cos(2 * pi() * u2)) \
                              * 10000)), 'USD' \
         FROM ({population}) WHERE u < p"
    );
    clickhouse_query(&database, &sessions).await;
    clickhouse_query(&database, &orders).await;
    let day = chrono::NaiveDate::from_ymd_opt(2026, 6, 1).unwrap();
    let range = DateRange::new(Some(day), Some(day), day).unwrap();

    // Act: a few draws' queries at a time, as a dashboard's visitors would ask.
    let read = |draw: u64| {
        let (warehouse, range) = (&warehouse, &range);
        async move {
            let shop = ShopDomain::parse(&format!("draw-{draw}.myshopify.com")).unwrap();
            (draw, lift_groups(warehouse, &shop, range).await.unwrap())
        }
    };
    let mut groups = futures::stream::iter(0..DRAWS)
        .map(read)
        .buffer_unordered(6);
    let mut covered = [0u32; 2];
    let mut significant = [0u32; 2];
    let mut accepted = 0;
    while let Some((draw, (exposed, holdout))) = groups.next().await {
        assert_eq!((exposed.sessions, holdout.sessions), (SESSIONS, SESSIONS));
        accepted += u32::from(lift::enough_data(&exposed, &holdout));
        let conversion = lift::conversion_lift(&exposed, &holdout).unwrap();
        let revenue = lift::revenue_per_session_lift(&exposed, &holdout).unwrap();
        for (metric, interval) in [conversion, revenue].into_iter().enumerate() {
            if draw < 1_000 {
                let truth = 20.0;
                covered[metric] += u32::from(interval.ci_low <= truth && truth <= interval.ci_high);
            } else {
                significant[metric] += u32::from(interval.p_value < 0.05);
            }
        }
    }

    // Assert
    assert!(accepted >= 1_900, "only {accepted} draws had enough data");
    for (metric, name) in ["conversion", "revenue per session"]
        .into_iter()
        .enumerate()
    {
        let coverage = f64::from(covered[metric]) / 10.0;
        let false_positives = f64::from(significant[metric]) / 10.0;
        assert!(
            (93.0..=97.0).contains(&coverage),
            "{name}: the intervals covered a +20% lift in {coverage}% of draws"
        );
        assert!(
            false_positives <= 6.5,
            "{name}: no lift was called significant in {false_positives}% of draws"
        );
        println!("{name}: coverage {coverage}%, false positives {false_positives}%");
    }
}
