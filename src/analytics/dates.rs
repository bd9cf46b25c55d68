//! The analytics date range: whole days in the shop's timezone, both ends inclusive.

use chrono::{DateTime, Days, NaiveDate, SecondsFormat, TimeZone, Utc};
use chrono_tz::Tz;

use super::error::AnalyticsError;

/// Default range when `start_date` is absent: the 30 days before `end_date`.
const DEFAULT_DAYS: u64 = 30;
/// Longer ranges are refused: ten years of days is already more than any report needs.
const MAX_DAYS: i64 = 3660;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateRange {
    pub start: NaiveDate,
    pub end: NaiveDate,
}

/// Strict `YYYY-MM-DD`: four-digit year, two-digit month and day, a real calendar date.
fn parse_date(raw: &str, name: &'static str) -> Result<NaiveDate, AnalyticsError> {
    let bytes = raw.as_bytes();
    let shaped = bytes.len() == 10
        && bytes.iter().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                *b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    if !shaped {
        return Err(AnalyticsError::InvalidDate(name));
    }
    NaiveDate::parse_from_str(raw, "%Y-%m-%d").map_err(|_| AnalyticsError::InvalidDate(name))
}

impl DateRange {
    /// From the query's `start_date` / `end_date`, with `today` the current date in the shop's
    /// timezone.
    pub fn parse(
        start: Option<&str>,
        end: Option<&str>,
        today: NaiveDate,
    ) -> Result<DateRange, AnalyticsError> {
        let end = match end {
            Some(raw) => parse_date(raw, "end_date")?,
            None => today,
        };
        let start = match start {
            Some(raw) => parse_date(raw, "start_date")?,
            None => end.checked_sub_days(Days::new(DEFAULT_DAYS)).unwrap_or(end),
        };
        if end < start {
            return Err(AnalyticsError::InvalidDateRange(format!(
                "end_date ({end}) is before start_date ({start})"
            )));
        }
        if (end - start).num_days() >= MAX_DAYS {
            return Err(AnalyticsError::InvalidDateRange(format!(
                "the range may span at most {MAX_DAYS} days"
            )));
        }
        Ok(DateRange { start, end })
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
    fn defaults_are_today_and_thirty_days_before() {
        let range = DateRange::parse(None, None, day("2026-11-21")).unwrap();
        assert_eq!(
            range,
            DateRange {
                start: day("2026-10-22"),
                end: day("2026-11-21")
            }
        );
        let range = DateRange::parse(None, Some("2026-03-31"), day("2026-11-21")).unwrap();
        assert_eq!(range.start, day("2026-03-01"));
    }

    #[test]
    fn only_real_iso_dates_are_accepted() {
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
            assert!(
                matches!(
                    DateRange::parse(Some(bad), None, day("2026-11-21")),
                    Err(AnalyticsError::InvalidDate("start_date"))
                ),
                "{bad}"
            );
        }
        assert!(matches!(
            DateRange::parse(Some("2026-05-02"), Some("2026-05-01"), day("2026-11-21")),
            Err(AnalyticsError::InvalidDateRange(_))
        ));
        assert!(
            DateRange::parse(Some("2026-05-01"), Some("2026-05-01"), day("2026-11-21")).is_ok()
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
