//! The analytics queries. They read the aggregates, never the raw events, but for the holdout's
//! lift, which needs each session's revenue; their texts live in `sql/`.

use std::time::Duration;

use chrono::NaiveDate;
use clickhouse::Row;
use serde::Deserialize;
use uuid::Uuid;

use super::dates::DateRange;
use super::dimensions::{Dimension, Filters, Reading};
use super::lift::GroupFigures;
use super::split::{Edge, YearSplit};
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::warehouse::Warehouse;

const LIFT_GROUPS_SQL: &str = include_str!("../../sql/48_analytics_lift_groups.sql");
const VIDEO_TOTALS_SQL: &str = include_str!("../../sql/20_analytics_video_totals.sql");
const VIDEO_TOTALS_OF_DAYS_SQL: &str =
    include_str!("../../sql/29_analytics_video_totals_of_days.sql");
const VIDEO_ONE_SQL: &str = include_str!("../../sql/21_analytics_video_one.sql");
const WIDGET_TOTALS_SQL: &str = include_str!("../../sql/22_analytics_widget_totals.sql");
const WIDGET_ONE_SQL: &str = include_str!("../../sql/23_analytics_widget_one.sql");
const SHOP_TOTALS_SQL: &str = include_str!("../../sql/24_analytics_shop_totals.sql");
const SHOP_DAYS_SQL: &str = include_str!("../../sql/26_analytics_shop_days.sql");
const VIDEO_DAYS_SQL: &str = include_str!("../../sql/27_analytics_video_days.sql");
const WIDGET_DAYS_SQL: &str = include_str!("../../sql/28_analytics_widget_days.sql");
const SHOP_BY_DIMENSION_SQL: &str = include_str!("../../sql/40_analytics_shop_by_dimension.sql");
const SHOP_BY_DIMENSIONS_SQL: &str = include_str!("../../sql/41_analytics_shop_by_dimensions.sql");
const VIDEO_BY_DIMENSIONS_SQL: &str =
    include_str!("../../sql/42_analytics_video_by_dimensions.sql");
const WIDGET_BY_DIMENSIONS_SQL: &str =
    include_str!("../../sql/43_analytics_widget_by_dimensions.sql");
const VIDEO_TOTALS_BY_DIMENSION_SQL: &str =
    include_str!("../../sql/44_analytics_video_totals_by_dimension.sql");
const WIDGET_TOTALS_BY_DIMENSION_SQL: &str =
    include_str!("../../sql/45_analytics_widget_totals_by_dimension.sql");
const VIDEO_TOTALS_BY_DIMENSIONS_SQL: &str =
    include_str!("../../sql/46_analytics_video_totals_by_dimensions.sql");
const WIDGET_TOTALS_BY_DIMENSIONS_SQL: &str =
    include_str!("../../sql/47_analytics_widget_totals_by_dimensions.sql");

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
    /// Add-to-carts and checkouts whose event said `attributionType: direct`.
    pub direct: Attributed,
    /// … and `influenced`. Events without an attribution are in neither.
    pub influenced: Attributed,
    /// Milliseconds played, over every watch (one per opening of a video in the player).
    pub watched_ms: u64,
    /// Watches: openings of a video in the player.
    pub watches: u64,
    /// Openings that reached each point of their video.
    pub reached: Reached,
}

/// Openings that reached 25, 50, 75, 95 and 100 percent of their video.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Row, Deserialize)]
pub struct Reached {
    pub p25: u64,
    pub p50: u64,
    pub p75: u64,
    /// Completed, as the industry counts it.
    pub p95: u64,
    pub p100: u64,
}

impl std::ops::AddAssign for Reached {
    fn add_assign(&mut self, other: Reached) {
        self.p25 += other.p25;
        self.p50 += other.p50;
        self.p75 += other.p75;
        self.p95 += other.p95;
        self.p100 += other.p100;
    }
}

/// The part of the totals one attribution accounts for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Row, Deserialize)]
pub struct Attributed {
    pub add_to_cart: u64,
    pub orders: u64,
    pub revenue_e4: i64,
}

impl std::ops::AddAssign for Attributed {
    fn add_assign(&mut self, other: Attributed) {
        self.add_to_cart += other.add_to_cart;
        self.orders += other.orders;
        self.revenue_e4 += other.revenue_e4;
    }
}

impl std::ops::AddAssign for Totals {
    fn add_assign(&mut self, other: Totals) {
        self.impressions += other.impressions;
        self.views += other.views;
        self.clicks += other.clicks;
        self.add_to_cart += other.add_to_cart;
        self.orders += other.orders;
        self.revenue_e4 += other.revenue_e4;
        self.direct += other.direct;
        self.influenced += other.influenced;
        self.watched_ms += other.watched_ms;
        self.watches += other.watches;
        self.reached += other.reached;
    }
}

/// The totals of one local day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Row, Deserialize)]
pub struct DayTotals {
    #[serde(with = "clickhouse::serde::chrono::date")]
    pub date: NaiveDate,
    pub totals: Totals,
}

/// One id's totals, as a query about that id answers: the id comes first and is read past.
#[derive(Row, Deserialize)]
struct OneTotals {
    _id: String,
    totals: Totals,
}

/// A row of per-id totals as it arrives, its id borrowed from the answer: a list reads 10,000 of
/// them, and an owned id apiece was a tenth of the service's work on a list computed afresh.
#[derive(Row, Deserialize)]
struct KeyedTotals<'a> {
    id: &'a str,
    totals: Totals,
}

/// Totals by catalog id, each id once, in no particular order: rows as ClickHouse sends them,
/// with the id parsed. A list adds them to its catalog's items by position
/// (`list_cache::Catalog`); keying them in a map of their own first cost a fifth of the
/// service's work on a list computed afresh.
pub type IdTotals = Vec<(Uuid, Totals)>;

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

/// Binds the parameters of a query that reads a range as whole blocks and the edges at their ends
/// (see `split` and `sql/20_…`), in the order its text expects: for the whole blocks, the shop,
/// the first and last date, and `extra` (the id when the query is about one video or widget,
/// a dimension and its value when it keeps one); then for each edge its sign (1 when there is
/// none) and the same.
fn bound_parts(
    warehouse: &Warehouse,
    sql: &str,
    shop: &ShopDomain,
    (whole, edges): (Option<(NaiveDate, NaiveDate)>, &[Option<Edge>]),
    extra: &[&str],
) -> clickhouse::query::Query {
    let part = |query: clickhouse::query::Query, days| {
        let (first, last) = warehouse_days(days);
        let query = query.bind(shop.as_str()).bind(first).bind(last);
        extra.iter().fold(query, |query, value| query.bind(*value))
    };
    let mut query = part(warehouse.client().query(sql), whole);
    for edge in edges {
        query = query.bind(edge.map_or(1, |e| e.sign));
        query = part(query, edge.map(|e| (e.first, e.last)));
    }
    query
}

/// Binds a query that reads a range as whole years, the months at their edges and the days at
/// the edges of those (`sql/20_…`).
fn bound_by_year(
    warehouse: &Warehouse,
    sql: &str,
    shop: &ShopDomain,
    split: &YearSplit,
    extra: &[&str],
) -> clickhouse::query::Query {
    let edges = [split.months, split.days].concat();
    bound_parts(warehouse, sql, shop, (split.years, &edges), extra)
}

/// Binds a query that reads a range as whole months and the days at their edges (`sql/22_…`).
fn bound_by_month(
    warehouse: &Warehouse,
    sql: &str,
    shop: &ShopDomain,
    range: &DateRange,
    id: Option<&str>,
) -> clickhouse::query::Query {
    let split = range.split_by_month();
    let id: Vec<&str> = id.into_iter().collect();
    bound_parts(warehouse, sql, shop, (split.whole, &split.edges), &id)
}

/// Binds a query over one range of days (see `sql/24_…`): the shop, `id` when the query is
/// about one video or widget, the first and last date.
fn bound_range(
    warehouse: &Warehouse,
    sql: &str,
    shop: &ShopDomain,
    range: &DateRange,
    id: Option<&str>,
) -> clickhouse::query::Query {
    let mut query = warehouse.client().query(sql).bind(shop.as_str());
    if let Some(id) = id {
        query = query.bind(id);
    }
    let (first, last) = warehouse_days(Some((range.start, range.end)));
    query.bind(first).bind(last)
}

/// The first and last day of `days` that a ClickHouse `Date` holds (1970-01-01 to 2105-12-31 on
/// every version), as the text `toDate(?)` reads. No event is dated outside them, so a range
/// that reaches past them loses nothing by the cut, and a date such as year -2 or 2200, which
/// ClickHouse would refuse or wrap, never reaches it. No days (`None`, or none left after the
/// cut) bind as a range that ends before it starts.
fn warehouse_days(days: Option<(NaiveDate, NaiveDate)>) -> (String, String) {
    let held = |y, m, d| NaiveDate::from_ymd_opt(y, m, d).expect("a valid date");
    let (min, max) = (held(1970, 1, 1), held(2105, 12, 31));
    match days {
        Some((first, last)) if first <= max && last >= min => {
            (first.max(min).to_string(), last.min(max).to_string())
        }
        _ => (max.to_string(), min.to_string()),
    }
}

/// What per-id totals are counted for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subject {
    Video,
    Widget,
}

/// Binds the four filters as the queries of the aggregates of every dimension take them: for
/// each dimension, 1 and the value kept, or 0 and ''.
fn bound_filters(query: clickhouse::query::Query, filters: &Filters) -> clickhouse::query::Query {
    filters.values().into_iter().fold(query, |query, value| {
        query
            .bind(u8::from(value.is_some()))
            .bind(value.unwrap_or(""))
    })
}

/// Totals per id (video or widget) with any events in the range that `filters` keep. An id
/// that is not a catalog id names no catalog item (an event may carry any printable id), so it
/// is left out.
pub async fn totals_by_id(
    warehouse: &Warehouse,
    subject: Subject,
    shop: &ShopDomain,
    range: &DateRange,
    filters: &Filters,
) -> Result<IdTotals, ApiError> {
    // A range of days alone (today's, asked after every batch) takes the one-part text. A
    // widget list is 50-odd rows, where the parts cost nothing worth a text of its own. One
    // filter reads its value's rows of the aggregates by dimension, as the plain list reads
    // the plain ones; more than one read the four dimensions together.
    let query = match (subject, filters.single()) {
        _ if filters.is_empty() => match subject {
            Subject::Video => match range.split_by_year() {
                split if split.is_days_only() => {
                    bound_range(warehouse, VIDEO_TOTALS_OF_DAYS_SQL, shop, range, None)
                }
                split => bound_by_year(warehouse, VIDEO_TOTALS_SQL, shop, &split, &[]),
            },
            Subject::Widget => bound_by_month(warehouse, WIDGET_TOTALS_SQL, shop, range, None),
        },
        (Subject::Video, Some((dimension, value))) => {
            let split = range.split_by_year();
            let kept = [dimension.as_str(), value];
            bound_by_year(
                warehouse,
                VIDEO_TOTALS_BY_DIMENSION_SQL,
                shop,
                &split,
                &kept,
            )
        }
        (Subject::Widget, Some((dimension, value))) => {
            let (first, last) = warehouse_days(Some((range.start, range.end)));
            let query = warehouse.client().query(WIDGET_TOTALS_BY_DIMENSION_SQL);
            let query = query
                .bind(shop.as_str())
                .bind(dimension.as_str())
                .bind(value);
            query.bind(first).bind(last)
        }
        (subject, None) => {
            let sql = match subject {
                Subject::Video => VIDEO_TOTALS_BY_DIMENSIONS_SQL,
                Subject::Widget => WIDGET_TOTALS_BY_DIMENSIONS_SQL,
            };
            bound_filters(bound_range(warehouse, sql, shop, range, None), filters)
        }
    };
    // One thread: the query sums a few rows per id (under ten per video over a year), so a second
    // thread builds a second table of every id, merged into the first, which costs what it saves;
    // and a list runs two or three of these at once. See BENCHMARKS.md, "Analytics at scale".
    let query = query.with_option("max_threads", "1");
    run(async {
        let mut rows = query.fetch::<KeyedTotals<'_>>()?;
        let mut totals = IdTotals::new();
        while let Some(row) = rows.next().await? {
            if let Some(id) = canonical_catalog_id(row.id) {
                totals.push((id, row.totals));
            }
        }
        Ok(totals)
    })
    .await
}

/// The catalog id an event's id names: a UUID written as the catalog writes it (hyphenated, lower
/// case). Another spelling of the same UUID is another id, so its events never add to the
/// catalog item's. Stricter than `handlers::catalog_id`, which reads a caller's path and takes
/// any spelling, then asks ClickHouse for the catalog's.
fn canonical_catalog_id(id: &str) -> Option<Uuid> {
    let canonical = id.len() == 36 && !id.bytes().any(|b| b.is_ascii_uppercase());
    canonical.then(|| Uuid::try_parse(id).ok()).flatten()
}

/// The totals of one video or widget (zero where nothing happened).
pub async fn totals_of(
    warehouse: &Warehouse,
    subject: Subject,
    shop: &ShopDomain,
    range: &DateRange,
    id: &str,
) -> Result<Totals, ApiError> {
    // A video's own rows are one key range of video_daily_by_video; a widget's are few per day.
    let query = match subject {
        Subject::Video => bound_range(warehouse, VIDEO_ONE_SQL, shop, range, Some(id)),
        Subject::Widget => bound_by_month(warehouse, WIDGET_ONE_SQL, shop, range, Some(id)),
    };
    let row: Option<OneTotals> = run(query.fetch_optional()).await?;
    Ok(row.map(|r| r.totals).unwrap_or_default())
}

pub async fn shop_totals(
    warehouse: &Warehouse,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<Totals, ApiError> {
    let totals: Option<Totals> =
        run(bound_range(warehouse, SHOP_TOTALS_SQL, shop, range, None).fetch_optional()).await?;
    Ok(totals.unwrap_or_default())
}

/// One group of the holdout over a range, as `sql/48_…` reads it.
#[derive(Debug, Row, Deserialize)]
struct LiftGroupRow {
    group_name: String,
    sessions: u64,
    orders: u64,
    revenue_e4: i64,
    revenue_e4_squares: f64,
}

/// The exposed group's figures and the holdout's over `range` (zeros for a group without events).
pub async fn lift_groups(
    warehouse: &Warehouse,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<(GroupFigures, GroupFigures), ApiError> {
    let rows: Vec<LiftGroupRow> =
        run(bound_range(warehouse, LIFT_GROUPS_SQL, shop, range, None).fetch_all()).await?;
    let figures = |name: &str| {
        rows.iter()
            .find(|row| row.group_name == name)
            .map_or_else(GroupFigures::default, |row| GroupFigures {
                sessions: row.sessions,
                orders: row.orders,
                revenue_e4: row.revenue_e4,
                revenue_e4_squares: row.revenue_e4_squares,
            })
    };
    Ok((figures("exposed"), figures("holdout")))
}

/// Whose days a time series counts.
#[derive(Clone, Debug)]
pub enum Series {
    Shop,
    Video(String),
    Widget(String),
}

/// The totals of one value of a breakdown (every value together without one), on one day or, when
/// not asked by day, over the whole range (`day` is then 1970-01-01).
#[derive(Debug, Clone, PartialEq, Eq, Row, Deserialize)]
pub struct ValueTotals {
    #[serde(with = "clickhouse::serde::chrono::date")]
    pub day: NaiveDate,
    /// As the aggregates keep it: '' for events that did not say.
    pub value: String,
    pub totals: Totals,
}

/// The shop's, one video's or one widget's totals of the events `filters` keep, per value of
/// `breakdown` (or all together), per day when `by_day`, in no particular order; only values
/// and days with events.
pub async fn totals_by_value(
    warehouse: &Warehouse,
    series: &Series,
    shop: &ShopDomain,
    range: &DateRange,
    (filters, breakdown): (&Filters, Option<Dimension>),
    by_day: bool,
) -> Result<Vec<ValueTotals>, ApiError> {
    let per_item = !matches!(series, Series::Shop);
    let (first, last) = warehouse_days(Some((range.start, range.end)));
    let query = match Reading::of(filters, breakdown, per_item) {
        Reading::One(dimension) => {
            let kept = filters.values()[dimension as usize];
            let query = warehouse
                .client()
                .query(SHOP_BY_DIMENSION_SQL)
                .bind(u8::from(by_day));
            let query = query.bind(shop.as_str()).bind(dimension.as_str());
            let query = query.bind(first).bind(last);
            query
                .bind(u8::from(kept.is_some()))
                .bind(kept.unwrap_or(""))
        }
        Reading::All | Reading::Plain => {
            let (sql, id) = match series {
                Series::Shop => (SHOP_BY_DIMENSIONS_SQL, None),
                Series::Video(id) => (VIDEO_BY_DIMENSIONS_SQL, Some(id)),
                Series::Widget(id) => (WIDGET_BY_DIMENSIONS_SQL, Some(id)),
            };
            let code = Dimension::code(breakdown);
            let query = warehouse.client().query(sql).bind(u8::from(by_day));
            let query = (0..4).fold(query, |query, _| query.bind(code));
            let mut query = query.bind(shop.as_str());
            if let Some(id) = id {
                query = query.bind(id.as_str());
            }
            bound_filters(query.bind(first).bind(last), filters)
        }
    };
    run(query.fetch_all()).await
}

/// The totals of each day of the range with any events, in no particular order.
pub async fn daily_totals(
    warehouse: &Warehouse,
    series: &Series,
    shop: &ShopDomain,
    range: &DateRange,
) -> Result<Vec<DayTotals>, ApiError> {
    let query = match series {
        Series::Shop => bound_range(warehouse, SHOP_DAYS_SQL, shop, range, None),
        Series::Video(id) => bound_range(warehouse, VIDEO_DAYS_SQL, shop, range, Some(id)),
        Series::Widget(id) => bound_range(warehouse, WIDGET_DAYS_SQL, shop, range, Some(id)),
    };
    run(query.fetch_all()).await
}

#[cfg(test)]
mod tests {
    use super::canonical_catalog_id;

    #[test]
    fn only_the_catalogs_spelling_of_an_id_is_a_catalog_id() {
        let id = "01a21c5f-2ff5-74cf-aa51-37f5e153d509";
        assert_eq!(
            canonical_catalog_id(id).map(|u| u.to_string()).as_deref(),
            Some(id)
        );
        for other in [
            "01A21C5F-2FF5-74CF-AA51-37F5E153D509",
            "01a21c5f2ff574cfaa5137f5e153d509",
            "{01a21c5f-2ff5-74cf-aa51-37f5e153d509}",
            "urn:uuid:01a21c5f-2ff5-74cf-aa51-37f5e153d509",
            "video-1",
            "",
        ] {
            assert_eq!(canonical_catalog_id(other), None, "{other}");
        }
    }
}
