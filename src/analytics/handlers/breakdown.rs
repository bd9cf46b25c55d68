//! Numbers broken down by one dimension (`breakdown=`), and the numbers of the events some
//! filters keep: what the summary, one video, one widget and the time series answer when a
//! request names a dimension.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use super::params::SortOrder;
use super::window::{optionally, Window};
use crate::analytics::dimensions::{shown, BreakdownSort, Dimension, Filters};
use crate::analytics::metrics::{Metrics, SummaryMetrics};
use crate::analytics::queries::{self, Series, Totals, ValueTotals};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;

/// By what the numbers are broken down, and in what order its entries come.
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BreakdownQuery {
    /// One entry per value of this dimension that has events (`unknown` for the events that
    /// did not say) instead of one record: `data` becomes a list of
    /// `{ "<dimension>": value, "metrics": … }` (a time series: one series per value).
    #[param(inline)]
    pub(super) breakdown: Option<Dimension>,
    /// With `breakdown`: the metric its entries are sorted by. Default views.
    #[param(inline)]
    pub(super) sort_by: Option<BreakdownSort>,
    /// With `breakdown`: default desc. Ties are broken by the value, ascending.
    #[param(inline)]
    pub(super) sort_order: Option<SortOrder>,
}

/// Which value an entry stands for: the one field named after the dimension.
#[derive(Debug, Default, Serialize, ToSchema)]
pub struct Named {
    #[serde(skip_serializing_if = "Option::is_none")]
    placement: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    country: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    source: Option<String>,
}

impl Named {
    pub(super) fn new(dimension: Dimension, value: &str) -> Named {
        let value = Some(shown(value).to_string());
        let mut named = Named::default();
        *match dimension {
            Dimension::Placement => &mut named.placement,
            Dimension::Device => &mut named.device,
            Dimension::Country => &mut named.country,
            Dimension::Source => &mut named.source,
        } = value;
        named
    }
}

/// One value's metrics (a video's, a widget's).
#[derive(Serialize, ToSchema)]
pub struct ValueEntry {
    #[serde(flatten)]
    pub(super) named: Named,
    pub(super) metrics: Metrics,
    /// With `compare`: the same over the comparison range.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) comparison: Option<crate::analytics::metrics::Comparison>,
}

/// One value's share of the shop's totals, with its rates.
#[derive(Serialize, ToSchema)]
pub struct SummaryEntry {
    #[serde(flatten)]
    named: Named,
    metrics: SummaryMetrics,
    /// With `compare`: the same over the comparison range.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<SummaryEntryComparison>,
}

#[derive(Serialize, ToSchema)]
pub struct SummaryEntryComparison {
    metrics: SummaryMetrics,
}

/// Each value's totals over the range and the comparison's (zero where it had none), in the
/// order asked for.
pub(super) struct Broken {
    pub dimension: Dimension,
    pub rows: Vec<(String, Totals, Option<Totals>)>,
}

impl Broken {
    pub fn summary_entries(self) -> Vec<SummaryEntry> {
        let dimension = self.dimension;
        (self.rows.into_iter())
            .map(|(value, current, comparison)| SummaryEntry {
                named: Named::new(dimension, &value),
                metrics: current.into(),
                comparison: comparison.map(|t| SummaryEntryComparison { metrics: t.into() }),
            })
            .collect()
    }

    pub fn value_entries(self) -> Vec<ValueEntry> {
        let dimension = self.dimension;
        (self.rows.into_iter())
            .map(|(value, current, comparison)| ValueEntry {
                named: Named::new(dimension, &value),
                metrics: current.into(),
                comparison: crate::analytics::metrics::Comparison::of(comparison),
            })
            .collect()
    }
}

/// The totals of a range's rows added up per value, of the values something was counted for.
/// Every event but a visit's `session` counts in some figure, so a value whose figures are all
/// zero was seen on visits only: it is no entry of a breakdown.
pub(super) fn per_value(rows: Vec<ValueTotals>) -> BTreeMap<String, Totals> {
    let mut values: BTreeMap<String, Totals> = BTreeMap::new();
    for row in rows {
        *values.entry(row.value).or_default() += row.totals;
    }
    values.retain(|_, totals| *totals != Totals::default());
    values
}

/// `values` (with `comparison`'s, zero where a value had none) ordered as `query` asks: by the
/// metric, ties by the value as shown, ascending.
pub(super) fn ordered(
    query: &BreakdownQuery,
    values: BTreeMap<String, Totals>,
    comparison: Option<BTreeMap<String, Totals>>,
) -> Vec<(String, Totals, Option<Totals>)> {
    let mut names: Vec<String> = values.keys().cloned().collect();
    if let Some(comparison) = &comparison {
        names.extend(
            comparison
                .keys()
                .filter(|k| !values.contains_key(*k))
                .cloned(),
        );
    }
    let mut rows: Vec<(String, Totals, Option<Totals>)> = names
        .into_iter()
        .map(|name| {
            let current = values.get(&name).copied().unwrap_or_default();
            let earlier = (comparison.as_ref()).map(|c| c.get(&name).copied().unwrap_or_default());
            (name, current, earlier)
        })
        .collect();
    let key = |t: &Totals| -> i128 {
        match query.sort_by.unwrap_or_default() {
            BreakdownSort::Impressions => t.impressions.into(),
            BreakdownSort::Views => t.views.into(),
            BreakdownSort::Clicks => t.clicks.into(),
            BreakdownSort::AddToCart => t.add_to_cart.into(),
            BreakdownSort::Orders => t.orders.into(),
            BreakdownSort::Revenue => t.revenue_e4.into(),
        }
    };
    let descending = query.sort_order.unwrap_or(SortOrder::Desc) == SortOrder::Desc;
    rows.sort_by(|a, b| {
        let order = key(&a.1).cmp(&key(&b.1));
        let order = if descending { order.reverse() } else { order };
        order.then_with(|| shown(&a.0).cmp(shown(&b.0)))
    });
    rows
}

/// What a request names beyond the range: its filters and its breakdown.
pub(super) struct Dimensions<'a> {
    pub filters: &'a Filters,
    pub breakdown: &'a BreakdownQuery,
}

impl Dimensions<'_> {
    /// Whether the plain aggregates answer: no dimension named.
    pub fn are_none(&self) -> bool {
        self.filters.is_empty() && self.breakdown.breakdown.is_none()
    }
}

/// The totals of `series` over the window's range and its comparison, of the events the
/// filters keep: per value of the breakdown when there is one (`Ok(Err(broken))`), else all
/// together.
pub(super) async fn totals(
    state: &AppState,
    shop: &ShopDomain,
    series: &Series,
    window: &Window,
    dimensions: &Dimensions<'_>,
) -> Result<Result<(Totals, Option<Totals>), Broken>, ApiError> {
    let breakdown = dimensions.breakdown.breakdown;
    let asked = (dimensions.filters, breakdown);
    let read =
        |range| queries::totals_by_value(&state.warehouse, series, shop, range, asked, false);
    let (current, comparison) = tokio::join!(
        read(&window.range),
        optionally(window.comparison_range(), read)
    );
    let (current, comparison) = (per_value(current?), comparison?.map(per_value));
    let sum = |values: BTreeMap<String, Totals>| {
        values.into_values().fold(Totals::default(), |mut all, t| {
            all += t;
            all
        })
    };
    Ok(match breakdown {
        None => Ok((sum(current), comparison.map(sum))),
        Some(dimension) => Err(Broken {
            dimension,
            rows: ordered(dimensions.breakdown, current, comparison),
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_ordered_by_the_metric_then_by_the_value_as_shown() {
        let views = |n: u64| Totals {
            views: n,
            ..Totals::default()
        };
        let values: BTreeMap<String, Totals> = [("US", 5), ("FR", 9), ("", 5), ("DE", 1)]
            .into_iter()
            .map(|(v, n)| (v.to_string(), views(n)))
            .collect();
        let comparison: BTreeMap<String, Totals> = [("IT".to_string(), views(4))].into();
        let query = BreakdownQuery::default();
        let rows = ordered(&query, values.clone(), Some(comparison));
        let order: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        // "" shows as "unknown", after "US" among the fives.
        assert_eq!(order, ["FR", "US", "", "DE", "IT"]);
        assert_eq!(rows[4].1, Totals::default());
        assert_eq!(rows[4].2, Some(views(4)));
        let ascending = BreakdownQuery {
            sort_order: Some(SortOrder::Asc),
            ..BreakdownQuery::default()
        };
        let rows = ordered(&ascending, values, None);
        let order: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
        assert_eq!(order, ["DE", "US", "", "FR"]);
        assert_eq!(rows[0].2, None);
    }
}
