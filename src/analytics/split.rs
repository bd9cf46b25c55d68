//! How a range of days is read from the aggregates. Each aggregate counts per day, per month or
//! per year; a long range reads whole years (or months) from the coarser aggregate, and at each
//! end the months (or days) added to them or subtracted from them, from the finer one. A partial
//! year or month at either end is read as its own months or days or, when that reads fewer rows,
//! as the whole year or month less its months or days outside the range: a range that ends on the
//! 24th reads this month's row less the 25th to the 30th (days to come, with no rows yet), not 24
//! days.
//!
//! Every row of an aggregate costs about the same (a video's day, month or year is one row of
//! each video with events then), so the cheaper reading is the one with fewer units, counting a
//! whole year or month as one.

use chrono::{Datelike, Months, NaiveDate};

use super::dates::DateRange;

/// Units added to what is read whole (`sign` 1), or subtracted from it (−1): days or months,
/// from their first to their last, both counted. Months are named by their first day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edge {
    pub sign: i8,
    pub first: NaiveDate,
    pub last: NaiveDate,
}

/// A range of units read as whole blocks (months of days, or years of months) and an edge at
/// each end. Each unit of the range counts once (in a block of `whole`, or in an added edge); each
/// other unit of `whole` is in a subtracted edge. A range within one block has both its edges in
/// that block: its own units added (the first edge only), or the block less both ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Split {
    /// The first units of the first and last block read whole (first days of months, first
    /// months of years); `None` when none is.
    pub whole: Option<(NaiveDate, NaiveDate)>,
    /// What is read at the start of the range, and at its end.
    pub edges: [Option<Edge>; 2],
}

/// A range of days read from the yearly, monthly and daily aggregates: whole years, months at
/// their edges, and days at the edges of the months.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YearSplit {
    /// First days of the first and last year read whole.
    pub years: Option<(NaiveDate, NaiveDate)>,
    pub months: [Option<Edge>; 2],
    pub days: [Option<Edge>; 2],
}

/// The units of a split and the blocks they make.
#[derive(Debug, Clone, Copy)]
enum Level {
    /// Days, in months.
    Days,
    /// Months (named by their first day), in years.
    Months,
}

impl Level {
    /// The first and last unit of the block that holds `unit`.
    fn block(self, unit: NaiveDate) -> (NaiveDate, NaiveDate) {
        let first = match self {
            Level::Days => unit.with_day(1),
            Level::Months => unit.with_day(1).and_then(|d| d.with_month(1)),
        }
        .expect("every month and year has a first day");
        let last = match self {
            Level::Days => first
                .checked_add_months(Months::new(1))
                .and_then(|d| d.pred_opt()),
            Level::Months => first.with_month(12),
        };
        (first, last.unwrap_or(NaiveDate::MAX))
    }

    fn next(self, unit: NaiveDate) -> Option<NaiveDate> {
        match self {
            Level::Days => unit.succ_opt(),
            Level::Months => unit.checked_add_months(Months::new(1)),
        }
    }

    fn previous(self, unit: NaiveDate) -> Option<NaiveDate> {
        match self {
            Level::Days => unit.pred_opt(),
            Level::Months => unit.checked_sub_months(Months::new(1)),
        }
    }

    /// Units from `first` to `last`, both counted; 0 when `last` is before `first`.
    fn count(self, first: NaiveDate, last: NaiveDate) -> i64 {
        let n = match self {
            Level::Days => (last - first).num_days(),
            Level::Months => {
                let months = |d: NaiveDate| i64::from(d.year()) * 12 + i64::from(d.month0());
                months(last) - months(first)
            }
        };
        (n + 1).max(0)
    }

    /// `first..=last` (units of this level) as whole blocks and an edge at each end.
    fn split(self, first: NaiveDate, last: NaiveDate) -> Split {
        let (first_block, last_block) = (self.block(first).0, self.block(last).0);
        let mut whole = (first_block, last_block);
        let mut added = [None; 2];
        let mut subtracted = [None; 2];
        let ends = if first_block == last_block {
            [Some(first_block), None]
        } else {
            [Some(first_block), Some(last_block)]
        };
        for (end, block) in ends.into_iter().enumerate() {
            let Some(block) = block else { continue };
            let (block_first, block_last) = self.block(block);
            let (from, to) = (first.max(block_first), last.min(block_last));
            let outside = [
                (self.previous(from)).map(|b| (block_first, b)),
                (self.next(to)).map(|a| (a, block_last)),
            ]
            .map(|piece| piece.filter(|&(f, l)| f <= l));
            let outside_units: i64 = outside
                .iter()
                .flatten()
                .map(|&(f, l)| self.count(f, l))
                .sum();
            if outside_units == 0 {
                continue; // the block is whole
            }
            // The block's row costs about as much as one of its units.
            if outside_units + 1 < self.count(from, to) {
                for (kept, piece) in subtracted.iter_mut().zip(outside) {
                    *kept = kept.or(piece);
                }
            } else {
                added[end] = Some((from, to));
                match end {
                    0 => whole.0 = self.next(block_last).unwrap_or(NaiveDate::MAX),
                    _ => {
                        let previous = self.previous(block_first);
                        whole.1 = previous.map_or(NaiveDate::MIN, |u| self.block(u).0);
                    }
                }
            }
        }
        // At either end the units are added or subtracted, never both: a range over several
        // blocks subtracts only before its first block's part and after its last's.
        let edge = |sign| move |(first, last)| Edge { sign, first, last };
        let edges = [0, 1].map(|i| added[i].map(edge(1)).or(subtracted[i].map(edge(-1))));
        Split {
            whole: (whole.0 <= whole.1).then_some(whole),
            edges,
        }
    }
}

impl YearSplit {
    /// Whether the range is read as its own days alone (no month of it is whole).
    pub fn is_days_only(&self) -> bool {
        self.years.is_none() && self.months == [None; 2]
    }
}

impl DateRange {
    /// Whole months and the days at their edges.
    pub fn split_by_month(&self) -> Split {
        Level::Days.split(self.start, self.end)
    }

    /// Whole years, the months at their edges, and the days at the edges of the months.
    pub fn split_by_year(&self) -> YearSplit {
        let days = self.split_by_month();
        let months = days
            .whole
            .map(|(first, last)| Level::Months.split(first, last));
        YearSplit {
            years: months.and_then(|m| m.whole),
            months: months.map_or([None; 2], |m| m.edges),
            days: days.edges,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::Days;

    use super::*;
    use crate::analytics::dates::tests::{day, range};

    fn edge(sign: i8, a: &str, b: &str) -> Option<Edge> {
        Some(Edge {
            sign,
            first: day(a),
            last: day(b),
        })
    }

    fn days(a: &str, b: &str) -> Option<(NaiveDate, NaiveDate)> {
        Some((day(a), day(b)))
    }

    #[test]
    fn a_partial_month_is_read_as_its_days_or_as_the_month_less_the_others() {
        // A year to yesterday (the 23rd): its first partial month as days, its last as the month
        // less the 24th to the 30th.
        let s = range("2025-11-25", "2026-11-23").split_by_month();
        assert_eq!(s.whole, days("2025-12-01", "2026-11-01"));
        assert_eq!(
            s.edges,
            [
                edge(1, "2025-11-25", "2025-11-30"),
                edge(-1, "2026-11-24", "2026-11-30")
            ]
        );
        let s = range("2025-11-08", "2026-11-08").split_by_month();
        assert_eq!(s.whole, days("2025-11-01", "2026-10-01"));
        assert_eq!(
            s.edges,
            [
                edge(-1, "2025-11-01", "2025-11-07"),
                edge(1, "2026-11-01", "2026-11-08")
            ]
        );
        let s = range("2026-02-01", "2026-02-28").split_by_month();
        assert_eq!(
            s,
            Split {
                whole: days("2026-02-01", "2026-02-01"),
                edges: [None; 2]
            }
        );
        // Within one month: its own days, or the month less both ends.
        let s = range("2026-02-10", "2026-02-14").split_by_month();
        assert_eq!(s.whole, None);
        assert_eq!(s.edges, [edge(1, "2026-02-10", "2026-02-14"), None]);
        assert!(range("2026-02-10", "2026-02-14")
            .split_by_year()
            .is_days_only());
        let s = range("2026-03-03", "2026-03-24").split_by_month();
        assert!(!range("2026-03-03", "2026-03-24")
            .split_by_year()
            .is_days_only());
        assert_eq!(s.whole, days("2026-03-01", "2026-03-01"));
        assert_eq!(
            s.edges,
            [
                edge(-1, "2026-03-01", "2026-03-02"),
                edge(-1, "2026-03-25", "2026-03-31")
            ]
        );
    }

    #[test]
    fn a_year_is_read_as_its_row_less_the_months_and_days_outside_the_range() {
        // 365 days to yesterday: 2026 less December and the 27th to the 30th of November, with
        // December 2025 and three days of November 2025.
        let s = range("2025-11-28", "2026-11-26").split_by_year();
        assert_eq!(s.years, days("2026-01-01", "2026-01-01"));
        assert_eq!(
            s.months,
            [
                edge(1, "2025-12-01", "2025-12-01"),
                edge(-1, "2026-12-01", "2026-12-01")
            ]
        );
        assert_eq!(
            s.days,
            [
                edge(1, "2025-11-28", "2025-11-30"),
                edge(-1, "2026-11-27", "2026-11-30")
            ]
        );
        // A few months are read as months.
        let s = range("2026-03-01", "2026-05-31").split_by_year();
        assert_eq!(s.years, None);
        assert_eq!(s.months, [edge(1, "2026-03-01", "2026-05-01"), None]);
        assert_eq!(s.days, [None; 2]);
        // Within a month there are no months.
        let s = range("2026-03-03", "2026-03-04").split_by_year();
        assert_eq!((s.years, s.months), (None, [None; 2]));
    }

    /// How many times `d` is counted: once for each whole block and each added edge that holds
    /// it, less once for each subtracted edge that does. `unit` names the unit that holds a day
    /// at the level of `edges`.
    fn counted(
        whole: Option<(NaiveDate, NaiveDate)>,
        block_of: impl Fn(NaiveDate) -> NaiveDate,
        edges: &[Option<Edge>],
        unit: impl Fn(NaiveDate) -> NaiveDate,
        d: NaiveDate,
    ) -> i64 {
        let holds = |(f, l): (NaiveDate, NaiveDate), u| u >= f && u <= l;
        let blocks = i64::from(whole.is_some_and(|w| holds(w, block_of(d))));
        let edges: i64 = (edges.iter().flatten())
            .filter(|e| holds((e.first, e.last), unit(d)))
            .map(|e| i64::from(e.sign))
            .sum();
        blocks + edges
    }

    #[test]
    fn every_day_of_a_range_is_counted_once_and_every_other_day_never() {
        let month = |d: NaiveDate| Level::Days.block(d).0;
        let year = |d: NaiveDate| Level::Months.block(month(d)).0;
        let same = |d: NaiveDate| d;
        let base = day("2023-12-01");
        for a in (0..800).step_by(11) {
            for len in [
                0u64, 1, 2, 13, 14, 15, 16, 27, 28, 29, 30, 31, 45, 59, 60, 61, 200, 334, 364, 365,
                366, 400, 731, 1095,
            ] {
                let r = DateRange {
                    start: base + Days::new(a),
                    end: base + Days::new(a + len),
                };
                let by_month = r.split_by_month();
                let by_year = r.split_by_year();
                let mut d = year(r.start) - Days::new(1);
                let stop = Level::Months.block(year(r.end)).1 + Months::new(1);
                while d <= stop {
                    let expected = i64::from(d >= r.start && d <= r.end);
                    let of_months = counted(by_month.whole, month, &by_month.edges, same, d);
                    assert_eq!(of_months, expected, "{r:?} {by_month:?} {d}");
                    let of_years = counted(by_year.years, year, &by_year.months, month, d)
                        + counted(None, year, &by_year.days, same, d);
                    assert_eq!(of_years, expected, "{r:?} {by_year:?} {d}");
                    d = d.succ_opt().unwrap();
                }
                // Read as days alone, the range is its own days.
                assert_eq!(by_year.is_days_only(), by_month.whole.is_none(), "{r:?}");
                if by_year.is_days_only() {
                    let [first, second] = by_month.edges;
                    let (first, second) = (first.unwrap(), second.map(|e| (e.first, e.last)));
                    assert_eq!((first.sign, first.first), (1, r.start), "{r:?}");
                    assert_eq!(second.map_or(first.last, |(_, l)| l), r.end, "{r:?}");
                }
                // Subtracted units always lie in a block read whole, so nothing goes below zero.
                for (whole, edges, block_of) in [
                    (by_month.whole, by_month.edges, &month as &dyn Fn(_) -> _),
                    (by_year.years, by_year.months, &|m| Level::Months.block(m).0),
                ] {
                    for e in edges.iter().flatten().filter(|e| e.sign < 0) {
                        let block = block_of(e.first);
                        assert!(
                            whole.is_some_and(|(f, l)| block >= f && block <= l),
                            "{r:?}"
                        );
                    }
                }
            }
        }
    }
}
