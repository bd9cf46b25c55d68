//! One event as it arrives: its wire fields, typed, and how its `timestamp` and `eventId` are
//! read and documented.

use chrono::DateTime;
use serde::Deserialize;
use utoipa::openapi::schema::{ObjectBuilder, SchemaFormat, SchemaType, Type};
use utoipa::openapi::KnownFormat;
use utoipa::ToSchema;
use uuid::Uuid;

use super::{Attribution, Country, EventType, Group, Placement, Revenue, Source, Text};
use crate::catalog::domain::{hyphenated_uuid, Currency, ProductGid};

/// An event's `timestamp`: RFC 3339 through chrono's dedicated parser (the beacon's
/// `toISOString()` form), else chrono's more lenient `FromStr`, whose error names the problem.
/// Missing or `null` is `None`; another kind is refused as chrono's own deserializer refuses it.
pub(super) fn client_timestamp<'de, D: serde::Deserializer<'de>>(
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
    /// The type of page the widget showed on.
    #[schema(inline)]
    pub placement: Option<Placement>,
    pub country: Option<Country>,
    /// The visit's traffic source, as the loader read it on the visit's landing page.
    #[schema(inline)]
    pub source: Option<Source>,
    /// For `watch` (ignored on other events; 0 when absent): milliseconds the video actually
    /// played in this opening. More than three times the video's duration counts as three times.
    #[serde(default, deserialize_with = "milliseconds")]
    #[schema(minimum = 0, maximum = 4_294_967_295_f64, format = Int64)]
    pub watched_ms: Option<u32>,
    /// For `watch` (ignored on other events; 0 when absent): the furthest point reached, in
    /// percent of the duration.
    #[serde(default, deserialize_with = "percent")]
    #[schema(minimum = 0, maximum = 100)]
    pub max_percent: Option<u8>,
    /// The browser's group in the shop's holdout (`holdoutPercent` above 0): on every event of
    /// a browser the loader assigned, and on its orders.
    #[schema(inline)]
    pub group: Option<Group>,
}

/// A whole percentage, 0 to 100.
fn percent<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u8>, D::Error> {
    Ok(whole(d, 100)?.map(|n| n as u8))
}

/// Milliseconds, a whole number that fits 32 bits.
fn milliseconds<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    Ok(whole(d, u64::from(u32::MAX))?.map(|n| n as u32))
}

/// A whole number from 0 to `max`: an integer, or a number with no fraction (`364.0`, which
/// JSON Schema counts as an integer too).
fn whole<'de, D: serde::Deserializer<'de>>(d: D, max: u64) -> Result<Option<u64>, D::Error> {
    let n = match Option::<f64>::deserialize(d)? {
        None => return Ok(None),
        Some(n) => n,
    };
    if n.fract() != 0.0 || !(0.0..=max as f64).contains(&n) {
        return Err(serde::de::Error::custom(format!(
            "must be an integer from 0 to {max}, got {n}"
        )));
    }
    Ok(Some(n as u64))
}

pub(super) fn timestamp() -> ObjectBuilder {
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
