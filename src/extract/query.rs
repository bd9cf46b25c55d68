//! The serde side of [`super::AppQuery`]: a query's decoded pairs read as a map into a typed
//! struct. Values are text, so the deserializer parses numbers and booleans from it; a parameter
//! that is present is `Some` (empty values were dropped before); enums are their variants' names.
//!
//! The error type keeps serde's structured reports (a missing or repeated field, an unknown
//! variant) as such, so the edge can answer each with its own code and message.

use std::fmt;

use serde::de::value::{MapDeserializer, StrDeserializer};
use serde::de::{DeserializeOwned, Deserializer, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;

/// Why a query did not deserialize. A bad value's parameter is the path
/// `serde_path_to_error` reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryError {
    Missing(&'static str),
    Repeated(&'static str),
    Invalid(String),
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QueryError::Missing(name) => write!(f, "{name} is missing"),
            QueryError::Repeated(name) => write!(f, "{name} is given more than once"),
            QueryError::Invalid(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for QueryError {}

impl serde::de::Error for QueryError {
    fn custom<T: fmt::Display>(message: T) -> Self {
        QueryError::Invalid(message.to_string())
    }

    fn missing_field(field: &'static str) -> Self {
        QueryError::Missing(field)
    }

    fn duplicate_field(field: &'static str) -> Self {
        QueryError::Repeated(field)
    }

    fn unknown_variant(variant: &str, expected: &'static [&'static str]) -> Self {
        QueryError::Invalid(format!(
            "must be one of {}, got '{variant}'",
            expected.join(", ")
        ))
    }
}

/// Reads `pairs` into `T`. Parameters `T` has no field for are ignored; a field's key given twice
/// is a `duplicate_field` error (serde's derive reports it), so every endpoint refuses repeats of
/// what it reads.
pub fn deserialize<'q, T: DeserializeOwned>(
    pairs: impl Iterator<Item = (&'q str, &'q str)> + Clone,
) -> Result<T, serde_path_to_error::Error<QueryError>> {
    let values = pairs.map(|(key, value)| (key, Value(value)));
    // Read plainly; only a refused query is read again, tracking the path, to name the parameter.
    T::deserialize(MapDeserializer::new(values.clone()))
        .or_else(|_| serde_path_to_error::deserialize(MapDeserializer::new(values)))
}

/// One parameter's value.
struct Value<'q>(&'q str);

impl<'de> IntoDeserializer<'de, QueryError> for Value<'_> {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

macro_rules! parse_then_visit {
    ($($method:ident => $visit:ident($ty:ty), $what:literal;)*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
            match self.0.parse::<$ty>() {
                Ok(value) => visitor.$visit(value),
                Err(_) => Err(QueryError::Invalid(format!("must be {}, got '{}'", $what, self.0))),
            }
        }
    )*};
}

impl<'de> Deserializer<'de> for Value<'_> {
    type Error = QueryError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_str(self.0)
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, QueryError> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, QueryError> {
        let text: StrDeserializer<'_, QueryError> = self.0.into_deserializer();
        text.deserialize_enum(name, variants, visitor)
    }

    parse_then_visit! {
        deserialize_bool => visit_bool(bool), "true or false";
        deserialize_i8 => visit_i8(i8), "an integer";
        deserialize_i16 => visit_i16(i16), "an integer";
        deserialize_i32 => visit_i32(i32), "an integer";
        deserialize_i64 => visit_i64(i64), "an integer";
        deserialize_u8 => visit_u8(u8), "a non-negative integer";
        deserialize_u16 => visit_u16(u16), "a non-negative integer";
        deserialize_u32 => visit_u32(u32), "a non-negative integer";
        deserialize_u64 => visit_u64(u64), "a non-negative integer";
        deserialize_f32 => visit_f32(f32), "a number";
        deserialize_f64 => visit_f64(f64), "a number";
    }

    forward_to_deserialize_any! {
        i128 u128 char str string bytes byte_buf unit unit_struct seq tuple tuple_struct map
        struct identifier ignored_any
    }
}
