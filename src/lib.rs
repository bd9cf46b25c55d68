//! videoapp: shoppable video widgets for online stores, and the analytics of what they sell.
//!
//! Module map (`docs/ARCHITECTURE.md` describes the design): `config` → `app` (router, state, shutdown) → the surfaces `storefront`,
//! `analytics`, `admin`, `ops`, over the data owners `catalog` (Postgres) and `warehouse`
//! (ClickHouse); `telemetry`, `error`, `extract` and `bearer` serve them all. `devstore` is the
//! demo store, an emulation of the platform's storefront for development and the browser tests.

pub mod admin;
pub mod analytics;
pub mod app;
pub mod bearer;
pub mod cache_invalidation;
pub mod catalog;
pub mod compressed;
pub mod config;
pub mod dashboard;
pub mod db;
pub mod devstore;
pub mod error;
pub mod extract;
pub mod generate;
pub mod ingest;
pub mod media;
pub mod openapi;
pub mod ops;
pub mod platform;
pub mod serve;
pub mod storefront;
pub mod telemetry;
pub mod warehouse;
