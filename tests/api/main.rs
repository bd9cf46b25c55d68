//! Integration tests: the real service over HTTP, on real Postgres and ClickHouse.

mod helpers;

mod admin_api_keys;
mod admin_auth;
mod admin_products;
mod admin_shops;
mod admin_text;
mod admin_videos;
mod admin_widgets;
mod analytics_api;
mod analytics_cache;
mod analytics_long_ranges;
mod analytics_series;
mod analytics_shared_rate_limit;
mod analytics_truth;
mod analytics_truth_series;
mod clickhouse_compaction;
mod clickhouse_migrations;
mod config;
mod dashboard_api;
mod edge_limits;
mod edge_metrics;
mod fault_proxy;
mod ingest;
mod ingest_repeats;
mod ops;
mod platform_install;
mod platform_privacy;
mod platform_standin;
mod platform_webhooks;
mod postgres_outage;
mod scale_out;
mod storefront_cache;
mod storefront_view_counts;
mod storefront_widgets;
