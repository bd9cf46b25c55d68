//! The analytics queries. They read the daily views only; their texts live in `sql/`.

use std::collections::HashMap;
use std::time::Duration;

use chrono::NaiveDate;
use clickhouse::Row;
use serde::Deserialize;

use super::dates::DateRange;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::warehouse::Warehouse;

const VIDEO_TOTALS_SQL: &str = include_str!("../../sql/20_analytics_video_totals.sql");
const VIDEO_ONE_SQL: &str = include_str!("../../sql/21_analytics_video_one.sql");
const WIDGET_TOTALS_SQL: &str = include_str!("../../sql/22_analytics_widget_totals.sql");
const WIDGET_ONE_SQL: &str = include_str!("../../sql/23_analytics_widget_one.sql");
const SHOP_TOTALS_SQL: &str = include_str!("../../sql/24_analytics_shop_totals.sql");

/// An analyst waits at most this long before hearing that ClickHouse is unavailable.
const QUERY_TIMEOUT: Duration = Duration::from_secs(10);

/// Counts over a range. Revenue is in ten-thousandths of the currency unit, exact.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Row, Deserialize)]
pub struct Totals {
    pub impressions: u64,
    pub views: u64,
    pub clicks: u64,
    pub add_to_cart: u64,
    pub orders: u64,
    pub revenue_e4: i64,
}

#[derive(Row, Deserialize)]
struct KeyedTotals {
    id: String,
    totals: Totals,
}

async fn run<T>(
    query: impl std::future::Future<Output = Result<T, clickhouse::error::Error>>,
) -> Result<T, ApiError> {
    match tokio::time::timeout(QUERY_TIMEOUT, query).await {
        Ok(result) => Ok(result?),
        Err(_) => Err(ApiError::Unavailable(anyhow::anyhow!(
            "ClickHouse did not answer within {QUERY_TIMEOUT:?}"
        ))),
    }
}

/// Binds a range query's parameters in the order its text expects (see `sql/20_…`): for each
/// part (whole months, the partial month before them, the one after) the shop, the part's first
/// and last date, and `id` when the query is about one video or widget.
fn bound(
    warehouse: &Warehouse,
    sql: &str,
    shop: &ShopDomain,
    range: &DateRange,
    id: Option<&str>,
) -> clickhouse::query::Query {
    // A part with no days is bound as a range that ends before it starts (with dates every
    // ClickHouse Date can hold).
    let empty = (
        NaiveDate::from_ymd_opt(2100, 1, 1).expect("valid date"),
        NaiveDate::from_ymd_opt(1970, 1, 1).expect("valid date"),
    );
    let split = range.split_by_month();
    let parts = [split.months, split.edges[0], split.edges[1]];
    let mut query = warehouse.client().query(sql);
    for (first, last) in parts.map(|part| part.unwrap_or(empty)) {
        query = query
            .bind(shop.as_str())
            .bind(first.to_string())
            .bind(last.to_string());
        if let Some(id) = id {
            query = query.bind(id);
        }
    }
    query
}

/// What per-id totals are counted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Subject {
    Video,
    Widget,
}

impl Subject {
    fn totals_sql(self) -> &'static str {
        match self {
            Subject::Video => VIDEO_TOTALS_SQL,
            Subject::Widget => WIDGET_TOTALS_SQL,
        }
    }

    fn one_sql(self) -> &'static str {
        match self {
            Subject::Video => VIDEO_ONE_SQL,
            Subject::Widget => WIDGET_ONE_SQL,
        }
    }
}

/// Totals per id (video or widget) with any events in the range.
pub async fn totals_by_id(
    warehouse: &Warehouse,
    subject: Subject,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<HashMap<String, Totals>, ApiError> {
    let query = bound(warehouse, subject.totals_sql(), shop, range, None);
    let rows: Vec<KeyedTotals> = run(query.fetch_all()).await?;
    Ok(rows.into_iter().map(|r| (r.id, r.totals)).collect())
}

/// The totals of one video or widget (zero where nothing happened).
pub async fn totals_of(
    warehouse: &Warehouse,
    subject: Subject,
    shop: &ShopDomain,
    range: &DateRange,
    id: &str,
) -> Result<Totals, ApiError> {
    let query = bound(warehouse, subject.one_sql(), shop, range, Some(id));
    let row: Option<KeyedTotals> = run(query.fetch_optional()).await?;
    Ok(row.map(|r| r.totals).unwrap_or_default())
}

/// Totals per video: [`totals_by_id`] for [`Subject::Video`].
pub async fn video_totals(
    warehouse: &Warehouse,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<HashMap<String, Totals>, ApiError> {
    totals_by_id(warehouse, Subject::Video, shop, range).await
}

pub async fn shop_totals(
    warehouse: &Warehouse,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<Totals, ApiError> {
    let totals: Option<Totals> =
        run(bound(warehouse, SHOP_TOTALS_SQL, shop, range, None).fetch_optional()).await?;
    Ok(totals.unwrap_or_default())
}
