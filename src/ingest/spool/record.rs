//! The on-disk record: `[len: u32 LE][crc32: u32 LE][payload]`, where the payload is one request's
//! events.
//!
//! Payloads start with a format byte. [`FORMAT_POSTCARD_V2`] (compact binary, what this version
//! writes) is cheap to encode on the request path and cheap to decode in the shipper. The formats
//! earlier versions wrote are still read, so that an upgrade never strands a spool:
//! [`FORMAT_POSTCARD_V1`] (the same binary encoding of an event without its later fields) and
//! payloads that start with `[` (JSON arrays of those events).
//!
//! Segments are pre-allocated with zeros (see `segment`), so the data ends at the first header
//! whose length is zero: no record is ever empty.

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use super::super::event::{Attribution, EventType, SpoolEvent};

pub const HEADER_BYTES: usize = 8;
/// A record larger than this cannot come from a valid request (64 KiB body cap); a length field
/// above it is a torn or corrupt header.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;
/// The payload is `postcard`-encoded `Vec<SpoolEvent>`.
const FORMAT_POSTCARD_V2: u8 = 2;
/// The payload is `postcard`-encoded `Vec<SpoolEventV1>` (written by earlier versions).
const FORMAT_POSTCARD_V1: u8 = 1;
/// The payload is a JSON array of `SpoolEventV1` (written by earlier versions).
const FORMAT_JSON: u8 = b'[';

/// One request's events as a whole record, header included.
pub fn encode_events(events: &[SpoolEvent]) -> Result<Vec<u8>, postcard::Error> {
    let mut record = Vec::with_capacity(HEADER_BYTES + 1 + 160 * events.len());
    record.extend_from_slice(&[0; HEADER_BYTES]);
    record.push(FORMAT_POSTCARD_V2);
    let mut record = postcard::to_extend(events, record)?;
    seal_header(&mut record);
    Ok(record)
}

/// A record around an arbitrary payload (dead letters keep the records they set aside as such).
pub fn encode_record(payload: &[u8]) -> Vec<u8> {
    let mut record = Vec::with_capacity(HEADER_BYTES + payload.len());
    record.extend_from_slice(&[0; HEADER_BYTES]);
    record.extend_from_slice(payload);
    seal_header(&mut record);
    record
}

fn seal_header(record: &mut [u8]) {
    let (header, payload) = record.split_at_mut(HEADER_BYTES);
    header[..4].copy_from_slice(&(payload.len() as u32).to_le_bytes());
    header[4..].copy_from_slice(&crc32fast::hash(payload).to_le_bytes());
}

pub fn decode_events(payload: &[u8]) -> Option<Vec<SpoolEvent>> {
    let upgrade = |events: Vec<SpoolEventV1>| events.into_iter().map(SpoolEvent::from).collect();
    match *payload.first()? {
        FORMAT_POSTCARD_V2 => postcard::from_bytes(&payload[1..]).ok(),
        FORMAT_POSTCARD_V1 => postcard::from_bytes(&payload[1..]).ok().map(upgrade),
        FORMAT_JSON => serde_json::from_slice(payload).ok().map(upgrade),
        _ => None,
    }
}

/// An event as the formats before [`FORMAT_POSTCARD_V2`] kept it. Field order is the encoding:
/// never change it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SpoolEventV1 {
    event_id: Uuid,
    shop: String,
    local_date: NaiveDate,
    event_time: i64,
    received_at: i64,
    timestamp_replaced: bool,
    event_type: EventType,
    attribution: Option<Attribution>,
    video_id: String,
    widget_id: String,
    session_id: String,
    customer_id: String,
    product_id: String,
    order_id: String,
    revenue_e4: i64,
    currency: String,
}

impl From<SpoolEventV1> for SpoolEvent {
    fn from(e: SpoolEventV1) -> SpoolEvent {
        SpoolEvent {
            event_id: e.event_id,
            // Not recorded then: treated as the client's, so a repeat is still counted once.
            client_event_id: true,
            shop: e.shop,
            local_date: e.local_date,
            event_time: e.event_time,
            received_at: e.received_at,
            timestamp_replaced: e.timestamp_replaced,
            event_type: e.event_type,
            attribution: e.attribution,
            video_id: e.video_id,
            widget_id: e.widget_id,
            session_id: e.session_id,
            customer_id: e.customer_id,
            product_id: e.product_id,
            order_id: e.order_id,
            revenue_e4: e.revenue_e4,
            currency: e.currency,
            product_ids: Vec::new(),
        }
    }
}

/// The whole records at the start of `data`, and where they end. Scanning stops at the end of the
/// written data (a zero length: the segment's pre-allocated tail) or at the first record whose
/// length or checksum does not hold (a torn write, never acknowledged).
pub fn scan(data: &[u8]) -> (Vec<&[u8]>, usize) {
    let mut payloads = Vec::new();
    let mut offset = 0;
    while let Some(header) = data.get(offset..offset + HEADER_BYTES) {
        let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
        let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
        if len == 0 || len > MAX_RECORD_BYTES {
            break;
        }
        let Some(payload) = data.get(offset + HEADER_BYTES..offset + HEADER_BYTES + len) else {
            break;
        };
        if crc32fast::hash(payload) != crc {
            break;
        }
        payloads.push(payload);
        offset += HEADER_BYTES + len;
    }
    (payloads, offset)
}

/// Bytes after the records that are not the pre-allocated zeros: what a torn write left.
pub fn torn_bytes(data: &[u8], end: usize) -> usize {
    let tail = &data[end..];
    match tail.iter().rposition(|&b| b != 0) {
        Some(last) => last + 1,
        None => 0,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub(crate) fn event(n: i64) -> SpoolEvent {
        SpoolEvent {
            event_id: Uuid::now_v7(),
            client_event_id: true,
            shop: "s.myshopify.com".into(),
            local_date: chrono::NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
            event_time: n,
            received_at: n,
            timestamp_replaced: false,
            event_type: EventType::View,
            attribution: None,
            video_id: "v".into(),
            widget_id: String::new(),
            session_id: String::new(),
            customer_id: String::new(),
            product_id: String::new(),
            order_id: String::new(),
            revenue_e4: 12_345,
            currency: "EUR".into(),
            product_ids: vec!["gid://shopify/Product/1".into()],
        }
    }

    fn v1(e: &SpoolEvent) -> SpoolEventV1 {
        SpoolEventV1 {
            event_id: e.event_id,
            shop: e.shop.clone(),
            local_date: e.local_date,
            event_time: e.event_time,
            received_at: e.received_at,
            timestamp_replaced: e.timestamp_replaced,
            event_type: e.event_type,
            attribution: e.attribution,
            video_id: e.video_id.clone(),
            widget_id: e.widget_id.clone(),
            session_id: e.session_id.clone(),
            customer_id: e.customer_id.clone(),
            product_id: e.product_id.clone(),
            order_id: e.order_id.clone(),
            revenue_e4: e.revenue_e4,
            currency: e.currency.clone(),
        }
    }

    #[test]
    fn events_survive_the_round_trip() {
        let events = vec![event(1), event(2)];
        let record = encode_events(&events).unwrap();
        let (payloads, end) = scan(&record);
        assert_eq!(end, record.len());
        assert_eq!(decode_events(payloads[0]).unwrap(), events);

        assert_eq!(decode_events(b"{\"not\": \"events\"}"), None);
        assert_eq!(decode_events(&[FORMAT_POSTCARD_V2, 0xff, 0xff]), None);
    }

    /// A spool written by an earlier version ships after an upgrade: its events read as they
    /// were, their ids treated as the client's, with no products.
    #[test]
    fn records_of_earlier_versions_still_decode() {
        let events = [event(1), event(2)];
        let old: Vec<SpoolEventV1> = events.iter().map(v1).collect();
        let expected: Vec<SpoolEvent> = events
            .iter()
            .map(|e| SpoolEvent {
                client_event_id: true,
                product_ids: Vec::new(),
                ..e.clone()
            })
            .collect();

        let mut postcard_v1 = vec![FORMAT_POSTCARD_V1];
        postcard_v1.extend(postcard::to_stdvec(&old).unwrap());
        let record = encode_record(&postcard_v1);
        assert_eq!(decode_events(scan(&record).0[0]).unwrap(), expected);

        let json = encode_record(&serde_json::to_vec(&old).unwrap());
        assert_eq!(decode_events(scan(&json).0[0]).unwrap(), expected);
    }

    #[test]
    fn the_data_ends_at_the_pre_allocated_zeros() {
        let first = encode_events(&[event(1)]).unwrap();
        let mut data = first.clone();
        data.extend_from_slice(&[0; 4096]);
        let (payloads, end) = scan(&data);
        assert_eq!((payloads.len(), end), (1, first.len()));
        assert_eq!(torn_bytes(&data, end), 0);
    }

    #[test]
    fn every_tear_of_the_last_record_leaves_the_records_before_it() {
        let first = encode_events(&[event(1), event(2)]).unwrap();
        let second = encode_events(&[event(3)]).unwrap();
        for cut in 1..second.len() {
            // A torn write, followed by the segment's zeros or by nothing.
            for padding in [0, 4096] {
                let mut data = [&first[..], &second[..cut]].concat();
                data.resize(data.len() + padding, 0);
                let (payloads, end) = scan(&data);
                assert_eq!(payloads.len(), 1, "cut at {cut}");
                assert_eq!(end, first.len());
                let torn = torn_bytes(&data, end);
                assert!(torn <= cut, "cut at {cut}: {torn} torn bytes");
            }
        }
        // A flipped bit in the payload fails the checksum.
        let mut corrupt = [first.clone(), second.clone()].concat();
        let last = corrupt.len() - 2;
        corrupt[last] ^= 0x01;
        assert_eq!(scan(&corrupt).0.len(), 1);
    }
}
