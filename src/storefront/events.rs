//! `POST /apps/videoapp_sub/analytics`: shopper events, acknowledged once they are durable in
//! the local spool, from which they are shipped to ClickHouse.

use axum::extract::{Request, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::StatusCode;
use axum::Json;
use chrono::{SecondsFormat, Utc};
use serde::Serialize;
use utoipa::ToSchema;

use super::request::{ProxyParams, Signed};
use super::signature::CustomerId;
use super::StorefrontErrors;
use crate::app::AppState;
use crate::error::{ApiError, BodyLimits, ErrorBody};
use crate::extract::read_body;
use crate::ingest::event::{self, Device, EventBatch, EventType, IncomingEvent, SpoolEvent};
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

fn reject(reason: &'static str, events: usize, error: ApiError) -> ApiError {
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
        (status = 400, description = "INVALID_BODY or INVALID_EVENT; the message names the field. \
                                      INVALID_PARAMETER: `logged_in_customer_id` is not a customer id", body = ErrorBody),
        StorefrontErrors,
        BodyLimits,
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE", body = ErrorBody),
        (status = 503, description = "SPOOL_FULL: load is shed; or SERVICE_UNAVAILABLE: the shop's catalog cannot be read right now. Retry after `Retry-After` seconds", body = ErrorBody,
         headers(("Retry-After" = u64))),
    )
)]
pub async fn record_events(
    State(state): State<AppState>,
    Signed { proxy, .. }: Signed,
    request: Request,
) -> Result<(StatusCode, Json<EventsAccepted>), ApiError> {
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
            ApiError::UnsupportedMediaType("application/json or text/plain"),
        ));
    }
    let bytes = read_body(body, MAX_BODY_BYTES).await.map_err(|e| {
        let reason = match e {
            ApiError::RequestTimeout => "timeout",
            _ => "too_large",
        };
        reject(reason, 1, e)
    })?;
    let (events, batch) = event::parse_body(&bytes).map_err(|invalid| {
        let error = if invalid.field == "body" || invalid.field == "events" {
            ApiError::InvalidBody(format!("{}: {}", invalid.field, invalid.message))
        } else {
            ApiError::InvalidEvent {
                field: invalid.field,
                message: invalid.message,
            }
        };
        reject("invalid", 1, error)
    })?;
    let count = events.len();
    let header = |name: &str| parts.headers.get(name).and_then(|v| v.to_str().ok());
    let device = Device::of_request(header("user-agent"), header("sec-ch-ua-mobile"));
    let snapshot = state
        .catalog
        .get(&proxy.shop)
        .await?
        .ok_or_else(|| reject("shop_not_found", count, ApiError::ShopNotFound))?;

    let received_at = Utc::now();
    let ingest = &state.ingest;
    // Identity comes from the platform alone: its signed customer id, or none (a body's
    // `customerId` binds nothing).
    let customer = proxy.logged_in_customer_id.as_ref().map(CustomerId::as_str);
    let records: Vec<SpoolEvent> = events
        .into_iter()
        .map(|e: IncomingEvent| {
            let mut record =
                e.into_spool_event(&proxy.shop, snapshot.timezone, received_at, ingest.window);
            if let Some(customer) = customer {
                record.customer_id = customer.to_string();
            }
            record.device = device;
            if record.event_type == EventType::Watch {
                let video = record.video_id.parse().ok();
                let duration = video.and_then(|id| snapshot.video(&id)).map(|v| v.duration);
                record.cap_watched(duration);
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
                ApiError::SpoolFull(ingest.retry_after),
            ))
        }
        Err(e) => {
            tracing::error!(error = %e, "events not spooled");
            return Err(reject(
                "spool_error",
                count,
                ApiError::SpoolFull(ingest.retry_after),
            ));
        }
    }
    ingest.accepted.increment(count as u64);
    let accepted = EventsAccepted {
        success: true,
        message: if batch {
            "Events recorded"
        } else {
            "Event recorded"
        },
        count: batch.then_some(count),
        timestamp: received_at.to_rfc3339_opts(SecondsFormat::Millis, true),
    };
    Ok((StatusCode::ACCEPTED, Json(accepted)))
}
