//! An order's revenue: read exactly from the digits it was sent with (never through binary
//! floating point), and kept in ten-thousandths of the currency.

use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::Deserialize;
use serde_json::value::RawValue;
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Revenue is kept in units of 1/10 000 of the currency: exact for every ISO 4217 minor unit.
pub const REVENUE_SCALE: i64 = 10_000;
/// No single order is worth more than this (in currency units); larger values are typos.
const MAX_REVENUE_UNITS: i64 = 1_000_000_000_000;

/// An order's value in its currency: an exact decimal ≥ 0 with at most 4 places, at most
/// [`MAX_REVENUE_UNITS`]. Sent as a JSON number or a numeric string; never goes through binary
/// floating point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Revenue(Decimal);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RevenueError {
    #[error("must be a decimal number ≥ 0, got {0}")]
    NotNumeric(String),
    #[error("must not be negative, got {0}")]
    Negative(String),
    #[error("at most 4 decimal places, got {0}")]
    TooPrecise(String),
    #[error("too large, got {0}")]
    TooLarge(String),
}

/// Both forms `Revenue::parse` takes.
impl PartialSchema for Revenue {
    fn schema() -> RefOr<Schema> {
        let number = ObjectBuilder::new()
            .schema_type(Type::Number)
            .minimum(Some(0))
            .maximum(Some(MAX_REVENUE_UNITS))
            .multiple_of(Some(1.0 / 10_000.0));
        let string = ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(Revenue::STRING_PATTERN));
        OneOfBuilder::new()
            .item(number)
            .item(string)
            .description(Some(
                "A decimal ≥ 0 with at most 4 decimal places, at most 10^12: a JSON number, or a \
                 string of digits with an optional fraction (`\"19.99\"`).",
            ))
            .into()
    }
}

impl ToSchema for Revenue {}

impl Revenue {
    /// The string form: at most 10^12 is up to 12 digits before the point, or 10^12 itself;
    /// trailing zeros after the 4th place change nothing.
    pub const STRING_PATTERN: &'static str =
        "^0*([0-9]{1,12}(\\.[0-9]{1,4}0*)?|1000000000000(\\.0+)?)$";

    /// From the JSON text of the value: a number (`19.99`, `1e2`) or a string of digits with an
    /// optional fraction (`"19.99"`), the form a pixel's `toFixed` gives.
    pub fn parse(raw: &str) -> Result<Revenue, RevenueError> {
        let text = raw.trim();
        if text.starts_with('"') {
            return Self::parse_string(raw);
        }
        // `-0` is zero; JSON Schema's `minimum: 0` includes it.
        if let Some(magnitude) = text.strip_prefix('-') {
            return match Self::parse(magnitude) {
                Ok(zero) if zero.0.is_zero() => Ok(zero),
                _ => Err(RevenueError::Negative(raw.to_string())),
            };
        }
        let numeric = !text.is_empty()
            && text
                .bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        if !numeric {
            return Err(RevenueError::NotNumeric(raw.to_string()));
        }
        let parsed = if text.contains(['e', 'E']) {
            Decimal::from_scientific(text)
        } else {
            Decimal::from_str_exact(text)
        };
        let value = match parsed {
            Ok(value) => value.normalize(),
            // Well-formed but beyond what a decimal holds: too many digits one way or the other.
            Err(_) => {
                return Err(match text.parse::<f64>() {
                    Ok(n) if n >= 1.0 => RevenueError::TooLarge(raw.to_string()),
                    Ok(_) => RevenueError::TooPrecise(raw.to_string()),
                    Err(_) => RevenueError::NotNumeric(raw.to_string()),
                })
            }
        };
        if value.scale() > 4 {
            return Err(RevenueError::TooPrecise(raw.to_string()));
        }
        if value > Decimal::from(MAX_REVENUE_UNITS) {
            return Err(RevenueError::TooLarge(raw.to_string()));
        }
        Ok(Revenue(value))
    }

    /// A JSON string: its decoded text must be digits with an optional fraction; leading zeros
    /// and the fraction's trailing zeros are free.
    fn parse_string(raw: &str) -> Result<Revenue, RevenueError> {
        let not_numeric = || RevenueError::NotNumeric(raw.to_string());
        let text: String = serde_json::from_str(raw).map_err(|_| not_numeric())?;
        let (whole, fraction) = match text.split_once('.') {
            Some((whole, fraction)) if !fraction.is_empty() => (whole, fraction),
            Some(_) => return Err(not_numeric()),
            None => (text.as_str(), ""),
        };
        let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
        if whole.is_empty() || !digits(whole) || !digits(fraction) {
            return Err(not_numeric());
        }
        let (whole, fraction) = (
            whole.trim_start_matches('0'),
            fraction.trim_end_matches('0'),
        );
        if fraction.len() > 4 {
            return Err(RevenueError::TooPrecise(raw.to_string()));
        }
        if whole.len() > 13 {
            return Err(RevenueError::TooLarge(raw.to_string()));
        }
        let exact = format!("{}.{fraction}0", if whole.is_empty() { "0" } else { whole });
        let value = Decimal::from_str_exact(&exact).map_err(|_| not_numeric())?;
        if value > Decimal::from(MAX_REVENUE_UNITS) {
            return Err(RevenueError::TooLarge(raw.to_string()));
        }
        Ok(Revenue(value.normalize()))
    }

    /// In units of 1/10 000 of the currency, as the spool and ClickHouse keep it.
    pub fn e4(self) -> i64 {
        let units = self.0 * Decimal::from(REVENUE_SCALE);
        units
            .to_i64()
            .expect("at most 10^12 with 4 places fits in an i64")
    }
}

impl<'de> Deserialize<'de> for Revenue {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = Box::<RawValue>::deserialize(d)?;
        Revenue::parse(raw.get()).map_err(serde::de::Error::custom)
    }
}
