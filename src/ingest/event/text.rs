//! The free text of an event (the ids the loader sends): a bounded string without control
//! characters, or an integer, read as the parser meets it.

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

use crate::catalog::domain::text_schema::{self, Kind};

/// Free-text fields (ids sent by the loader) are bounded.
pub const MAX_TEXT_CHARS: usize = 256;

/// An id or free-text value from the loader: a string without control characters, or an integer
/// (platform customer and order ids often arrive as numbers), at most 256 characters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Text(String);

/// A string, or an integer as serde_json reads one (i64 or u64; written without a fraction or
/// an exponent).
impl PartialSchema for Text {
    fn schema() -> RefOr<Schema> {
        let string = text_schema::string(Kind::Line, MAX_TEXT_CHARS, false);
        let integer = ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(i64::MIN))
            .maximum(Some(u64::MAX));
        OneOfBuilder::new()
            .item(string)
            .item(integer)
            .description(Some(
                "An id or free-text value from the loader: a string without control characters, \
                 at most 256 characters, or an integer (platform customer and order ids often \
                 arrive as numbers; beyond 2^53 written without a fraction).",
            ))
            .into()
    }
}

impl ToSchema for Text {}

impl Text {
    pub fn into_string(self) -> String {
        self.0
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(TextVisitor)
    }
}

/// Takes the value as the parser meets it (no `Value` in between); every other kind is refused
/// with the message the field's error names.
struct TextVisitor;

impl TextVisitor {
    fn refuse<E: serde::de::Error>(kind: &str) -> Result<Text, E> {
        Err(E::custom(format!("expected a string, got {kind}")))
    }
}

impl<'de> serde::de::Visitor<'de> for TextVisitor {
    type Value = Text;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string or an integer")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text, E> {
        // Bytes bound characters from above: the count is needed only for long values.
        if text.len() > MAX_TEXT_CHARS && text.chars().count() > MAX_TEXT_CHARS {
            return Err(E::custom(format!(
                "must be at most {MAX_TEXT_CHARS} characters"
            )));
        }
        // Postgres (the order claims) refuses NUL in text, and no id holds a control character.
        // Ids are printable ASCII: a byte check settles them without decoding, folded without an
        // early exit so that it vectorises.
        let printable_ascii =
            (text.bytes()).fold(true, |all, b| all & (b.wrapping_sub(b' ') < 0x5f));
        let control = (!printable_ascii).then(|| text.chars().find(|c| c.is_control()));
        if let Some(c) = control.flatten() {
            return Err(E::custom(format!(
                "must not contain control characters (found U+{:04X})",
                c as u32
            )));
        }
        Ok(Text(text.to_owned()))
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Text, E> {
        Ok(Text(n.to_string()))
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Text, E> {
        Ok(Text(n.to_string()))
    }

    /// An integer written with a fraction (`42.0`) is an integer to JSON Schema; taken while the
    /// float holds it exactly.
    fn visit_f64<E: serde::de::Error>(self, n: f64) -> Result<Text, E> {
        const EXACT: f64 = 9_007_199_254_740_992.0; // 2^53
        match n.fract() == 0.0 && n.abs() <= EXACT {
            // `+ 0.0` makes -0 plain 0.
            true => Ok(Text(format!("{:.0}", n + 0.0))),
            false => Self::refuse("a number"),
        }
    }

    fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Text, E> {
        Self::refuse("a boolean")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Text, E> {
        Self::refuse("null")
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, _: A) -> Result<Text, A::Error> {
        Self::refuse("an array")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, _: A) -> Result<Text, A::Error> {
        Self::refuse("an object")
    }
}
