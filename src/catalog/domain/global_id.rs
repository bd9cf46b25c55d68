//! The platform's global ids of products and collections.

use std::fmt;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::InvalidValue;

/// A platform global id of one kind (`gid://shopify/Product/123`). The bare number `123` is
/// accepted wherever a global id is, and normalised to the global form.
macro_rules! global_id {
    ($name:ident, $kind:literal, $pattern:literal) => {
        #[derive(
            Debug,
            Clone,
            PartialEq,
            Eq,
            Hash,
            PartialOrd,
            Ord,
            Serialize,
            Deserialize,
            ToSchema,
            sqlx::Type,
        )]
        #[serde(try_from = "String", into = "String")]
        #[sqlx(transparent)]
        #[schema(
                                    value_type = String,
                                    example = json!(concat!("gid://shopify/", $kind, "/123")),
                                    pattern = $pattern
                                )]
        pub struct $name(String);

        impl $name {
            const PREFIX: &'static str = concat!("gid://shopify/", $kind, "/");

            pub fn parse(raw: &str) -> Result<Self, InvalidValue> {
                let raw = raw.trim();
                let number = raw.strip_prefix(Self::PREFIX).unwrap_or(raw);
                // At most 19 significant digits: what the documented pattern says, and far more
                // than the platform's ids use.
                let digits = number.trim_start_matches('0').len();
                match number.parse::<u64>() {
                    Ok(n)
                        if n > 0 && digits <= 19 && number.bytes().all(|b| b.is_ascii_digit()) =>
                    {
                        Ok($name(format!("{}{}", Self::PREFIX, n)))
                    }
                    _ => Err(InvalidValue(format!(
                        "'{raw}' is neither a {} global id ({}123) nor a number",
                        $kind,
                        Self::PREFIX
                    ))),
                }
            }

            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        string_conversions!($name, |id| id.0);
    };
}

global_id!(
    ProductGid,
    "Product",
    "^(gid://shopify/Product/)?0*[1-9][0-9]{0,18}$"
);
global_id!(
    CollectionGid,
    "Collection",
    "^(gid://shopify/Collection/)?0*[1-9][0-9]{0,18}$"
);
