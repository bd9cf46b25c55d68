//! The on-disk record: `[len: u32 LE][crc32: u32 LE][payload]`, where the payload is one request's
//! events.
//!
//! Every payload starts with its format version, so every segment says which release can read
//! it. [`FORMAT_VERSION`] is what this release writes and reads: `postcard`-encoded
//! `Vec<SpoolEvent>`, cheap to encode on the request path and to decode in the shipper. A payload
//! of another version was written by another release (a newer one, before a rollback): it is
//! neither read nor set aside, it stays in the spool for a release that knows it
//! ([`Payload::UnknownFormat`]). `tests/fixtures/spool/` holds a segment written by this format,
//! which every later release must still ship.
//!
//! Segments are pre-allocated with zeros (see `segment`), so the data ends at the first header
//! whose length is zero: no record is ever empty.

use super::super::event::SpoolEvent;

pub const HEADER_BYTES: usize = 8;
/// A record larger than this cannot come from a valid request (64 KiB body cap); a length field
/// above it is a torn or corrupt header.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;
/// The payload format this release writes. `SpoolEvent`'s field order is the encoding: a change
/// to it is a new version, and the reader of this one stays.
pub const FORMAT_VERSION: u8 = 2;

/// One request's events as a whole record, header included.
pub fn encode_events(events: &[SpoolEvent]) -> Result<Vec<u8>, postcard::Error> {
    let mut record = Vec::with_capacity(HEADER_BYTES + 1 + 160 * events.len());
    record.extend_from_slice(&[0; HEADER_BYTES]);
    record.push(FORMAT_VERSION);
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

/// What a record's payload turned out to be.
#[derive(Debug, PartialEq)]
pub enum Payload {
    Events(Vec<SpoolEvent>),
    /// This release's format, but not events: damaged after its checksum was taken, or written
    /// by a bug. Set aside as a dead letter.
    Undecodable,
    /// Written by a release that knows a format this one does not.
    UnknownFormat(u8),
}

pub fn decode(payload: &[u8]) -> Payload {
    match payload.split_first() {
        Some((&FORMAT_VERSION, events)) => match postcard::from_bytes(events) {
            Ok(events) => Payload::Events(events),
            Err(_) => Payload::Undecodable,
        },
        Some((&version, _)) => Payload::UnknownFormat(version),
        None => Payload::Undecodable,
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
    use crate::ingest::event::{Attribution, EventType};
    use chrono::NaiveDate;
    use uuid::Uuid;

    pub(crate) fn event(n: i64) -> SpoolEvent {
        SpoolEvent {
            event_id: Uuid::now_v7(),
            client_event_id: true,
            shop: "s.myshopify.com".into(),
            local_date: NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
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

    #[test]
    fn events_survive_the_round_trip() {
        let events = vec![event(1), event(2)];
        let record = encode_events(&events).unwrap();
        let (payloads, end) = scan(&record);
        assert_eq!(end, record.len());
        assert_eq!(decode(payloads[0]), Payload::Events(events));
        assert_eq!(decode(&[FORMAT_VERSION, 0xff, 0xff]), Payload::Undecodable);
    }

    /// Another release's format is recognised as such, never taken for damaged data.
    #[test]
    fn a_payload_of_an_unknown_format_is_not_undecodable() {
        assert_eq!(
            decode(&[FORMAT_VERSION + 1, 1, 2, 3]),
            Payload::UnknownFormat(3)
        );
        assert_eq!(decode(b"[{}]"), Payload::UnknownFormat(b'['));
    }

    /// The segment committed in `tests/fixtures/spool/` was written by the release that
    /// introduced this format; its events must read back exactly as they were written.
    #[test]
    fn the_committed_segment_of_this_format_reads_back_exactly() {
        let data = include_bytes!(
            "../../../tests/fixtures/spool/00000000000000000001-0193a3c8-2f5e-7c1a-9b7e-3f1f2a4b5c6d.log"
        );
        let (payloads, end) = scan(data);
        assert_eq!(end, data.len());
        let decoded: Vec<Payload> = payloads.into_iter().map(decode).collect();
        let expected: Vec<Payload> = fixture_events().into_iter().map(Payload::Events).collect();
        assert_eq!(decoded, expected);
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

    /// The events of the committed segment, as they were written.
    fn fixture_events() -> Vec<Vec<SpoolEvent>> {
        let base = SpoolEvent {
            event_id: Uuid::parse_str("0193a3c8-2f5e-7c1a-9b7e-000000000001").unwrap(),
            client_event_id: true,
            shop: "fixture.myshopify.com".into(),
            local_date: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            event_time: 1_795_176_000,
            received_at: 1_795_176_002,
            timestamp_replaced: false,
            event_type: EventType::View,
            attribution: None,
            video_id: "0193a3c8-0000-7000-8000-00000000000a".into(),
            widget_id: "0193a3c8-0000-7000-8000-00000000000b".into(),
            session_id: "session-1".into(),
            customer_id: String::new(),
            product_id: String::new(),
            order_id: String::new(),
            revenue_e4: 0,
            currency: String::new(),
            product_ids: Vec::new(),
        };
        let click = SpoolEvent {
            event_id: Uuid::parse_str("0193a3c8-2f5e-7c1a-9b7e-000000000002").unwrap(),
            client_event_id: false,
            event_type: EventType::Click,
            event_time: 1_795_176_010,
            product_id: "gid://shopify/Product/7".into(),
            ..base.clone()
        };
        let order = SpoolEvent {
            event_id: Uuid::parse_str("0193a3c8-2f5e-7c1a-9b7e-000000000003").unwrap(),
            event_type: EventType::CheckoutCompleted,
            attribution: Some(Attribution::Direct),
            event_time: 1_795_176_100,
            received_at: 1_795_176_100,
            customer_id: "8123".into(),
            order_id: "order-1001".into(),
            revenue_e4: 1_234_567,
            currency: "EUR".into(),
            product_ids: vec![
                "gid://shopify/Product/7".into(),
                "gid://shopify/Product/9".into(),
            ],
            ..base.clone()
        };
        vec![vec![base, click], vec![order]]
    }
}
