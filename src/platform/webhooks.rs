//! `POST /webhooks/shopify`: the platform's webhook deliveries. The body is read within a
//! process-wide memory budget (its sender is known only from its HMAC, so until then it is
//! anyone's), and its HMAC is checked first (the app's secret, the one that signs the app proxy);
//! then the delivery's time is checked against the replay window, its body parsed into the work
//! its topic asks for (`super::topics`), and the delivery recorded in Postgres under its id and
//! answered; the worker (`super::work`) does what it asks. The answer never waits for the work,
//! so it comes well within the platform's 5 seconds.

use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::HeaderMap;
use axum::Json;
use base64::Engine;
use chrono::{DateTime, Utc};
use serde::Serialize;
use subtle::ConstantTimeEq;
use utoipa::ToSchema;

use super::topics::{self, Topic};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::SignatureError;
use crate::error::{ApiError, BodyLimits, ErrorBody};
use crate::extract::read_body_within;

use crate::config::{
    WEBHOOK_MAX_BODY_BYTES as MAX_BODY_BYTES, WEBHOOK_MAX_FUTURE_SKEW as MAX_FUTURE_SKEW,
};
/// Delivery ids are UUIDs; anything much longer is not one.
const MAX_WEBHOOK_ID_CHARS: usize = 255;

#[derive(Serialize, ToSchema)]
pub struct WebhookReceived {
    success: bool,
}

/// The headers the platform sends with every delivery, parsed.
struct Delivery {
    topic: Topic,
    shop: ShopDomain,
    webhook_id: String,
    triggered_at: DateTime<Utc>,
}

fn header<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

fn missing(name: &str) -> ApiError {
    ApiError::InvalidParameter {
        name: name.to_string(),
        message: "missing header".to_string(),
    }
}

impl Delivery {
    fn parse(headers: &HeaderMap) -> Result<Delivery, ApiError> {
        let invalid = |name: &str, message: String| ApiError::InvalidParameter {
            name: name.to_string(),
            message,
        };
        let topic_raw = header(headers, "x-shopify-topic").ok_or(missing("X-Shopify-Topic"))?;
        let topic = Topic::parse(topic_raw).ok_or_else(|| {
            let known: Vec<&str> = Topic::ALL.iter().map(|t| t.as_str()).collect();
            let message = format!(
                "'{topic_raw}' is not a topic this app takes ({})",
                known.join(", ")
            );
            invalid("X-Shopify-Topic", message)
        })?;
        let shop =
            header(headers, "x-shopify-shop-domain").ok_or(missing("X-Shopify-Shop-Domain"))?;
        let shop =
            ShopDomain::parse(shop).map_err(|e| invalid("X-Shopify-Shop-Domain", e.to_string()))?;
        let webhook_id = header(headers, "x-shopify-webhook-id")
            .filter(|id| !id.is_empty())
            .ok_or(missing("X-Shopify-Webhook-Id"))?;
        if webhook_id.chars().count() > MAX_WEBHOOK_ID_CHARS
            || webhook_id.chars().any(char::is_control)
        {
            let message = format!(
                "at most {MAX_WEBHOOK_ID_CHARS} characters, none of them control characters"
            );
            return Err(invalid("X-Shopify-Webhook-Id", message));
        }
        // Required: the platform documents it on every delivery, its retries keep the first
        // delivery's time in it, and it asks apps to judge staleness by it. (Its own libraries
        // read it as optional, and deliveries have come without other headers for a while, but
        // not without this one.) Taken as optional, the replay window would be skipped by
        // leaving it out.
        let triggered_raw = header(headers, "x-shopify-triggered-at")
            .filter(|raw| !raw.is_empty())
            .ok_or(missing("X-Shopify-Triggered-At"))?;
        let triggered_at = DateTime::parse_from_rfc3339(triggered_raw)
            .map(|t| t.with_timezone(&Utc))
            .map_err(|e| {
                invalid(
                    "X-Shopify-Triggered-At",
                    format!("'{triggered_raw}' is not an RFC 3339 time: {e}"),
                )
            })?;
        Ok(Delivery {
            topic,
            shop,
            webhook_id: webhook_id.to_string(),
            triggered_at,
        })
    }

    /// That the delivery was sent within `window` before `now` (and not later than the clock
    /// skew after it). The header is not covered by the HMAC, so the window cannot stop a replay
    /// by a sender who rewrites it; it bounds how long a genuine delivery stays good as sent, and
    /// within it, the recorded ids (kept longer: `super::work::prune`) recognise every repeat.
    fn check_fresh(&self, now: DateTime<Utc>, window: Duration) -> Result<(), ApiError> {
        let sent = self.triggered_at.to_rfc3339();
        let age = now.signed_duration_since(self.triggered_at);
        let window_delta = chrono::TimeDelta::from_std(window).unwrap_or(chrono::TimeDelta::MAX);
        let skew = chrono::TimeDelta::from_std(MAX_FUTURE_SKEW).unwrap_or(chrono::TimeDelta::MAX);
        if age > window_delta {
            return Err(ApiError::StaleDelivery(format!(
                "X-Shopify-Triggered-At {sent} is more than {} seconds ago (the replay window)",
                window.as_secs()
            )));
        }
        if -age > skew {
            return Err(ApiError::StaleDelivery(format!(
                "X-Shopify-Triggered-At {sent} is more than {} seconds ahead of this service's \
                 clock",
                MAX_FUTURE_SKEW.as_secs()
            )));
        }
        Ok(())
    }
}

/// Whether `X-Shopify-Hmac-Sha256` is the base64 HMAC-SHA256 of `body` under the app's secret,
/// compared in constant time.
fn check_hmac(state: &AppState, headers: &HeaderMap, body: &[u8]) -> Result<(), ApiError> {
    let sent = header(headers, "x-shopify-hmac-sha256").ok_or(ApiError::InvalidSignature(
        SignatureError::MissingHmacHeader,
    ))?;
    let sent = base64::engine::general_purpose::STANDARD
        .decode(sent)
        .map_err(|_| ApiError::InvalidSignature(SignatureError::BodyMismatch))?;
    let expected = state.proxy_secret.mac_bytes(body);
    if bool::from(expected.as_slice().ct_eq(&sent)) {
        Ok(())
    } else {
        Err(ApiError::InvalidSignature(SignatureError::BodyMismatch))
    }
}

fn refused(reason: &'static str) -> impl FnOnce(&ApiError) {
    move |_| metrics::counter!("webhooks_refused_total", "reason" => reason).increment(1)
}

/// Receive a platform webhook
///
/// Signed by the platform (`X-Shopify-Hmac-Sha256`: base64 HMAC-SHA256 of the raw body under the
/// app's secret). The body is the topic's JSON payload as the platform documents it, and where it
/// names its shop (`myshopify_domain`, `shop_domain`), that is the shop of
/// `X-Shopify-Shop-Domain`. A delivery sent longer ago than the replay window (6 hours by
/// default) is refused. Recorded durably, then answered; the work follows. A delivery id seen
/// before is answered 200 and does nothing.
#[utoipa::path(
    post, path = "/webhooks/shopify", tag = "platform",
    params(
        ("X-Shopify-Topic" = String, Header, description = "app/uninstalled, products/create, products/update, products/delete, customers/data_request, customers/redact or shop/redact"),
        ("X-Shopify-Shop-Domain" = String, Header, description = "The shop's myshopify.com domain"),
        ("X-Shopify-Webhook-Id" = String, Header, description = "The delivery's id"),
        ("X-Shopify-Hmac-Sha256" = String, Header, description = "Base64 HMAC-SHA256 of the body"),
        ("X-Shopify-Triggered-At" = String, Header, description = "When the platform first sent it (RFC 3339), within the replay window"),
    ),
    request_body(content = serde_json::Value, content_type = "application/json"),
    responses(
        (status = 200, description = "Recorded (or seen before)", body = WebhookReceived),
        (status = 400, description = "INVALID_PARAMETER (a header), STALE_DELIVERY (sent before the replay window, or in the future) or INVALID_BODY (not the topic's JSON payload, or naming another shop)", body = ErrorBody),
        (status = 401, description = "INVALID_SIGNATURE: the HMAC is missing or does not match the body", body = ErrorBody),
        BodyLimits,
        (status = 503, description = "SERVICE_BUSY: the memory for unchecked webhook bodies is in use; retry after `Retry-After` seconds", body = ErrorBody,
         headers(("Retry-After" = u64))),
    )
)]
pub async fn receive(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<WebhookReceived>, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_body_within(body, MAX_BODY_BYTES, &state.webhook_bodies)
        .await
        .inspect_err(|e| {
            if matches!(e, ApiError::Busy(_)) {
                metrics::counter!("webhooks_refused_total", "reason" => "busy").increment(1);
            }
        })?;
    check_hmac(&state, &parts.headers, &body.bytes).inspect_err(refused("signature"))?;
    let delivery = Delivery::parse(&parts.headers)?;
    delivery
        .check_fresh(Utc::now(), state.config.webhooks.replay_window)
        .inspect_err(refused("stale"))?;
    let topic = delivery.topic.as_str();
    let work = topics::parse(
        delivery.topic,
        &delivery.shop,
        &body.bytes,
        delivery.triggered_at,
    )
    .map_err(|invalid| ApiError::InvalidBody(invalid.0))
    .inspect_err(refused("body"))?;
    let recorded = super::work::record(
        &state.db,
        &delivery.webhook_id,
        &delivery.shop,
        delivery.topic,
        &work,
    )
    .await
    .map_err(|e| ApiError::Internal(e.into()))?;
    if recorded {
        metrics::counter!("webhooks_received_total", "topic" => topic).increment(1);
        state.webhook_work.notify_one();
    } else {
        metrics::counter!("webhooks_repeated_total", "topic" => topic).increment(1);
    }
    Ok(Json(WebhookReceived { success: true }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sent_at(triggered_at: &str) -> Delivery {
        Delivery {
            topic: Topic::ProductsUpdate,
            shop: ShopDomain::parse("a-shop.myshopify.com").unwrap(),
            webhook_id: "id".into(),
            triggered_at: triggered_at.parse().unwrap(),
        }
    }

    #[test]
    fn a_delivery_is_fresh_from_the_skew_ahead_to_the_window_behind() {
        let now: DateTime<Utc> = "2026-11-28T12:00:00Z".parse().unwrap();
        let window = Duration::from_secs(6 * 3600);
        for fresh in [
            "2026-11-28T06:00:00Z",
            "2026-11-28T08:00:00Z",
            "2026-11-28T12:05:00Z",
        ] {
            assert!(sent_at(fresh).check_fresh(now, window).is_ok(), "{fresh}");
        }
        for (stale, says) in [
            (
                "2026-11-28T05:59:59Z",
                "is more than 21600 seconds ago (the replay window)",
            ),
            ("2026-11-28T12:05:01Z", "is more than 300 seconds ahead"),
        ] {
            let error = sent_at(stale).check_fresh(now, window).unwrap_err();
            assert!(matches!(error, ApiError::StaleDelivery(_)), "{error:?}");
            assert!(error.to_string().contains(says), "{error}");
        }
    }
}
