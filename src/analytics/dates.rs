//! The analytics date range: whole days in the shop's timezone, both ends inclusive.

use chrono::{DateTime, Days, NaiveDate, SecondsFormat, TimeZone, Utc};
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
pub(crate) mod tests {
    use super::*;

    /// A date written `2026-03-01`.
    pub(crate) fn day(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    /// The days from `a` to `b`, both included.
    pub(crate) fn range(a: &str, b: &str) -> DateRange {
        DateRange {
            start: day(a),
            end: day(b),
        }
    }

    #[test]
    fn a_split_before_a_day_puts_each_day_of_the_range_on_one_side() {
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
