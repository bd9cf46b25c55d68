//! What the API tests share: the service under test (in this process or in its own), requests and
//! what they assert of answers, the warehouse, the spool and metrics, and waiting on conditions.
//! The modules named by a part of the product hold what that part's tests arrange and ask.

mod app;
mod clickhouse;
mod eventually;
mod http;
mod listening;
mod metrics;
mod process;
mod spool;

pub use app::*;
pub use clickhouse::*;
pub use eventually::*;
pub use http::*;
pub use listening::*;
pub use metrics::*;
pub use process::*;
pub use spool::*;

pub mod analytics;
pub mod fault_proxy;
pub mod media;
pub mod platform;
pub mod storefront;
pub mod truth;
pub mod truth_series;
