//! The time series against a recount of the events sent: every bucket of every range, by day,
//! ISO week and month, for the shop, each video and each widget, with each bucket's comparison,
//! and their CSV; and where the leap day falls in a comparison with the previous year.

use chrono::{Datelike, Days, NaiveDate, TimeZone, Utc};
use chrono_tz::Tz;
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::analytics_truth::*;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Interval {
    Day,
    Week,
    Month,
}

impl Interval {
    fn as_str(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
        }
    }

    /// The first day of the bucket `day` is in, before clipping to a range: ISO weeks start on
    /// Monday.
    fn bucket_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Interval::Day => day,
            Interval::Week => day - Days::new(day.weekday().num_days_from_monday().into()),
            Interval::Month => day.with_day(1).unwrap(),
        }
    }
}

/// The range's buckets, first and last day each: its days grouped by bucket, so the first and
/// the last are clipped to the range.
fn buckets(first: NaiveDate, last: NaiveDate, interval: Interval) -> Vec<(NaiveDate, NaiveDate)> {
    let mut buckets: Vec<(NaiveDate, NaiveDate)> = vec![];
    for day in first.iter_days().take_while(|day| *day <= last) {
        match buckets.last_mut() {
            Some((start, end)) if interval.bucket_of(*start) == interval.bucket_of(day) => {
                *end = day
            }
            _ => buckets.push((day, day)),
        }
    }
    buckets
}

/// The series the API should answer for `whose` events: one entry per bucket, zeros included,
/// and with a comparison each bucket's comparison days: from the day after the shifted end of
/// the bucket before (the shifted start for the first) to its own shifted end.
fn expected_series(ledger: &Ledger, whose: Whose, q: &Query, interval: Interval) -> Vec<Value> {
    let buckets = buckets(q.first, q.last, interval);
    let shifted_ends: Vec<NaiveDate> = buckets
        .iter()
        .filter_map(|(_, end)| q.shift(*end))
        .collect();
    let mut current = vec![Counts::default(); buckets.len()];
    let mut compared = vec![Counts::default(); buckets.len()];
    for (day, e) in ledger.of(whose) {
        if let Some(k) = buckets.iter().position(|(a, b)| (*a..=*b).contains(&day)) {
            current[k].add(e);
        }
        if q.comparison().is_some_and(|(start, _)| day >= start) {
            if let Some(k) = shifted_ends.iter().position(|end| day <= *end) {
                compared[k].add(e);
            }
        }
    }
    buckets
        .iter()
        .zip(current.iter().zip(&compared))
        .map(|((first, _), (current, compared))| {
            let mut bucket = json!({ "date": first.to_string(), "metrics": current.metrics() });
            if q.compare.is_some() {
                bucket["comparison"] = json!({ "metrics": compared.metrics() });
            }
            bucket
        })
        .collect()
}

/// The shop's, each video's and each widget's series by day, week and month; the shop's as CSV.
pub(crate) async fn check_series(shop: &Shop<'_>, q: &Query) {
    let videos = shop.videos.iter().enumerate();
    let widgets = shop.widgets.iter().enumerate();
    let subjects: Vec<(Whose, String)> = std::iter::once((Whose::Shop, String::new()))
        .chain(videos.map(|(v, id)| (Whose::Video(v), format!("&video_id={id}"))))
        .chain(widgets.map(|(w, id)| (Whose::Widget(w), format!("&widget_id={id}"))))
        .collect();
    for interval in [Interval::Day, Interval::Week, Interval::Month] {
        let mut meta = meta(shop.tz, q);
        meta["interval"] = json!(interval.as_str());
        for (whose, param) in &subjects {
            let path = format!(
                "/api/v1/analytics/timeseries?{}&interval={}{param}",
                q.params(),
                interval.as_str()
            );
            let answer = get(shop.app, shop.key, &path).await;
            let expected = expected_series(&shop.ledger, *whose, q, interval);
            let data = answer["data"].as_array().unwrap();
            let dates = |series: &[Value]| series.iter().map(|b| b["date"].clone()).collect();
            let (got, wanted): (Vec<Value>, Vec<Value>) = (dates(data), dates(&expected));
            assert_eq!(got, wanted, "shop {} {path}: buckets", shop.index);
            for (bucket, expected) in data.iter().zip(&expected) {
                let date = &expected["date"];
                assert_eq!(bucket, expected, "shop {} {path}: {date}", shop.index);
            }
            assert_eq!(answer["meta"], meta, "{path}");
            if *whose == Whose::Shop {
                let file = format!(
                    "videoapp-timeseries-{}-{}-to-{}.csv",
                    interval.as_str(),
                    q.first,
                    q.last
                );
                let csv = get_csv(shop.app, shop.key, &format!("{path}&format=csv"), &file).await;
                let what = format!("shop {} {path} CSV", shop.index);
                assert_csv_is(&csv, &["date"], q.compare.is_some(), data, &what);
            }
        }
    }
}

fn day(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn query(first: &str, last: &str, compare: Compare) -> Query {
    Query {
        first: day(first),
        last: day(last),
        compare: Some(compare),
        sort_by: "revenue",
        ascending: false,
    }
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

    // The recount says what the contract says, on the anchors alone (in UTC).
    let anchors = anchors();
    let ledger = Ledger::new(&anchors, 0, Tz::UTC);
    let bucket = |q: &Query, date: &str| {
        let series = expected_series(&ledger, Whose::Shop, q, Interval::Day);
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
