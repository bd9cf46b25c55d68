//! A shop's holdout: the share of browsers kept from every widget, to measure what the widgets
//! sell (`analytics::lift`). Sent in JSON as a whole number of percent.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::{json_i32, InvalidValue};

/// The percent of browsers the loader puts in the holdout group: 0 (no holdout, the default)
/// to [`HoldoutPercent::MAX`]. Above half, the shop would hide its widgets from most shoppers
/// to learn what they do for the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct HoldoutPercent(u8);

impl HoldoutPercent {
    pub const MAX: u8 = 50;

    pub fn parse(percent: i64) -> Result<Self, InvalidValue> {
        u8::try_from(percent)
            .ok()
            .filter(|p| *p <= Self::MAX)
            .map(HoldoutPercent)
            .ok_or_else(|| {
                InvalidValue(format!(
                    "must be a whole number of percent from 0 (no holdout) to {}, got {percent}",
                    Self::MAX
                ))
            })
    }

    pub fn percent(self) -> i16 {
        i16::from(self.0)
    }
}

impl Serialize for HoldoutPercent {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_u8(self.0)
    }
}

/// Any JSON integer in range (`10`, or `10.0` as some clients write integers).
impl<'de> Deserialize<'de> for HoldoutPercent {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let percent = json_i32(deserializer)?;
        HoldoutPercent::parse(percent.into()).map_err(D::Error::custom)
    }
}

impl PartialSchema for HoldoutPercent {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .description(Some(format!(
                "Percent of browsers that see no widget, to measure what the widgets sell \
                 (`GET /api/v1/analytics/lift`): 0 (none) to {}. Each browser is assigned once.",
                HoldoutPercent::MAX
            )))
            .minimum(Some(0))
            .maximum(Some(HoldoutPercent::MAX))
            .default(Some(0.into()))
            .into()
    }
}

impl ToSchema for HoldoutPercent {}
