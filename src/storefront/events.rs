//! `POST /apps/videoapp_sub/analytics`: shopper events, acknowledged once they are durable in
//! the local spool (API-SPEC §2.5, §4.4; DESIGN §5).

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderValue, StatusCode};
use axum::response::Response;
use chrono::{DateTime, Datelike, SecondsFormat, Timelike, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::error::StorefrontError;
use super::request::Signed;
use super::widgets::ProxyParams;
use crate::app::AppState;
use crate::error::ErrorBody;
use crate::ingest::event::{self, IncomingEvent, SpoolEvent};
use crate::ingest::spool::SpoolError;

/// Bodies above this are refused with 413 (a beacon never needs more).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

#[derive(Serialize, ToSchema)]
pub struct EventsAccepted {
    success: bool,
    /// "Event recorded", or "Events recorded" for a batch.
    message: &'static str,
    /// For a batch: how many events were recorded.
    #[serde(skip_serializing_if = "Option::is_none")]
    count: Option<usize>,
    timestamp: String,
}

/// The body: one event, or up to 100 under `events`.
#[derive(ToSchema)]
#[allow(dead_code)]
pub struct EventBatch {
    events: Vec<IncomingEvent>,
}

fn reject(reason: &'static str, events: usize, error: StorefrontError) -> StorefrontError {
    metrics::counter!("events_rejected_total", "reason" => reason).increment(events.max(1) as u64);
    error
}

/// Record shopper events
///
/// Signed like every storefront call. The 202 is sent only once the events are durable in the
/// service's spool; they reach ClickHouse shortly after, exactly once.
#[utoipa::path(
    post, path = "/apps/videoapp_sub/analytics", tag = "storefront",
    params(ProxyParams),
    request_body(
        description = "One event, or `{ \"events\": [ … ] }` with at most 100. \
                       `application/json` or `text/plain` (sendBeacon), at most 64 KiB.",
        content(
            (IncomingEvent = "application/json"),
            (EventBatch = "application/json"),
            (IncomingEvent = "text/plain"),
        )
    ),
    responses(
        (status = 202, description = "Durably recorded", body = EventsAccepted),
        (status = 400, description = "INVALID_BODY or INVALID_EVENT; the message names the field", body = ErrorBody),
        (status = 401, description = "INVALID_SIGNATURE", body = ErrorBody),
        (status = 404, description = "SHOP_NOT_FOUND", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status = 503, description = "SPOOL_FULL: load is shed; retry after `Retry-After` seconds", body = ErrorBody,
         headers(("Retry-After" = u64))),
    )
)]
pub async fn record_events(
    State(state): State<AppState>,
    signed: Signed,
    request: Request,
) -> Result<Response, StorefrontError> {
    // The request itself, not the `HeaderMap` extractor, which clones every header.
    let (parts, body) = request.into_parts();
    let content_type = parts
        .headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase());
    // sendBeacon sends text/plain; a Blob without a type sends none.
    if !matches!(
        content_type.as_deref(),
        None | Some("application/json" | "text/plain")
    ) {
        return Err(reject(
            "media_type",
            1,
            StorefrontError::UnsupportedMediaType,
        ));
    }
    let bytes = axum::body::to_bytes(body, MAX_BODY_BYTES)
        .await
        .map_err(|_| {
            reject(
                "too_large",
                1,
                StorefrontError::PayloadTooLarge(MAX_BODY_BYTES),
            )
        })?;
    let (events, batch) = event::parse_body(&bytes).map_err(|invalid| {
        let error = if invalid.field == "body" || invalid.field == "events" {
            StorefrontError::InvalidBody(format!("{}: {}", invalid.field, invalid.message))
        } else {
            StorefrontError::InvalidEvent {
                field: invalid.field,
                message: invalid.message,
            }
        };
        reject("invalid", 1, error)
    })?;
    let count = events.len();
    let snapshot = state
        .catalog
        .get(&signed.shop)
        .await?
        .ok_or_else(|| reject("shop_not_found", count, StorefrontError::ShopNotFound))?;

    let received_at = Utc::now();
    let ingest = &state.ingest;
    // Identity comes from the platform: its signed customer id overrides whatever the client says.
    let customer = signed
        .params
        .one("logged_in_customer_id")
        .map_err(|e| reject("invalid", count, e))?;
    let records: Vec<SpoolEvent> = events
        .into_iter()
        .map(|e: IncomingEvent| {
            let mut record =
                e.into_spool_event(&signed.shop, snapshot.timezone, received_at, ingest.window);
            if let Some(customer) = customer {
                record.customer_id = customer.to_string();
            }
            record
        })
        .collect();
    let replaced = records.iter().filter(|e| e.timestamp_replaced).count();
    if replaced > 0 {
        metrics::counter!("events_timestamp_replaced_total").increment(replaced as u64);
    }
    match ingest.spool.append(&records).await {
        Ok(()) => {}
        Err(SpoolError::Full(_)) => {
            return Err(reject(
                "spool_full",
                count,
                StorefrontError::Overloaded(ingest.retry_after),
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, "events not spooled");
            return Err(reject(
                "spool_error",
                count,
                StorefrontError::Overloaded(ingest.retry_after),
            ));
        }
    }
    ingest.accepted.increment(count as u64);
    Ok(accepted(batch.then_some(count), received_at))
}

/// The 202: the body of [`EventsAccepted`], written directly. Every part is known ASCII with
/// nothing to escape, and serde_json's general writer (and then chrono's RFC 3339 formatter and
/// `format!`) cost more than the rest of the response.
fn accepted(batch_count: Option<usize>, received_at: DateTime<Utc>) -> Response {
    let mut body = String::with_capacity(96);
    body.push_str(match batch_count {
        None => r#"{"success":true,"message":"Event recorded","#,
        Some(_) => r#"{"success":true,"message":"Events recorded","#,
    });
    if let Some(count) = batch_count {
        body.push_str(r#""count":"#);
        body.push_str(itoa::Buffer::new().format(count));
        body.push(',');
    }
    body.push_str(r#""timestamp":""#);
    push_rfc3339_millis(&mut body, received_at);
    body.push_str(r#""}"#);
    // Built directly: `(status, headers, String)` would set a text/plain type first.
    let mut response = Response::new(Body::from(body));
    *response.status_mut() = StatusCode::ACCEPTED;
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `received_at` as `to_rfc3339_opts(SecondsFormat::Millis, true)` writes it
/// (`2025-11-24T16:00:00.123Z`), without the formatter's machinery: this is on every 202.
fn push_rfc3339_millis(out: &mut String, at: DateTime<Utc>) {
    let year = at.year();
    if !(0..=9999).contains(&year) {
        // Outside four digits chrono writes a sign and more digits; never the case for `now`.
        out.push_str(&at.to_rfc3339_opts(SecondsFormat::Millis, true));
        return;
    }
    // A leap second is a nanosecond count past 999,999,999, written as second 60.
    let nanos = at.nanosecond();
    let mut text = *b"0000-00-00T00:00:00.000Z";
    for (end, width, value) in [
        (4, 4, year as u32),
        (7, 2, at.month()),
        (10, 2, at.day()),
        (13, 2, at.hour()),
        (16, 2, at.minute()),
        (19, 2, at.second() + nanos / 1_000_000_000),
        (23, 3, nanos % 1_000_000_000 / 1_000_000),
    ] {
        let mut rest = value;
        for digit in text[end - width..end].iter_mut().rev() {
            *digit = b'0' + (rest % 10) as u8;
            rest /= 10;
        }
    }
    out.push_str(std::str::from_utf8(&text).expect("ASCII digits and separators"));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The timestamp written by hand is chrono's RFC 3339 with milliseconds, for any instant
    /// (leap seconds and years outside four digits included).
    #[test]
    fn the_timestamp_is_chronos_rfc3339_with_millis() {
        use proptest::prelude::*;
        let check = |at: DateTime<Utc>| {
            let mut ours = String::new();
            push_rfc3339_millis(&mut ours, at);
            assert_eq!(ours, at.to_rfc3339_opts(SecondsFormat::Millis, true));
        };
        let leap = chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
            .and_then(|d| d.and_hms_nano_opt(23, 59, 59, 1_500_000_000))
            .unwrap()
            .and_utc();
        for at in [
            DateTime::<Utc>::MIN_UTC,
            DateTime::<Utc>::MAX_UTC,
            DateTime::UNIX_EPOCH,
            leap,
        ] {
            check(at);
        }
        proptest!(|(millis in -62_135_596_800_000i64..253_402_300_800_000, nanos in 0u32..1_000_000)| {
            let at = DateTime::from_timestamp_millis(millis).unwrap()
                + chrono::Duration::nanoseconds(nanos.into());
            check(at);
        });
    }

    /// The body written by hand is the documented schema's, serialized.
    #[test]
    fn the_accepted_body_is_the_schemas() {
        let at = DateTime::from_timestamp_millis(1_764_000_000_123).unwrap();
        for count in [None, Some(3)] {
            let response = accepted(count, at);
            assert_eq!(response.status(), StatusCode::ACCEPTED);
            assert_eq!(response.headers()[CONTENT_TYPE], "application/json");
            let body =
                futures::executor::block_on(axum::body::to_bytes(response.into_body(), 1024))
                    .unwrap();
            let expected = serde_json::to_vec(&EventsAccepted {
                success: true,
                message: if count.is_some() {
                    "Events recorded"
                } else {
                    "Event recorded"
                },
                count,
                timestamp: "2025-11-24T16:00:00.123Z".to_string(),
            })
            .unwrap();
            assert_eq!(
                String::from_utf8_lossy(&body),
                String::from_utf8_lossy(&expected)
            );
        }
    }
}
