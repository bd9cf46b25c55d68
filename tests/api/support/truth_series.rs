//! The time series a recount expects, bucket by bucket.

use super::truth::*;
use chrono::{Datelike, Days, NaiveDate};
use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interval {
    Day,
    Week,
    Month,
}

impl Interval {
    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
        }
    }

    /// The first day of the bucket `day` is in, before clipping to a range: ISO weeks start on
    /// Monday.
    pub fn bucket_of(self, day: NaiveDate) -> NaiveDate {
        match self {
            Interval::Day => day,
            Interval::Week => day - Days::new(day.weekday().num_days_from_monday().into()),
            Interval::Month => day.with_day(1).unwrap(),
        }
    }
}

/// The range's buckets, first and last day each: its days grouped by bucket, so the first and
/// the last are clipped to the range.
pub fn buckets(
    first: NaiveDate,
    last: NaiveDate,
    interval: Interval,
) -> Vec<(NaiveDate, NaiveDate)> {
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

/// The series the API should answer for the scope's events: one entry per bucket, zeros included,
/// and with a comparison each bucket's comparison days: from the day after the shifted end of
/// the bucket before (the shifted start for the first) to its own shifted end.
pub fn expected_series(
    ledger: &Ledger,
    scope: &Scope,
    q: &Query,
    interval: Interval,
) -> Vec<Value> {
    let buckets = buckets(q.first, q.last, interval);
    let shifted_ends: Vec<NaiveDate> = buckets
        .iter()
        .filter_map(|(_, end)| q.shift(*end))
        .collect();
    let mut current = vec![Counts::default(); buckets.len()];
    let mut compared = vec![Counts::default(); buckets.len()];
    for (day, e) in ledger.of(scope) {
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

/// The series broken down by `dimension`: one per value of the breakdown ([`Ledger::breakdown`]), in
/// its order, each with the totals of the range.
pub fn expected_series_by(
    ledger: &Ledger,
    scope: &Scope,
    q: &Query,
    interval: Interval,
    dimension: Dimension,
) -> Vec<Value> {
    let entries = ledger.breakdown(scope, q, dimension).into_iter();
    entries
        .map(|(value, part)| {
            let totals = ledger.count(&part, (q.first, q.last));
            let series = expected_series(ledger, &part, q, interval);
            json!({ dimension.as_str(): value, "metrics": totals.metrics(), "series": series })
        })
        .collect()
}

/// The shop's, each video's and each widget's series by day, week and month, broken down when
/// the query asks; the shop's as CSV.
pub async fn check_series(shop: &Shop<'_>, q: &Query) {
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
                q.broken_down(),
                interval.as_str()
            );
            let answer = get(shop.app, shop.key, &path).await;
            let scope = q.scope(*whose);
            let data = answer["data"].as_array().unwrap();
            let what = format!("shop {} {path}", shop.index);
            // Each bucket on its own first, for a readable failure.
            let rows = match q.breakdown {
                None => {
                    let expected = expected_series(&shop.ledger, &scope, q, interval);
                    assert_buckets(data, &expected, &what);
                    data.clone()
                }
                Some(dimension) => {
                    let expected = expected_series_by(&shop.ledger, &scope, q, interval, dimension);
                    let key = dimension.as_str();
                    let values = |all: &[Value]| all.iter().map(|s| s[key].clone()).collect();
                    let (got, wanted): (Vec<Value>, Vec<Value>) = (values(data), values(&expected));
                    assert_eq!(got, wanted, "{what}: series");
                    for (series, expected) in data.iter().zip(&expected) {
                        let what = format!("{what}: {}", series[key]);
                        let buckets = series["series"].as_array().unwrap();
                        assert_buckets(buckets, expected["series"].as_array().unwrap(), &what);
                        assert_eq!(series, expected, "{what}");
                    }
                    // The CSV's rows: each series' buckets, each with its value.
                    data.iter()
                        .flat_map(|series| {
                            let buckets = series["series"].as_array().unwrap().iter();
                            buckets.map(|bucket| {
                                let mut row = bucket.clone();
                                row[key] = series[key].clone();
                                row
                            })
                        })
                        .collect()
                }
            };
            assert_eq!(answer["meta"], meta, "{path}");
            if *whose == Whose::Shop {
                let by = q.breakdown.map(|d| format!("-by-{}", d.as_str()));
                let file = format!(
                    "videoapp-timeseries-{}{}-{}-to-{}.csv",
                    interval.as_str(),
                    by.unwrap_or_default(),
                    q.first,
                    q.last
                );
                let csv = get_csv(shop.app, shop.key, &format!("{path}&format=csv"), &file).await;
                let leading: Vec<&str> = q
                    .breakdown
                    .map(Dimension::as_str)
                    .into_iter()
                    .chain(["date"])
                    .collect();
                assert_csv_is(
                    &csv,
                    &leading,
                    q.compare.is_some(),
                    &rows,
                    &format!("{what} CSV"),
                );
            }
        }
    }
}

/// A series' buckets are the expected ones: the same dates, then each bucket's numbers.
fn assert_buckets(buckets: &[Value], expected: &[Value], what: &str) {
    let dates = |series: &[Value]| series.iter().map(|b| b["date"].clone()).collect();
    let (got, wanted): (Vec<Value>, Vec<Value>) = (dates(buckets), dates(expected));
    assert_eq!(got, wanted, "{what}: buckets");
    for (bucket, expected) in buckets.iter().zip(expected) {
        assert_eq!(bucket, expected, "{what}: {}", expected["date"]);
    }
}
