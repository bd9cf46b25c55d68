//! `POST /webhooks/shopify`: the platform's webhook deliveries. The body's HMAC is checked
//! first (the app's secret, the one that signs the app proxy); then the delivery is recorded in
//! Postgres under its id and answered, and the worker (`super::work`) does what it asks. The
//! answer never waits for the work, so it comes well within the platform's 5 seconds.

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
use crate::error::{ApiError, ErrorBody};
use crate::extract::read_body;
use crate::storefront::signature::SignatureError;

/// A product with every variant and image the platform sends stays far below this.
pub const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;
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
        let triggered_at = match header(headers, "x-shopify-triggered-at") {
            None | Some("") => Utc::now(),
            Some(raw) => DateTime::parse_from_rfc3339(raw)
                .map(|t| t.with_timezone(&Utc))
                .map_err(|e| {
                    invalid(
                        "X-Shopify-Triggered-At",
                        format!("'{raw}' is not an RFC 3339 time: {e}"),
                    )
                })?,
        };
        Ok(Delivery {
            topic,
            shop,
            webhook_id: webhook_id.to_string(),
            triggered_at,
        })
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

/// Receive a platform webhook
///
/// Signed by the platform (`X-Shopify-Hmac-Sha256`: base64 HMAC-SHA256 of the raw body under the
/// app's secret). Recorded durably, then answered; the work follows. A delivery id seen before is
/// answered 200 and does nothing.
#[utoipa::path(
    post, path = "/webhooks/shopify", tag = "platform",
    params(
        ("X-Shopify-Topic" = String, Header, description = "app/uninstalled, products/create, products/update, products/delete, customers/data_request, customers/redact or shop/redact"),
        ("X-Shopify-Shop-Domain" = String, Header, description = "The shop's myshopify.com domain"),
        ("X-Shopify-Webhook-Id" = String, Header, description = "The delivery's id"),
        ("X-Shopify-Hmac-Sha256" = String, Header, description = "Base64 HMAC-SHA256 of the body"),
        ("X-Shopify-Triggered-At" = Option<String>, Header, description = "When the platform sent it (RFC 3339)"),
    ),
    request_body(content = serde_json::Value, content_type = "application/json"),
    responses(
        (status = 200, description = "Recorded (or seen before)", body = WebhookReceived),
        (status = 400, description = "INVALID_PARAMETER (a header) or INVALID_BODY", body = ErrorBody),
        (status = 401, description = "INVALID_SIGNATURE: the HMAC is missing or does not match the body", body = ErrorBody),
        (status = 408, description = "REQUEST_TIMEOUT: the body arrived too slowly", body = ErrorBody),
        (status = 413, description = "PAYLOAD_TOO_LARGE", body = ErrorBody),
    )
)]
pub async fn receive(
    State(state): State<AppState>,
    request: Request,
) -> Result<Json<WebhookReceived>, ApiError> {
    let (parts, body) = request.into_parts();
    let body = read_body(body, MAX_BODY_BYTES).await?;
    check_hmac(&state, &parts.headers, &body).inspect_err(|_| {
        metrics::counter!("webhooks_refused_total", "reason" => "signature").increment(1);
    })?;
    let delivery = Delivery::parse(&parts.headers)?;
    let topic = delivery.topic.as_str();
    let work = topics::parse(delivery.topic, &delivery.shop, &body, delivery.triggered_at)
        .map_err(|invalid| ApiError::InvalidBody(invalid.0))?;
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
