//! What happened: an event's type and the attribution a shopper's cart or order gives a video,
//! with the values ClickHouse's `Enum8` columns keep them as.

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
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Impression => "impression",
            EventType::View => "view",
            EventType::Click => "click",
            EventType::AddToCart => "add_to_cart",
            EventType::CheckoutCompleted => "checkout_completed",
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
