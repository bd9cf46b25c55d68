//! What changed in a shop's numbers, kept in Postgres so that every instance sees it, for caches
//! of what is computed from ClickHouse (see `analytics::list_cache`).
//!
//! Two records: the local days each shipped batch touched, every (shop, day) holding a number
//! drawn from one sequence once the batch was in ClickHouse; and a per-shop version that moves
//! when everything may have changed (a migration that rewrote aggregates). A number is drawn only
//! after its batch's insert has returned, so a reader that reads these before it queries
//! ClickHouse never holds numbers older than what it read: the greatest number over a range of
//! days, with the shop's version, is the version of whatever was computed over that range.

use chrono::NaiveDate;
use sqlx::{PgExecutor, PgPool};

use crate::catalog::domain::ShopDomain;

/// Records that these (shop, local day) pairs have new events in ClickHouse.
pub async fn days_landed<'e>(
    executor: impl PgExecutor<'e>,
    days: &[(&str, NaiveDate)],
) -> Result<(), sqlx::Error> {
    if days.is_empty() {
        return Ok(());
    }
    let (shops, dates): (Vec<&str>, Vec<NaiveDate>) = days.iter().copied().unzip();
    sqlx::query(
        "INSERT INTO analytics_days (shop_domain, local_date, change) \
         SELECT shop, day, nextval('analytics_changes') \
         FROM unnest($1::text[], $2::date[]) AS landed(shop, day) \
         ON CONFLICT (shop_domain, local_date) DO UPDATE SET change = EXCLUDED.change",
    )
    .bind(shops)
    .bind(dates)
    .execute(executor)
    .await?;
    Ok(())
}

/// Forgets the shop's changes (its redaction).
pub async fn erase_shop<'e>(executor: impl PgExecutor<'e>, shop: &str) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM analytics_days WHERE shop_domain = $1")
        .bind(shop)
        .execute(executor)
        .await?;
    Ok(())
}

/// Records that every number of every shop may have changed.
pub async fn everything_changed<'e>(executor: impl PgExecutor<'e>) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE shops SET analytics_version = analytics_version + 1")
        .execute(executor)
        .await?;
    Ok(())
}

/// The versions of what an answer about a shop is computed from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Versions {
    /// Moves with every catalog write.
    pub catalog: i64,
    /// Moves when every number of the shop may have changed.
    pub shop: i64,
    /// For each range asked about, the latest change to one of its days (0: none ever).
    pub days: Vec<i64>,
}

/// The installed shop's versions, with those of `ranges` (first and last day, inclusive; `None`
/// asks about no day and reads 0), in one read. `None` when the shop is not installed.
pub async fn versions(
    pool: &PgPool,
    shop: &ShopDomain,
    ranges: &[Option<(NaiveDate, NaiveDate)>],
) -> Result<Option<Versions>, sqlx::Error> {
    let firsts: Vec<Option<NaiveDate>> = ranges.iter().map(|r| r.map(|r| r.0)).collect();
    let lasts: Vec<Option<NaiveDate>> = ranges.iter().map(|r| r.map(|r| r.1)).collect();
    let row: Option<(i64, i64, Vec<i64>)> = sqlx::query_as(
        "SELECT s.catalog_version, s.analytics_version, ARRAY( \
             SELECT coalesce(( \
                 SELECT max(d.change) FROM analytics_days d \
                 WHERE d.shop_domain = s.domain AND d.local_date BETWEEN r.first AND r.last \
             ), 0) \
             FROM unnest($2::date[], $3::date[]) WITH ORDINALITY AS r(first, last, n) \
             ORDER BY r.n) \
         FROM shops s WHERE s.domain = $1 AND s.uninstalled_at IS NULL",
    )
    .bind(shop.as_str())
    .bind(firsts)
    .bind(lasts)
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(catalog, shop, days)| Versions {
        catalog,
        shop,
        days,
    }))
}
