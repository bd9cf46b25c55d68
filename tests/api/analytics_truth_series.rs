//! The time series against a recount of the events sent: every bucket of every range, by day,
//! ISO week and month, for the shop, each video and each widget, with each bucket's comparison,
//! and their CSV; and where the leap day falls in a comparison with the previous year.

use chrono::{NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;
use serde_json::json;

use crate::support::truth::*;
use crate::support::truth_series::*;

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn query(first: &str, last: &str, compare: Compare) -> Query {
    Query::new(day(first), day(last), Some(compare))
}

/// Around the leap days of 2024 and 2028, and the same dates in the years after and before them.
const LEAP_DAYS: [&str; 8] = [
    "2024-02-28",
    "2024-02-29",
    "2024-03-01",
    "2027-02-28",
    "2027-03-01",
    "2028-02-28",
    "2028-02-29",
    "2028-03-01",
];

/// One checkout a day around the leap days, at noon in each shop's timezone, so that every rule
/// below has events to move, whatever else is drawn.
fn anchors() -> Vec<GeneratedEvent> {
    let timezones = TIMEZONES.map(|tz| tz.parse::<Tz>().unwrap());
    let mut anchors = vec![];
    for (shop, tz) in timezones.iter().enumerate() {
        for (i, date) in LEAP_DAYS.iter().enumerate() {
            let noon = day(date).and_hms_opt(12, 0, 0).unwrap();
            anchors.push(GeneratedEvent {
                shop,
                video: Some(i % VIDEOS),
                widget: Some(i % WIDGETS),
                kind: CHECKOUT,
                attribution: [Some(Attribution::Direct), None][i % 2],
                at: tz.from_local_datetime(&noon).unwrap().with_timezone(&Utc),
                revenue_e4: 123_455 + i as i64,
                watch: None,
                context: Context::default(),
            });
        }
    }
    anchors
}

/// `compare=previous_year` across 29 February. A leap day compares with no day when the 28th
/// is in the range before it; alone in a range it is the range's start, and compares with the
/// 28th. An earlier year's leap day falls in the comparison of the current 1st of March. And the
/// previous period moves every day by the same number of days across it. Ingest takes these
/// past and future timestamps as sent once its accepted window is wide enough (a setting), so
/// the events go through the endpoint like every other.
#[test]
fn a_leap_day_compares_with_the_days_the_contract_names() {
    let queries = vec![
        query("2028-02-27", "2028-03-02", Compare::PreviousYear),
        query("2028-02-29", "2028-02-29", Compare::PreviousYear),
        query("2028-02-29", "2028-03-05", Compare::PreviousYear),
        query("2025-02-27", "2025-03-02", Compare::PreviousYear),
        query("2025-03-01", "2025-03-01", Compare::PreviousYear),
        query("2024-02-27", "2024-03-02", Compare::PreviousPeriod),
    ];

    // The recount says what the contract says, on the anchors alone (the first shop's).
    let anchors = anchors();
    let ledger = Ledger::new(&anchors, 0, TIMEZONES[0].parse().unwrap());
    let bucket = |q: &Query, date: &str| {
        let series = expected_series(&ledger, &q.scope(Whose::Shop), q, Interval::Day);
        let bucket = series.into_iter().find(|b| b["date"] == date).unwrap();
        (
            bucket["metrics"].clone(),
            bucket["comparison"]["metrics"].clone(),
        )
    };
    let nothing = Counts::default().metrics();
    let (leap_day, compared) = bucket(&queries[0], "2028-02-29");
    assert_eq!((leap_day["orders"].clone(), compared), (json!(1), nothing));
    assert_eq!(bucket(&queries[0], "2028-03-01").1["orders"], 1);
    assert_eq!(bucket(&queries[1], "2028-02-29").1["orders"], 1);
    assert_eq!(bucket(&queries[3], "2025-03-01").1["orders"], 2);
    assert_eq!(bucket(&queries[4], "2025-03-01").1["orders"], 1);

    let seasons = [2024, 2025, 2027, 2028]
        .map(|year| {
            let date = |month, day| NaiveDate::from_ymd_opt(year, month, day).unwrap();
            (date(2, 18), date(3, 7))
        })
        .to_vec();
    let events = events(seasons, 100..250).prop_map(move |mut events| {
        events.extend(anchors.iter().cloned());
        events
    });
    recount_cases(1, (events, Just(queries)));
}
