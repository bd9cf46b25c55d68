//! The numbers every analytics answer reports, as JSON: counters, money and rates as exact
//! decimals with two places, and the attribution split.

use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;

use super::queries::{Attributed, Totals};

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

    /// `part / whole × 100`, rounded to two places; 0 when `whole` is 0.
    pub fn percent(part: u64, whole: u64) -> Decimal2 {
        if whole == 0 {
            return Decimal2::from_hundredths(0);
        }
        let (part, whole) = (u128::from(part), u128::from(whole));
        let hundredths = (part * 10_000 * 2 + whole) / (whole * 2);
        Decimal2::from_hundredths(hundredths as i128)
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
    }
}
