//! A shop's attribution window, sent in JSON as its number of days.

use std::fmt;

use serde::de::{self, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::InvalidValue;

/// How many days an order is credited to a video the shopper added to cart from, or watched:
/// 1, 7 (the default) or 30.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AttributionWindow {
    OneDay,
    #[default]
    SevenDays,
    ThirtyDays,
}

impl AttributionWindow {
    pub const ALL: [AttributionWindow; 3] = [
        AttributionWindow::OneDay,
        AttributionWindow::SevenDays,
        AttributionWindow::ThirtyDays,
    ];

    pub fn days(self) -> i16 {
        match self {
            AttributionWindow::OneDay => 1,
            AttributionWindow::SevenDays => 7,
            AttributionWindow::ThirtyDays => 30,
        }
    }

    pub fn from_days(days: i64) -> Result<Self, InvalidValue> {
        Self::ALL
            .into_iter()
            .find(|w| i64::from(w.days()) == days)
            .ok_or_else(|| refused(days))
    }
}

/// "1, 7 or 30", from [`AttributionWindow::ALL`].
fn allowed() -> String {
    let days: Vec<String> = AttributionWindow::ALL
        .iter()
        .map(|w| w.days().to_string())
        .collect();
    match days.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => days.concat(),
    }
}

fn refused(got: impl fmt::Display) -> InvalidValue {
    InvalidValue(format!("must be {} (days), got {got}", allowed()))
}

impl Serialize for AttributionWindow {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_i16(self.days())
    }
}

/// The number of days as any JSON number that is one of them (`7`, or `7.0` as some clients
/// write integers); anything else is refused naming the allowed values.
impl<'de> Deserialize<'de> for AttributionWindow {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Days;

        impl Visitor<'_> for Days {
            type Value = AttributionWindow;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                write!(f, "a number of days: {}", allowed())
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
                AttributionWindow::from_days(v).map_err(E::custom)
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
                i64::try_from(v)
                    .map_err(|_| refused(v))
                    .and_then(AttributionWindow::from_days)
                    .map_err(E::custom)
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
                AttributionWindow::ALL
                    .into_iter()
                    .find(|w| f64::from(w.days()) == v)
                    .ok_or_else(|| E::custom(refused(v)))
            }
        }

        deserializer.deserialize_any(Days)
    }
}

/// Documented as exactly the days it takes.
impl PartialSchema for AttributionWindow {
    fn schema() -> RefOr<Schema> {
        let days = AttributionWindow::ALL.map(AttributionWindow::days);
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .description(Some(format!(
                "Days an order is credited to a video the shopper added to cart from or watched: \
                 {}.",
                allowed()
            )))
            .enum_values(Some(days))
            .default(Some(AttributionWindow::default().days().into()))
            .into()
    }
}

impl ToSchema for AttributionWindow {}
