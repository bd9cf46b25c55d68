//! Rows of the service's ClickHouse tables as the client writes them.

use clickhouse::Row;
use serde::Serialize;
use uuid::Uuid;

use crate::ingest::event::{Attribution, Device, Group, Placement, Source, SpoolEvent};

/// One row of `events`, in the column order of `clickhouse/0001_events.sql` and the columns
/// added after (`0006`, `0016`, `0025`).
#[derive(Row, Serialize)]
pub struct EventRow<'a> {
    #[serde(with = "clickhouse::serde::uuid")]
    event_id: Uuid,
    #[serde(with = "clickhouse::serde::uuid")]
    batch_id: Uuid,
    shop_domain: &'a str,
    /// Days since 1970-01-01.
    local_date: u16,
    event_time: u32,
    received_at: u32,
    timestamp_replaced: u8,
    event_type: i8,
    attribution: i8,
    video_id: &'a str,
    widget_id: &'a str,
    session_id: &'a str,
    customer_id: &'a str,
    product_id: &'a str,
    order_id: &'a str,
    revenue_e4: i64,
    currency: &'a str,
    product_ids: &'a [String],
    placement: i8,
    device: i8,
    country: &'a str,
    source: i8,
    watched_ms: u32,
    max_percent: u8,
    lift_group: i8,
}

impl<'a> EventRow<'a> {
    pub fn new(batch_id: Uuid, e: &'a SpoolEvent) -> Self {
        let epoch = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date");
        EventRow {
            event_id: e.event_id,
            batch_id,
            shop_domain: &e.shop,
            local_date: (e.local_date - epoch)
                .num_days()
                .clamp(0, i64::from(u16::MAX)) as u16,
            event_time: e.event_time.clamp(0, i64::from(u32::MAX)) as u32,
            received_at: e.received_at.clamp(0, i64::from(u32::MAX)) as u32,
            timestamp_replaced: u8::from(e.timestamp_replaced),
            event_type: e.event_type.code(),
            attribution: Attribution::code(e.attribution),
            video_id: &e.video_id,
            widget_id: &e.widget_id,
            session_id: &e.session_id,
            customer_id: &e.customer_id,
            product_id: &e.product_id,
            order_id: &e.order_id,
            revenue_e4: e.revenue_e4,
            currency: &e.currency,
            product_ids: &e.product_ids,
            placement: Placement::code(e.placement),
            device: Device::code(e.device),
            country: e.country.map_or("", |c| c.as_str()),
            source: Source::code(e.source),
            watched_ms: e.watched_ms,
            max_percent: e.max_percent,
            lift_group: Group::code(e.group),
        }
    }
}
