//! The analytics date range: whole days in the shop's timezone, both ends inclusive.

use chrono::{DateTime, Datelike, Days, NaiveDate, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;
use serde::{Deserialize, Deserializer};

use crate::error::ApiError;

/// Default range when `start_date` is absent: the 30 days before `end_date`.
const DEFAULT_DAYS: u64 = 30;
/// Days a range may span, both ends counted: three years, one of them with a leap day. Longer
/// reports (and their comparison ranges) cost more than an interactive query should.
const MAX_DAYS: i64 = 1096;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct DateRange {
    pub start: NaiveDate,
    pub end: NaiveDate,
}

/// Strict `YYYY-MM-DD`: four-digit year, two-digit month and day, a real calendar date. (chrono's
/// `%Y-%m-%d` alone also takes `2026-2-1`.)
pub fn parse_date(raw: &str) -> Option<NaiveDate> {
    let bytes = raw.as_bytes();
    let shaped = bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    shaped
        .then(|| NaiveDate::parse_from_str(raw, "%Y-%m-%d").ok())
        .flatten()
}

/// A query parameter's date, strictly `YYYY-MM-DD` (for `#[serde(deserialize_with)]`).
pub fn strict_date<'de, D: Deserializer<'de>>(value: D) -> Result<Option<NaiveDate>, D::Error> {
    let raw = String::deserialize(value)?;
    parse_date(&raw)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("'{raw}' is not a date as YYYY-MM-DD")))
}

impl DateRange {
    /// From the query's `start_date` / `end_date`, with `today` the current date in the shop's
    /// timezone.
    pub fn new(
        start: Option<NaiveDate>,
        end: Option<NaiveDate>,
        today: NaiveDate,
    ) -> Result<DateRange, ApiError> {
        let end = end.unwrap_or(today);
        let start =
            start.unwrap_or_else(|| end.checked_sub_days(Days::new(DEFAULT_DAYS)).unwrap_or(end));
        if end < start {
            return Err(ApiError::InvalidDateRange(format!(
                "end_date ({end}) is before start_date ({start})"
            )));
        }
        let days = (end - start).num_days() + 1;
        if days > MAX_DAYS {
            return Err(ApiError::InvalidDateRange(format!(
                "the range may span at most {MAX_DAYS} days (3 years); {start} to {end} spans {days}"
            )));
        }
        Ok(DateRange { start, end })
    }

    /// The number of days, both ends counted.
    pub fn days(&self) -> u64 {
        (self.end - self.start).num_days().unsigned_abs() + 1
    }

    /// The first instant of `start` in `tz`, in UTC.
    pub fn start_instant(&self, tz: Tz) -> DateTime<Utc> {
        start_of_day(self.start, tz)
    }

    /// The last millisecond of `end` in `tz`, in UTC.
    pub fn end_instant(&self, tz: Tz) -> DateTime<Utc> {
        let next = self.end.checked_add_days(Days::new(1)).unwrap_or(self.end);
        start_of_day(next, tz) - chrono::Duration::milliseconds(1)
    }
}

/// A range cut before a day: the days before it, and the rest. Either may be empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DaySplit {
    pub before: Option<DateRange>,
    pub from: Option<DateRange>,
}

impl DaySplit {
    pub const EMPTY: DaySplit = DaySplit {
        before: None,
        from: None,
    };
}

impl DateRange {
    pub fn split_before(&self, day: NaiveDate) -> DaySplit {
        let before = (self.start < day).then(|| DateRange {
            start: self.start,
            end: self.end.min(day.pred_opt().unwrap_or(day)),
        });
        let from = (self.end >= day).then(|| DateRange {
            start: self.start.max(day),
            end: self.end,
        });
        DaySplit { before, from }
    }

    /// First and last day.
    pub fn days_pair(&self) -> (NaiveDate, NaiveDate) {
        (self.start, self.end)
    }
}

/// A range cut for the views: months read whole from the monthly view, and days added to them
/// and subtracted from them, read from the daily view. A partial month at either end is read as
/// its own days or, when that reads fewer rows, as its whole month less its days outside the
/// range: a range that ends on the 24th reads this month's row less the 25th to the 30th (days
/// to come, with no rows yet), not 24 days. Each day of the range counts once (in `months` or
/// in `add`, in no `subtract`); each other day of `months` is in a `subtract`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonthSplit {
    /// First days of the first and last month read whole; `None` when none is.
    pub months: Option<(NaiveDate, NaiveDate)>,
    /// The days of the first month (or of the only one) read on their own, and of the last.
    pub add: [Option<(NaiveDate, NaiveDate)>; 2],
    /// The days of a month read whole before the range starts, and after it ends.
    pub subtract: [Option<(NaiveDate, NaiveDate)>; 2],
}

impl MonthSplit {
    /// Whether the range is read as its own days alone, all within one month.
    pub fn is_days_only(&self) -> bool {
        self.months.is_none() && self.subtract == [None; 2] && self.add[1].is_none()
    }
}

fn first_of_month(d: NaiveDate) -> NaiveDate {
    d.with_day(1).expect("every month has a first day")
}

fn first_of_next_month(d: NaiveDate) -> NaiveDate {
    first_of_month(d)
        .checked_add_months(chrono::Months::new(1))
        .unwrap_or(NaiveDate::MAX)
}

fn last_of_month(d: NaiveDate) -> NaiveDate {
    first_of_next_month(d).pred_opt().unwrap_or(NaiveDate::MAX)
}

/// Days from `first` to `last`, both counted; 0 when `last` is before `first`.
fn days_from(first: NaiveDate, last: NaiveDate) -> i64 {
    ((last - first).num_days() + 1).max(0)
}

impl DateRange {
    pub fn split_by_month(&self) -> MonthSplit {
        let (first, last) = (first_of_month(self.start), first_of_month(self.end));
        let mut months = (first, last);
        let mut add = [None; 2];
        let mut subtract = [None; 2];
        let edges = if first == last {
            [Some(first), None]
        } else {
            [Some(first), Some(last)]
        };
        for (end, month) in edges.into_iter().enumerate() {
            let Some(month) = month else { continue };
            let month_end = last_of_month(month);
            let (from, to) = (self.start.max(month), self.end.min(month_end));
            let (before, after) = (from.pred_opt(), to.succ_opt());
            let outside = [
                before.map(|b| (month, b)).filter(|&(f, l)| f <= l),
                after.map(|a| (a, month_end)).filter(|&(f, l)| f <= l),
            ];
            let outside_days: i64 = outside
                .iter()
                .flatten()
                .map(|&(f, l)| days_from(f, l))
                .sum();
            if outside_days == 0 {
                continue; // the month is whole
            }
            // The month's row costs about as much as one of its days.
            if outside_days + 1 < days_from(from, to) {
                for (kept, piece) in subtract.iter_mut().zip(outside) {
                    *kept = kept.or(piece);
                }
            } else {
                add[end] = Some((from, to));
                match end {
                    0 => months.0 = first_of_next_month(month),
                    _ => {
                        months.1 = month
                            .checked_sub_months(chrono::Months::new(1))
                            .unwrap_or(NaiveDate::MIN)
                    }
                }
            }
        }
        MonthSplit {
            months: (months.0 <= months.1).then_some(months),
            add,
            subtract,
        }
    }
}

/// Local midnight, or the first instant of the day where a DST change skips midnight.
fn start_of_day(date: NaiveDate, tz: Tz) -> DateTime<Utc> {
    let midnight = date.and_hms_opt(0, 0, 0).expect("midnight exists");
    (0..=180)
        .find_map(|minutes| {
            tz.from_local_datetime(&(midnight + chrono::Duration::minutes(minutes)))
                .earliest()
        })
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| Utc.from_utc_datetime(&midnight))
}

/// `2026-10-22T00:00:00.000Z`.
pub fn iso_millis(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn a_split_before_a_day_puts_each_day_of_the_range_on_one_side() {
        let range = |a: &str, b: &str| DateRange {
            start: day(a),
            end: day(b),
        };
        let cut = day("2026-11-24");
        let split = range("2026-11-01", "2026-11-30").split_before(cut);
        assert_eq!(split.before, Some(range("2026-11-01", "2026-11-23")));
        assert_eq!(split.from, Some(range("2026-11-24", "2026-11-30")));
        let past = range("2025-11-25", "2026-11-23");
        assert_eq!(past.split_before(cut).before, Some(past));
        assert_eq!(past.split_before(cut).from, None);
        let today = range("2026-11-24", "2026-11-24");
        assert_eq!(today.split_before(cut).before, None);
        assert_eq!(today.split_before(cut).from, Some(today));
    }

    #[test]
    fn defaults_are_today_and_thirty_days_before() {
        let range = DateRange::new(None, None, day("2026-11-21")).unwrap();
        assert_eq!(
            range,
            DateRange {
                start: day("2026-10-22"),
                end: day("2026-11-21")
            }
        );
        let range = DateRange::new(None, Some(day("2026-03-31")), day("2026-11-21")).unwrap();
        assert_eq!(range.start, day("2026-03-01"));
    }

    #[test]
    fn only_real_iso_dates_are_accepted() {
        assert_eq!(parse_date("2026-02-28"), Some(day("2026-02-28")));
        for bad in [
            "2026-2-01",
            "2026/02/01",
            "20260201",
            "2026-02-30",
            "2026-13-01",
            "26-02-01",
            "2026-02-01T00:00:00Z",
            "",
            "tomorrow",
        ] {
            assert_eq!(parse_date(bad), None, "{bad}");
        }
    }

    #[test]
    fn a_range_ends_on_or_after_its_start_and_spans_at_most_1096_days() {
        let today = day("2026-11-21");
        let range = |a, b| DateRange::new(Some(day(a)), Some(day(b)), today);
        let message = |refused: Result<DateRange, ApiError>| match refused {
            Err(ApiError::InvalidDateRange(message)) => message,
            other => panic!("{other:?}"),
        };
        let refusal = |a, b| message(range(a, b));
        assert_eq!(
            refusal("2026-05-02", "2026-05-01"),
            "end_date (2026-05-01) is before start_date (2026-05-02)"
        );
        assert!(range("2026-05-01", "2026-05-01").is_ok());
        // Three years with a leap day: 365 + 365 + 366 days.
        assert!(range("2026-01-01", "2028-12-31").is_ok());
        assert_eq!(
            refusal("2026-01-01", "2029-01-01"),
            "the range may span at most 1096 days (3 years); 2026-01-01 to 2029-01-01 spans 1097"
        );
        assert_eq!(
            refusal("2026-01-01", "2029-01-05"),
            "the range may span at most 1096 days (3 years); 2026-01-01 to 2029-01-05 spans 1101"
        );
        // Three years without one: the limit is days, so a day of the fourth year fits.
        assert!(range("2029-01-01", "2032-01-01").is_ok());
        assert!(matches!(
            range("2029-01-01", "2032-01-02"),
            Err(ApiError::InvalidDateRange(_))
        ));
        // An absent end is today.
        let from = |a| DateRange::new(Some(day(a)), None, today);
        assert!(from("2023-11-22").is_ok());
        assert_eq!(
            message(from("2023-11-21")),
            "the range may span at most 1096 days (3 years); 2023-11-21 to 2026-11-21 spans 1097"
        );
    }

    #[test]
    fn a_range_splits_into_months_and_days_that_count_each_of_its_days_once() {
        let split = |a, b| {
            DateRange {
                start: day(a),
                end: day(b),
            }
            .split_by_month()
        };
        let days = |a, b| Some((day(a), day(b)));
        // A year to yesterday (the 23rd): its first partial month as days, its last as the month
        // less the 24th to the 30th.
        let s = split("2025-11-25", "2026-11-23");
        assert_eq!(s.months, days("2025-12-01", "2026-11-01"));
        assert_eq!(s.add, [days("2025-11-25", "2025-11-30"), None]);
        assert_eq!(s.subtract, [None, days("2026-11-24", "2026-11-30")]);
        let s = split("2025-11-08", "2026-11-08");
        assert_eq!(s.months, days("2025-11-01", "2026-10-01"));
        assert_eq!(s.add, [None, days("2026-11-01", "2026-11-08")]);
        assert_eq!(s.subtract, [days("2025-11-01", "2025-11-07"), None]);
        let s = split("2026-02-01", "2026-02-28");
        assert_eq!(
            (s.months, s.add, s.subtract),
            (days("2026-02-01", "2026-02-01"), [None; 2], [None; 2])
        );
        // Within one month: its own days, or the month less both ends.
        let s = split("2026-02-10", "2026-02-14");
        assert_eq!(
            (s.months, s.add, s.subtract),
            (None, [days("2026-02-10", "2026-02-14"), None], [None; 2])
        );
        assert!(s.is_days_only());
        let s = split("2026-03-03", "2026-03-24");
        assert!(!s.is_days_only());
        assert_eq!(s.months, days("2026-03-01", "2026-03-01"));
        assert_eq!(s.add, [None; 2]);
        assert_eq!(
            s.subtract,
            [
                days("2026-03-01", "2026-03-02"),
                days("2026-03-25", "2026-03-31")
            ]
        );
        // A day counts once for each part that holds it, less once for each subtracted part:
        // every day of the range once, every other day never.
        let base = day("2024-01-01");
        for a in (0..800).step_by(13) {
            for len in [
                0u64, 1, 2, 13, 14, 15, 16, 27, 28, 29, 30, 31, 45, 59, 60, 61, 200, 365,
            ] {
                let range = DateRange {
                    start: base + Days::new(a),
                    end: base + Days::new(a + len),
                };
                let s = range.split_by_month();
                let holds = |(f, l): (NaiveDate, NaiveDate), d| d >= f && d <= l;
                let mut d = first_of_month(range.start) - Days::new(1);
                while d <= last_of_month(range.end) + Days::new(1) {
                    let month = first_of_month(d);
                    let counted = i64::from(s.months.is_some_and(|m| holds(m, month)))
                        + s.add.iter().flatten().filter(|p| holds(**p, d)).count() as i64
                        - s.subtract
                            .iter()
                            .flatten()
                            .filter(|p| holds(**p, d))
                            .count() as i64;
                    let expected = i64::from(holds((range.start, range.end), d));
                    assert_eq!(counted, expected, "{range:?} {s:?} {d}");
                    d = d.succ_opt().unwrap();
                }
                if s.is_days_only() {
                    assert_eq!(s.add[0], Some((range.start, range.end)), "{range:?}");
                }
                // A subtracted day always lies in a month read whole.
                for piece in s.subtract.iter().flatten() {
                    assert!(s.months.is_some_and(|m| holds(m, first_of_month(piece.0))));
                }
            }
        }
    }

    #[test]
    fn instants_are_the_shops_day_boundaries_in_utc_with_milliseconds() {
        let range = DateRange {
            start: day("2026-10-22"),
            end: day("2026-11-21"),
        };
        assert_eq!(
            iso_millis(range.start_instant(chrono_tz::UTC)),
            "2026-10-22T00:00:00.000Z"
        );
        assert_eq!(
            iso_millis(range.end_instant(chrono_tz::UTC)),
            "2026-11-21T23:59:59.999Z"
        );
        // New York leaves summer time on 2026-11-01: the range starts at -04:00, ends at -05:00.
        let ny = chrono_tz::America::New_York;
        assert_eq!(
            iso_millis(range.start_instant(ny)),
            "2026-10-22T04:00:00.000Z"
        );
        assert_eq!(
            iso_millis(range.end_instant(ny)),
            "2026-11-22T04:59:59.999Z"
        );
        let kathmandu = chrono_tz::Asia::Kathmandu;
        assert_eq!(
            iso_millis(range.start_instant(kathmandu)),
            "2026-10-21T18:15:00.000Z"
        );
        let marquesas = chrono_tz::Pacific::Marquesas;
        assert_eq!(
            iso_millis(range.end_instant(marquesas)),
            "2026-11-22T09:29:59.999Z"
        );
    }
}
