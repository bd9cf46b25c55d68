//! What changed in a shop's numbers, kept in Postgres so that every instance sees it, for caches
//! of what is computed from ClickHouse (see `analytics::list_cache`).
//!
//! Two records: the local days each shipped batch touched, every (shop, day) holding a number
//! drawn from one sequence once the batch was in ClickHouse; and a per-shop version that moves
//! when everything may have changed (a migration that rewrote aggregates). A number is drawn only
//! after its batch's insert has returned, so a reader that reads these before it queries
//! ClickHouse never holds numbers older than what it read: the greatest number over a range of
//! days, with the shop's version, is the version of whatever was computed over that range.
//!
//! A third record makes that safe for what reads more days than it counts. ClickHouse writes a
//! batch into each of its aggregates on its own, so a query that reads two of them while a batch
//! goes in may see the batch in one and not the other; and a total that reads a whole year less
//! its last days (`analytics::split`) reads today's rows, whose batches move no day of its range.
//! So each insert marks its batch's shops as being written before it begins, until it returns and
//! the batch's days are recorded (`inserting`, `days_landed`); an insert that never returned keeps
//! its marks until its lease runs out. A cache keeps what it computed only if its shop was not
//! being written when it read the versions nor after it computed, and no batch of the shop landed
//! in between ([`Writes::none_between`]).

use std::time::Duration;

use chrono::NaiveDate;
use sqlx::{PgExecutor, PgPool};
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;

/// Records that insert `insert_id` of these shops' events into ClickHouse is about to begin, for
/// at most `lease`: an insert that never returns (a timeout, a lost connection, a shipper that
/// stopped) leaves its marks behind, which stop counting once it has certainly ended. Marks whose
/// lease has run out go.
pub async fn inserting<'e>(
    executor: impl PgExecutor<'e>,
    insert_id: Uuid,
    shops: &[&str],
    lease: Duration,
) -> Result<(), sqlx::Error> {
    let lease_ms = i64::try_from(lease.as_millis()).unwrap_or(i64::MAX);
    sqlx::query(
        "WITH expired AS (DELETE FROM analytics_inserts WHERE until < now()) \
         INSERT INTO analytics_inserts (insert_id, shop_domain, until) \
         SELECT $1, shop, now() + $3 * interval '1 millisecond' FROM unnest($2::text[]) AS s(shop) \
         ON CONFLICT (insert_id, shop_domain) DO UPDATE SET until = EXCLUDED.until",
    )
    .bind(insert_id)
    .bind(shops)
    .bind(lease_ms)
    .execute(executor)
    .await?;
    Ok(())
}

/// Records that a batch is in ClickHouse and these (shop, local day) pairs have new events, and
/// takes back the marks of `inserted`, the insert that put it there and returned (`None`: the
/// batch had landed already), in one statement.
pub async fn days_landed<'e>(
    executor: impl PgExecutor<'e>,
    inserted: Option<Uuid>,
    days: &[(&str, NaiveDate)],
) -> Result<(), sqlx::Error> {
    let (shops, dates): (Vec<&str>, Vec<NaiveDate>) = days.iter().copied().unzip();
    sqlx::query(
        "WITH inserted AS (DELETE FROM analytics_inserts WHERE insert_id = $3) \
         INSERT INTO analytics_days (shop_domain, local_date, change) \
         SELECT shop, day, nextval('analytics_changes') \
         FROM unnest($1::text[], $2::date[]) AS landed(shop, day) \
         ON CONFLICT (shop_domain, local_date) DO UPDATE SET change = EXCLUDED.change",
    )
    .bind(shops)
    .bind(dates)
    .bind(inserted)
    .execute(executor)
    .await?;
    Ok(())
}

/// Whether any of the shop's events has landed in ClickHouse: it has numbers to show.
pub async fn has_numbers(pool: &PgPool, shop: &ShopDomain) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM analytics_days WHERE shop_domain = $1)")
        .bind(shop.as_str())
        .fetch_one(pool)
        .await
}

/// Forgets the shop's changes (its redaction).
pub async fn erase_shop<'e>(executor: impl PgExecutor<'e>, shop: &str) -> Result<(), sqlx::Error> {
    sqlx::query(
        "WITH marks AS (DELETE FROM analytics_inserts WHERE shop_domain = $1) \
         DELETE FROM analytics_days WHERE shop_domain = $1",
    )
    .bind(shop)
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

/// Whether a shop's numbers in ClickHouse were being written at a moment, and the latest change
/// to any of its days then.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Writes {
    in_flight: bool,
    latest: i64,
}

impl Writes {
    /// Whether nothing was written from `self` to `later`: no batch going in at either moment and
    /// none landed between them, so no read of ClickHouse between them saw a batch half written.
    pub fn none_between(&self, later: &Writes) -> bool {
        !self.in_flight && !later.in_flight && self.latest == later.latest
    }
}

const WRITES_SQL: &str = "EXISTS (SELECT 1 FROM analytics_inserts i \
         WHERE i.shop_domain = s.domain AND i.until > now()), \
     coalesce((SELECT max(d.change) FROM analytics_days d WHERE d.shop_domain = s.domain), 0)";

/// The installed shop's versions, with those of `ranges` (first and last day, inclusive; `None`
/// asks about no day and reads 0), and its writes, in one read. `None` when the shop is not
/// installed.
pub async fn versions(
    pool: &PgPool,
    shop: &ShopDomain,
    ranges: &[Option<(NaiveDate, NaiveDate)>],
) -> Result<Option<(Versions, Writes)>, sqlx::Error> {
    let firsts: Vec<Option<NaiveDate>> = ranges.iter().map(|r| r.map(|r| r.0)).collect();
    let lasts: Vec<Option<NaiveDate>> = ranges.iter().map(|r| r.map(|r| r.1)).collect();
    let sql = format!(
        "SELECT s.catalog_version, s.analytics_version, ARRAY( \
             SELECT coalesce(( \
                 SELECT max(d.change) FROM analytics_days d \
                 WHERE d.shop_domain = s.domain AND d.local_date BETWEEN r.first AND r.last \
             ), 0) \
             FROM unnest($2::date[], $3::date[]) WITH ORDINALITY AS r(first, last, n) \
             ORDER BY r.n), {WRITES_SQL} \
         FROM shops s WHERE s.domain = $1 AND s.uninstalled_at IS NULL"
    );
    let row: Option<(i64, i64, Vec<i64>, bool, i64)> = sqlx::query_as(&sql)
        .bind(shop.as_str())
        .bind(firsts)
        .bind(lasts)
        .fetch_optional(pool)
        .await?;
    Ok(row.map(|(catalog, shop, days, in_flight, latest)| {
        let versions = Versions {
            catalog,
            shop,
            days,
        };
        (versions, Writes { in_flight, latest })
    }))
}

/// The shop's writes now (see [`Writes`]); those of an unknown shop are none.
pub async fn writes(pool: &PgPool, shop: &ShopDomain) -> Result<Writes, sqlx::Error> {
    let sql = format!("SELECT {WRITES_SQL} FROM (SELECT $1::text AS domain) s");
    let (in_flight, latest): (bool, i64) = sqlx::query_as(&sql)
        .bind(shop.as_str())
        .fetch_one(pool)
        .await?;
    Ok(Writes { in_flight, latest })
}

#[cfg(test)]
mod tests {
    use super::Writes;

    #[test]
    fn nothing_was_written_only_if_no_batch_went_in_at_either_moment_nor_landed_between() {
        let still = Writes {
            in_flight: false,
            latest: 7,
        };
        let going_in = Writes {
            in_flight: true,
            latest: 7,
        };
        let landed = Writes {
            in_flight: false,
            latest: 8,
        };
        assert!(still.none_between(&still));
        assert!(!still.none_between(&going_in));
        assert!(!going_in.none_between(&still));
        assert!(!still.none_between(&landed));
    }
}
