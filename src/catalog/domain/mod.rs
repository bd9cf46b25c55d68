//! The catalog's domain values, parsed once at the edge. After parsing nothing re-checks them.
//!
//! One file a kind of value: the shop (`shop`), text (`text`, documented by `text_schema`), ids
//! (`hyphenated_uuid`, the platform's `global_id`s), the enums kept as text (`enums`), a shop's
//! timezone and currency (`locale`), its attribution window (`attribution`), its holdout
//! (`holdout`) and integers as JSON
//! clients write them (`number`).

/// Why an outside value was refused; the caller adds the field name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidValue(pub String);

/// The conversions `#[serde(try_from = "String", into = "String")]` uses: from text through the
/// type's `parse`, to text as `|value| text` says.
macro_rules! string_conversions {
    ($name:ident, |$value:ident| $text:expr) => {
        impl TryFrom<String> for $name {
            type Error = InvalidValue;
            fn try_from(s: String) -> Result<Self, Self::Error> {
                $name::parse(&s)
            }
        }

        impl From<$name> for String {
            fn from($value: $name) -> String {
                $text
            }
        }
    };
}

mod attribution;
mod enums;
mod global_id;
mod holdout;
pub mod hyphenated_uuid;
mod locale;
mod number;
mod shop;
mod text;
pub mod text_schema;

pub use attribution::AttributionWindow;
pub use enums::{
    ClickBehavior, Location, ModalLayout, SourceType, VideoStatus, ViewStyle, WidgetStatus,
    WidgetType,
};
pub use global_id::{CollectionGid, ProductGid};
pub use holdout::HoldoutPercent;
pub use locale::{Currency, Timezone};
pub(crate) use number::json_i32;
pub use shop::ShopDomain;
pub use text::TextLine;

#[cfg(test)]
mod tests;
