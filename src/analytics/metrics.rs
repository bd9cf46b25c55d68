//! The numbers every analytics answer reports, as JSON: counters, money and rates as exact
//! decimals with two places, and the attribution split.

use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::queries::{Attributed, Reached, Totals};

/// An exact decimal with two places, written as a JSON number (`12.30`).
#[derive(Debug, Clone)]
pub struct Decimal2(Box<RawValue>);

impl Decimal2 {
    /// From ten-thousandths, rounded half away from zero to cents.
    pub fn from_e4(value: i64) -> Decimal2 {
        let cents = (i128::from(value) + if value >= 0 { 50 } else { -50 }) / 100;
        Decimal2::from_hundredths(cents)
    }

    fn from_hundredths(cents: i128) -> Decimal2 {
        let sign = if cents < 0 { "-" } else { "" };
        let text = format!("{sign}{}.{:02}", cents.abs() / 100, cents.abs() % 100);
        Decimal2(RawValue::from_string(text).expect("a decimal is a JSON number"))
    }

    /// A computed figure (a lift, an interval's end), rounded to two places; 0 when it is not a
    /// finite number.
    pub fn of(value: f64) -> Decimal2 {
        let hundredths = (value * 100.0).round();
        Decimal2::from_hundredths(if hundredths.is_finite() {
            hundredths.clamp(-1e30, 1e30) as i128
        } else {
            0
        })
    }

    /// `part / whole × 100`, rounded to two places; 0 when `whole` is 0.
    pub fn percent(part: u64, whole: u64) -> Decimal2 {
        Decimal2::ratio(u128::from(part) * 10_000, whole)
    }

    /// Seconds from milliseconds, rounded half up to two places.
    pub fn seconds(ms: u64) -> Decimal2 {
        Decimal2::ratio(u128::from(ms), 10)
    }

    /// Seconds per `count` from milliseconds, rounded half up to two places; 0 when `count` is 0.
    pub fn seconds_per(ms: u64, count: u64) -> Decimal2 {
        Decimal2::ratio(u128::from(ms), u64::from(count != 0) * 10 * count)
    }

    /// `hundredths / whole` hundredths, rounded half up; 0 when `whole` is 0.
    fn ratio(hundredths: u128, whole: u64) -> Decimal2 {
        if whole == 0 {
            return Decimal2::from_hundredths(0);
        }
        let whole = u128::from(whole);
        Decimal2::from_hundredths(((hundredths * 2 + whole) / (whole * 2)) as i128)
    }

    /// The text as written, `12.30`: what a CSV cell holds.
    pub fn as_str(&self) -> &str {
        self.0.get()
    }
}

impl Serialize for Decimal2 {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

#[derive(Serialize, ToSchema)]
pub struct Metrics {
    pub impressions: u64,
    pub views: u64,
    pub clicks: u64,
    pub add_to_cart: u64,
    /// Completed checkouts.
    pub orders: u64,
    /// Sum of the orders' revenue in the shop currency, 2 decimals.
    #[schema(value_type = f64, example = 123.45)]
    pub revenue: Decimal2,
    pub attribution: AttributionSplit,
    #[serde(flatten)]
    pub watching: Watching,
}

/// What shoppers did once a video was open in the player: one watch per opening, sent when it
/// closes.
#[derive(Serialize, ToSchema)]
pub struct Watching {
    /// Seconds played, over every opening, 2 decimals.
    #[schema(value_type = f64, example = 3125.5)]
    pub watch_time_seconds: Decimal2,
    /// Seconds played per click (an opening), 2 decimals; 0 without clicks.
    #[schema(value_type = f64, example = 12.25)]
    pub avg_watch_seconds: Decimal2,
    /// Openings that reached 95% of their video, per click × 100, 2 decimals; 0 without clicks.
    #[schema(value_type = f64, example = 41.5)]
    pub completion_rate: Decimal2,
    /// Openings that reached each point of their video.
    pub reached: ReachedMetrics,
}

/// Openings that reached 25, 50, 75 and 100 percent of their video: the curve of how far
/// shoppers watch.
#[derive(Serialize, ToSchema)]
pub struct ReachedMetrics {
    pub p25: u64,
    pub p50: u64,
    pub p75: u64,
    pub p100: u64,
}

impl From<&Totals> for Watching {
    fn from(t: &Totals) -> Self {
        let Reached {
            p25,
            p50,
            p75,
            p95,
            p100,
        } = t.reached;
        Watching {
            watch_time_seconds: Decimal2::seconds(t.watched_ms),
            avg_watch_seconds: Decimal2::seconds_per(t.watched_ms, t.clicks),
            completion_rate: Decimal2::percent(p95, t.clicks),
            reached: ReachedMetrics {
                p25,
                p50,
                p75,
                p100,
            },
        }
    }
}

/// The add-to-carts and orders that the events attributed directly to a video and those it
/// influenced. Events without an attribution are in neither.
#[derive(Serialize, ToSchema)]
pub struct AttributionSplit {
    pub direct: AttributedMetrics,
    pub influenced: AttributedMetrics,
}

#[derive(Serialize, ToSchema)]
pub struct AttributedMetrics {
    pub add_to_cart: u64,
    pub orders: u64,
    /// 2 decimals.
    #[schema(value_type = f64, example = 45.00)]
    pub revenue: Decimal2,
}

impl From<Attributed> for AttributedMetrics {
    fn from(a: Attributed) -> Self {
        AttributedMetrics {
            add_to_cart: a.add_to_cart,
            orders: a.orders,
            revenue: Decimal2::from_e4(a.revenue_e4),
        }
    }
}

impl From<&Totals> for AttributionSplit {
    fn from(t: &Totals) -> Self {
        AttributionSplit {
            direct: t.direct.into(),
            influenced: t.influenced.into(),
        }
    }
}

impl From<Totals> for Metrics {
    fn from(t: Totals) -> Self {
        Metrics {
            impressions: t.impressions,
            views: t.views,
            clicks: t.clicks,
            add_to_cart: t.add_to_cart,
            orders: t.orders,
            revenue: Decimal2::from_e4(t.revenue_e4),
            attribution: (&t).into(),
            watching: (&t).into(),
        }
    }
}

/// The same numbers over the comparison range (`compare=`).
#[derive(Serialize, ToSchema)]
pub struct Comparison {
    pub metrics: Metrics,
}

impl Comparison {
    pub fn of(totals: Option<Totals>) -> Option<Comparison> {
        totals.map(|t| Comparison { metrics: t.into() })
    }
}

/// The shop's totals with click-through and conversion rates.
#[derive(Serialize, ToSchema)]
pub struct SummaryMetrics {
    pub impressions: u64,
    pub views: u64,
    pub clicks: u64,
    pub add_to_cart: u64,
    pub orders: u64,
    #[schema(value_type = f64)]
    pub revenue: Decimal2,
    /// clicks / impressions × 100 (the industry's click-through rate), 2 decimals; 0 when there
    /// are no impressions.
    #[schema(value_type = f64)]
    pub ctr: Decimal2,
    /// orders / views × 100, 2 decimals; 0 when there are no views.
    #[schema(value_type = f64)]
    pub cvr: Decimal2,
    pub attribution: AttributionSplit,
    #[serde(flatten)]
    pub watching: Watching,
}

impl From<Totals> for SummaryMetrics {
    fn from(t: Totals) -> Self {
        SummaryMetrics {
            impressions: t.impressions,
            views: t.views,
            clicks: t.clicks,
            add_to_cart: t.add_to_cart,
            orders: t.orders,
            revenue: Decimal2::from_e4(t.revenue_e4),
            ctr: Decimal2::percent(t.clicks, t.impressions),
            cvr: Decimal2::percent(t.orders, t.views),
            attribution: (&t).into(),
            watching: (&t).into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn money_and_rates_are_exact_decimals_with_two_places() {
        assert_eq!(Decimal2::from_e4(1_000_000_000).as_str(), "100000.00");
        assert_eq!(Decimal2::from_e4(0).as_str(), "0.00");
        assert_eq!(Decimal2::from_e4(1_999).as_str(), "0.20");
        assert_eq!(Decimal2::from_e4(1_949).as_str(), "0.19");
        assert_eq!(Decimal2::from_e4(1_950).as_str(), "0.20");
        assert_eq!(Decimal2::percent(1, 3).as_str(), "33.33");
        assert_eq!(Decimal2::percent(2, 3).as_str(), "66.67");
        assert_eq!(Decimal2::percent(5, 0).as_str(), "0.00");
        assert_eq!(Decimal2::percent(3, 3).as_str(), "100.00");
        assert_eq!(Decimal2::seconds(36_250).as_str(), "36.25");
        assert_eq!(Decimal2::seconds(1_005).as_str(), "1.01");
        assert_eq!(Decimal2::seconds(1_004).as_str(), "1.00");
        assert_eq!(Decimal2::seconds(0).as_str(), "0.00");
        assert_eq!(Decimal2::seconds_per(10_000, 3).as_str(), "3.33");
        assert_eq!(Decimal2::seconds_per(20_000, 3).as_str(), "6.67");
        assert_eq!(Decimal2::seconds_per(5_000, 0).as_str(), "0.00");
        let max = Decimal2::seconds_per(u64::MAX, 1);
        assert_eq!(max.as_str(), "18446744073709551.62");
    }
}
