//! How the admin API documents its text fields: what [`TextLine`](super::TextLine) and the
//! catalog's checks (`check_text`, `check_required_text`, `check_optional_url`) take, for
//! `schema_with`. Patterns name their characters (`\uXXXX`), since `\s` means other sets in other
//! regex dialects.

use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};

use crate::catalog::{HANDLE_CHARS, LINK_CHARS};

/// The control characters (`char::is_control`), as the inside of a character class.
const CONTROL: &str = r"\u0000-\u001F\u007F-\u009F";
/// The whitespace `char::is_whitespace` adds to them.
const SPACE: &str = r"\u0020\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000";

/// What a text field holds.
#[derive(Clone, Copy)]
pub enum Kind {
    /// Any text without control characters.
    Line,
    /// Such text that is not only whitespace.
    Required,
    /// A non-empty word: neither control characters nor whitespace.
    Word,
    /// An absolute http(s) link (`catalog::is_link`).
    Link,
}

pub fn pattern(kind: Kind) -> String {
    let label = "[A-Za-z0-9]+(-[A-Za-z0-9]+)*";
    let octet = "(25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])";
    match kind {
        Kind::Line => format!("^[^{CONTROL}]*$"),
        Kind::Required => format!("^[^{CONTROL}]*[^{CONTROL}{SPACE}][^{CONTROL}]*$"),
        Kind::Word => format!("^[^{CONTROL}{SPACE}]+$"),
        Kind::Link => format!(
            "^[Hh][Tt][Tt][Pp][Ss]?://(({octet}\\.){{3}}{octet}|({label}\\.)*[A-Za-z][A-Za-z0-9]*(-[A-Za-z0-9]+)*)\
             (:0*(6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{{2}}|6[0-4][0-9]{{3}}|[1-5][0-9]{{4}}\
             |[0-9]{{1,4}}))?([/?#][^{CONTROL}{SPACE}]*)?$"
        ),
    }
}

/// A string of `kind`, at most `max` characters, `null` too when `nullable`. Only a `Line`
/// may be empty.
pub fn string(kind: Kind, max: usize, nullable: bool) -> ObjectBuilder {
    let schema_type = match nullable {
        true => SchemaType::from_iter([Type::String, Type::Null]),
        false => SchemaType::new(Type::String),
    };
    ObjectBuilder::new()
        .schema_type(schema_type)
        .pattern(Some(pattern(kind)))
        .min_length((!matches!(kind, Kind::Line)).then_some(1))
        .max_length(Some(max))
}

/// Text of at most `MAX` characters, empty included.
pub fn line<const MAX: usize>() -> ObjectBuilder {
    string(Kind::Line, MAX, false)
}

/// As [`line`]; `null` keeps the stored value.
pub fn line_or_null<const MAX: usize>() -> ObjectBuilder {
    string(Kind::Line, MAX, true)
}

/// Text of at most `MAX` characters that is not only whitespace.
pub fn required<const MAX: usize>() -> ObjectBuilder {
    string(Kind::Required, MAX, false)
}

/// As [`required`]; `null` keeps the stored value.
pub fn required_or_null<const MAX: usize>() -> ObjectBuilder {
    string(Kind::Required, MAX, true)
}

/// A product handle.
pub fn handle() -> ObjectBuilder {
    string(Kind::Word, HANDLE_CHARS, false)
}

/// A link, or empty for none.
pub fn link() -> ObjectBuilder {
    optional_link(false)
}

/// As [`link`]; `null` keeps the stored value.
pub fn link_or_null() -> ObjectBuilder {
    optional_link(true)
}

fn optional_link(nullable: bool) -> ObjectBuilder {
    let pattern = pattern(Kind::Link);
    // The empty string is the link's absence.
    string(Kind::Link, LINK_CHARS, nullable)
        .min_length(None)
        .pattern(Some(format!("^$|{pattern}")))
}

/// A link that must be given.
pub fn required_link() -> ObjectBuilder {
    string(Kind::Link, LINK_CHARS, false)
}

/// As [`required_link`]; `null` keeps the stored value.
pub fn required_link_or_null() -> ObjectBuilder {
    string(Kind::Link, LINK_CHARS, true)
}
