//! A shop's timezone and currency, documented as every name and code they take.

use iso_currency::IntoEnumIterator;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use super::InvalidValue;

/// An IANA timezone name, e.g. `America/New_York`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Timezone(chrono_tz::Tz);

/// Documented as the names `parse` takes, all of them.
impl PartialSchema for Timezone {
    fn schema() -> RefOr<Schema> {
        let names = chrono_tz::TZ_VARIANTS.iter().map(|tz| tz.name());
        named_values("An IANA timezone name", "America/New_York", names)
    }
}

impl ToSchema for Timezone {}

impl Timezone {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        raw.parse::<chrono_tz::Tz>()
            .map(Timezone)
            .map_err(|_| InvalidValue(format!("'{raw}' is not an IANA timezone name")))
    }

    pub fn tz(self) -> chrono_tz::Tz {
        self.0
    }
}

impl Default for Timezone {
    fn default() -> Self {
        Timezone(chrono_tz::UTC)
    }
}

string_conversions!(Timezone, |t| t.0.name().to_string());

/// An ISO 4217 currency code, e.g. `USD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Currency(iso_currency::Currency);

/// Documented as the codes `parse` takes, all of them.
impl PartialSchema for Currency {
    fn schema() -> RefOr<Schema> {
        let codes = iso_currency::Currency::iter().map(|c| c.code());
        named_values("An ISO 4217 currency code", "USD", codes)
    }
}

impl ToSchema for Currency {}

/// A string schema of exactly `values`.
fn named_values<'a>(
    description: &str,
    example: &str,
    values: impl Iterator<Item = &'a str>,
) -> RefOr<Schema> {
    let mut values: Vec<&str> = values.collect();
    values.sort_unstable();
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(description))
        .examples([example])
        .enum_values(Some(values))
        .into()
}

impl Currency {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        iso_currency::Currency::from_code(raw)
            .map(Currency)
            .ok_or_else(|| InvalidValue(format!("'{raw}' is not an ISO 4217 currency code")))
    }

    pub fn code(self) -> &'static str {
        self.0.code()
    }
}

impl Default for Currency {
    fn default() -> Self {
        Currency(iso_currency::Currency::USD)
    }
}

string_conversions!(Currency, |c| c.code().to_string());
