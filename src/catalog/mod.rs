//! The merchant's catalog: shops, products, videos and widgets, stored in Postgres.
//!
//! Every write runs in one transaction that also bumps the shop's catalog version and sends a
//! `NOTIFY`, so caches on every instance learn of the change when (and only when) it commits.

pub mod cache;
pub mod collections;
pub mod domain;
pub mod products;
pub mod shops;
pub mod snapshot;
pub mod video_media;
pub mod videos;
pub mod widgets;

use sqlx::{PgPool, Postgres, Transaction};

use domain::ShopDomain;

/// The `LISTEN/NOTIFY` channel that carries the domain of a shop whose catalog changed.
pub const CHANGES_CHANNEL: &str = "videoapp_catalog";

#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error("shop not found")]
    ShopNotFound,
    #[error("{0} not found")]
    NotFound(&'static str),
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// A video that cannot play yet (its upload or processing is not done) cannot be published.
    #[error("{0}")]
    NotReady(String),
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

impl CatalogError {
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        CatalogError::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Starts a catalog write for an installed shop: bumps its version (which also locks the shop's
/// row, so writes to one shop are serialised) and queues the change notification for commit.
pub(crate) async fn begin_write(
    pool: &PgPool,
    shop: &ShopDomain,
) -> Result<(Transaction<'static, Postgres>, i64), CatalogError> {
    let mut tx = pool.begin().await?;
    let version: Option<i64> = sqlx::query_scalar(
        "UPDATE shops SET catalog_version = catalog_version + 1 \
         WHERE domain = $1 AND uninstalled_at IS NULL RETURNING catalog_version",
    )
    .bind(shop.as_str())
    .fetch_optional(&mut *tx)
    .await?;
    let version = version.ok_or(CatalogError::ShopNotFound)?;
    notify_change(&mut tx, shop).await?;
    Ok((tx, version))
}

/// Deletes one of a shop's objects by id in a catalog write; `delete_sql` takes the shop as `$1`
/// and the id as `$2`. An id the shop does not have is `NotFound(what)`.
pub(crate) async fn delete_one(
    pool: &PgPool,
    shop: &ShopDomain,
    id: uuid::Uuid,
    delete_sql: &str,
    what: &'static str,
) -> Result<(), CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    delete_in(&mut tx, shop, id, delete_sql, what).await?;
    tx.commit().await?;
    Ok(())
}

/// [`delete_one`] inside the caller's catalog write, which may do more before it commits.
pub(crate) async fn delete_in(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    id: uuid::Uuid,
    delete_sql: &str,
    what: &'static str,
) -> Result<(), CatalogError> {
    let deleted = sqlx::query(delete_sql)
        .bind(shop.as_str())
        .bind(id)
        .execute(&mut **tx)
        .await?
        .rows_affected();
    if deleted == 0 {
        return Err(CatalogError::NotFound(what));
    }
    Ok(())
}

/// Marks a change to a shop's catalog made outside [`begin_write`] (processing publishing a
/// video's media): its version moves and caches learn of it when the transaction commits.
pub(crate) async fn bump_version(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query("UPDATE shops SET catalog_version = catalog_version + 1 WHERE domain = $1")
        .bind(shop.as_str())
        .execute(&mut **tx)
        .await?;
    notify_change(tx, shop).await
}

pub(crate) async fn notify_change(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(CHANGES_CHANNEL)
        .bind(shop.as_str())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Checks that an installed shop exists, for reads that would otherwise answer an empty list.
pub(crate) async fn require_shop(pool: &PgPool, shop: &ShopDomain) -> Result<(), CatalogError> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM shops WHERE domain = $1 AND uninstalled_at IS NULL")
            .bind(shop.as_str())
            .fetch_optional(pool)
            .await?;
    found.map(|_| ()).ok_or(CatalogError::ShopNotFound)
}

/// Bounds of the stored text fields, in characters; `domain::text_schema` documents them.
pub(crate) const NAME_CHARS: usize = 256;
pub(crate) const TITLE_CHARS: usize = 512;
pub(crate) const HANDLE_CHARS: usize = 255;
pub(crate) const LINK_CHARS: usize = 2048;

/// A list of ids names each at most once; the error names the first repeat, as `name` puts it.
pub(crate) fn check_unique<T: std::hash::Hash + Eq>(
    field: &str,
    ids: &[T],
    name: impl Fn(&T) -> String,
) -> Result<(), CatalogError> {
    let mut seen = std::collections::HashSet::with_capacity(ids.len());
    match ids.iter().find(|id| !seen.insert(*id)) {
        Some(id) => Err(CatalogError::invalid(
            field,
            format!("{} appears more than once", name(id)),
        )),
        None => Ok(()),
    }
}

/// Text fields have a bound so one merchant cannot grow a snapshot without limit.
pub(crate) fn check_text(field: &str, value: &str, max_chars: usize) -> Result<(), CatalogError> {
    if value.chars().count() > max_chars {
        return Err(CatalogError::invalid(
            field,
            format!("must be at most {max_chars} characters"),
        ));
    }
    Ok(())
}

pub(crate) fn check_required_text(
    field: &str,
    value: &str,
    max_chars: usize,
) -> Result<(), CatalogError> {
    if value.trim().is_empty() {
        return Err(CatalogError::invalid(field, "must not be empty"));
    }
    check_text(field, value, max_chars)
}

/// Media and product links must be absolute http(s) URLs; an empty string means "none".
pub(crate) fn check_optional_url(field: &str, value: &str) -> Result<(), CatalogError> {
    if value.is_empty() {
        return Ok(());
    }
    check_text(field, value, LINK_CHARS)?;
    match url::Url::parse(value) {
        Ok(u) if is_link(value) && matches!(u.scheme(), "http" | "https") => Ok(()),
        _ => Err(CatalogError::invalid(
            field,
            format!("'{value}' is not an absolute http(s) URL"),
        )),
    }
}

/// The link form `domain::text_schema::Kind::Link` documents, which the URL parser always takes:
/// an http(s) scheme, a host that is an IPv4 address (decimal, no leading zeros) or dot-separated
/// letter-digit-hyphen labels whose last one starts with a letter (no `--`, so no punycode label,
/// whose decoding no pattern can state), an optional port, then no whitespace.
// A rule of its own rather than the parser's: the parser also takes user info, IP hosts, stray
// spaces and more, which no pattern a client can check would say.
fn is_link(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if !(scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")) {
        return false;
    }
    let (authority, tail) = rest.split_at(rest.find(['/', '?', '#']).unwrap_or(rest.len()));
    let (host, port) = match authority.split_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (authority, None),
    };
    let label = |l: &str| {
        !l.is_empty()
            && !l.starts_with('-')
            && !l.ends_with('-')
            && !l.contains("--")
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
    };
    let octet = |o: &str| {
        !o.is_empty()
            && o.len() <= 3
            && o.bytes().all(|b| b.is_ascii_digit())
            && !(o.len() > 1 && o.starts_with('0'))
            && o.parse::<u16>().is_ok_and(|n| n <= 255)
    };
    let ipv4 = host.split('.').count() == 4 && host.split('.').all(octet);
    let port_ok = port.is_none_or(|p| {
        let digits = p.trim_start_matches('0');
        !p.is_empty()
            && p.bytes().all(|b| b.is_ascii_digit())
            && digits.len() <= 5
            && digits.parse::<u32>().unwrap_or(0) <= 65535
    });
    let domain = host.split('.').all(label)
        && host
            .rsplit('.')
            .next()
            .is_some_and(|top| top.starts_with(|c: char| c.is_ascii_alphabetic()));
    (ipv4 || domain) && port_ok && !tail.chars().any(|c| c.is_whitespace() || c.is_control())
}
