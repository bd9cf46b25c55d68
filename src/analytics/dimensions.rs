//! Where and who: the four dimensions every event may carry, as an analyst filters
//! on them and breaks numbers down by them, and which aggregate answers which request.

use serde::{Deserialize, Deserializer, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::{IntoParams, ToSchema};

use crate::ingest::event::{Country, Device, Placement, Source};

/// What the numbers can be broken down by, or filtered on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Dimension {
    Placement,
    Device,
    Country,
    Source,
}

impl Dimension {
    pub const ALL: [Dimension; 4] = [
        Dimension::Placement,
        Dimension::Device,
        Dimension::Country,
        Dimension::Source,
    ];

    /// Its name: the query parameter, the JSON field of a breakdown's entry, the `dimension`
    /// of the aggregates by dimension.
    pub fn as_str(self) -> &'static str {
        match self {
            Dimension::Placement => "placement",
            Dimension::Device => "device",
            Dimension::Country => "country",
            Dimension::Source => "source",
        }
    }

    /// Its number in the queries of the aggregates of every dimension (0 is none).
    pub fn code(dimension: Option<Dimension>) -> u8 {
        dimension.map_or(0, |d| d as u8 + 1)
    }
}

/// What an event that did not say is called in a filter and in a breakdown; the aggregates keep
/// it as ''.
pub const UNKNOWN: &str = "unknown";

/// A value as the aggregates keep it ('' for not known) from its name in a filter.
fn stored(dimension: Dimension, name: &str) -> Option<&'static str> {
    if name == UNKNOWN {
        return Some("");
    }
    match dimension {
        Dimension::Placement => Placement::parse(name).map(Placement::as_str),
        Dimension::Device => Device::parse(name).map(Device::as_str),
        Dimension::Country => Country::parse(name).map(Country::as_str),
        Dimension::Source => Source::parse(name).map(Source::as_str),
    }
}

/// A value as a breakdown names it.
pub fn shown(stored: &str) -> &str {
    if stored.is_empty() {
        UNKNOWN
    } else {
        stored
    }
}

/// The values a filter takes, as the OpenAPI document lists them.
fn names(dimension: Dimension) -> Vec<&'static str> {
    let known: Vec<&'static str> = match dimension {
        Dimension::Placement => Placement::ALL.iter().map(|p| p.as_str()).collect(),
        Dimension::Device => Device::ALL.iter().map(|d| d.as_str()).collect(),
        Dimension::Country => Country::all().collect(),
        Dimension::Source => Source::ALL.iter().map(|s| s.as_str()).collect(),
    };
    known.into_iter().chain([UNKNOWN]).collect()
}

fn filter_schema(dimension: Dimension, what: &str) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(format!(
            "Only the events {what}; `unknown`: those that did not say."
        )))
        .enum_values(Some(names(dimension)))
}

/// A value a filter keeps, as the aggregates keep it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Kept(&'static str);

/// The filters of a request: for each dimension, the one value kept, if any.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct Filters {
    #[serde(default, deserialize_with = "placement")]
    #[param(schema_with = placement_schema)]
    placement: Option<Kept>,
    #[serde(default, deserialize_with = "device")]
    #[param(schema_with = device_schema)]
    device: Option<Kept>,
    #[serde(default, deserialize_with = "country")]
    #[param(schema_with = country_schema)]
    country: Option<Kept>,
    #[serde(default, deserialize_with = "source")]
    #[param(schema_with = source_schema)]
    source: Option<Kept>,
}

fn placement_schema() -> ObjectBuilder {
    filter_schema(
        Dimension::Placement,
        "of widgets shown on this type of page",
    )
}

fn device_schema() -> ObjectBuilder {
    filter_schema(Dimension::Device, "from this kind of device")
}

fn country_schema() -> ObjectBuilder {
    filter_schema(Dimension::Country, "from the storefront of this country")
}

fn source_schema() -> ObjectBuilder {
    filter_schema(Dimension::Source, "of visits from this traffic source")
}

fn value_of<'de, D: Deserializer<'de>>(
    d: D,
    dimension: Dimension,
) -> Result<Option<Kept>, D::Error> {
    let name = String::deserialize(d)?;
    match stored(dimension, &name) {
        Some(value) => Ok(Some(Kept(value))),
        None => {
            let shown = if name.chars().count() > 40 {
                "the value"
            } else {
                &name
            };
            let hint = match dimension {
                Dimension::Country => "an ISO 3166-1 alpha-2 code in upper case, or unknown".into(),
                _ => format!("one of {}", names(dimension).join(", ")),
            };
            Err(serde::de::Error::custom(format!("'{shown}' is not {hint}")))
        }
    }
}

fn placement<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kept>, D::Error> {
    value_of(d, Dimension::Placement)
}

fn device<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kept>, D::Error> {
    value_of(d, Dimension::Device)
}

fn country<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kept>, D::Error> {
    value_of(d, Dimension::Country)
}

fn source<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Kept>, D::Error> {
    value_of(d, Dimension::Source)
}

impl Filters {
    /// For each dimension (in [`Dimension::ALL`]'s order), the value kept, if any.
    pub fn values(&self) -> [Option<&'static str>; 4] {
        [self.placement, self.device, self.country, self.source].map(|v| v.map(|k| k.0))
    }

    pub fn is_empty(&self) -> bool {
        self.values().iter().all(Option::is_none)
    }

    /// The dimensions filtered on.
    pub fn dimensions(&self) -> impl Iterator<Item = Dimension> + '_ {
        let values = self.values();
        Dimension::ALL
            .into_iter()
            .filter(move |d| values[*d as usize].is_some())
    }

    /// The one dimension and value, when exactly one filter is set.
    pub fn single(&self) -> Option<(Dimension, &'static str)> {
        let mut set = self.dimensions();
        match (set.next(), set.next()) {
            (Some(d), None) => self.values()[d as usize].map(|v| (d, v)),
            _ => None,
        }
    }

    #[cfg(test)]
    pub fn of(pairs: &[(Dimension, &'static str)]) -> Filters {
        let mut filters = Filters::default();
        for &(dimension, value) in pairs {
            let slot = match dimension {
                Dimension::Placement => &mut filters.placement,
                Dimension::Device => &mut filters.device,
                Dimension::Country => &mut filters.country,
                Dimension::Source => &mut filters.source,
            };
            *slot = Some(Kept(value));
        }
        filters
    }
}

/// Which aggregates answer a request about the shop, one video or one widget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reading {
    /// The plain aggregates: no dimension named.
    Plain,
    /// The aggregate of one dimension at a time (`…_by_dimension`): the shop's numbers broken
    /// down by, or filtered on, one dimension, read as one key range per value.
    One(Dimension),
    /// The four together (`…_by_dimensions`): more than one dimension, or one video or widget.
    All,
}

impl Reading {
    /// For the shop's numbers (`per_item`: one video's or widget's).
    pub fn of(filters: &Filters, breakdown: Option<Dimension>, per_item: bool) -> Reading {
        let mut named: Vec<Dimension> = filters.dimensions().chain(breakdown).collect();
        named.sort();
        named.dedup();
        match named[..] {
            [] => Reading::Plain,
            [one] if !per_item => Reading::One(one),
            _ => Reading::All,
        }
    }
}

/// How the entries of a breakdown are ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, ToSchema, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BreakdownSort {
    Impressions,
    #[default]
    Views,
    Clicks,
    AddToCart,
    Orders,
    Revenue,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_keep_known_values_and_unknown_and_refuse_the_rest() {
        let read = |query: serde_json::Value| serde_json::from_value::<Filters>(query);
        let all =
            serde_json::json!({ "device": "mobile", "country": "FR", "placement": "unknown" });
        let filters = read(all).unwrap();
        assert_eq!(
            filters.values(),
            [Some(""), Some("mobile"), Some("FR"), None]
        );
        assert_eq!(filters.single(), None);
        let one = read(serde_json::json!({ "source": "email" })).unwrap();
        assert_eq!(one.single(), Some((Dimension::Source, "email")));
        assert!(read(serde_json::json!({})).unwrap().is_empty());
        for (query, message) in [
            (
                ("device", "phone"),
                "'phone' is not one of mobile, tablet, desktop, unknown",
            ),
            (
                ("country", "fr"),
                "'fr' is not an ISO 3166-1 alpha-2 code in upper case, or unknown",
            ),
            (("placement", "Home"), "'Home' is not one of home, product"),
            (("source", ""), "'' is not one of direct"),
        ] {
            let query = serde_json::json!({ query.0: query.1 });
            let error = read(query.clone()).unwrap_err().to_string();
            assert!(error.contains(message), "{query}: {error}");
        }
    }

    #[test]
    fn one_dimension_of_the_shop_reads_its_own_aggregate_and_anything_more_the_four_together() {
        let none = Filters::default();
        let mobile = Filters::of(&[(Dimension::Device, "mobile")]);
        let two = Filters::of(&[(Dimension::Device, "mobile"), (Dimension::Source, "")]);
        assert_eq!(Reading::of(&none, None, false), Reading::Plain);
        assert_eq!(Reading::of(&none, None, true), Reading::Plain);
        let device = Some(Dimension::Device);
        assert_eq!(
            Reading::of(&none, device, false),
            Reading::One(Dimension::Device)
        );
        assert_eq!(
            Reading::of(&mobile, device, false),
            Reading::One(Dimension::Device)
        );
        assert_eq!(
            Reading::of(&mobile, None, false),
            Reading::One(Dimension::Device)
        );
        assert_eq!(
            Reading::of(&mobile, Some(Dimension::Country), false),
            Reading::All
        );
        assert_eq!(Reading::of(&two, None, false), Reading::All);
        assert_eq!(Reading::of(&mobile, None, true), Reading::All);
        assert_eq!(Dimension::code(None), 0);
        assert_eq!(Dimension::code(Some(Dimension::Source)), 4);
    }
}
