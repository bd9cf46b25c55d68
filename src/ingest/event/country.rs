//! A storefront's country, as the platform gives it to the page: an ISO 3166-1 alpha-2 code.

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::{PartialSchema, ToSchema};

/// Every ISO 3166-1 alpha-2 code in use, and the four the platform adds to them: AC (Ascension
/// Island), TA (Tristan da Cunha), XK (Kosovo) and ZZ (an unknown region). Sorted.
const CODES: [&str; 253] = [
    "AC", "AD", "AE", "AF", "AG", "AI", "AL", "AM", "AO", "AQ", "AR", "AS", "AT", "AU", "AW", "AX",
    "AZ", "BA", "BB", "BD", "BE", "BF", "BG", "BH", "BI", "BJ", "BL", "BM", "BN", "BO", "BQ", "BR",
    "BS", "BT", "BV", "BW", "BY", "BZ", "CA", "CC", "CD", "CF", "CG", "CH", "CI", "CK", "CL", "CM",
    "CN", "CO", "CR", "CU", "CV", "CW", "CX", "CY", "CZ", "DE", "DJ", "DK", "DM", "DO", "DZ", "EC",
    "EE", "EG", "EH", "ER", "ES", "ET", "FI", "FJ", "FK", "FM", "FO", "FR", "GA", "GB", "GD", "GE",
    "GF", "GG", "GH", "GI", "GL", "GM", "GN", "GP", "GQ", "GR", "GS", "GT", "GU", "GW", "GY", "HK",
    "HM", "HN", "HR", "HT", "HU", "ID", "IE", "IL", "IM", "IN", "IO", "IQ", "IR", "IS", "IT", "JE",
    "JM", "JO", "JP", "KE", "KG", "KH", "KI", "KM", "KN", "KP", "KR", "KW", "KY", "KZ", "LA", "LB",
    "LC", "LI", "LK", "LR", "LS", "LT", "LU", "LV", "LY", "MA", "MC", "MD", "ME", "MF", "MG", "MH",
    "MK", "ML", "MM", "MN", "MO", "MP", "MQ", "MR", "MS", "MT", "MU", "MV", "MW", "MX", "MY", "MZ",
    "NA", "NC", "NE", "NF", "NG", "NI", "NL", "NO", "NP", "NR", "NU", "NZ", "OM", "PA", "PE", "PF",
    "PG", "PH", "PK", "PL", "PM", "PN", "PR", "PS", "PT", "PW", "PY", "QA", "RE", "RO", "RS", "RU",
    "RW", "SA", "SB", "SC", "SD", "SE", "SG", "SH", "SI", "SJ", "SK", "SL", "SM", "SN", "SO", "SR",
    "SS", "ST", "SV", "SX", "SY", "SZ", "TA", "TC", "TD", "TF", "TG", "TH", "TJ", "TK", "TL", "TM",
    "TN", "TO", "TR", "TT", "TV", "TW", "TZ", "UA", "UG", "UM", "US", "UY", "UZ", "VA", "VC", "VE",
    "VG", "VI", "VN", "VU", "WF", "WS", "XK", "YE", "YT", "ZA", "ZM", "ZW", "ZZ",
];

/// A country code from the set above, upper case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(into = "&'static str")]
pub struct Country(&'static str);

impl Country {
    /// The code, if `text` is one (upper case, as the platform writes it).
    pub fn parse(text: &str) -> Option<Country> {
        let i = CODES.binary_search(&text).ok()?;
        Some(Country(CODES[i]))
    }

    pub fn as_str(self) -> &'static str {
        self.0
    }

    /// Every code, in order.
    pub fn all() -> impl Iterator<Item = &'static str> {
        CODES.into_iter()
    }
}

impl TryFrom<&str> for Country {
    type Error = String;

    fn try_from(text: &str) -> Result<Country, String> {
        Country::parse(text).ok_or_else(|| {
            format!("'{text}' is not a country code (ISO 3166-1 alpha-2, upper case)")
        })
    }
}

impl<'de> Deserialize<'de> for Country {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Country, D::Error> {
        struct Code;
        impl serde::de::Visitor<'_> for Code {
            type Value = Country;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a country code")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Country, E> {
                Country::try_from(text).map_err(E::custom)
            }
        }
        d.deserialize_str(Code)
    }
}

impl From<Country> for &'static str {
    fn from(country: Country) -> &'static str {
        country.0
    }
}

/// Documented as every code it takes.
impl PartialSchema for Country {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(
                "The storefront's country as the platform gives it to the page: ISO 3166-1 \
                 alpha-2, upper case.",
            ))
            .examples(["US"])
            .enum_values(Some(CODES))
            .into()
    }
}

impl ToSchema for Country {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_and_nothing_else_is_a_country() {
        let all: Vec<&str> = CODES.to_vec();
        assert_eq!(all.len(), 249 + 4);
        assert!(all.windows(2).all(|w| w[0] < w[1]), "sorted, no repeats");
        for code in &all {
            assert_eq!(Country::parse(code).map(Country::as_str), Some(*code));
        }
        for other in [
            "us", "USA", "U", "", "C ", " A", "DA", "XX", "AA", "UK", "EU", "ZZZ",
        ] {
            assert_eq!(Country::parse(other), None, "{other:?}");
        }
        let text = serde_json::to_string(&Country::parse("FR")).unwrap();
        assert_eq!(text, "\"FR\"");
        let read: Result<Country, _> = serde_json::from_str("\"fr\"");
        assert!(read
            .unwrap_err()
            .to_string()
            .contains("'fr' is not a country code"));
    }
}
