//! A UUID as the JSON APIs take it: the hyphenated form (`crypto.randomUUID()`'s), in either
//! case. The uuid crate's simple, braced and URN forms are refused, so that what the document's
//! pattern says is what is taken.

use serde::{Deserialize, Deserializer};
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::KnownFormat;
use uuid::Uuid;

use super::InvalidValue;

pub const PATTERN: &str =
    "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";

pub fn parse(raw: &str) -> Result<Uuid, InvalidValue> {
    match Uuid::try_parse(raw) {
        // 36 characters are the hyphenated form; the other forms have other lengths.
        Ok(id) if raw.len() == 36 => Ok(id),
        _ => Err(InvalidValue(format!(
            "'{raw}' is not a UUID like 0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35"
        ))),
    }
}

#[derive(Deserialize)]
#[serde(try_from = "String")]
struct Hyphenated(Uuid);

impl TryFrom<String> for Hyphenated {
    type Error = InvalidValue;
    fn try_from(raw: String) -> Result<Self, InvalidValue> {
        parse(&raw).map(Hyphenated)
    }
}

/// For `deserialize_with` of an `Option<Uuid>`: `null` is `None`.
pub fn option<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Uuid>, D::Error> {
    Ok(Option::<Hyphenated>::deserialize(d)?.map(|h| h.0))
}

/// For `deserialize_with` of a `Vec<Uuid>`.
pub fn list<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Uuid>, D::Error> {
    let ids = Vec::<Hyphenated>::deserialize(d)?;
    Ok(ids.into_iter().map(|h| h.0).collect())
}

/// For `deserialize_with` of an `Option<Vec<Uuid>>`: `null` is `None`.
pub fn option_list<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Uuid>>, D::Error> {
    let ids = Option::<Vec<Hyphenated>>::deserialize(d)?;
    Ok(ids.map(|ids| ids.into_iter().map(|h| h.0).collect()))
}

/// One id's schema.
pub fn schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Uuid)))
        .pattern(Some(PATTERN))
}

/// A list of at most `max` distinct ids.
pub fn distinct(max: usize) -> ArrayBuilder {
    ArrayBuilder::new()
        .items(schema())
        .max_items(Some(max))
        .unique_items(true)
}
