//! Shops: installation, settings, uninstall.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sqlx::PgPool;
use utoipa::ToSchema;

use super::domain::{
    text_schema, AttributionWindow, Currency, HoldoutPercent, ShopDomain, TextLine, Timezone,
};
use super::{begin_write, check_text, notify_change, CatalogError, NAME_CHARS};

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Shop {
    pub domain: ShopDomain,
    pub name: String,
    pub timezone: Timezone,
    pub currency: Currency,
    pub remove_branding: bool,
    pub attribution_window_days: AttributionWindow,
    pub holdout_percent: HoldoutPercent,
    /// Changes on every catalog write; the storefront's `version`.
    pub catalog_version: i64,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// `PUT /admin/v1/shops/{shop}`: absent fields keep their value (or take the default on create).
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShopSettings {
    #[schema(schema_with = text_schema::line_or_null::<NAME_CHARS>)]
    pub name: Option<TextLine>,
    /// IANA timezone; analytics dates are days in this zone. Default `UTC`.
    pub timezone: Option<Timezone>,
    /// ISO 4217 code. Default `USD`.
    pub currency: Option<Currency>,
    pub remove_branding: Option<bool>,
    /// Default 7.
    pub attribution_window_days: Option<AttributionWindow>,
    /// Default 0 (no holdout).
    pub holdout_percent: Option<HoldoutPercent>,
}

/// `PATCH /app/api/shops/{shop}`: the settings the merchant chooses in the dashboard; absent
/// fields keep their value.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct MerchantSettings {
    pub attribution_window_days: Option<AttributionWindow>,
    pub holdout_percent: Option<HoldoutPercent>,
}

#[derive(sqlx::FromRow)]
struct ShopRow {
    domain: String,
    name: String,
    timezone: String,
    currency: String,
    remove_branding: bool,
    attribution_window_days: i16,
    holdout_percent: i16,
    catalog_version: i64,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl TryFrom<ShopRow> for Shop {
    type Error = CatalogError;
    fn try_from(row: ShopRow) -> Result<Self, Self::Error> {
        let corrupt = |e: super::domain::InvalidValue| {
            CatalogError::Db(sqlx::Error::Decode(format!("shops row: {e}").into()))
        };
        Ok(Shop {
            domain: ShopDomain::parse(&row.domain).map_err(corrupt)?,
            name: row.name,
            timezone: Timezone::parse(&row.timezone).map_err(corrupt)?,
            currency: Currency::parse(&row.currency).map_err(corrupt)?,
            remove_branding: row.remove_branding,
            attribution_window_days: AttributionWindow::from_days(
                row.attribution_window_days.into(),
            )
            .map_err(corrupt)?,
            holdout_percent: HoldoutPercent::parse(row.holdout_percent.into()).map_err(corrupt)?,
            catalog_version: row.catalog_version,
            created_at: row.created_at,
            updated_at: row.updated_at,
        })
    }
}

const SHOP_COLUMNS: &str = "domain, name, timezone, currency, remove_branding, \
     attribution_window_days, holdout_percent, catalog_version, created_at, updated_at";

pub enum Upserted {
    Created(Shop),
    Updated(Shop),
}

/// Creates the shop, updates it, or reinstalls an uninstalled one (which starts from defaults).
pub async fn upsert(
    pool: &PgPool,
    domain: &ShopDomain,
    settings: ShopSettings,
) -> Result<Upserted, CatalogError> {
    if let Some(name) = &settings.name {
        check_text("name", name, NAME_CHARS)?;
    }
    let mut tx = pool.begin().await?;
    let sql = format!(
        // `previous` sees the row as it was before this statement (one snapshot serves the
        // whole statement), which tells a create or reinstall from an update.
        "WITH previous AS (SELECT uninstalled_at FROM shops WHERE domain = $1)
         INSERT INTO shops AS s (domain, name, timezone, currency, remove_branding, attribution_window_days, holdout_percent)
         VALUES ($1, COALESCE($2, ''), COALESCE($3, 'UTC'), COALESCE($4, 'USD'), COALESCE($5, FALSE), COALESCE($6, $7), COALESCE($8, 0))
         ON CONFLICT (domain) DO UPDATE SET
             name = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($2, s.name) ELSE EXCLUDED.name END,
             timezone = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($3, s.timezone) ELSE EXCLUDED.timezone END,
             currency = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($4, s.currency) ELSE EXCLUDED.currency END,
             remove_branding = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($5, s.remove_branding) ELSE EXCLUDED.remove_branding END,
             attribution_window_days = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($6, s.attribution_window_days) ELSE EXCLUDED.attribution_window_days END,
             holdout_percent = CASE WHEN s.uninstalled_at IS NULL THEN COALESCE($8, s.holdout_percent) ELSE EXCLUDED.holdout_percent END,
             created_at = CASE WHEN s.uninstalled_at IS NULL THEN s.created_at ELSE now() END,
             storefront_seen_at = CASE WHEN s.uninstalled_at IS NULL THEN s.storefront_seen_at END,
             uninstalled_at = NULL,
             catalog_version = s.catalog_version + 1,
             updated_at = now()
         RETURNING {SHOP_COLUMNS},
             NOT EXISTS (SELECT 1 FROM previous WHERE uninstalled_at IS NULL) AS created"
    );
    let (row, created): (ShopRow, bool) = {
        let row = sqlx::query(&sql)
            .bind(domain.as_str())
            .bind(settings.name)
            .bind(settings.timezone.map(String::from))
            .bind(settings.currency.map(String::from))
            .bind(settings.remove_branding)
            .bind(
                settings
                    .attribution_window_days
                    .map(AttributionWindow::days),
            )
            .bind(AttributionWindow::default().days())
            .bind(settings.holdout_percent.map(HoldoutPercent::percent))
            .fetch_one(&mut *tx)
            .await?;
        use sqlx::{FromRow, Row};
        (ShopRow::from_row(&row)?, row.try_get("created")?)
    };
    notify_change(&mut tx, domain).await?;
    tx.commit().await?;
    let shop = Shop::try_from(row)?;
    Ok(if created {
        Upserted::Created(shop)
    } else {
        Upserted::Updated(shop)
    })
}

/// Changes an installed shop's [`MerchantSettings`]: a catalog write, since the storefront's
/// answers carry them.
pub async fn update(
    pool: &PgPool,
    domain: &ShopDomain,
    settings: MerchantSettings,
) -> Result<Shop, CatalogError> {
    let (mut tx, _) = begin_write(pool, domain).await?;
    let sql = format!(
        "UPDATE shops SET \
             attribution_window_days = COALESCE($2, attribution_window_days), \
             holdout_percent = COALESCE($3, holdout_percent), \
             updated_at = now() \
         WHERE domain = $1 RETURNING {SHOP_COLUMNS}"
    );
    let row: ShopRow = sqlx::query_as(&sql)
        .bind(domain.as_str())
        .bind(
            settings
                .attribution_window_days
                .map(AttributionWindow::days),
        )
        .bind(settings.holdout_percent.map(HoldoutPercent::percent))
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    row.try_into()
}

pub async fn get(pool: &PgPool, domain: &ShopDomain) -> Result<Shop, CatalogError> {
    let sql =
        format!("SELECT {SHOP_COLUMNS} FROM shops WHERE domain = $1 AND uninstalled_at IS NULL");
    let row: Option<ShopRow> = sqlx::query_as(&sql)
        .bind(domain.as_str())
        .fetch_optional(pool)
        .await?;
    row.ok_or(CatalogError::ShopNotFound)?.try_into()
}

/// Erases the shop (its redaction): the shop's row, and with it its catalog and keys, and the
/// record of its products' removals. Caches hear of it as of any catalog change.
pub async fn erase(
    tx: &mut sqlx::Transaction<'static, sqlx::Postgres>,
    domain: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM product_removals WHERE shop_domain = $1")
        .bind(domain.as_str())
        .execute(&mut **tx)
        .await?;
    crate::media::forget_shop(tx, domain).await?;
    sqlx::query("DELETE FROM shops WHERE domain = $1")
        .bind(domain.as_str())
        .execute(&mut **tx)
        .await?;
    super::notify_change(tx, domain).await
}

/// Uninstall: the catalog is removed and every API key of the shop revoked, in one transaction.
pub async fn uninstall(pool: &PgPool, domain: &ShopDomain) -> Result<(), CatalogError> {
    let mut tx = pool.begin().await?;
    let found: Option<i64> = sqlx::query_scalar(
        "UPDATE shops SET uninstalled_at = now(), updated_at = now(), \
         catalog_version = catalog_version + 1 \
         WHERE domain = $1 AND uninstalled_at IS NULL RETURNING catalog_version",
    )
    .bind(domain.as_str())
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Err(CatalogError::ShopNotFound);
    }
    crate::media::forget_shop(&mut tx, domain).await?;
    // Widgets first: their video links cascade from either side, but this order keeps each
    // delete touching only its own table.
    for table in ["widgets", "videos", "products"] {
        sqlx::query(&format!("DELETE FROM {table} WHERE shop_domain = $1"))
            .bind(domain.as_str())
            .execute(&mut *tx)
            .await?;
    }
    crate::analytics::keys::revoke_all(&mut tx, domain).await?;
    notify_change(&mut tx, domain).await?;
    tx.commit().await?;
    Ok(())
}

/// Records that every number of every shop may have changed (a warehouse migration rewrote the
/// aggregates): the shops' analytics versions move, so no answer cached before is served.
pub async fn every_number_may_have_changed<'e>(
    executor: impl sqlx::PgExecutor<'e>,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE shops SET analytics_version = analytics_version + 1")
        .execute(executor)
        .await?;
    Ok(())
}

/// Records that the shop's pages asked for widgets (the app embed is on), the first time.
pub async fn note_storefront_seen(pool: &PgPool, domain: &ShopDomain) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE shops SET storefront_seen_at = now() \
         WHERE domain = $1 AND storefront_seen_at IS NULL",
    )
    .bind(domain.as_str())
    .execute(pool)
    .await?;
    Ok(())
}

/// When the shop's pages first asked for widgets; `None` before, or for an unknown shop.
pub async fn storefront_seen_at(
    pool: &PgPool,
    domain: &ShopDomain,
) -> Result<Option<chrono::DateTime<chrono::Utc>>, sqlx::Error> {
    let seen: Option<Option<chrono::DateTime<chrono::Utc>>> =
        sqlx::query_scalar("SELECT storefront_seen_at FROM shops WHERE domain = $1")
            .bind(domain.as_str())
            .fetch_optional(pool)
            .await?;
    Ok(seen.flatten())
}
