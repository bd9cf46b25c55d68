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

/// The series the API should answer for `whose` events: one entry per bucket, zeros included,
/// and with a comparison each bucket's comparison days: from the day after the shifted end of
/// the bucket before (the shifted start for the first) to its own shifted end.
pub fn expected_series(ledger: &Ledger, whose: Whose, q: &Query, interval: Interval) -> Vec<Value> {
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
