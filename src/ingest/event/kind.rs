//! What happened and where: an event's type, the attribution a shopper's cart or order gives a
//! video, and the place, device and traffic source it happened with, each with the value
//! ClickHouse's `Enum8` column keeps it as.

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventType {
    Impression,
    View,
    Click,
    AddToCart,
    CheckoutCompleted,
    /// One opening of a video in the player, sent when it closes: how long it played and how far.
    Watch,
    /// A browser's visit began (its first page), sent by both groups of a holdout: what
    /// conversion is measured against.
    Session,
}

impl EventType {
    /// The value of the `Enum8` column in ClickHouse.
    pub fn code(self) -> i8 {
        match self {
            EventType::Impression => 1,
            EventType::View => 2,
            EventType::Click => 3,
            EventType::AddToCart => 4,
            EventType::CheckoutCompleted => 5,
            EventType::Watch => 6,
            EventType::Session => 7,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Impression => "impression",
            EventType::View => "view",
            EventType::Click => "click",
            EventType::AddToCart => "add_to_cart",
            EventType::CheckoutCompleted => "checkout_completed",
            EventType::Watch => "watch",
            EventType::Session => "session",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Attribution {
    Direct,
    Influenced,
}

impl Attribution {
    /// The value of the `Enum8` column (0 = not given).
    pub fn code(attribution: Option<Attribution>) -> i8 {
        match attribution {
            None => 0,
            Some(Attribution::Direct) => 1,
            Some(Attribution::Influenced) => 2,
        }
    }
}

/// Declares a fixed set of values: the enum, its wire names, and its `Enum8` codes (0 is "not
/// known", what an event without the value keeps).
macro_rules! fixed_set {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $code:literal, $text:literal;)+ }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($variant,)+
        }

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The value of the `Enum8` column (0 = not known).
            pub fn code(value: Option<$name>) -> i8 {
                match value {
                    None => 0,
                    $(Some($name::$variant) => $code,)+
                }
            }

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }

            pub fn parse(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }
    };
}

fixed_set! {
    /// The type of page a widget showed on.
    Placement {
        Home = 1, "home";
        Product = 2, "product";
        Collection = 3, "collection";
        Page = 4, "page";
        Cart = 5, "cart";
        Other = 6, "other";
    }
}

fixed_set! {
    /// The kind of device, as the service reads it from the request (never from the body).
    Device {
        Mobile = 1, "mobile";
        Tablet = 2, "tablet";
        Desktop = 3, "desktop";
    }
}

fixed_set! {
    /// Where the shopper's visit came from, as the loader read it on the visit's landing page.
    Source {
        Direct = 1, "direct";
        Search = 2, "search";
        Social = 3, "social";
        Email = 4, "email";
        Paid = 5, "paid";
        Referral = 6, "referral";
    }
}

fixed_set! {
    /// The group of the shop's holdout a browser was assigned to: shown the widgets, or kept from
    /// them to measure what they sell.
    Group {
        Exposed = 1, "exposed";
        Holdout = 2, "holdout";
    }
}

impl Device {
    /// The device a request came from: the `Sec-CH-UA-Mobile` client hint when it says mobile,
    /// else the `User-Agent`'s usual tokens. `None` without a user agent. Tablets are checked
    /// first: an Android tablet's agent lacks `Mobile`, an iPad's names it.
    pub fn of_request(user_agent: Option<&str>, mobile_hint: Option<&str>) -> Option<Device> {
        if mobile_hint.is_some_and(|h| h.trim() == "?1") {
            return Some(Device::Mobile);
        }
        let agent = user_agent.filter(|a| !a.trim().is_empty())?;
        let has = |token: &str| agent.contains(token);
        let android = has("Android");
        if has("iPad")
            || has("Tablet")
            || has("Kindle")
            || has("Silk/")
            || android && !has("Mobile")
        {
            Some(Device::Tablet)
        } else if android || has("Mobi") || has("iPhone") || has("iPod") || has("Windows Phone") {
            Some(Device::Mobile)
        } else {
            Some(Device::Desktop)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_device_is_read_from_the_user_agent_and_the_mobile_hint() {
        let cases = [
            ("Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1", Device::Mobile),
            ("Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36", Device::Mobile),
            ("Mozilla/5.0 (Linux; Android 13; SM-X200) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", Device::Tablet),
            ("Mozilla/5.0 (iPad; CPU OS 16_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/16.0 Mobile/15E148 Safari/604.1", Device::Tablet),
            ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36", Device::Desktop),
            ("Mozilla/5.0 (Macintosh; Intel Mac OS X 14_0) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15", Device::Desktop),
            ("curl/8.0", Device::Desktop),
        ];
        for (agent, device) in cases {
            assert_eq!(
                Device::of_request(Some(agent), None),
                Some(device),
                "{agent}"
            );
        }
        assert_eq!(Device::of_request(None, None), None);
        assert_eq!(Device::of_request(Some("  "), Some("?0")), None);
        let desktop_agent = cases[4].0;
        assert_eq!(
            Device::of_request(Some(desktop_agent), Some("?1")),
            Some(Device::Mobile)
        );
        assert_eq!(
            Device::of_request(Some(desktop_agent), Some("?0")),
            Some(Device::Desktop)
        );
    }

    #[test]
    fn each_fixed_set_reads_back_what_it_writes_and_codes_from_one() {
        fn check<T: Copy + PartialEq + std::fmt::Debug>(
            all: &[T],
            text: fn(T) -> &'static str,
            parse: fn(&str) -> Option<T>,
            code: fn(Option<T>) -> i8,
        ) {
            for (i, &value) in all.iter().enumerate() {
                assert_eq!(parse(text(value)), Some(value));
                assert_eq!(code(Some(value)), i as i8 + 1);
            }
            assert_eq!(code(None), 0);
            assert_eq!(parse("unknown"), None);
        }
        check(
            Placement::ALL,
            Placement::as_str,
            Placement::parse,
            Placement::code,
        );
        check(Device::ALL, Device::as_str, Device::parse, Device::code);
        check(Source::ALL, Source::as_str, Source::parse, Source::code);
        check(Group::ALL, Group::as_str, Group::parse, Group::code);
    }
}
