//! The catalog's domain values, parsed once at the edge. After parsing nothing re-checks them.

use std::fmt;
use std::str::FromStr;

use iso_currency::IntoEnumIterator;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Why an outside value was refused; the caller adds the field name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub String);

/// The conversions `#[serde(try_from = "String", into = "String")]` uses: from text through the
/// type's `parse`, to text as `|value| text` says.
macro_rules! string_conversions {
    ($name:ident, |$value:ident| $text:expr) => {
        impl TryFrom<String> for $name {
            type Error = InvalidValue;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                $name::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from($value: $name) -> String {
                $text
            }
        }
    };
}

/// A shop is its platform domain, e.g. `example.myshopify.com`: taken in any case (and with
/// surrounding spaces ignored), kept lower-cased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(
    value_type = String,
    example = "example.myshopify.com",
    // What `parse` takes, in a pattern without flags: the name's case and the suffix's are free.
    pattern = r"^[A-Za-z0-9][A-Za-z0-9-]{0,62}\.[Mm][Yy][Ss][Hh][Oo][Pp][Ii][Ff][Yy]\.[Cc][Oo][Mm]$"
)]
pub struct ShopDomain(String);

impl ShopDomain {
    const SUFFIX: &'static str = ".myshopify.com";

    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let domain = raw.trim().to_ascii_lowercase();
        let name = domain.strip_suffix(Self::SUFFIX).unwrap_or("");
        let valid_name = !name.is_empty()
            && name.len() <= 63
            && !name.starts_with('-')
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if valid_name {
            Ok(ShopDomain(domain))
        } else {
            Err(InvalidValue(format!(
                "'{raw}' is not a shop domain like example.myshopify.com"
            )))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShopDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_conversions!(ShopDomain, |d| d.0);

// Every string the admin API stores is one of these: Postgres refuses NUL in text (which would
// otherwise answer 500), and the other controls would only break a storefront's layout or a log
// line. No stored field is multi-line, so tab and newline are refused as well.
/// One line of text (a title, a name, a handle, a link) without control characters: nothing of
/// Unicode `Cc` (U+0000–U+001F, U+007F–U+009F), so no tab or newline either.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, Serialize, Deserialize, sqlx::Type)]
#[serde(try_from = "String", into = "String")]
#[sqlx(transparent)]
pub struct TextLine(String);

/// How the admin API documents its text fields: what [`TextLine`] and the catalog's checks
/// (`check_text`, `check_required_text`, `check_optional_url`) take, for `schema_with`. Patterns
/// name their characters (`\uXXXX`), since `\s` means other sets in other regex dialects.
pub mod text_schema {
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
}

impl TextLine {
    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        match raw.chars().find(|c| c.is_control()) {
            Some(c) => Err(InvalidValue(format!(
                "must not contain control characters (found U+{:04X})",
                u32::from(c)
            ))),
            None => Ok(TextLine(raw.to_string())),
        }
    }

    /// A `PATCH`'s new text, or else the text stored before. That one is not checked again: a
    /// value stored before a rule tightened stays as it is until the merchant changes it.
    pub(crate) fn or_stored(change: Option<TextLine>, stored: String) -> Self {
        change.unwrap_or(TextLine(stored))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for TextLine {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for TextLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_conversions!(TextLine, |t| t.0);

/// A UUID as the JSON APIs take it: the hyphenated form (`crypto.randomUUID()`'s), in either
/// case. The uuid crate's simple, braced and URN forms are refused, so that what the document's
/// pattern says is what is taken.
pub mod hyphenated_uuid {
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
}

/// A platform global id of one kind (`gid://shopify/Product/123`). The bare number `123` is
/// accepted wherever a global id is, and normalised to the global form.
macro_rules! global_id {
    ($name:ident, $kind:literal, $pattern:literal) => {
        #[derive(
            Debug,
            Clone,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            Serialize,
            Deserialize,
            ToSchema,
            sqlx::Type,
        )]
        #[serde(try_from = "String", into = "String")]
        #[sqlx(transparent)]
        #[schema(
                                    value_type = String,
                                    example = json!(concat!("gid://shopify/", $kind, "/123")),
                                    pattern = $pattern
                                )]
        pub struct $name(String);

        impl $name {
            const PREFIX: &'static str = concat!("gid://shopify/", $kind, "/");

            pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
                let raw = raw.trim();
                let number = raw.strip_prefix(Self::PREFIX).unwrap_or(raw);
                // At most 19 significant digits: what the documented pattern says, and far more
                // than the platform's ids use.
                let digits = number.trim_start_matches('0').len();
                match number.parse::<u64>() {
                    Ok(n)
                        if n > 0 && digits <= 19 && number.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        Ok($name(format!("{}{}", Self::PREFIX, n)))
                    }
                    _ => Err(InvalidValue(format!(
                        "'{raw}' is neither a {} global id ({}123) nor a number",
                        $kind,
                        Self::PREFIX
                    ))),
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        string_conversions!($name, |id| id.0);
    };
}

global_id!(
    ProductGid,
    "Product",
    "^(gid://shopify/Product/)?0*[1-9][0-9]{0,18}$"
);
global_id!(
    CollectionGid,
    "Collection",
    "^(gid://shopify/Collection/)?0*[1-9][0-9]{0,18}$"
);

/// An enum stored as text in Postgres and sent as the same text in JSON.
///
/// The texts are taken as `tt`, not `literal`: a `literal` fragment reaches derive macros wrapped
/// in an invisible group, which serde unwraps but utoipa does not (it then ignores the `rename` and
/// documents the variants' Rust names).
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:tt),+ $(,)? } $(default $default:ident)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        $(impl Default for $name {
            fn default() -> Self {
                $name::$default
            }
        })?

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = InvalidValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(InvalidValue(format!(
                        "'{}' is not one of {}",
                        s,
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }

        impl sqlx::Type<sqlx::Postgres> for $name {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::Type<sqlx::Postgres>>::type_info()
            }
            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        impl sqlx::postgres::PgHasArrayType for $name {
            fn array_type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::postgres::PgHasArrayType>::array_type_info()
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $name {
            fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let text = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
                Ok(text.parse()?)
            }
        }

        impl sqlx::Encode<'_, sqlx::Postgres> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut sqlx::postgres::PgArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<sqlx::Postgres>>::encode(self.as_str(), buf)
            }
        }
    };
}

text_enum!(
    /// The kinds of widget. `floating`: a small round preview fixed in a corner of every page
    /// its rules allow, opening the player.
    WidgetType {
        Carousel => "carousel",
        Story => "story",
        ProductPage => "productpage",
        Floating => "floating",
    }
);
text_enum!(
    /// Only `active` widgets reach the storefront.
    WidgetStatus { Active => "active", Draft => "draft", Archived => "archived" }
);
text_enum!(
    /// Only `PUBLISHED` videos reach the storefront.
    VideoStatus { Published => "PUBLISHED", Draft => "DRAFT", Archived => "ARCHIVED" }
);
text_enum!(ViewStyle { Default => "default", Compact => "compact", Large => "large" } default Default);
text_enum!(ClickBehavior { OpenModal => "open_modal", OpenProduct => "open_product", None => "none" } default OpenModal);
text_enum!(ModalLayout { Vertical => "vertical", Horizontal => "horizontal" } default Vertical);
text_enum!(
    /// `manual` renders the widget's own videos; `product` the current product's videos.
    SourceType { Manual => "manual", Product => "product" } default Manual
);
text_enum!(
    /// The storefront page type a widget is requested for.
    Location { Home => "home", Product => "product", Collection => "collection", Page => "page", Other => "other" }
);

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

/// A 32-bit integer as JSON clients send it (a widget's priority, a poster's moment): an
/// integer, which some write as `92.0` (JSON Schema's `integer` includes it); a fraction or a
/// value beyond 32 bits is refused.
pub(crate) fn json_i32<'de, D: serde::Deserializer<'de>>(d: D) -> Result<i32, D::Error> {
    use serde::de::Error;
    let n = serde_json::Number::deserialize(d)?;
    let integral = match (n.as_i64(), n.as_f64()) {
        (Some(i), _) => i32::try_from(i).ok(),
        (None, Some(f)) if f.fract() == 0.0 && f.abs() <= f64::from(i32::MAX) + 1.0 => {
            format!("{f:.0}").parse().ok()
        }
        _ => None,
    };
    integral.ok_or_else(|| {
        D::Error::custom(format!(
            "must be an integer from {} to {}, got {n}",
            i32::MIN,
            i32::MAX
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shop_domains_are_lowercased_myshopify_hosts() {
        assert_eq!(
            ShopDomain::parse("Demo-1.MyShopify.com").unwrap().as_str(),
            "demo-1.myshopify.com"
        );
        for bad in [
            "",
            "myshopify.com",
            ".myshopify.com",
            "a.b.myshopify.com",
            "shop.example.com",
            "-x.myshopify.com",
            "x y.myshopify.com",
        ] {
            assert!(ShopDomain::parse(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn text_refuses_every_control_character_and_keeps_the_rest() {
        for ok in [
            "",
            "Summer Sale",
            "Crème brûlée 🍮",
            "a\u{00A0}b",
            "a\u{2028}b",
            "x\u{FEFF}",
        ] {
            assert_eq!(TextLine::parse(ok).unwrap().as_str(), ok);
        }
        for c in ('\u{0}'..='\u{1F}').chain('\u{7F}'..='\u{9F}') {
            let err = TextLine::parse(&format!("a{c}b")).unwrap_err();
            assert_eq!(
                err.0,
                format!(
                    "must not contain control characters (found U+{:04X})",
                    u32::from(c)
                )
            );
        }
    }

    fn matches(pattern: &str, text: &str) -> bool {
        regex::Regex::new(pattern).unwrap().is_match(text)
    }

    #[test]
    fn the_documented_link_pattern_is_the_rule_links_are_checked_by() {
        let pattern = text_schema::pattern(text_schema::Kind::Link);
        for (link, taken) in [
            ("http://a", true),
            ("https://cdn.example.com/v.mp4?x=1#t", true),
            ("HTTPS://Shop-1.Example.COM:8443/a", true),
            ("http://localhost:0/", true),
            ("http://a.io:0065535?q", true),
            ("https://e.com/é<>\"{}|\\^`%zz", true),
            ("ftp://a.com", false),
            ("http://", false),
            ("http:/a.com", false),
            ("http://1.2.3.4/", true),
            ("http://127.0.0.1:8080/media/a.svg", true),
            ("http://01.2.3.4/", false),
            ("http://1.2.3.256/", false),
            ("http://1.2.3/", false),
            ("http://a.b1/", true),
            ("http://a.1b/", false),
            ("http://-a.com", false),
            ("http://a-.com", false),
            // A punycode label must decode, which no pattern can say: none is taken.
            ("http://xn--bcher-kva.example", false),
            ("http://a..b", false),
            ("http://a.com.", false),
            ("http://a:65536", false),
            ("http://a:", false),
            ("http://a.com:80:90", false),
            ("http://user@a.com", false),
            ("http://a_b.com", false),
            ("http://ä.com", false),
            ("http://a.com/ b", false),
            ("http://a.com/\u{3000}", false),
            (" http://a.com", false),
        ] {
            assert_eq!(matches(&pattern, link), taken, "pattern on {link:?}");
            let checked = crate::catalog::check_optional_url("link", link).is_ok();
            assert_eq!(checked, taken, "check on {link:?}");
        }
    }

    #[test]
    fn the_documented_text_patterns_are_the_rules_text_is_checked_by() {
        use text_schema::{pattern, Kind};
        let samples = [
            "",
            " ",
            "\u{3000}",
            "a",
            " a ",
            "Crème brûlée 🍮",
            "x\u{FEFF}",
            "a\tb",
            "a\u{85}",
            "\u{A0}",
        ];
        for text in samples {
            let line = TextLine::parse(text).is_ok();
            assert_eq!(matches(&pattern(Kind::Line), text), line, "{text:?}");
            let required =
                line && crate::catalog::check_required_text("t", text, usize::MAX).is_ok();
            assert_eq!(
                matches(&pattern(Kind::Required), text),
                required,
                "{text:?}"
            );
            let word = required && !text.chars().any(char::is_whitespace);
            assert_eq!(matches(&pattern(Kind::Word), text), word, "{text:?}");
        }
    }

    proptest::proptest! {
        #[test]
        fn every_link_the_pattern_describes_is_taken(
            link in proptest::string::string_regex(
                text_schema::pattern(text_schema::Kind::Link).trim_start_matches('^').trim_end_matches('$')
            ).unwrap()
        ) {
            // `check_optional_url` less its length bound, which `maxLength` states.
            let parsed = url::Url::parse(&link).is_ok();
            proptest::prop_assert!(crate::catalog::is_link(&link) && parsed, "{link:?}");
        }

        #[test]
        fn every_text_the_required_pattern_describes_is_taken(
            text in proptest::string::string_regex(
                text_schema::pattern(text_schema::Kind::Required).trim_start_matches('^').trim_end_matches('$')
            ).unwrap()
        ) {
            let text = TextLine::parse(&text).unwrap();
            proptest::prop_assert!(crate::catalog::check_required_text("t", &text, usize::MAX).is_ok());
        }
    }

    #[test]
    fn uuids_are_taken_hyphenated_only() {
        let id = "0190B6F2-8c1e-7d3a-9f4b-2a6c8e0d1f35";
        assert!(hyphenated_uuid::parse(id).is_ok());
        assert!(matches(hyphenated_uuid::PATTERN, id));
        for other in [
            "0190b6f28c1e7d3a9f4b2a6c8e0d1f35",
            "{0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35}",
            "urn:uuid:0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35",
            "",
        ] {
            assert!(hyphenated_uuid::parse(other).is_err(), "{other}");
            assert!(!matches(hyphenated_uuid::PATTERN, other), "{other}");
        }
    }

    #[test]
    fn product_ids_accept_a_global_id_or_a_bare_number() {
        let expected = "gid://shopify/Product/123";
        assert_eq!(
            ProductGid::parse("gid://shopify/Product/123")
                .unwrap()
                .as_str(),
            expected
        );
        assert_eq!(ProductGid::parse("123").unwrap().as_str(), expected);
        for bad in [
            "",
            "0",
            "-1",
            "+5",
            "12a",
            "gid://shopify/Collection/123",
            "gid://shopify/Product/",
            "gid://shopify/Product/x",
            "99999999999999999999999",
            // 20 digits fit a u64 but not the documented pattern.
            "10000000000000000000",
        ] {
            assert!(ProductGid::parse(bad).is_err(), "{bad:?} accepted");
        }
        assert_eq!(
            ProductGid::parse("0009999999999999999999")
                .unwrap()
                .as_str(),
            "gid://shopify/Product/9999999999999999999"
        );
        assert_eq!(
            CollectionGid::parse("7").unwrap().as_str(),
            "gid://shopify/Collection/7"
        );
    }

    #[test]
    fn text_enums_round_trip_and_name_the_allowed_values() {
        for t in WidgetType::ALL {
            assert_eq!(t.as_str().parse::<WidgetType>().unwrap(), *t);
        }
        let err = "banner".parse::<WidgetType>().unwrap_err();
        assert_eq!(
            err.0,
            "'banner' is not one of carousel, story, productpage, floating"
        );
    }

    #[test]
    fn timezones_and_currencies_are_validated() {
        assert!(Timezone::parse("Asia/Kathmandu").is_ok());
        assert!(Timezone::parse("Mars/Olympus").is_err());
        assert_eq!(Currency::parse("EUR").unwrap().code(), "EUR");
        assert!(Currency::parse("EURO").is_err());
        assert!(Currency::parse("usd").is_err());
    }
}
