//! The shop: its platform domain.

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::InvalidValue;

/// A shop is its platform domain, e.g. `example.myshopify.com`: taken in any case (and with
/// surrounding spaces ignored), kept lower-cased.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(try_from = "String", into = "String")]
#[schema(
    value_type = String,
    example = "example.myshopify.com",
    // What `parse` takes, in a pattern without flags: the name's case and the suffix's are free.
    pattern = r"^[A-Za-z0-9][A-Za-z0-9-]{0,62}\.[Mm][Yy][Ss][Hh][Oo][Pp][Ii][Ff][Yy]\.[Cc][Oo][Mm]$"
)]
pub struct ShopDomain(String);

impl ShopDomain {
    const SUFFIX: &'static str = ".myshopify.com";

    pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
        let domain = raw.trim().to_ascii_lowercase();
        let name = domain.strip_suffix(Self::SUFFIX).unwrap_or("");
        let valid_name = !name.is_empty()
            && name.len() <= 63
            && !name.starts_with('-')
            && name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if valid_name {
            Ok(ShopDomain(domain))
        } else {
            Err(InvalidValue(format!(
                "'{raw}' is not a shop domain like example.myshopify.com"
            )))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ShopDomain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

string_conversions!(ShopDomain, |d| d.0);
