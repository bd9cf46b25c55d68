//! Ranges derived from the requested one: the comparison range (`compare=`) and the buckets of a
//! time series (`interval=`), all in whole local days.

use chrono::{Datelike, Days, Months, NaiveDate};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::dates::DateRange;

/// What a range is compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Compare {
    /// The same number of days just before the range.
    PreviousPeriod,
    /// The same dates a year earlier (29 February becomes the 28th).
    PreviousYear,
}

impl Compare {
    /// Where `date` of the range falls in the comparison range: a fixed number of days back, or
    /// the same month and day a year back. `None` before the calendar's first day.
    fn shift(self, range: &DateRange, date: NaiveDate) -> Option<NaiveDate> {
        match self {
            Compare::PreviousPeriod => date.checked_sub_days(Days::new(range.days())),
            Compare::PreviousYear => date.checked_sub_months(Months::new(12)),
        }
    }

    /// The comparison range. Every date a query can name (years 0000 to 9999) has one: chrono's
    /// calendar reaches far before year 0. The fallback only keeps this total.
    pub fn range(self, range: &DateRange) -> DateRange {
        let shift = |d| self.shift(range, d).unwrap_or(NaiveDate::MIN);
        DateRange {
            start: shift(range.start),
            end: shift(range.end),
        }
    }

    /// The comparison of each bucket: the days from just after the shifted end of the bucket
    /// before it to its own shifted end. They tile the comparison range, so they add up to it;
    /// a leap day that the earlier year lacks compares with no day (an empty span), and the
    /// earlier year's own leap day is compared with the 1st of March.
    pub fn spans(self, range: &DateRange, buckets: &[DateRange]) -> Vec<DateRange> {
        let whole = self.range(range);
        let mut start = whole.start;
        buckets
            .iter()
            .map(|bucket| {
                let end = self.shift(range, bucket.end).unwrap_or(NaiveDate::MIN);
                let span = DateRange { start, end };
                if end >= start {
                    start = end.succ_opt().unwrap_or(end);
                }
                span
            })
            .collect()
    }
}

/// The length of a time series' buckets.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Interval {
    #[default]
    Day,
    /// ISO weeks, Monday to Sunday.
    Week,
    Month,
}

impl Interval {
    /// The first day of the bucket `date` is in, before clipping to a range.
    fn bucket_start(self, date: NaiveDate) -> NaiveDate {
        match self {
            Interval::Day => date,
            Interval::Week => date - Days::new(u64::from(date.weekday().num_days_from_monday())),
            Interval::Month => date.with_day(1).expect("every month has a first day"),
        }
    }

    fn next_bucket_start(self, date: NaiveDate) -> Option<NaiveDate> {
        let start = self.bucket_start(date);
        match self {
            Interval::Day => start.succ_opt(),
            Interval::Week => start.checked_add_days(Days::new(7)),
            Interval::Month => start.checked_add_months(Months::new(1)),
        }
    }

    /// The buckets of `range`, in order, each clipped to it: together they are the range, each
    /// day in exactly one.
    pub fn buckets(self, range: &DateRange) -> Vec<DateRange> {
        let mut buckets = Vec::new();
        let mut start = range.start;
        loop {
            let next = self.next_bucket_start(start);
            let end = next
                .and_then(|n| n.pred_opt())
                .map_or(range.end, |last| last.min(range.end));
            buckets.push(DateRange { start, end });
            match next {
                Some(next) if next <= range.end => start = next,
                _ => return buckets,
            }
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Interval::Day => "day",
            Interval::Week => "week",
            Interval::Month => "month",
        }
    }
}

/// The index of the span that holds `date`, among spans that tile a range in order (some maybe
/// empty): the first whose end is not before it.
pub fn span_of(spans: &[DateRange], date: NaiveDate) -> Option<usize> {
    let i = spans.partition_point(|span| span.end < date);
    (i < spans.len() && spans[i].start <= date).then_some(i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytics::dates::tests::{day, range};

    #[test]
    fn the_previous_period_is_as_many_days_just_before() {
        let r = range("2026-03-01", "2026-03-31");
        assert_eq!(
            Compare::PreviousPeriod.range(&r),
            range("2026-01-29", "2026-02-28")
        );
        let one = range("2024-03-01", "2024-03-01");
        assert_eq!(
            Compare::PreviousPeriod.range(&one),
            range("2024-02-29", "2024-02-29")
        );
    }

    #[test]
    fn the_previous_year_keeps_the_dates_and_folds_the_leap_day() {
        assert_eq!(
            Compare::PreviousYear.range(&range("2028-02-29", "2028-03-31")),
            range("2027-02-28", "2027-03-31")
        );
        assert_eq!(
            Compare::PreviousYear.range(&range("2025-02-01", "2025-03-31")),
            range("2024-02-01", "2024-03-31")
        );
    }

    #[test]
    fn buckets_are_clipped_to_the_range_and_cover_each_day_once() {
        let r = range("2026-10-22", "2026-11-21");
        let weeks = Interval::Week.buckets(&r);
        // 2026-10-22 is a Thursday; 2026-10-26 the next Monday.
        assert_eq!(weeks[0], range("2026-10-22", "2026-10-25"));
        assert_eq!(weeks[1], range("2026-10-26", "2026-11-01"));
        assert_eq!(*weeks.last().unwrap(), range("2026-11-16", "2026-11-21"));
        let months = Interval::Month.buckets(&r);
        assert_eq!(
            months,
            vec![
                range("2026-10-22", "2026-10-31"),
                range("2026-11-01", "2026-11-21")
            ]
        );
        assert_eq!(Interval::Day.buckets(&r).len(), 31);
        for interval in [Interval::Day, Interval::Week, Interval::Month] {
            for (a, b) in [
                ("2024-01-01", "2026-12-31"),
                ("2024-02-29", "2024-02-29"),
                ("2023-12-31", "2024-01-01"),
            ] {
                let r = range(a, b);
                let buckets = interval.buckets(&r);
                let mut next = r.start;
                for bucket in &buckets {
                    assert_eq!(bucket.start, next, "{interval:?} {r:?}");
                    assert!(bucket.end >= bucket.start);
                    assert_eq!(interval.bucket_start(bucket.end).max(r.start), bucket.start);
                    next = bucket.end.succ_opt().unwrap();
                }
                assert_eq!(next, r.end.succ_opt().unwrap());
            }
        }
    }

    #[test]
    fn bucket_comparisons_tile_the_comparison_range() {
        let r = range("2028-02-27", "2028-03-02");
        let buckets = Interval::Day.buckets(&r);
        let spans = Compare::PreviousYear.spans(&r, &buckets);
        assert_eq!(spans[0], range("2027-02-27", "2027-02-27"));
        assert_eq!(spans[1], range("2027-02-28", "2027-02-28"));
        // 2028-02-29: 2027 has no such day.
        assert!(spans[2].end < spans[2].start);
        assert_eq!(spans[3], range("2027-03-01", "2027-03-01"));
        // The earlier year's leap day goes with the 1st of March.
        let r = range("2025-02-27", "2025-03-02");
        let spans = Compare::PreviousYear.spans(&r, &Interval::Day.buckets(&r));
        assert_eq!(spans[2], range("2024-02-29", "2024-03-01"));
        assert_eq!(span_of(&spans, day("2024-02-29")), Some(2));
        assert_eq!(span_of(&spans, day("2024-02-28")), Some(1));
        assert_eq!(span_of(&spans, day("2024-03-03")), None);
        // A uniform shift moves each bucket by the range's length.
        let r = range("2026-01-10", "2026-02-20");
        let buckets = Interval::Month.buckets(&r);
        let spans = Compare::PreviousPeriod.spans(&r, &buckets);
        assert_eq!(
            spans,
            vec![
                range("2025-11-29", "2025-12-20"),
                range("2025-12-21", "2026-01-09")
            ]
        );
        // Every day of the comparison range is in exactly one span.
        for compare in [Compare::PreviousPeriod, Compare::PreviousYear] {
            for (a, b) in [("2024-02-01", "2025-03-31"), ("2025-02-28", "2028-02-29")] {
                let r = range(a, b);
                for interval in [Interval::Day, Interval::Week, Interval::Month] {
                    let spans = compare.spans(&r, &interval.buckets(&r));
                    let whole = compare.range(&r);
                    let mut d = whole.start;
                    while d <= whole.end {
                        let held = spans.iter().filter(|s| s.start <= d && d <= s.end);
                        assert_eq!(held.count(), 1, "{compare:?} {interval:?} {d}");
                        assert!(span_of(&spans, d).is_some());
                        d = d.succ_opt().unwrap();
                    }
                }
            }
        }
    }
}
