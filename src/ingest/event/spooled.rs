//! The record the spool keeps of an event: validated, with the service's own fields (its id, the
//! receive time, the shop-local date) added.

use chrono::{DateTime, NaiveDate, Utc};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::{
    Attribution, Country, Device, EventType, Group, IncomingEvent, Placement, Revenue, Source, Text,
};
use crate::catalog::domain::{ShopDomain, Timezone};

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
    pub placement: Option<Placement>,
    /// The service's reading of the request, never the body's.
    pub device: Option<Device>,
    pub country: Option<Country>,
    pub source: Option<Source>,
    /// The browser's group in the shop's holdout, when it was assigned one. (Placed before the
    /// watching figures so that a record still ends with `max_percent`, which the spool's tests
    /// of torn writes set to a byte that is not zero.)
    pub group: Option<Group>,
    /// `watch` only (0 otherwise): milliseconds played, at most three times the duration.
    pub watched_ms: u32,
    /// `watch` only (0 otherwise): the furthest point reached, 0 to 100.
    pub max_percent: u8,
}

impl SpoolEvent {
    /// Holds a watch to three times its video's duration (`duration`, seconds, when the
    /// catalog knows it): a player left looping, or a client that miscounts, cannot make one
    /// opening worth hours.
    pub fn cap_watched(&mut self, duration: Option<f64>) {
        let Some(duration) = duration.filter(|d| d.is_finite() && *d > 0.0) else {
            return;
        };
        let cap = (duration * 3_000.0).ceil().min(f64::from(u32::MAX)) as u32;
        self.watched_ms = self.watched_ms.min(cap);
    }
}

/// The accepted window for client timestamps; outside it the receive time is used.
#[derive(Debug, Clone, Copy)]
pub struct TimeWindow {
    pub max_future: chrono::Duration,
    pub max_past: chrono::Duration,
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
            placement: self.placement,
            // The endpoint reads it from the request.
            device: None,
            country: self.country,
            source: self.source,
            watched_ms: self.watched_ms.unwrap_or(0),
            max_percent: self.max_percent.unwrap_or(0),
            group: self.group,
        }
    }
}
