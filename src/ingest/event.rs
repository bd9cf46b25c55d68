//! Events as shoppers' browsers send them, parsed and validated at the edge into
//! [`SpoolEvent`]s: the exact record the spool keeps and ClickHouse receives.

use chrono::{DateTime, NaiveDate, Utc};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use utoipa::openapi::schema::{
    ObjectBuilder, OneOfBuilder, Schema, SchemaFormat, SchemaType, Type,
};
use utoipa::openapi::{KnownFormat, RefOr};
use utoipa::{PartialSchema, ToSchema};
use uuid::Uuid;

use crate::catalog::domain::text_schema::{self, Kind};
use crate::catalog::domain::{hyphenated_uuid, Currency, ProductGid, ShopDomain, Timezone};

/// At most this many events in one request.
pub const MAX_EVENTS_PER_REQUEST: usize = 100;
/// Free-text fields (ids sent by the loader) are bounded.
pub const MAX_TEXT_CHARS: usize = 256;
/// An order names at most this many products (`productIds` of checkout_completed).
pub const MAX_ORDER_PRODUCTS: usize = 250;
/// Revenue is kept in units of 1/10 000 of the currency: exact for every ISO 4217 minor unit.
pub const REVENUE_SCALE: i64 = 10_000;
/// No single order is worth more than this (in currency units); larger values are typos.
const MAX_REVENUE_UNITS: i64 = 1_000_000_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Impression,
    View,
    Click,
    AddToCart,
    CheckoutCompleted,
}

impl EventType {
    /// The value of the `Enum8` column in ClickHouse.
    pub fn code(self) -> i8 {
        match self {
            EventType::Impression => 1,
            EventType::View => 2,
            EventType::Click => 3,
            EventType::AddToCart => 4,
            EventType::CheckoutCompleted => 5,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Impression => "impression",
            EventType::View => "view",
            EventType::Click => "click",
            EventType::AddToCart => "add_to_cart",
            EventType::CheckoutCompleted => "checkout_completed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    Direct,
    Influenced,
}

impl Attribution {
    /// The value of the `Enum8` column (0 = not given).
    pub fn code(attribution: Option<Attribution>) -> i8 {
        match attribution {
            None => 0,
            Some(Attribution::Direct) => 1,
            Some(Attribution::Influenced) => 2,
        }
    }
}

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

/// An event's `timestamp`: RFC 3339 through chrono's dedicated parser (the beacon's
/// `toISOString()` form), else chrono's more lenient `FromStr`, whose error names the problem.
/// Missing or `null` is `None`; another kind is refused as chrono's own deserializer refuses it.
fn client_timestamp<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<Option<DateTime<chrono::FixedOffset>>, D::Error> {
    d.deserialize_option(ClientTimestamp)
}

struct ClientTimestamp;

impl<'de> serde::de::Visitor<'de> for ClientTimestamp {
    type Value = Option<DateTime<chrono::FixedOffset>>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an RFC 3339 formatted date and time string")
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_str(self)
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Self::Value, E> {
        match DateTime::parse_from_rfc3339(text) {
            Ok(timestamp) => Ok(Some(timestamp)),
            Err(_) => text.parse().map(Some).map_err(E::custom),
        }
    }
}

/// One event on the wire. Unknown fields are ignored: loaders add context we do not use.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct IncomingEvent {
    pub event_type: EventType,
    pub session_id: Option<Text>,
    /// Ignored (checked as any id is): an event's customer is the one the platform signs as
    /// `logged_in_customer_id`, never what the browser says.
    pub customer_id: Option<Text>,
    pub video_id: Option<Text>,
    pub widget_id: Option<Text>,
    pub attribution_type: Option<Attribution>,
    #[schema(schema_with = timestamp)]
    #[serde(default, deserialize_with = "client_timestamp")]
    pub timestamp: Option<DateTime<chrono::FixedOffset>>,
    #[schema(schema_with = event_id)]
    #[serde(default, deserialize_with = "hyphenated_uuid::option")]
    pub event_id: Option<Uuid>,
    /// For click / add_to_cart / checkout: global id or bare number.
    pub product_id: Option<ProductGid>,
    pub order_id: Option<Text>,
    /// The order's products (checkout_completed): global ids or bare numbers, at most 250.
    #[schema(max_items = 250)]
    pub product_ids: Option<Vec<ProductGid>>,
    /// Order value in the shop currency (checkout_completed).
    pub revenue: Option<Revenue>,
    pub currency: Option<Currency>,
}

fn timestamp() -> ObjectBuilder {
    // What RFC 3339 surely is; `client_timestamp` also takes chrono's more lenient forms.
    let date = "[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])";
    let time = "([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\\.[0-9]+)?";
    // `T` only: a validator of `format: date-time` refuses RFC 3339's space-separated form.
    let offset = "([Zz]|[+-]([01][0-9]|2[0-3]):[0-5][0-9])";
    ObjectBuilder::new()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
        .pattern(Some(format!("^{date}[Tt]{time}{offset}$")))
        .description(Some(
            "RFC 3339 date-time with offset; `null` is absent (the receive time). One outside the \
             accepted window (too far in the past or future) is replaced by the receive time.",
        ))
}

fn event_id() -> ObjectBuilder {
    hyphenated_uuid::schema()
        .schema_type(SchemaType::from_iter([Type::String, Type::Null]))
        .description(Some("Client-side UUID; becomes the event's id."))
}

/// The record the spool keeps: validated, with the service's own fields added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SpoolEvent {
    pub event_id: Uuid,
    /// The client chose `event_id`, so a retry may send it again: the shipper counts it once.
    /// (An id the service made is new by construction and needs no claim.)
    pub client_event_id: bool,
    pub shop: String,
    pub local_date: NaiveDate,
    /// Unix seconds.
    pub event_time: i64,
    pub received_at: i64,
    pub timestamp_replaced: bool,
    pub event_type: EventType,
    pub attribution: Option<Attribution>,
    pub video_id: String,
    pub widget_id: String,
    pub session_id: String,
    pub customer_id: String,
    pub product_id: String,
    pub order_id: String,
    /// Revenue × 10 000.
    pub revenue_e4: i64,
    pub currency: String,
    /// The order's products (checkout_completed), as global ids.
    pub product_ids: Vec<String>,
}

/// A rejected body: the JSON path of the offending value, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub message: String,
}

impl Invalid {
    fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// The accepted window for client timestamps; outside it the receive time is used.
#[derive(Debug, Clone, Copy)]
pub struct TimeWindow {
    pub max_future: chrono::Duration,
    pub max_past: chrono::Duration,
}

/// The body: one event, or up to 100 under `events`.
// The top level as read: an object with `events` is a batch, any other object one event. Reading
// it keeps `events` as its JSON text and skips every other field without building anything.
#[derive(Deserialize, ToSchema)]
pub struct EventBatch<'a> {
    #[serde(default, borrow, deserialize_with = "present")]
    #[schema(value_type = Vec<IncomingEvent>, required = true, min_items = 1, max_items = 100)]
    events: Option<&'a RawValue>,
}

/// `events` as given, `null` included (which is then not an array), rather than `None` for null.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<&'de RawValue>, D::Error> {
    <&RawValue>::deserialize(d).map(Some)
}

/// The body's events: `{ "events": [...] }` or one event object. Nothing is returned unless
/// every event is valid.
///
/// The top level is read first, as an [`EventBatch`]: whether the body is a batch decides how
/// the rest is read. Each event is then read straight from its own text, so
/// a revenue keeps the exact digits it was sent with (a `serde_json::Value` in between would
/// hold numbers as binary floating point).
pub fn parse_body(body: &[u8]) -> Result<(Vec<IncomingEvent>, bool), Invalid> {
    let malformed =
        |e: &dyn std::fmt::Display| Invalid::new("body", format!("malformed JSON: {e}"));
    let not_an_object = || Invalid::new("body", "must be an event object or { \"events\": [...] }");
    let text = std::str::from_utf8(body).map_err(|e| malformed(&e))?;
    // A derived struct would also take a JSON array.
    if !text.trim_start().starts_with('{') {
        serde_json::from_str::<serde::de::IgnoredAny>(text).map_err(|e| malformed(&e))?;
        return Err(not_an_object());
    }
    let top: EventBatch = serde_json::from_str(text).map_err(|e| match e.is_data() {
        true => not_an_object(),
        false => malformed(&e),
    })?;
    let Some(events) = top.events else {
        return Ok((vec![parse_event(text, "")?], false));
    };
    let items: Vec<&RawValue> = serde_json::from_str(events.get())
        .map_err(|_| Invalid::new("events", "must be an array"))?;
    if items.is_empty() {
        return Err(Invalid::new("events", "must not be empty"));
    }
    if items.len() > MAX_EVENTS_PER_REQUEST {
        return Err(Invalid::new(
            "events",
            format!(
                "at most {MAX_EVENTS_PER_REQUEST} events per request, got {}",
                items.len()
            ),
        ));
    }
    let events = items
        .iter()
        .enumerate()
        .map(|(i, item)| parse_event(item.get(), &format!("events[{i}]")))
        .collect::<Result<_, _>>()?;
    Ok((events, true))
}

/// One event from its JSON text; errors name the field below `prefix` (`events[3].revenue`).
fn parse_event(text: &str, prefix: &str) -> Result<IncomingEvent, Invalid> {
    let join = |path: &str| match (prefix.is_empty(), path) {
        (true, p) => p.to_string(),
        (false, ".") => prefix.to_string(),
        (false, p) => format!("{prefix}.{p}"),
    };
    if !text.trim_start().starts_with('{') {
        return Err(Invalid::new(join("."), "must be an event object"));
    }
    // Read plainly; only a refused event is read again, tracking the path, to name its field.
    // Tracking every event's path cost 1.5 k instructions per event (2.2%) under callgrind.
    let event: IncomingEvent = serde_json::from_str(text).map_err(|plain| {
        let mut deserializer = serde_json::Deserializer::from_str(text);
        let Err(e) = serde_path_to_error::deserialize::<_, IncomingEvent>(&mut deserializer) else {
            return Invalid::new(join("."), without_position(plain));
        };
        let path = e.path().to_string();
        let message = without_position(e.into_inner());
        // A missing field is reported at the object; name it instead.
        match message.strip_prefix("missing field `") {
            Some(rest) => {
                let field = rest.trim_end_matches('`');
                Invalid::new(join(field), "is required")
            }
            None => Invalid::new(join(&path), message),
        }
    })?;
    if event.product_ids.as_ref().map_or(0, Vec::len) > MAX_ORDER_PRODUCTS {
        return Err(Invalid::new(
            join("productIds"),
            format!("at most {MAX_ORDER_PRODUCTS} products"),
        ));
    }
    Ok(event)
}

/// serde_json's message without the " at line 1 column 17" it appends: the field path says
/// where.
fn without_position(error: serde_json::Error) -> String {
    let message = error.to_string();
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message,
    }
}

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

impl IncomingEvent {
    /// The spool record: ids, the receive time and the shop-local date added.
    pub fn into_spool_event(
        self,
        shop: &ShopDomain,
        timezone: Timezone,
        received_at: DateTime<Utc>,
        window: TimeWindow,
    ) -> SpoolEvent {
        let (event_time, timestamp_replaced) = match self.timestamp {
            Some(t) => {
                let t = t.with_timezone(&Utc);
                let in_window =
                    t <= received_at + window.max_future && t >= received_at - window.max_past;
                if in_window {
                    (t, false)
                } else {
                    (received_at, true)
                }
            }
            None => (received_at, false),
        };
        let local_date = event_time.with_timezone(&timezone.tz()).date_naive();
        let text = |t: Option<Text>| t.map(Text::into_string).unwrap_or_default();
        SpoolEvent {
            client_event_id: self.event_id.is_some(),
            event_id: self.event_id.unwrap_or_else(Uuid::now_v7),
            shop: shop.to_string(),
            local_date,
            event_time: event_time.timestamp(),
            received_at: received_at.timestamp(),
            timestamp_replaced,
            event_type: self.event_type,
            attribution: self.attribution_type,
            video_id: text(self.video_id),
            widget_id: text(self.widget_id),
            session_id: text(self.session_id),
            // The customer is the platform's to say (the signed `logged_in_customer_id`, which
            // the endpoint sets): a browser's claim would put its events in another's data.
            customer_id: String::new(),
            product_id: self.product_id.map(String::from).unwrap_or_default(),
            order_id: text(self.order_id),
            revenue_e4: self.revenue.map_or(0, Revenue::e4),
            currency: self.currency.map(String::from).unwrap_or_default(),
            product_ids: self
                .product_ids
                .unwrap_or_default()
                .into_iter()
                .map(String::from)
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revenue_is_parsed_exactly_from_numbers_and_numeric_strings() {
        for (raw, expected) in [
            ("0", 0),
            ("0.1", 1_000),
            ("0.10", 1_000),
            ("19.99", 199_900),
            ("\"19.99\"", 199_900),
            ("1234.5678", 12_345_678),
            ("1e2", 1_000_000),
            ("1.5E1", 150_000),
            ("0.00001e1", 1),
            ("100.000000", 1_000_000),
            ("007.5", 75_000),
        ] {
            assert_eq!(Revenue::parse(raw).map(Revenue::e4), Ok(expected), "{raw}");
        }
        for bad in [
            "-1", "-0.01", "abc", "\"\"", "1.23456", "1e-5", ".", "1.2.3", "\"12a\"", "1e40",
            "true",
        ] {
            assert!(Revenue::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn a_revenue_string_is_taken_exactly_when_the_documented_pattern_matches_it() {
        let pattern = regex::Regex::new(Revenue::STRING_PATTERN).unwrap();
        for text in [
            "0",
            "19.99",
            "007.5",
            "1.50000",
            "1234.5678",
            "999999999999.9999",
            "1000000000000",
            "1000000000000.000",
            "1000000000000.0001",
            "1000000000001",
            "1.23456",
            "",
            ".5",
            "5.",
            "1e2",
            " 5",
            "5 ",
            "+5",
            "-0",
            "12a",
            "1.2.3",
            "\u{664}",
        ] {
            let taken = Revenue::parse(&serde_json::to_string(text).unwrap()).is_ok();
            assert_eq!(pattern.is_match(text), taken, "{text:?}");
        }
        assert_eq!(Revenue::parse("\"1.50000\"").map(Revenue::e4), Ok(15_000));
        assert_eq!(Revenue::parse("-0").map(Revenue::e4), Ok(0));
        assert_eq!(Revenue::parse("-0.0").map(Revenue::e4), Ok(0));
    }

    #[test]
    fn a_timestamp_of_the_documented_pattern_is_read_as_written() {
        let schema = serde_json::to_value(timestamp().build()).unwrap();
        let pattern = regex::Regex::new(schema["pattern"].as_str().unwrap()).unwrap();
        for text in [
            "2024-02-29T12:00:00Z",
            "2024-01-01t00:00:00.123456789+05:30",
            "0000-12-31T23:59:59z",
            "9999-01-01T00:00:00-23:59",
        ] {
            assert!(pattern.is_match(text), "{text}");
            let event = format!(r#"{{"eventType":"view","timestamp":"{text}"}}"#);
            let parsed = parse_event(&event, "").unwrap().timestamp.unwrap();
            let expected = DateTime::parse_from_rfc3339(&text.to_uppercase()).unwrap();
            assert_eq!(parsed, expected, "{text}");
        }
        let null = parse_event(r#"{"eventType":"view","timestamp":null}"#, "").unwrap();
        assert_eq!(null.timestamp, None);
    }

    #[test]
    fn an_id_is_a_string_or_an_integer_also_written_with_a_fraction() {
        let id = |value: &str| {
            parse_event(&format!(r#"{{"eventType":"view","orderId":{value}}}"#), "")
                .map(|e| e.order_id.map(Text::into_string))
        };
        assert_eq!(id("42.0"), Ok(Some("42".into())));
        assert_eq!(id("-0.0"), Ok(Some("0".into())));
        assert_eq!(id("18446744073709551615"), Ok(Some(u64::MAX.to_string())));
        assert_eq!(
            id("9007199254740992.0"),
            Ok(Some("9007199254740992".into()))
        );
        for refused in ["1.5", "1e300", "\"a\\u0000\""] {
            assert_eq!(id(refused).unwrap_err().field, "orderId", "{refused}");
        }
    }

    #[test]
    fn an_event_id_is_a_hyphenated_uuid() {
        let event =
            |id: &str| parse_event(&format!(r#"{{"eventType":"view","eventId":"{id}"}}"#), "");
        let id = "0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35";
        assert_eq!(
            event(id).unwrap().event_id,
            Some(Uuid::parse_str(id).unwrap())
        );
        let invalid = event(&id.replace('-', "")).unwrap_err();
        assert_eq!(invalid.field, "eventId");
    }

    #[test]
    fn a_body_is_one_event_or_a_batch() {
        let (events, batch) = parse_body(br#"{"eventType":"view","videoId":"v1"}"#).unwrap();
        assert_eq!((events.len(), batch), (1, false));
        let (events, batch) =
            parse_body(br#"{"events":[{"eventType":"view"},{"eventType":"click"}]}"#).unwrap();
        assert_eq!((events.len(), batch), (2, true));
    }

    #[test]
    fn a_body_of_another_shape_is_named_for_what_is_wrong() {
        let refused = |body: &str| {
            let invalid = parse_body(body.as_bytes()).unwrap_err();
            format!("{}: {}", invalid.field, invalid.message)
        };
        let not_an_object = "body: must be an event object or { \"events\": [...] }";
        assert_eq!(refused(r#"[{"eventType":"view"}]"#), not_an_object);
        assert_eq!(refused(r#"[null]"#), not_an_object);
        assert_eq!(refused(r#""view""#), not_an_object);
        assert_eq!(refused(" 42 "), not_an_object);
        assert!(refused(r#"{"eventType":"view""#).starts_with("body: malformed JSON"));
        assert!(refused("[1,").starts_with("body: malformed JSON"));
        assert_eq!(refused(r#"{"events":null}"#), "events: must be an array");
        assert_eq!(
            refused(r#"{"events":{"eventType":"view"}}"#),
            "events: must be an array"
        );
        assert_eq!(refused(r#"{"events":[]}"#), "events: must not be empty");
        assert_eq!(
            refused(r#"{"events":[1]}"#),
            "events[0]: must be an event object"
        );
    }

    /// An event reads the same alone and inside a batch, escaped keys included.
    #[test]
    fn a_lone_event_and_a_batched_one_are_the_same_event() {
        let shop = ShopDomain::parse("s.myshopify.com").unwrap();
        let tz = Timezone::parse("Europe/Berlin").unwrap();
        let now = Utc::now();
        let window = TimeWindow {
            max_future: chrono::Duration::minutes(5),
            max_past: chrono::Duration::days(7),
        };
        let id = "0193a3c8-2f5e-7c1a-9b7e-3f1f2a4b5c6d";
        let bodies = [
            format!(r#"{{"eventId":"{id}","eventType":"impression","videoId":"v1","widgetId":7}}"#),
            format!(
                r#"{{"eventId":"{id}","eventType":"checkout_completed","orderId":123,"revenue":12.50,"currency":"EUR","productId":"gid://shopify/Product/9","timestamp":"{}"}}"#,
                now.to_rfc3339()
            ),
            format!(
                r#"{{"eventId":"{id}","eventType":"view","sessionId":"s","extra":{{"a":[1]}}}}"#
            ),
        ];
        for body in &bodies {
            let (mut alone, batch) = parse_body(body.as_bytes()).unwrap();
            assert!(!batch);
            for events_key in ["events", r"\u0065vents"] {
                let batched = format!(r#"{{"{events_key}":[{body}]}}"#);
                let (mut inside, batch) = parse_body(batched.as_bytes()).unwrap();
                assert!(batch, "{batched}");
                assert_eq!(
                    inside.remove(0).into_spool_event(&shop, tz, now, window),
                    alone.remove(0).into_spool_event(&shop, tz, now, window),
                    "{body}"
                );
                alone = parse_body(body.as_bytes()).unwrap().0;
            }
        }
    }

    /// Near the largest accepted order, neighbouring values a ten-thousandth apart are closer
    /// than binary floating point can tell apart: each must still be kept exactly, alone and in
    /// a batch, as a number and as a string.
    #[test]
    fn revenue_keeps_every_digit_up_to_the_largest_order() {
        for last in 0..10 {
            let value = format!("999999999999.999{last}");
            let expected = 9_999_999_999_999_990 + last;
            for revenue in [value.clone(), format!(r#""{value}""#)] {
                let event = format!(r#"{{"eventType":"checkout_completed","revenue":{revenue}}}"#);
                for body in [event.clone(), format!(r#"{{"events":[{event}]}}"#)] {
                    let (events, _) = parse_body(body.as_bytes()).unwrap();
                    assert_eq!(events[0].revenue.map(Revenue::e4), Some(expected), "{body}");
                }
            }
        }
    }

    /// Free text is taken as the parser meets it: strings and integers, each other kind refused
    /// by name, long values by their characters (not bytes).
    #[test]
    fn text_fields_take_strings_and_integers_only() {
        let field = |value: &str| {
            parse_body(format!(r#"{{"eventType":"view","sessionId":{value}}}"#).as_bytes())
                .map(|(events, _)| events[0].session_id.clone().map(Text::into_string))
        };
        assert_eq!(field(r#""s-1""#), Ok(Some("s-1".to_string())));
        assert_eq!(field("-42"), Ok(Some("-42".to_string())));
        assert_eq!(
            field("18446744073709551615"),
            Ok(Some(u64::MAX.to_string()))
        );
        assert_eq!(field("null"), Ok(None));
        for (value, kind) in [
            ("true", "a boolean"),
            ("1.5", "a number"),
            ("[1]", "an array"),
            (r#"{"a":1}"#, "an object"),
        ] {
            let refused = field(value).unwrap_err();
            assert_eq!(refused.field, "sessionId");
            assert_eq!(refused.message, format!("expected a string, got {kind}"));
        }
        let wide = "é".repeat(MAX_TEXT_CHARS);
        assert_eq!(field(&format!(r#""{wide}""#)), Ok(Some(wide.clone())));
        let refused = field(&format!(r#""{wide}x""#)).unwrap_err();
        assert_eq!(refused.message, "must be at most 256 characters");
        // NUL would stop the order claims in Postgres: no text field takes a control character.
        for (escaped, code) in [(r"\u0000", "0000"), (r"\n", "000A"), (r"\u009f", "009F")] {
            let refused = field(&format!(r#""order{escaped}1""#)).unwrap_err();
            assert_eq!(refused.field, "sessionId");
            assert_eq!(
                refused.message,
                format!("must not contain control characters (found U+{code})")
            );
        }
    }

    /// The RFC 3339 fast path never changes what chrono's own parser makes of a timestamp.
    #[test]
    fn timestamps_parse_as_chrono_parses_them() {
        for text in [
            "2026-03-01T18:20:00Z",
            "2026-03-01T18:20:00.123Z",
            "2026-03-01T18:20:00.123456789+05:30",
            "2026-03-01t18:20:00z",
            "2026-03-01 18:20:00Z",
            "2026-03-01T18:20:00",
            "2026-02-30T18:20:00Z",
            "2026-03-01T24:00:00Z",
            "yesterday",
            "",
        ] {
            let ours = client_timestamp(serde_json::Value::String(text.to_string()))
                .map_err(|e| e.to_string());
            let chrono = text
                .parse::<DateTime<chrono::FixedOffset>>()
                .map(Some)
                .map_err(|e| e.to_string());
            assert_eq!(ours, chrono, "{text}");
        }
        // Another kind is refused in chrono's own words, on both parse paths.
        let refused = parse_body(br#"{"eventType":"view","timestamp":123}"#).unwrap_err();
        assert_eq!(refused.field, "timestamp");
        assert_eq!(
            refused.message,
            "invalid type: integer `123`, expected an RFC 3339 formatted date and time string"
        );
        let (events, _) = parse_body(br#"{"eventType":"view","timestamp":null}"#).unwrap();
        assert_eq!(events[0].timestamp, None);
    }

    #[test]
    fn errors_name_the_field() {
        let cases: [(&[u8], &str); 9] = [
            (br#"{"eventType":"like"}"#, "eventType"),
            (br#"{"videoId":"v"}"#, "eventType"),
            (
                br#"{"eventType":"view","attributionType":"maybe"}"#,
                "attributionType",
            ),
            (
                br#"{"eventType":"view","timestamp":"yesterday"}"#,
                "timestamp",
            ),
            (
                br#"{"events":[{"eventType":"view"},{"eventType":"view","revenue":-1}]}"#,
                "events[1].revenue",
            ),
            (br#"{"events":[]}"#, "events"),
            (br#"{"events":{}}"#, "events"),
            (br#"[1]"#, "body"),
            (br#"{"eventType":"view","sessionId":true}"#, "sessionId"),
        ];
        for (body, field) in cases {
            let err = parse_body(body).unwrap_err();
            assert_eq!(
                err.field,
                field,
                "{} -> {err:?}",
                String::from_utf8_lossy(body)
            );
        }
        let long = format!(
            r#"{{"eventType":"view","customerId":"{}"}}"#,
            "x".repeat(257)
        );
        assert_eq!(parse_body(long.as_bytes()).unwrap_err().field, "customerId");
    }

    /// Only the platform says who the customer is: a body's `customerId` is checked as any id,
    /// and binds nothing.
    #[test]
    fn a_bodys_customer_id_binds_nothing() {
        let shop = ShopDomain::parse("s.myshopify.com").unwrap();
        let tz = Timezone::parse("UTC").unwrap();
        let window = TimeWindow {
            max_future: chrono::Duration::minutes(5),
            max_past: chrono::Duration::days(7),
        };
        for claim in ["42", "\"gid://shopify/Customer/42\"", "\"someone\""] {
            let body = format!(r#"{{"eventType":"view","customerId":{claim}}}"#);
            let (events, _) = parse_body(body.as_bytes()).unwrap();
            let event = events.into_iter().next().unwrap();
            let record = event.into_spool_event(&shop, tz, Utc::now(), window);
            assert_eq!(record.customer_id, "", "{claim}");
        }
    }

    #[test]
    fn out_of_window_timestamps_are_replaced_and_local_dates_follow_the_shop() {
        let shop = ShopDomain::parse("s.myshopify.com").unwrap();
        let tz = Timezone::parse("Asia/Kathmandu").unwrap();
        let now = DateTime::parse_from_rfc3339("2026-03-01T20:00:00Z")
            .unwrap()
            .with_timezone(&Utc);
        let window = TimeWindow {
            max_future: chrono::Duration::hours(24),
            max_past: chrono::Duration::days(7),
        };
        let view_at = |timestamp: &str| {
            let body = format!(r#"{{"eventType":"view","timestamp":"{timestamp}"}}"#);
            let (events, _) = parse_body(body.as_bytes()).unwrap();
            events
                .into_iter()
                .next()
                .unwrap()
                .into_spool_event(&shop, tz, now, window)
        };
        let event = view_at("2026-03-01T18:20:00Z");
        // 18:20 UTC is 00:05 the next day in Kathmandu (+05:45).
        assert_eq!(event.local_date.to_string(), "2026-03-02");
        assert!(!event.timestamp_replaced);

        let event = view_at("2020-01-01T00:00:00Z");
        assert!(event.timestamp_replaced);
        assert_eq!(event.event_time, now.timestamp());
    }
}
