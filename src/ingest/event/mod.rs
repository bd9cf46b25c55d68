//! Events as shoppers' browsers send them, parsed and validated at the edge into
//! [`SpoolEvent`]s: the exact record the spool keeps and ClickHouse receives.
//!
//! The request body and its errors are `body`'s; one event's wire fields `incoming`'s; the
//! checks of its free text and its revenue `text`'s and `revenue`'s; what an event is (its type,
//! attribution, placement, device, source and holdout group) `kind`'s, its country `country`'s; the record the spool keeps `spooled`'s.

mod body;
mod country;
mod incoming;
mod kind;
mod revenue;
mod spooled;
mod text;

pub use body::{parse_body, EventBatch, Invalid, MAX_EVENTS_PER_REQUEST, MAX_ORDER_PRODUCTS};
pub use country::Country;
pub use incoming::IncomingEvent;
pub use kind::{Attribution, Device, EventType, Group, Placement, Source};
pub use revenue::{Revenue, RevenueError, REVENUE_SCALE};
pub use spooled::{SpoolEvent, TimeWindow};
pub use text::{Text, MAX_TEXT_CHARS};

#[cfg(test)]
mod tests;
