//! The analytics API: its keys now; rate limits, queries and handlers come with their issue.

pub mod keys;
