//! How the domain values are parsed, refused and documented.

use super::*;

#[test]
fn shop_domains_are_lowercased_myshopify_hosts() {
    assert_eq!(
        ShopDomain::parse("Demo-1.MyShopify.com").unwrap().as_str(),
        "demo-1.myshopify.com"
    );
    for bad in [
        "",
        "myshopify.com",
        ".myshopify.com",
        "a.b.myshopify.com",
        "shop.example.com",
        "-x.myshopify.com",
        "x y.myshopify.com",
    ] {
        assert!(ShopDomain::parse(bad).is_err(), "{bad:?} accepted");
    }
}

#[test]
fn text_refuses_every_control_character_and_keeps_the_rest() {
    for ok in [
        "",
        "Summer Sale",
        "Crème brûlée 🍮",
        "a\u{00A0}b",
        "a\u{2028}b",
        "x\u{FEFF}",
    ] {
        assert_eq!(TextLine::parse(ok).unwrap().as_str(), ok);
    }
    for c in ('\u{0}'..='\u{1F}').chain('\u{7F}'..='\u{9F}') {
        let err = TextLine::parse(&format!("a{c}b")).unwrap_err();
        assert_eq!(
            err.0,
            format!(
                "must not contain control characters (found U+{:04X})",
                u32::from(c)
            )
        );
    }
}

fn matches(pattern: &str, text: &str) -> bool {
    regex::Regex::new(pattern).unwrap().is_match(text)
}

#[test]
fn the_documented_link_pattern_is_the_rule_links_are_checked_by() {
    let pattern = text_schema::pattern(text_schema::Kind::Link);
    for (link, taken) in [
        ("http://a", true),
        ("https://cdn.example.com/v.mp4?x=1#t", true),
        ("HTTPS://Shop-1.Example.COM:8443/a", true),
        ("http://localhost:0/", true),
        ("http://a.io:0065535?q", true),
        ("https://e.com/é<>\"{}|\\^`%zz", true),
        ("ftp://a.com", false),
        ("http://", false),
        ("http:/a.com", false),
        ("http://1.2.3.4/", true),
        ("http://127.0.0.1:8080/media/a.svg", true),
        ("http://01.2.3.4/", false),
        ("http://1.2.3.256/", false),
        ("http://1.2.3/", false),
        ("http://a.b1/", true),
        ("http://a.1b/", false),
        ("http://-a.com", false),
        ("http://a-.com", false),
        // A punycode label must decode, which no pattern can say: none is taken.
        ("http://xn--bcher-kva.example", false),
        ("http://a..b", false),
        ("http://a.com.", false),
        ("http://a:65536", false),
        ("http://a:", false),
        ("http://a.com:80:90", false),
        ("http://user@a.com", false),
        ("http://a_b.com", false),
        ("http://ä.com", false),
        ("http://a.com/ b", false),
        ("http://a.com/\u{3000}", false),
        (" http://a.com", false),
    ] {
        assert_eq!(matches(&pattern, link), taken, "pattern on {link:?}");
        let checked = crate::catalog::check_optional_url("link", link).is_ok();
        assert_eq!(checked, taken, "check on {link:?}");
    }
}

#[test]
fn the_documented_text_patterns_are_the_rules_text_is_checked_by() {
    use text_schema::{pattern, Kind};
    let samples = [
        "",
        " ",
        "\u{3000}",
        "a",
        " a ",
        "Crème brûlée 🍮",
        "x\u{FEFF}",
        "a\tb",
        "a\u{85}",
        "\u{A0}",
    ];
    for text in samples {
        let line = TextLine::parse(text).is_ok();
        assert_eq!(matches(&pattern(Kind::Line), text), line, "{text:?}");
        let required = line && crate::catalog::check_required_text("t", text, usize::MAX).is_ok();
        assert_eq!(
            matches(&pattern(Kind::Required), text),
            required,
            "{text:?}"
        );
        let word = required && !text.chars().any(char::is_whitespace);
        assert_eq!(matches(&pattern(Kind::Word), text), word, "{text:?}");
    }
}

proptest::proptest! {
    #[test]
    fn every_link_the_pattern_describes_is_taken(
        link in proptest::string::string_regex(
            text_schema::pattern(text_schema::Kind::Link).trim_start_matches('^').trim_end_matches('$')
        ).unwrap()
    ) {
        // `check_optional_url` less its length bound, which `maxLength` states.
        let parsed = url::Url::parse(&link).is_ok();
        proptest::prop_assert!(crate::catalog::is_link(&link) && parsed, "{link:?}");
    }

    #[test]
    fn every_text_the_required_pattern_describes_is_taken(
        text in proptest::string::string_regex(
            text_schema::pattern(text_schema::Kind::Required).trim_start_matches('^').trim_end_matches('$')
        ).unwrap()
    ) {
        let text = TextLine::parse(&text).unwrap();
        proptest::prop_assert!(crate::catalog::check_required_text("t", &text, usize::MAX).is_ok());
    }
}

#[test]
fn uuids_are_taken_hyphenated_only() {
    let id = "0190B6F2-8c1e-7d3a-9f4b-2a6c8e0d1f35";
    assert!(hyphenated_uuid::parse(id).is_ok());
    assert!(matches(hyphenated_uuid::PATTERN, id));
    for other in [
        "0190b6f28c1e7d3a9f4b2a6c8e0d1f35",
        "{0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35}",
        "urn:uuid:0190b6f2-8c1e-7d3a-9f4b-2a6c8e0d1f35",
        "",
    ] {
        assert!(hyphenated_uuid::parse(other).is_err(), "{other}");
        assert!(!matches(hyphenated_uuid::PATTERN, other), "{other}");
    }
}

#[test]
fn product_ids_accept_a_global_id_or_a_bare_number() {
    let expected = "gid://shopify/Product/123";
    assert_eq!(
        ProductGid::parse("gid://shopify/Product/123")
            .unwrap()
            .as_str(),
        expected
    );
    assert_eq!(ProductGid::parse("123").unwrap().as_str(), expected);
    for bad in [
        "",
        "0",
        "-1",
        "+5",
        "12a",
        "gid://shopify/Collection/123",
        "gid://shopify/Product/",
        "gid://shopify/Product/x",
        "99999999999999999999999",
        // 20 digits fit a u64 but not the documented pattern.
        "10000000000000000000",
    ] {
        assert!(ProductGid::parse(bad).is_err(), "{bad:?} accepted");
    }
    assert_eq!(
        ProductGid::parse("0009999999999999999999")
            .unwrap()
            .as_str(),
        "gid://shopify/Product/9999999999999999999"
    );
    assert_eq!(
        CollectionGid::parse("7").unwrap().as_str(),
        "gid://shopify/Collection/7"
    );
}

#[test]
fn text_enums_round_trip_and_name_the_allowed_values() {
    for t in WidgetType::ALL {
        assert_eq!(t.as_str().parse::<WidgetType>().unwrap(), *t);
    }
    let err = "banner".parse::<WidgetType>().unwrap_err();
    assert_eq!(
        err.0,
        "'banner' is not one of carousel, story, productpage, floating"
    );
}

#[test]
fn timezones_and_currencies_are_validated() {
    assert!(Timezone::parse("Asia/Kathmandu").is_ok());
    assert!(Timezone::parse("Mars/Olympus").is_err());
    assert_eq!(Currency::parse("EUR").unwrap().code(), "EUR");
    assert!(Currency::parse("EURO").is_err());
    assert!(Currency::parse("usd").is_err());
}

#[test]
fn the_attribution_window_is_1_7_or_30_days_in_json_and_nothing_else() {
    let window = |json: &str| serde_json::from_str::<AttributionWindow>(json);
    for (json, days) in [("1", 1), ("7", 7), ("30", 30), ("7.0", 7)] {
        let parsed = window(json).unwrap_or_else(|e| panic!("{json}: {e}"));
        assert_eq!(parsed.days(), days);
        assert_eq!(serde_json::to_string(&parsed).unwrap(), days.to_string());
    }
    assert_eq!(AttributionWindow::default().days(), 7);
    for bad in [
        "0",
        "14",
        "-7",
        "7.5",
        "1e40",
        "18446744073709551615",
        "\"7\"",
        "true",
    ] {
        let err = window(bad).expect_err(bad).to_string();
        assert!(err.contains("1, 7 or 30"), "{bad}: {err}");
    }
    // serde_json adds where in the text; the API's message leaves it out.
    let err = window("14").unwrap_err().to_string();
    assert!(
        err.starts_with("must be 1, 7 or 30 (days), got 14 at "),
        "{err}"
    );
}

#[test]
fn the_attribution_window_is_documented_as_the_days_it_takes() {
    use utoipa::PartialSchema;
    let schema = serde_json::to_value(AttributionWindow::schema()).unwrap();
    assert_eq!(schema["type"], "integer");
    assert_eq!(schema["enum"], serde_json::json!([1, 7, 30]));
    assert_eq!(schema["default"], 7);
}
