//! Ranges of a year or more, which the lists read as whole years, the months at their edges and
//! the days at the edges of those (added, or subtracted from a whole year or month; the list of
//! widgets reads whole months and days): each number, and each `previous_year` comparison,
//! equals the events' own count, across year ends, a leap day, today and a range that ends in
//! days to come.

use std::time::Duration;

use chrono::{Datelike, Days, NaiveDate, Utc};
use serde_json::json;

use crate::support::analytics::{analytics_ok, at, event, record, shop_with_key, SHOP, UNLIMITED};
use crate::support::*;

/// Views on each of these days: the ends of years, midsummer, a leap day when there is one, a
/// year and a day ago, yesterday and today, a different number on each.
fn viewed_days(today: NaiveDate) -> Vec<NaiveDate> {
    let y = today.year();
    let ymd = |y, m, d| NaiveDate::from_ymd_opt(y, m, d);
    let mut days: Vec<NaiveDate> = [
        ymd(y - 2, 6, 14),
        ymd(y - 2, 6, 15),
        ymd(y - 2, 12, 31),
        ymd(y - 1, 1, 1),
        ymd(y - 1, 2, 29).or(ymd(y - 1, 3, 1)),
        ymd(y - 1, 6, 14),
        ymd(y - 1, 12, 31),
        ymd(y, 1, 1),
    ]
    .into_iter()
    .flatten()
    .collect();
    days.extend([366, 365, 364, 1].map(|n| today - Days::new(n)));
    days.push(today);
    days.sort();
    days.dedup();
    days
}

#[tokio::test]
async fn lists_over_a_year_or_more_count_each_day_once() {
    // Arrange
    let app = spawn_app_with(|s| {
        s.event_max_past = Duration::from_secs(1_200 * 86_400);
        s.rate_limit_per_minute = UNLIMITED;
    })
    .await;
    let fixture = shop_with_key(&app, SHOP).await;
    let target = json!({ "videoId": fixture.video, "widgetId": fixture.widget });
    let now = Utc::now();
    let today = now.date_naive();
    let days = viewed_days(today);
    let views = |i: usize| i + 1;
    let mut events = Vec::new();
    for (i, day) in days.iter().enumerate() {
        // Noon, but today's are now: noon may be to come.
        let when = if *day == today {
            now
        } else {
            day.and_hms_opt(12, 0, 0).unwrap().and_utc()
        };
        events.extend(vec![at(event("view", &target), when); views(i)]);
    }
    record(&app, SHOP, events).await;
    let counted = |first: NaiveDate, last: NaiveDate| -> u64 {
        let within = days.iter().enumerate();
        let within = within.filter(|(_, d)| **d >= first && **d <= last);
        within.map(|(i, _)| views(i) as u64).sum()
    };
    let y = today.year();
    let ymd = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).unwrap();
    let ranges = [
        (today - Days::new(364), today - Days::new(1)),
        (today - Days::new(364), today),
        (ymd(y - 2, 1, 1), ymd(y, 12, 31)),
        (ymd(y - 1, 1, 1), ymd(y - 1, 12, 31)),
        (ymd(y - 2, 12, 31), ymd(y, 1, 1)),
        (ymd(y - 2, 6, 15), ymd(y - 1, 6, 14)),
        (ymd(y - 2, 6, 14), today - Days::new(365)),
    ];
    let get = async |path: String| analytics_ok(&app, &fixture.key, &path).await.0;

    for (first, last) in ranges {
        // Act
        let range = format!("start_date={first}&end_date={last}");
        let videos = get(format!("/videos?{range}&compare=previous_year")).await;
        let widgets = get(format!("/widgets?{range}")).await;
        let widget = get(format!("/widget/{}?{range}", fixture.widget)).await;

        // Assert
        let expected = json!(counted(first, last));
        let context = format!("{first} to {last}");
        assert_eq!(videos["data"][0]["metrics"]["views"], expected, "{context}");
        assert_eq!(
            widgets["data"][0]["metrics"]["views"], expected,
            "{context}"
        );
        assert_eq!(widget["data"]["metrics"]["views"], expected, "{context}");
        // Twelve calendar months back, 29 February to the 28th, as `previous_year` moves.
        let year_before = |d: NaiveDate| d.checked_sub_months(chrono::Months::new(12)).unwrap();
        let compared = counted(year_before(first), year_before(last));
        assert_eq!(
            videos["data"][0]["comparison"]["metrics"]["views"],
            json!(compared),
            "{context}, a year before"
        );
    }
}
