//! The catalog's enums: kept as text in Postgres, sent as the same text in JSON.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::InvalidValue;

/// An enum stored as text in Postgres and sent as the same text in JSON.
///
/// The texts are taken as `tt`, not `literal`: a `literal` fragment reaches derive macros wrapped
/// in an invisible group, which serde unwraps but utoipa does not (it then ignores the `rename` and
/// documents the variants' Rust names).
macro_rules! text_enum {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $text:tt),+ $(,)? } $(default $default:ident)?) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
        pub enum $name {
            $(#[serde(rename = $text)] $variant),+
        }

        $(impl Default for $name {
            fn default() -> Self {
                $name::$default
            }
        })?

        impl $name {
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $name {
            type Err = InvalidValue;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(InvalidValue(format!(
                        "'{}' is not one of {}",
                        s,
                        [$($text),+].join(", ")
                    ))),
                }
            }
        }

        impl sqlx::Type<sqlx::Postgres> for $name {
            fn type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::Type<sqlx::Postgres>>::type_info()
            }
            fn compatible(ty: &sqlx::postgres::PgTypeInfo) -> bool {
                <String as sqlx::Type<sqlx::Postgres>>::compatible(ty)
            }
        }

        impl sqlx::postgres::PgHasArrayType for $name {
            fn array_type_info() -> sqlx::postgres::PgTypeInfo {
                <String as sqlx::postgres::PgHasArrayType>::array_type_info()
            }
        }

        impl<'r> sqlx::Decode<'r, sqlx::Postgres> for $name {
            fn decode(value: sqlx::postgres::PgValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                let text = <&str as sqlx::Decode<sqlx::Postgres>>::decode(value)?;
                Ok(text.parse()?)
            }
        }

        impl sqlx::Encode<'_, sqlx::Postgres> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut sqlx::postgres::PgArgumentBuffer,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <&str as sqlx::Encode<sqlx::Postgres>>::encode(self.as_str(), buf)
            }
        }
    };
}

text_enum!(
    /// The kinds of widget. `floating`: a small round preview fixed in a corner of every page
    /// its rules allow, opening the player.
    WidgetType {
        Carousel => "carousel",
        Story => "story",
        ProductPage => "productpage",
        Floating => "floating",
    }
);
text_enum!(
    /// Only `active` widgets reach the storefront.
    WidgetStatus { Active => "active", Draft => "draft", Archived => "archived" }
);
text_enum!(
    /// Only `PUBLISHED` videos reach the storefront.
    VideoStatus { Published => "PUBLISHED", Draft => "DRAFT", Archived => "ARCHIVED" }
);
text_enum!(ViewStyle { Default => "default", Compact => "compact", Large => "large" } default Default);
text_enum!(ClickBehavior { OpenModal => "open_modal", OpenProduct => "open_product", None => "none" } default OpenModal);
text_enum!(ModalLayout { Vertical => "vertical", Horizontal => "horizontal" } default Vertical);
text_enum!(
    /// `manual` renders the widget's own videos; `product` the current product's videos.
    SourceType { Manual => "manual", Product => "product" } default Manual
);
text_enum!(
    /// The storefront page type a widget is requested for.
    Location { Home => "home", Product => "product", Collection => "collection", Page => "page", Other => "other" }
);
