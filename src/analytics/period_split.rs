//! How a range of days is read from the views: whole years from the yearly view, whole months
//! from the monthly one, days from the daily one, each added or subtracted so that every day of
//! the range counts once. A year to yesterday, 2025-11-28 to 2026-11-26, is 2026 less 27 November
//! to 31 December (today and days to come, of which only today has rows yet), plus December 2025
//! and 28 to 30 November 2025: ten periods per video, where months and days alone took nineteen,
//! and seven rows.

use chrono::{Datelike, NaiveDate};

use super::dates::{DateRange, MonthSplit};

/// First and last day, both counted: of a run of days, or the first days of the first and last
/// month (or year) of a run of them.
pub type Run = (NaiveDate, NaiveDate);

/// The runs read from one view: some added, some subtracted. Empty slots are `None`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Signed {
    pub add: [Option<Run>; 2],
    pub subtract: [Option<Run>; 2],
}

impl Signed {
    /// Puts `run` in a free slot of its sign; `false` when both are taken.
    fn push(&mut self, run: Run, added: bool) -> bool {
        let slots = if added {
            &mut self.add
        } else {
            &mut self.subtract
        };
        match slots.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => {
                *slot = Some(run);
                true
            }
            None => false,
        }
    }

    fn runs(&self) -> impl Iterator<Item = &Run> {
        self.add.iter().chain(&self.subtract).flatten()
    }
}

/// A range cut for the views (see the module). Each day of the range counts once, each other day
/// never: a day is counted once for each added run that holds it (its year's, its month's, its
/// own) and once less for each subtracted one.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PeriodSplit {
    /// The first days of the first and last year read whole, added.
    pub years: Option<Run>,
    /// Runs of whole months (their first days).
    pub months: Signed,
    /// Runs of days.
    pub days: Signed,
}

fn first_of_year(d: NaiveDate) -> NaiveDate {
    NaiveDate::from_ymd_opt(d.year(), 1, 1).unwrap_or(d)
}

fn last_of_year(d: NaiveDate) -> NaiveDate {
    NaiveDate::from_ymd_opt(d.year(), 12, 31).unwrap_or(d)
}

/// Days from `first` to `last`, both counted.
fn days_in((first, last): Run) -> i64 {
    (last - first).num_days() + 1
}

/// Months from the month of `first` to that of `last`, both counted.
fn months_in((first, last): Run) -> i64 {
    i64::from(last.year() - first.year()) * 12 + i64::from(last.month()) - i64::from(first.month())
        + 1
}

impl PeriodSplit {
    /// Rows read per video (or widget): a year's row, a month's and a day's cost about the same.
    fn rows(&self) -> i64 {
        let years = self
            .years
            .map_or(0, |(first, last)| i64::from(last.year() - first.year()) + 1);
        years
            + self.months.runs().copied().map(months_in).sum::<i64>()
            + self.days.runs().copied().map(days_in).sum::<i64>()
    }

    /// Whether the range is read as its own days alone.
    pub fn is_days_only(&self) -> bool {
        self.years.is_none()
            && self.months == Signed::default()
            && self.days.add[1].is_none()
            && self.days.subtract == [None; 2]
    }

    /// Adds (or, unless `added`, subtracts) `range`, read as its month split; `false` when a view
    /// has no slot left for one of its runs.
    fn push_months(&mut self, range: DateRange, added: bool) -> bool {
        let MonthSplit {
            months,
            add,
            subtract,
        } = range.split_by_month();
        let months = months.is_none_or(|run| self.months.push(run, added));
        let add = add
            .into_iter()
            .flatten()
            .all(|run| self.days.push(run, added));
        let subtract = (subtract.into_iter().flatten()).all(|run| self.days.push(run, !added));
        months && add && subtract
    }

    /// The range read with whole years from `first` to `last` (first days), and the days between
    /// them and the range's ends added or subtracted as months and days; `None` when the views'
    /// slots do not hold it.
    fn with_years(range: &DateRange, (first, last): Run) -> Option<PeriodSplit> {
        let mut split = PeriodSplit {
            years: Some((first, last)),
            ..PeriodSplit::default()
        };
        let (years_start, years_end) = (first, last_of_year(last));
        let mut edges = Vec::with_capacity(2);
        if years_start < range.start {
            edges.push((years_start, range.start.pred_opt()?, false));
        } else if years_start > range.start {
            edges.push((range.start, years_start.pred_opt()?, true));
        }
        if years_end > range.end {
            edges.push((range.end.succ_opt()?, years_end, false));
        } else if years_end < range.end {
            edges.push((years_end.succ_opt()?, range.end, true));
        }
        for (start, end, added) in edges {
            if !split.push_months(DateRange { start, end }, added) {
                return None;
            }
        }
        Some(split)
    }
}

impl DateRange {
    /// The cut that reads the fewest rows: the month split, or whole years (the range's own, or
    /// those it nearly fills) with the rest as months and days, added or subtracted.
    pub fn split_by_period(&self) -> PeriodSplit {
        let mut best = PeriodSplit::default();
        if !best.push_months(*self, true) {
            unreachable!("a month split has one run of months and at most four of days");
        }
        let first_years = [
            Some(first_of_year(self.start)),
            last_of_year(self.start).succ_opt(),
        ];
        let last_years = [
            Some(first_of_year(self.end)),
            first_of_year(self.end).pred_opt().map(first_of_year),
        ];
        for first in first_years.into_iter().flatten() {
            for last in last_years.into_iter().flatten() {
                if first > last {
                    continue;
                }
                if let Some(split) = PeriodSplit::with_years(self, (first, last)) {
                    if split.rows() < best.rows() {
                        best = split;
                    }
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::Days;

    fn day(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn split(a: &str, b: &str) -> PeriodSplit {
        DateRange {
            start: day(a),
            end: day(b),
        }
        .split_by_period()
    }

    fn run(a: &str, b: &str) -> Option<Run> {
        Some((day(a), day(b)))
    }

    #[test]
    fn a_year_to_yesterday_is_its_year_less_the_days_after_it_plus_the_days_before() {
        let s = split("2025-11-28", "2026-11-26");
        assert_eq!(s.years, run("2026-01-01", "2026-01-01"));
        assert_eq!(s.months.add, [run("2025-12-01", "2025-12-01"), None]);
        assert_eq!(s.months.subtract, [run("2026-12-01", "2026-12-01"), None]);
        assert_eq!(s.days.add, [run("2025-11-28", "2025-11-30"), None]);
        assert_eq!(s.days.subtract, [run("2026-11-27", "2026-11-30"), None]);
        assert_eq!(s.rows(), 1 + 2 + 3 + 4);
    }

    #[test]
    fn short_ranges_keep_the_month_split() {
        let s = split("2026-02-10", "2026-02-14");
        assert!(s.is_days_only());
        assert_eq!(s.days.add, [run("2026-02-10", "2026-02-14"), None]);
        let s = split("2026-03-03", "2026-05-24");
        assert_eq!(s.years, None);
        assert_eq!(s.months.add, [run("2026-03-01", "2026-05-01"), None]);
        assert_eq!(
            s.days.subtract,
            [
                run("2026-03-01", "2026-03-02"),
                run("2026-05-25", "2026-05-31")
            ]
        );
        assert!(!s.is_days_only());
    }

    #[test]
    fn whole_years_are_read_as_years() {
        let s = split("2024-01-01", "2026-12-31");
        assert_eq!(s.years, run("2024-01-01", "2026-01-01"));
        assert_eq!((s.months, s.days), (Signed::default(), Signed::default()));
    }

    /// Every day from a month before the range to a month after it counts as often as the split's
    /// runs say: once inside the range, never outside.
    #[test]
    fn every_split_counts_each_day_of_its_range_once_and_no_other() {
        let holds = |(first, last): Run, d: NaiveDate| d >= first && d <= last;
        let month_of = |d: NaiveDate| d.with_day(1).unwrap();
        let base = day("2023-01-01");
        for a in (0..1200).step_by(11) {
            for len in [
                0u64, 1, 2, 13, 27, 28, 30, 31, 45, 59, 61, 90, 200, 300, 330, 350, 364, 365, 366,
                400, 700, 730, 1000, 1095,
            ] {
                let range = DateRange {
                    start: base + Days::new(a),
                    end: base + Days::new(a + len),
                };
                let s = range.split_by_period();
                let count = |signed: &Signed, key: NaiveDate| {
                    let n = |slots: &[Option<Run>; 2]| {
                        slots.iter().flatten().filter(|r| holds(**r, key)).count() as i64
                    };
                    n(&signed.add) - n(&signed.subtract)
                };
                let mut d = range.start - Days::new(400);
                while d <= range.end + Days::new(400) {
                    let year = i64::from(s.years.is_some_and(|y| holds(y, first_of_year(d))));
                    let counted = year + count(&s.months, month_of(d)) + count(&s.days, d);
                    let expected = i64::from(holds((range.start, range.end), d));
                    assert_eq!(counted, expected, "{range:?} {s:?} {d}");
                    d = d.succ_opt().unwrap();
                }
                // Never more rows than the month split.
                let mut months = PeriodSplit::default();
                assert!(months.push_months(range, true));
                assert!(s.rows() <= months.rows(), "{range:?}");
            }
        }
    }
}
