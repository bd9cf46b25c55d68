//! The on-disk record: `[len: u32 LE][crc32: u32 LE][payload]`, where the payload is one request's
//! events.
//!
//! Every payload says its format, and a release reads every format any release before it wrote,
//! for good: an upgrade ships the spool the previous release left, whichever that was.
//!
//! | first byte | payload | written by the releases |
//! |---|---|---|
//! | `[` ([`FORMAT_JSON`]) | a JSON array of [`SpoolEventV1`] | of the first spool (commit 9d3720c) |
//! | 1 ([`FORMAT_POSTCARD_V1`]) | `postcard` `Vec<SpoolEventV1>` | from pre-allocated segments (96b0ff3) |
//! | 2 ([`FORMAT_POSTCARD_V2`]) | `postcard` `Vec<SpoolEventV2>` | since events are counted once (4150fa3) |
//! | 3 ([`FORMAT_POSTCARD_V3`]) | `postcard` `Vec<SpoolEventV3>` | since events say where, on what and from where, and how long a video played |
//! | 4 ([`FORMAT_VERSION`]) | `postcard` `Vec<SpoolEvent>` | since a shop may keep a holdout, and visits are counted |
//!
//! `tests/fixtures/spool/` holds a segment of each, written by the release that wrote the format;
//! each must decode to exactly the events written, and ship. A payload of any other first byte was
//! written by a newer release (before a rollback): [`Payload::UnknownFormat`], and its segment is
//! set aside whole, kept for a release that reads it.
//!
//! Reading a segment ([`scan`]) takes every record whose length and checksum hold. Past one that
//! does not (damage: a flipped bit, a zeroed block) it searches forward, byte by byte, for the
//! next header whose length is plausible and whose checksum holds over that length, and goes on
//! from there: a damaged record costs that record, never the ones after it. A false match needs
//! a CRC-32 to hold by chance. Segments are pre-allocated with zeros (see `segment`), and a zero
//! length is never a record: the data ends after the last record that checks out, and what
//! follows it that is not zeros is a torn write (or a damaged last record).

use std::ops::Range;

use chrono::NaiveDate;
use serde::Deserialize;
use uuid::Uuid;

use super::super::event::{Attribution, Country, Device, EventType, Placement, Source, SpoolEvent};

pub const HEADER_BYTES: usize = 8;
/// A record larger than this cannot come from a valid request (64 KiB body cap); a length field
/// above it is a torn or corrupt header.
pub const MAX_RECORD_BYTES: usize = 4 * 1024 * 1024;
/// The payload format this release writes. `SpoolEvent`'s field order, and the order of
/// `EventType`'s and `Attribution`'s variants, are the encoding: a change to them is a new
/// version, and the reader of this one stays.
pub const FORMAT_VERSION: u8 = 4;
/// `postcard`-encoded `Vec<SpoolEventV3>`.
pub const FORMAT_POSTCARD_V3: u8 = 3;
/// `postcard`-encoded `Vec<SpoolEventV2>`.
pub const FORMAT_POSTCARD_V2: u8 = 2;
/// `postcard`-encoded `Vec<SpoolEventV1>`.
pub const FORMAT_POSTCARD_V1: u8 = 1;
/// A JSON array of `SpoolEventV1`: the payload is the array itself, `[` its first byte.
pub const FORMAT_JSON: u8 = b'[';

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
    /// A known format, but not events: damaged before its checksum was taken, or written by a
    /// bug. Set aside as a dead letter.
    Undecodable,
    /// Written by a release that knows a format this one does not.
    UnknownFormat(u8),
}

pub fn decode(payload: &[u8]) -> Payload {
    let upgraded = |events: Vec<SpoolEventV1>| {
        Payload::Events(events.into_iter().map(SpoolEvent::from).collect())
    };
    match payload.split_first() {
        Some((&FORMAT_VERSION, events)) => match postcard::from_bytes(events) {
            Ok(events) => Payload::Events(events),
            Err(_) => Payload::Undecodable,
        },
        Some((&FORMAT_POSTCARD_V3, events)) => match postcard::from_bytes(events) {
            Ok(events) => {
                let events: Vec<SpoolEventV3> = events;
                Payload::Events(events.into_iter().map(SpoolEvent::from).collect())
            }
            Err(_) => Payload::Undecodable,
        },
        Some((&FORMAT_POSTCARD_V2, events)) => match postcard::from_bytes(events) {
            Ok(events) => {
                let events: Vec<SpoolEventV2> = events;
                Payload::Events(events.into_iter().map(SpoolEvent::from).collect())
            }
            Err(_) => Payload::Undecodable,
        },
        Some((&FORMAT_POSTCARD_V1, events)) => match postcard::from_bytes(events) {
            Ok(events) => upgraded(events),
            Err(_) => Payload::Undecodable,
        },
        Some((&FORMAT_JSON, _)) => match serde_json::from_slice(payload) {
            Ok(events) => upgraded(events),
            Err(_) => Payload::Undecodable,
        },
        Some((&version, _)) => Payload::UnknownFormat(version),
        None => Payload::Undecodable,
    }
}

/// An event as formats 1 and JSON keep it: the event of the releases that wrote them, with its
/// own copies of the enums, so that no later change to today's types can change how these bytes
/// read. Field and variant order are the encoding: never change them.
#[derive(Debug, Deserialize)]
pub struct SpoolEventV1 {
    event_id: Uuid,
    shop: String,
    local_date: NaiveDate,
    event_time: i64,
    received_at: i64,
    timestamp_replaced: bool,
    event_type: EventTypeV1,
    attribution: Option<AttributionV1>,
    video_id: String,
    widget_id: String,
    session_id: String,
    customer_id: String,
    product_id: String,
    order_id: String,
    revenue_e4: i64,
    currency: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum EventTypeV1 {
    Impression,
    View,
    Click,
    AddToCart,
    CheckoutCompleted,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "snake_case")]
enum AttributionV1 {
    Direct,
    Influenced,
}

impl From<SpoolEventV1> for SpoolEvent {
    fn from(e: SpoolEventV1) -> SpoolEvent {
        SpoolEvent {
            event_id: e.event_id,
            // Not recorded then: taken as the client's, so that a repeat is still counted once.
            client_event_id: true,
            shop: e.shop,
            local_date: e.local_date,
            event_time: e.event_time,
            received_at: e.received_at,
            timestamp_replaced: e.timestamp_replaced,
            event_type: match e.event_type {
                EventTypeV1::Impression => EventType::Impression,
                EventTypeV1::View => EventType::View,
                EventTypeV1::Click => EventType::Click,
                EventTypeV1::AddToCart => EventType::AddToCart,
                EventTypeV1::CheckoutCompleted => EventType::CheckoutCompleted,
            },
            attribution: e.attribution.map(|a| match a {
                AttributionV1::Direct => Attribution::Direct,
                AttributionV1::Influenced => Attribution::Influenced,
            }),
            video_id: e.video_id,
            widget_id: e.widget_id,
            session_id: e.session_id,
            customer_id: e.customer_id,
            product_id: e.product_id,
            order_id: e.order_id,
            revenue_e4: e.revenue_e4,
            currency: e.currency,
            // Orders did not keep their products then.
            product_ids: Vec::new(),
            // Nor did events say where, on what or from where; and no video was watched.
            placement: None,
            device: None,
            country: None,
            source: None,
            watched_ms: 0,
            max_percent: 0,
            // Nor was there a holdout.
            group: None,
        }
    }
}

/// An event as format 2 keeps it, with its own copies of the enums (see [`SpoolEventV1`]). Field
/// and variant order are the encoding: never change them.
#[derive(Debug, Deserialize)]
pub struct SpoolEventV2 {
    event_id: Uuid,
    client_event_id: bool,
    shop: String,
    local_date: NaiveDate,
    event_time: i64,
    received_at: i64,
    timestamp_replaced: bool,
    event_type: EventTypeV1,
    attribution: Option<AttributionV1>,
    video_id: String,
    widget_id: String,
    session_id: String,
    customer_id: String,
    product_id: String,
    order_id: String,
    revenue_e4: i64,
    currency: String,
    product_ids: Vec<String>,
}

impl From<SpoolEventV2> for SpoolEvent {
    fn from(e: SpoolEventV2) -> SpoolEvent {
        let v1 = SpoolEventV1 {
            event_id: e.event_id,
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
        };
        SpoolEvent {
            client_event_id: e.client_event_id,
            product_ids: e.product_ids,
            ..SpoolEvent::from(v1)
        }
    }
}

/// An event as format 3 keeps it, with its own copies of the enums (see [`SpoolEventV1`]): the
/// country as its code's text. Field and variant order are the encoding: never change them.
#[derive(Debug, Deserialize)]
pub struct SpoolEventV3 {
    event_id: Uuid,
    client_event_id: bool,
    shop: String,
    local_date: NaiveDate,
    event_time: i64,
    received_at: i64,
    timestamp_replaced: bool,
    event_type: EventTypeV3,
    attribution: Option<AttributionV1>,
    video_id: String,
    widget_id: String,
    session_id: String,
    customer_id: String,
    product_id: String,
    order_id: String,
    revenue_e4: i64,
    currency: String,
    product_ids: Vec<String>,
    placement: Option<PlacementV3>,
    device: Option<DeviceV3>,
    country: Option<String>,
    source: Option<SourceV3>,
    watched_ms: u32,
    max_percent: u8,
}

#[derive(Debug, Deserialize)]
enum EventTypeV3 {
    Impression,
    View,
    Click,
    AddToCart,
    CheckoutCompleted,
    Watch,
}

#[derive(Debug, Deserialize)]
enum PlacementV3 {
    Home,
    Product,
    Collection,
    Page,
    Cart,
    Other,
}

#[derive(Debug, Deserialize)]
enum DeviceV3 {
    Mobile,
    Tablet,
    Desktop,
}

#[derive(Debug, Deserialize)]
enum SourceV3 {
    Direct,
    Search,
    Social,
    Email,
    Paid,
    Referral,
}

impl From<SpoolEventV3> for SpoolEvent {
    fn from(e: SpoolEventV3) -> SpoolEvent {
        SpoolEvent {
            event_id: e.event_id,
            client_event_id: e.client_event_id,
            shop: e.shop,
            local_date: e.local_date,
            event_time: e.event_time,
            received_at: e.received_at,
            timestamp_replaced: e.timestamp_replaced,
            event_type: match e.event_type {
                EventTypeV3::Impression => EventType::Impression,
                EventTypeV3::View => EventType::View,
                EventTypeV3::Click => EventType::Click,
                EventTypeV3::AddToCart => EventType::AddToCart,
                EventTypeV3::CheckoutCompleted => EventType::CheckoutCompleted,
                EventTypeV3::Watch => EventType::Watch,
            },
            attribution: e.attribution.map(|a| match a {
                AttributionV1::Direct => Attribution::Direct,
                AttributionV1::Influenced => Attribution::Influenced,
            }),
            video_id: e.video_id,
            widget_id: e.widget_id,
            session_id: e.session_id,
            customer_id: e.customer_id,
            product_id: e.product_id,
            order_id: e.order_id,
            revenue_e4: e.revenue_e4,
            currency: e.currency,
            product_ids: e.product_ids,
            placement: e.placement.map(|p| match p {
                PlacementV3::Home => Placement::Home,
                PlacementV3::Product => Placement::Product,
                PlacementV3::Collection => Placement::Collection,
                PlacementV3::Page => Placement::Page,
                PlacementV3::Cart => Placement::Cart,
                PlacementV3::Other => Placement::Other,
            }),
            device: e.device.map(|d| match d {
                DeviceV3::Mobile => Device::Mobile,
                DeviceV3::Tablet => Device::Tablet,
                DeviceV3::Desktop => Device::Desktop,
            }),
            // Every code format 3 kept is one today (the list only grows).
            country: e.country.as_deref().and_then(Country::parse),
            source: e.source.map(|s| match s {
                SourceV3::Direct => Source::Direct,
                SourceV3::Search => Source::Search,
                SourceV3::Social => Source::Social,
                SourceV3::Email => Source::Email,
                SourceV3::Paid => Source::Paid,
                SourceV3::Referral => Source::Referral,
            }),
            watched_ms: e.watched_ms,
            max_percent: e.max_percent,
            // There was no holdout then.
            group: None,
        }
    }
}

/// What [`scan`] found in a segment's bytes.
#[derive(Debug, Default, PartialEq)]
pub struct Scanned<'a> {
    /// The payloads of the records whose length and checksum hold, in order.
    pub payloads: Vec<&'a [u8]>,
    /// The stretches between records where nothing checks out (damaged records), in order.
    /// What follows the last record is not among them (see [`torn_bytes`]).
    pub damaged: Vec<Range<usize>>,
    /// Where the last record ends.
    pub end: usize,
}

/// Every record in `data` that checks out, however much between them does not.
pub fn scan(data: &[u8]) -> Scanned<'_> {
    let mut scanned = Scanned::default();
    let mut offset = 0;
    // Where the bytes that are not records began, while the scan is past such bytes.
    let mut damaged_from = None;
    while offset + HEADER_BYTES <= data.len() {
        match record_at(data, offset, damaged_from.is_some()) {
            Some(payload) => {
                if let Some(from) = damaged_from.take() {
                    scanned.damaged.push(from..offset);
                }
                scanned.payloads.push(payload);
                offset += HEADER_BYTES + payload.len();
                scanned.end = offset;
            }
            None => {
                damaged_from.get_or_insert(offset);
                offset = next_candidate(data, offset + 1);
            }
        }
    }
    scanned
}

/// The payload of the record at `offset`, if its length is plausible and its checksum holds.
///
/// While `resyncing` (searching past damage, where every offset is a candidate), a payload must
/// also start with a format this release knows before its checksum is computed: in random bytes
/// about one offset in a thousand has a plausible length, each costing a checksum of up to
/// 4 MiB, and the format byte cuts those to one in ~85 000, so a segment of garbage is read in a
/// fraction of a second rather than minutes. A record of an unknown format found past damage is
/// then kept with the damaged bytes, not set aside with its segment.
fn record_at(data: &[u8], offset: usize, resyncing: bool) -> Option<&[u8]> {
    let header = data.get(offset..offset + HEADER_BYTES)?;
    let len = u32::from_le_bytes(header[..4].try_into().expect("4 bytes")) as usize;
    let crc = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
    if len == 0 || len > MAX_RECORD_BYTES {
        return None;
    }
    let payload = data.get(offset + HEADER_BYTES..offset + HEADER_BYTES + len)?;
    let known = [
        FORMAT_VERSION,
        FORMAT_POSTCARD_V3,
        FORMAT_POSTCARD_V2,
        FORMAT_POSTCARD_V1,
        FORMAT_JSON,
    ];
    if resyncing && !known.contains(&payload[0]) {
        return None;
    }
    (crc32fast::hash(payload) == crc).then_some(payload)
}

/// The first offset from `from` where a header could start: a length is never zero, so a
/// header's first four bytes are not all zeros (a segment's pre-allocated tail is passed over
/// at once).
fn next_candidate(data: &[u8], from: usize) -> usize {
    match data
        .get(from..)
        .and_then(|rest| rest.iter().position(|&b| b != 0))
    {
        Some(nonzero) => from + nonzero.saturating_sub(3),
        None => data.len(),
    }
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
    use crate::ingest::event::Group;

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
            placement: Some(Placement::Home),
            device: Some(Device::Desktop),
            country: Country::parse("DE"),
            source: Some(Source::Search),
            // Not a watch's figures: bytes that are not zeros end the record, so a write torn
            // anywhere in it never reads as whole beside the segment's zeros.
            watched_ms: 7,
            max_percent: 42,
            group: Some(Group::Holdout),
        }
    }

    #[test]
    fn events_survive_the_round_trip() {
        let events = vec![event(1), event(2)];
        let record = encode_events(&events).unwrap();
        let scanned = scan(&record);
        assert_eq!(scanned.end, record.len());
        assert_eq!(decode(scanned.payloads[0]), Payload::Events(events));
        for format in [
            FORMAT_VERSION,
            FORMAT_POSTCARD_V3,
            FORMAT_POSTCARD_V2,
            FORMAT_POSTCARD_V1,
        ] {
            assert_eq!(decode(&[format, 0xff, 0xff]), Payload::Undecodable);
        }
        assert_eq!(decode(b"[{}]"), Payload::Undecodable);
        assert_eq!(decode(b"[]"), Payload::Events(Vec::new()));
    }

    /// Another release's format is recognised as such, never taken for damaged data.
    #[test]
    fn a_payload_of_an_unknown_format_is_not_undecodable() {
        assert_eq!(
            decode(&[FORMAT_VERSION + 1, 1, 2, 3]),
            Payload::UnknownFormat(FORMAT_VERSION + 1)
        );
        assert_eq!(decode(b"{}"), Payload::UnknownFormat(b'{'));
        assert_eq!(decode(&[0]), Payload::UnknownFormat(0));
    }

    /// A committed segment, read as the shipper reads it: whole records only, every one events.
    fn fixture(data: &[u8]) -> Vec<Vec<SpoolEvent>> {
        let scanned = scan(data);
        assert_eq!((scanned.end, &scanned.damaged[..]), (data.len(), &[][..]));
        scanned
            .payloads
            .into_iter()
            .map(|payload| match decode(payload) {
                Payload::Events(events) => events,
                other => panic!("not events: {other:?}"),
            })
            .collect()
    }

    /// Past damage only records of a known format are looked for: a megabyte of random bytes
    /// between two records costs neither record, and finds nothing in between.
    #[test]
    fn random_bytes_between_records_are_damage_and_the_records_around_them_read() {
        let first = encode_events(&[event(1)]).unwrap();
        let last = encode_events(&[event(2)]).unwrap();
        // A fixed xorshift, so the bytes are the same on every run.
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let garbage: Vec<u8> = (0..1 << 20)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state as u8
            })
            .collect();
        let data = [&first[..], &garbage, &last[..]].concat();
        let scanned = scan(&data);
        assert_eq!(scanned.payloads.len(), 2);
        let damaged = first.len()..first.len() + garbage.len();
        assert_eq!(scanned.damaged, vec![damaged]);
        assert_eq!(scanned.end, data.len());
    }

    /// The segments in `tests/fixtures/spool/` were written by the releases that wrote each
    /// format, with their own code; their events must read back exactly as they were written.
    #[test]
    fn a_segment_of_format_2_reads_back_exactly() {
        let data = include_bytes!("../../../tests/fixtures/spool/format-2-postcard.log");
        assert_eq!(fixture(data), format_2_fixture_events());
    }

    /// Events of format 1 read as the release that wrote them knew them, their ids taken as the
    /// client's, without products.
    #[test]
    fn a_segment_of_format_1_reads_back_exactly() {
        let data = include_bytes!("../../../tests/fixtures/spool/format-1-postcard.log");
        let expected = old_fixture_events("01938e00", "2026-11-17", 1_794_916_800, "order-v1-1");
        assert_eq!(fixture(data), expected);
    }

    #[test]
    fn a_segment_of_json_reads_back_exactly() {
        let data = include_bytes!("../../../tests/fixtures/spool/format-json.log");
        let expected = old_fixture_events("01935b00", "2026-11-10", 1_794_312_000, "order-json-1");
        assert_eq!(fixture(data), expected);
    }

    #[test]
    fn the_data_ends_at_the_pre_allocated_zeros() {
        let first = encode_events(&[event(1)]).unwrap();
        let mut data = first.clone();
        data.extend_from_slice(&[0; 4096]);
        let scanned = scan(&data);
        assert_eq!((scanned.payloads.len(), scanned.end), (1, first.len()));
        assert!(scanned.damaged.is_empty());
        assert_eq!(torn_bytes(&data, scanned.end), 0);
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
                let scanned = scan(&data);
                assert_eq!(scanned.payloads.len(), 1, "cut at {cut}");
                assert_eq!(scanned.end, first.len());
                assert!(scanned.damaged.is_empty());
                let torn = torn_bytes(&data, scanned.end);
                assert!(torn <= cut, "cut at {cut}: {torn} torn bytes");
            }
        }
    }

    /// Records of every format, of several sizes, back to back.
    fn segment_of_records() -> Vec<Vec<u8>> {
        let json = br#"[{"event_id":"01935b00-0000-7000-8000-000000000009","shop":"s.myshopify.com","local_date":"2026-11-10","event_time":1,"received_at":1,"timestamp_replaced":false,"event_type":"view","attribution":null,"video_id":"v","widget_id":"","session_id":"","customer_id":"","product_id":"","order_id":"","revenue_e4":0,"currency":""}]"#;
        vec![
            encode_events(&[event(1), event(2)]).unwrap(),
            encode_events(&[event(3)]).unwrap(),
            encode_record(json),
            encode_events(&(4..10).map(event).collect::<Vec<_>>()).unwrap(),
            encode_events(&[event(10)]).unwrap(),
        ]
    }

    /// One damaged byte, wherever it is (a length, a checksum, a payload), costs the record it is
    /// in and nothing else: every other record is found, and the damaged one is reported as
    /// exactly its bytes. In a sealed segment and in one a crash left open (zeros after it).
    #[test]
    fn a_damaged_byte_anywhere_costs_only_the_record_it_is_in() {
        let records = segment_of_records();
        let data = records.concat();
        let mut starts = vec![0];
        for record in &records {
            starts.push(starts.last().unwrap() + record.len());
        }
        let last = records.len() - 1;
        for position in 0..data.len() {
            let hit = starts.iter().rposition(|&s| s <= position).unwrap();
            let expected: Vec<&[u8]> = (0..records.len())
                .filter(|&r| r != hit)
                .map(|r| &records[r][HEADER_BYTES..])
                .collect();
            // A flipped bit, and a byte replaced.
            for flip in [0x01, 0xff] {
                for padding in [0, 4096] {
                    let mut damaged = data.clone();
                    damaged[position] ^= flip;
                    damaged.resize(data.len() + padding, 0);
                    let scanned = scan(&damaged);
                    let at = format!("byte {position} ^ {flip:#x}, {padding} zeros after");
                    assert_eq!(scanned.payloads, expected, "{at}");
                    if hit < last {
                        assert_eq!(scanned.damaged.len(), 1, "{at}");
                        assert_eq!(scanned.damaged[0], starts[hit]..starts[hit + 1], "{at}");
                        assert_eq!(scanned.end, data.len(), "{at}");
                    } else {
                        assert!(scanned.damaged.is_empty(), "{at}");
                        assert_eq!(scanned.end, starts[last], "{at}");
                        assert_eq!(
                            torn_bytes(&damaged, scanned.end),
                            records[last].len(),
                            "{at}"
                        );
                    }
                }
            }
        }
    }

    /// A stretch of zeros (a block the disk lost) inside the data costs the records it touches.
    #[test]
    fn a_zeroed_stretch_costs_only_the_records_it_touches() {
        let records = segment_of_records();
        let mut data = records.concat();
        let second = records[0].len();
        let fourth = second + records[1].len() + records[2].len();
        data[second + 5..fourth - 3].fill(0);
        let scanned = scan(&data);
        let expected: Vec<&[u8]> = [0, 3, 4]
            .iter()
            .map(|&r| &records[r][HEADER_BYTES..])
            .collect();
        assert_eq!(scanned.payloads, expected);
        assert_eq!(scanned.damaged.len(), 1);
        assert_eq!(scanned.damaged[0], second..fourth);
        assert_eq!(scanned.end, data.len());
    }

    /// The first event of a fixture segment: of the fixtures' shop, video and widget, at `time`,
    /// received two seconds later, with its id the client's and nothing else given.
    fn fixture_event(
        event_id: Uuid,
        event_type: EventType,
        session_id: &str,
        local_date: NaiveDate,
        time: i64,
    ) -> SpoolEvent {
        SpoolEvent {
            event_id,
            client_event_id: true,
            shop: "fixture.myshopify.com".into(),
            local_date,
            event_time: time,
            received_at: time + 2,
            timestamp_replaced: false,
            event_type,
            attribution: None,
            video_id: "0193a3c8-0000-7000-8000-00000000000a".into(),
            widget_id: "0193a3c8-0000-7000-8000-00000000000b".into(),
            session_id: session_id.into(),
            customer_id: String::new(),
            product_id: String::new(),
            order_id: String::new(),
            revenue_e4: 0,
            currency: String::new(),
            product_ids: Vec::new(),
            placement: None,
            device: None,
            country: None,
            source: None,
            watched_ms: 0,
            max_percent: 0,
            group: None,
        }
    }

    /// The events of the format-3 segment, as they were written: a watch on a phone from an
    /// email, on a product page in France, and a click that says nothing of where or who.
    fn format_3_fixture_events() -> Vec<Vec<SpoolEvent>> {
        let base = fixture_event(
            Uuid::parse_str("019ad000-6d3a-7b2c-8e4f-000000000001").unwrap(),
            EventType::Click,
            "session-3",
            NaiveDate::from_ymd_opt(2026, 11, 29).unwrap(),
            1_795_953_600,
        );
        let watch = SpoolEvent {
            event_id: Uuid::parse_str("019ad000-6d3a-7b2c-8e4f-000000000002").unwrap(),
            event_type: EventType::Watch,
            event_time: 1_795_953_640,
            placement: Some(Placement::Product),
            device: Some(Device::Mobile),
            country: Country::parse("FR"),
            source: Some(Source::Email),
            watched_ms: 36_250,
            max_percent: 100,
            ..base.clone()
        };
        let view = SpoolEvent {
            event_id: Uuid::parse_str("019ad000-6d3a-7b2c-8e4f-000000000003").unwrap(),
            client_event_id: false,
            event_type: EventType::View,
            event_time: 1_795_953_700,
            placement: Some(Placement::Other),
            device: Some(Device::Tablet),
            country: Country::parse("ZZ"),
            source: Some(Source::Referral),
            ..base.clone()
        };
        vec![vec![base, watch], vec![view]]
    }

    #[test]
    fn a_segment_of_format_3_reads_back_exactly() {
        let data = include_bytes!("../../../tests/fixtures/spool/format-3-postcard.log");
        assert_eq!(fixture(data), format_3_fixture_events());
    }

    /// The events of the format-4 segment, as they were written: a visit of a browser in the
    /// holdout, and an order of one shown the widgets.
    fn format_4_fixture_events() -> Vec<Vec<SpoolEvent>> {
        let session = SpoolEvent {
            video_id: String::new(),
            widget_id: String::new(),
            device: Some(Device::Mobile),
            country: Country::parse("CA"),
            source: Some(Source::Social),
            group: Some(Group::Holdout),
            ..fixture_event(
                Uuid::parse_str("019ad400-1a2b-7c3d-8e4f-000000000001").unwrap(),
                EventType::Session,
                "session-4",
                NaiveDate::from_ymd_opt(2026, 11, 30).unwrap(),
                1_796_040_000,
            )
        };
        let order = SpoolEvent {
            event_id: Uuid::parse_str("019ad400-1a2b-7c3d-8e4f-000000000002").unwrap(),
            event_type: EventType::CheckoutCompleted,
            event_time: 1_796_040_300,
            received_at: 1_796_040_300,
            session_id: "session-5".into(),
            order_id: "order-4001".into(),
            revenue_e4: 455_000,
            currency: "CAD".into(),
            product_ids: vec!["gid://shopify/Product/11".into()],
            source: None,
            group: Some(Group::Exposed),
            ..session.clone()
        };
        vec![vec![session], vec![order]]
    }

    #[test]
    fn a_segment_of_format_4_reads_back_exactly() {
        let data = include_bytes!("../../../tests/fixtures/spool/format-4-postcard.log");
        assert_eq!(fixture(data), format_4_fixture_events());
    }

    /// Writes `tests/fixtures/spool/format-4-postcard.log` with this release's encoder: run once,
    /// by the release that introduced the format (`cargo test -- --ignored write_the_format_4`).
    #[test]
    #[ignore = "writes a fixture that must never change"]
    fn write_the_format_4_fixture() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/spool/format-4-postcard.log"
        );
        let written = std::fs::metadata(path).map_or(0, |m| m.len());
        assert_eq!(written, 0, "{path} is written once");
        let records: Vec<Vec<u8>> = format_4_fixture_events()
            .iter()
            .map(|events| encode_events(events).unwrap())
            .collect();
        std::fs::write(path, records.concat()).unwrap();
    }

    /// The events of the format-2 segment, as they were written.
    fn format_2_fixture_events() -> Vec<Vec<SpoolEvent>> {
        let base = fixture_event(
            Uuid::parse_str("0193a3c8-2f5e-7c1a-9b7e-000000000001").unwrap(),
            EventType::View,
            "session-1",
            NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            1_795_176_000,
        );
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

    /// The events of the format-1 and JSON segments, as they were written (their ids start with
    /// `id_prefix`, their local date is `local_date`), read as today's events: three records of
    /// three events, one, and one.
    fn old_fixture_events(
        id_prefix: &str,
        local_date: &str,
        time: i64,
        order_id: &str,
    ) -> Vec<Vec<SpoolEvent>> {
        let local_date = local_date.parse::<NaiveDate>().unwrap();
        let id = |n: u32| Uuid::parse_str(&format!("{id_prefix}-0000-7000-8000-{n:012}")).unwrap();
        let impression = fixture_event(id(1), EventType::Impression, "session-2", local_date, time);
        let view = SpoolEvent {
            event_id: id(2),
            event_type: EventType::View,
            event_time: time + 5,
            ..impression.clone()
        };
        let click = SpoolEvent {
            event_id: id(3),
            event_type: EventType::Click,
            event_time: time + 9,
            product_id: "gid://shopify/Product/7".into(),
            ..impression.clone()
        };
        let cart = SpoolEvent {
            event_id: id(4),
            event_type: EventType::AddToCart,
            attribution: Some(Attribution::Influenced),
            event_time: time + 30,
            received_at: time + 31,
            product_id: "gid://shopify/Product/7".into(),
            ..impression.clone()
        };
        let order = SpoolEvent {
            event_id: id(5),
            event_type: EventType::CheckoutCompleted,
            attribution: Some(Attribution::Direct),
            event_time: time + 100,
            received_at: time + 100,
            timestamp_replaced: true,
            customer_id: "8123".into(),
            order_id: order_id.into(),
            revenue_e4: 1_234_567,
            currency: "EUR".into(),
            ..impression.clone()
        };
        vec![vec![impression, view, click], vec![cart], vec![order]]
    }
}
