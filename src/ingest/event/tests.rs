//! How bodies, events and their fields are read, refused and turned into spool records.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::body::parse_event;
use super::incoming::{client_timestamp, timestamp};
use super::*;
use crate::catalog::domain::{ShopDomain, Timezone};

#[test]
fn revenue_is_parsed_exactly_from_numbers_and_numeric_strings() {
    for (raw, expected) in [
        ("0", 0),
        ("0.1", 1_000),
        ("0.10", 1_000),
        ("19.99", 199_900),
        ("\"19.99\"", 199_900),
        ("1234.5678", 12_345_678),
        ("1e2", 1_000_000),
        ("1.5E1", 150_000),
        ("0.00001e1", 1),
        ("100.000000", 1_000_000),
        ("007.5", 75_000),
    ] {
        assert_eq!(Revenue::parse(raw).map(Revenue::e4), Ok(expected), "{raw}");
    }
    for bad in [
        "-1", "-0.01", "abc", "\"\"", "1.23456", "1e-5", ".", "1.2.3", "\"12a\"", "1e40", "true",
    ] {
        assert!(Revenue::parse(bad).is_err(), "{bad} accepted");
    }
}

#[test]
fn a_revenue_string_is_taken_exactly_when_the_documented_pattern_matches_it() {
    let pattern = regex::Regex::new(Revenue::STRING_PATTERN).unwrap();
    for text in [
        "0",
        "19.99",
        "007.5",
        "1.50000",
        "1234.5678",
        "999999999999.9999",
        "1000000000000",
        "1000000000000.000",
        "1000000000000.0001",
        "1000000000001",
        "1.23456",
        "",
        ".5",
        "5.",
        "1e2",
        " 5",
        "5 ",
        "+5",
        "-0",
        "12a",
        "1.2.3",
        "\u{664}",
    ] {
        let taken = Revenue::parse(&serde_json::to_string(text).unwrap()).is_ok();
        assert_eq!(pattern.is_match(text), taken, "{text:?}");
    }
    assert_eq!(Revenue::parse("\"1.50000\"").map(Revenue::e4), Ok(15_000));
    assert_eq!(Revenue::parse("-0").map(Revenue::e4), Ok(0));
    assert_eq!(Revenue::parse("-0.0").map(Revenue::e4), Ok(0));
}

#[test]
fn a_timestamp_of_the_documented_pattern_is_read_as_written() {
    let schema = serde_json::to_value(timestamp().build()).unwrap();
    let pattern = regex::Regex::new(schema["pattern"].as_str().unwrap()).unwrap();
    for text in [
        "2024-02-29T12:00:00Z",
        "2024-01-01t00:00:00.123456789+05:30",
        "0000-12-31T23:59:59z",
        "9999-01-01T00:00:00-23:59",
    ] {
        assert!(pattern.is_match(text), "{text}");
        let event = format!(r#"{{"eventType":"view","timestamp":"{text}"}}"#);
        let parsed = parse_event(&event, "").unwrap().timestamp.unwrap();
        let expected = DateTime::parse_from_rfc3339(&text.to_uppercase()).unwrap();
        assert_eq!(parsed, expected, "{text}");
    }
    let null = parse_event(r#"{"eventType":"view","timestamp":null}"#, "").unwrap();
    assert_eq!(null.timestamp, None);
}

#[test]
fn an_id_is_a_string_or_an_integer_also_written_with_a_fraction() {
    let id = |value: &str| {
        parse_event(&format!(r#"{{"eventType":"view","orderId":{value}}}"#), "")
            .map(|e| e.order_id.map(Text::into_string))
    };
    assert_eq!(id("42.0"), Ok(Some("42".into())));
    assert_eq!(id("-0.0"), Ok(Some("0".into())));
    assert_eq!(id("18446744073709551615"), Ok(Some(u64::MAX.to_string())));
    assert_eq!(
        id("9007199254740992.0"),
        Ok(Some("9007199254740992".into()))
    );
    for refused in ["1.5", "1e300", "\"a\\u0000\""] {
        assert_eq!(id(refused).unwrap_err().field, "orderId", "{refused}");
    }
}

#[test]
fn an_event_id_is_a_hyphenated_uuid() {
    let event = |id: &str| parse_event(&format!(r#"{{"eventType":"view","eventId":"{id}"}}"#), "");
    let id = "0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35";
    assert_eq!(
        event(id).unwrap().event_id,
        Some(Uuid::parse_str(id).unwrap())
    );
    let invalid = event(&id.replace('-', "")).unwrap_err();
    assert_eq!(invalid.field, "eventId");
}

#[test]
fn a_body_is_one_event_or_a_batch() {
    let (events, batch) = parse_body(br#"{"eventType":"view","videoId":"v1"}"#).unwrap();
    assert_eq!((events.len(), batch), (1, false));
    let (events, batch) =
        parse_body(br#"{"events":[{"eventType":"view"},{"eventType":"click"}]}"#).unwrap();
    assert_eq!((events.len(), batch), (2, true));
}

#[test]
fn a_body_of_another_shape_is_named_for_what_is_wrong() {
    let refused = |body: &str| {
        let invalid = parse_body(body.as_bytes()).unwrap_err();
        format!("{}: {}", invalid.field, invalid.message)
    };
    let not_an_object = "body: must be an event object or { \"events\": [...] }";
    assert_eq!(refused(r#"[{"eventType":"view"}]"#), not_an_object);
    assert_eq!(refused(r#"[null]"#), not_an_object);
    assert_eq!(refused(r#""view""#), not_an_object);
    assert_eq!(refused(" 42 "), not_an_object);
    assert!(refused(r#"{"eventType":"view""#).starts_with("body: malformed JSON"));
    assert!(refused("[1,").starts_with("body: malformed JSON"));
    assert_eq!(refused(r#"{"events":null}"#), "events: must be an array");
    assert_eq!(
        refused(r#"{"events":{"eventType":"view"}}"#),
        "events: must be an array"
    );
    assert_eq!(refused(r#"{"events":[]}"#), "events: must not be empty");
    assert_eq!(
        refused(r#"{"events":[1]}"#),
        "events[0]: must be an event object"
    );
}

/// An event reads the same alone and inside a batch, escaped keys included.
#[test]
fn a_lone_event_and_a_batched_one_are_the_same_event() {
    let shop = ShopDomain::parse("s.myshopify.com").unwrap();
    let tz = Timezone::parse("Europe/Berlin").unwrap();
    let now = Utc::now();
    let window = TimeWindow {
        max_future: chrono::Duration::minutes(5),
        max_past: chrono::Duration::days(7),
    };
    let id = "0193a3c8-2f5e-7c1a-9b7e-3f1f2a4b5c6d";
    let bodies = [
        format!(r#"{{"eventId":"{id}","eventType":"impression","videoId":"v1","widgetId":7}}"#),
        format!(
            r#"{{"eventId":"{id}","eventType":"checkout_completed","orderId":123,"revenue":12.50,"currency":"EUR","productId":"gid://shopify/Product/9","timestamp":"{}"}}"#,
            now.to_rfc3339()
        ),
        format!(r#"{{"eventId":"{id}","eventType":"view","sessionId":"s","extra":{{"a":[1]}}}}"#),
    ];
    for body in &bodies {
        let (mut alone, batch) = parse_body(body.as_bytes()).unwrap();
        assert!(!batch);
        for events_key in ["events", r"\u0065vents"] {
            let batched = format!(r#"{{"{events_key}":[{body}]}}"#);
            let (mut inside, batch) = parse_body(batched.as_bytes()).unwrap();
            assert!(batch, "{batched}");
            assert_eq!(
                inside.remove(0).into_spool_event(&shop, tz, now, window),
                alone.remove(0).into_spool_event(&shop, tz, now, window),
                "{body}"
            );
            alone = parse_body(body.as_bytes()).unwrap().0;
        }
    }
}

/// Near the largest accepted order, neighbouring values a ten-thousandth apart are closer
/// than binary floating point can tell apart: each must still be kept exactly, alone and in
/// a batch, as a number and as a string.
#[test]
fn revenue_keeps_every_digit_up_to_the_largest_order() {
    for last in 0..10 {
        let value = format!("999999999999.999{last}");
        let expected = 9_999_999_999_999_990 + last;
        for revenue in [value.clone(), format!(r#""{value}""#)] {
            let event = format!(r#"{{"eventType":"checkout_completed","revenue":{revenue}}}"#);
            for body in [event.clone(), format!(r#"{{"events":[{event}]}}"#)] {
                let (events, _) = parse_body(body.as_bytes()).unwrap();
                assert_eq!(events[0].revenue.map(Revenue::e4), Some(expected), "{body}");
            }
        }
    }
}

/// Free text is taken as the parser meets it: strings and integers, each other kind refused
/// by name, long values by their characters (not bytes).
#[test]
fn text_fields_take_strings_and_integers_only() {
    let field = |value: &str| {
        parse_body(format!(r#"{{"eventType":"view","sessionId":{value}}}"#).as_bytes())
            .map(|(events, _)| events[0].session_id.clone().map(Text::into_string))
    };
    assert_eq!(field(r#""s-1""#), Ok(Some("s-1".to_string())));
    assert_eq!(field("-42"), Ok(Some("-42".to_string())));
    assert_eq!(
        field("18446744073709551615"),
        Ok(Some(u64::MAX.to_string()))
    );
    assert_eq!(field("null"), Ok(None));
    for (value, kind) in [
        ("true", "a boolean"),
        ("1.5", "a number"),
        ("[1]", "an array"),
        (r#"{"a":1}"#, "an object"),
    ] {
        let refused = field(value).unwrap_err();
        assert_eq!(refused.field, "sessionId");
        assert_eq!(refused.message, format!("expected a string, got {kind}"));
    }
    let wide = "é".repeat(MAX_TEXT_CHARS);
    assert_eq!(field(&format!(r#""{wide}""#)), Ok(Some(wide.clone())));
    let refused = field(&format!(r#""{wide}x""#)).unwrap_err();
    assert_eq!(refused.message, "must be at most 256 characters");
    // NUL would stop the order claims in Postgres: no text field takes a control character.
    for (escaped, code) in [(r"\u0000", "0000"), (r"\n", "000A"), (r"\u009f", "009F")] {
        let refused = field(&format!(r#""order{escaped}1""#)).unwrap_err();
        assert_eq!(refused.field, "sessionId");
        assert_eq!(
            refused.message,
            format!("must not contain control characters (found U+{code})")
        );
    }
}

/// The RFC 3339 fast path never changes what chrono's own parser makes of a timestamp.
#[test]
fn timestamps_parse_as_chrono_parses_them() {
    for text in [
        "2026-03-01T18:20:00Z",
        "2026-03-01T18:20:00.123Z",
        "2026-03-01T18:20:00.123456789+05:30",
        "2026-03-01t18:20:00z",
        "2026-03-01 18:20:00Z",
        "2026-03-01T18:20:00",
        "2026-02-30T18:20:00Z",
        "2026-03-01T24:00:00Z",
        "yesterday",
        "",
    ] {
        let ours = client_timestamp(serde_json::Value::String(text.to_string()))
            .map_err(|e| e.to_string());
        let chrono = text
            .parse::<DateTime<chrono::FixedOffset>>()
            .map(Some)
            .map_err(|e| e.to_string());
        assert_eq!(ours, chrono, "{text}");
    }
    // Another kind is refused in chrono's own words, on both parse paths.
    let refused = parse_body(br#"{"eventType":"view","timestamp":123}"#).unwrap_err();
    assert_eq!(refused.field, "timestamp");
    assert_eq!(
        refused.message,
        "invalid type: integer `123`, expected an RFC 3339 formatted date and time string"
    );
    let (events, _) = parse_body(br#"{"eventType":"view","timestamp":null}"#).unwrap();
    assert_eq!(events[0].timestamp, None);
}

#[test]
fn errors_name_the_field() {
    let cases: [(&[u8], &str); 9] = [
        (br#"{"eventType":"like"}"#, "eventType"),
        (br#"{"videoId":"v"}"#, "eventType"),
        (
            br#"{"eventType":"view","attributionType":"maybe"}"#,
            "attributionType",
        ),
        (
            br#"{"eventType":"view","timestamp":"yesterday"}"#,
            "timestamp",
        ),
        (
            br#"{"events":[{"eventType":"view"},{"eventType":"view","revenue":-1}]}"#,
            "events[1].revenue",
        ),
        (br#"{"events":[]}"#, "events"),
        (br#"{"events":{}}"#, "events"),
        (br#"[1]"#, "body"),
        (br#"{"eventType":"view","sessionId":true}"#, "sessionId"),
    ];
    for (body, field) in cases {
        let err = parse_body(body).unwrap_err();
        assert_eq!(
            err.field,
            field,
            "{} -> {err:?}",
            String::from_utf8_lossy(body)
        );
    }
    let long = format!(
        r#"{{"eventType":"view","customerId":"{}"}}"#,
        "x".repeat(257)
    );
    assert_eq!(parse_body(long.as_bytes()).unwrap_err().field, "customerId");
}

/// Only the platform says who the customer is: a body's `customerId` is checked as any id,
/// and binds nothing.
#[test]
fn a_bodys_customer_id_binds_nothing() {
    let shop = ShopDomain::parse("s.myshopify.com").unwrap();
    let tz = Timezone::parse("UTC").unwrap();
    let window = TimeWindow {
        max_future: chrono::Duration::minutes(5),
        max_past: chrono::Duration::days(7),
    };
    for claim in ["42", "\"gid://shopify/Customer/42\"", "\"someone\""] {
        let body = format!(r#"{{"eventType":"view","customerId":{claim}}}"#);
        let (events, _) = parse_body(body.as_bytes()).unwrap();
        let event = events.into_iter().next().unwrap();
        let record = event.into_spool_event(&shop, tz, Utc::now(), window);
        assert_eq!(record.customer_id, "", "{claim}");
    }
}

#[test]
fn out_of_window_timestamps_are_replaced_and_local_dates_follow_the_shop() {
    let shop = ShopDomain::parse("s.myshopify.com").unwrap();
    let tz = Timezone::parse("Asia/Kathmandu").unwrap();
    let now = DateTime::parse_from_rfc3339("2026-03-01T20:00:00Z")
        .unwrap()
        .with_timezone(&Utc);
    let window = TimeWindow {
        max_future: chrono::Duration::hours(24),
        max_past: chrono::Duration::days(7),
    };
    let view_at = |timestamp: &str| {
        let body = format!(r#"{{"eventType":"view","timestamp":"{timestamp}"}}"#);
        let (events, _) = parse_body(body.as_bytes()).unwrap();
        events
            .into_iter()
            .next()
            .unwrap()
            .into_spool_event(&shop, tz, now, window)
    };
    let event = view_at("2026-03-01T18:20:00Z");
    // 18:20 UTC is 00:05 the next day in Kathmandu (+05:45).
    assert_eq!(event.local_date.to_string(), "2026-03-02");
    assert!(!event.timestamp_replaced);

    let event = view_at("2020-01-01T00:00:00Z");
    assert!(event.timestamp_replaced);
    assert_eq!(event.event_time, now.timestamp());
}
