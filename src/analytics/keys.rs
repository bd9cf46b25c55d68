//! API keys of the analytics API: `vk_` + 64 lowercase hex from the OS CSPRNG, stored only as a
//! SHA-256 hash beside a short visible prefix. The full key is shown once, at creation. This is
//! the only module that reads or writes the `api_keys` table.

use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use sqlx::{PgPool, Postgres, Transaction};
use utoipa::ToSchema;
use uuid::Uuid;

use crate::catalog::domain::{text_schema, ShopDomain, TextLine};
use crate::catalog::{check_required_text, require_shop, CatalogError, NAME_CHARS};

pub const KEY_PREFIX: &str = "vk_";
/// Characters of the key kept in clear so a merchant can tell keys apart: `vk_` + 8 hex.
const VISIBLE_PREFIX_LEN: usize = KEY_PREFIX.len() + 8;

/// The `LISTEN/NOTIFY` channel that carries the domain of a shop whose keys were revoked.
pub const REVOCATIONS_CHANNEL: &str = "videoapp_api_keys";

/// A key as presented by a client, checked for form only (`vk_` + 64 lowercase hex).
#[derive(Clone)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn parse(raw: &str) -> Option<ApiKey> {
        let hex = raw.strip_prefix(KEY_PREFIX)?;
        let well_formed = hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b));
        well_formed.then(|| ApiKey(raw.to_string()))
    }

    /// Fresh key from the operating system's CSPRNG.
    pub fn generate() -> ApiKey {
        let mut bytes = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut bytes);
        ApiKey(format!("{KEY_PREFIX}{}", hex::encode(bytes)))
    }

    pub fn hash(&self) -> [u8; 32] {
        Sha256::digest(self.0.as_bytes()).into()
    }

    pub fn visible_prefix(&self) -> &str {
        &self.0[..VISIBLE_PREFIX_LEN]
    }

    /// The full secret; only for the one response that hands it over.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// Keys are secrets: never print them.
impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ApiKey({}…)", self.visible_prefix())
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewApiKey {
    /// What the merchant calls this key, e.g. "Looker".
    #[schema(schema_with = text_schema::required::<NAME_CHARS>)]
    pub name: TextLine,
}

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct CreatedApiKey {
    pub id: Uuid,
    pub name: String,
    /// The whole key. Shown only in this response; store it now.
    pub key: String,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    /// Always `null`: a new key has not been used.
    pub last_used_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, ToSchema, sqlx::FromRow)]
#[serde(rename_all = "camelCase")]
pub struct ApiKeyInfo {
    pub id: Uuid,
    pub name: String,
    pub prefix: String,
    pub created_at: DateTime<Utc>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// When the key last authenticated an analytics request (UTC), kept to the minute, written
    /// at most once a minute; `null` when never used.
    pub last_used_at: Option<DateTime<Utc>>,
}

pub async fn create(
    pool: &PgPool,
    shop: &ShopDomain,
    new: NewApiKey,
) -> Result<CreatedApiKey, CatalogError> {
    check_required_text("name", &new.name, NAME_CHARS)?;
    require_shop(pool, shop).await?;
    let key = ApiKey::generate();
    let id = Uuid::now_v7();
    let created_at: DateTime<Utc> = sqlx::query_scalar(
        "INSERT INTO api_keys (id, shop_domain, name, key_hash, prefix) \
         VALUES ($1, $2, $3, $4, $5) RETURNING created_at",
    )
    .bind(id)
    .bind(shop.as_str())
    .bind(&new.name)
    .bind(key.hash().as_slice())
    .bind(key.visible_prefix())
    .fetch_one(pool)
    .await?;
    Ok(CreatedApiKey {
        id,
        name: new.name.into(),
        prefix: key.visible_prefix().to_string(),
        key: key.expose().to_string(),
        created_at,
        last_used_at: None,
    })
}

pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<ApiKeyInfo>, CatalogError> {
    require_shop(pool, shop).await?;
    Ok(sqlx::query_as(
        "SELECT id, name, prefix, created_at, revoked_at, last_used_at FROM api_keys \
         WHERE shop_domain = $1 ORDER BY created_at, id",
    )
    .bind(shop.as_str())
    .fetch_all(pool)
    .await?)
}

/// The key whose hash is `hash` and the shop it belongs to, if the key is live: not revoked,
/// and its shop still installed.
pub async fn find_active(
    pool: &PgPool,
    hash: &[u8; 32],
) -> Result<Option<(Uuid, ShopDomain)>, sqlx::Error> {
    let row: Option<(Uuid, String)> = sqlx::query_as(
        "SELECT k.id, k.shop_domain FROM api_keys k \
         JOIN shops s ON s.domain = k.shop_domain AND s.uninstalled_at IS NULL \
         WHERE k.key_hash = $1 AND k.revoked_at IS NULL",
    )
    .bind(hash.as_slice())
    .fetch_optional(pool)
    .await?;
    row.map(|(id, shop)| {
        ShopDomain::parse(&shop)
            .map(|shop| (id, shop))
            .map_err(|e| sqlx::Error::Decode(format!("api_keys.shop_domain: {e}").into()))
    })
    .transpose()
}

/// Records that key `id` was used in `minute`, unless that minute or a later one is stored
/// already: another instance wrote it, so across instances a key is written once a minute.
pub async fn record_use(pool: &PgPool, id: Uuid, minute: DateTime<Utc>) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE api_keys SET last_used_at = $2 \
         WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $2)",
    )
    .bind(id)
    .bind(minute)
    .execute(pool)
    .await?;
    Ok(())
}

/// Revokes one key. Revoking a revoked key is a no-op; an unknown key is not found.
pub async fn revoke(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<(), CatalogError> {
    require_shop(pool, shop).await?;
    let mut tx = pool.begin().await?;
    let found: Option<Uuid> = sqlx::query_scalar(
        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) \
         WHERE shop_domain = $1 AND id = $2 RETURNING id",
    )
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(&mut *tx)
    .await?;
    if found.is_none() {
        return Err(CatalogError::NotFound("API key"));
    }
    notify_revocation(&mut tx, shop).await?;
    tx.commit().await?;
    Ok(())
}

/// Revokes every key of a shop inside the caller's transaction (uninstall).
pub(crate) async fn revoke_all(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE api_keys SET revoked_at = now() WHERE shop_domain = $1 AND revoked_at IS NULL",
    )
    .bind(shop.as_str())
    .execute(&mut **tx)
    .await?;
    notify_revocation(tx, shop).await
}

async fn notify_revocation(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(REVOCATIONS_CHANNEL)
        .bind(shop.as_str())
        .execute(&mut **tx)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_have_the_documented_form_and_differ() {
        let a = ApiKey::generate();
        let b = ApiKey::generate();
        assert!(ApiKey::parse(a.expose()).is_some());
        assert_eq!(a.expose().len(), 3 + 64);
        assert_ne!(a.expose(), b.expose());
        assert_eq!(a.visible_prefix(), &a.expose()[..11]);
    }

    #[test]
    fn malformed_keys_are_refused() {
        let hex64 = "a".repeat(64);
        assert!(ApiKey::parse(&format!("vk_{hex64}")).is_some());
        assert!(ApiKey::parse(&format!("vk_{}", "A".repeat(64))).is_none());
        assert!(ApiKey::parse(&format!("vk_{}", "a".repeat(63))).is_none());
        assert!(ApiKey::parse(&format!("xx_{hex64}")).is_none());
        assert!(ApiKey::parse(&format!("vk_{}g", "a".repeat(63))).is_none());
    }

    #[test]
    fn debug_output_never_shows_the_secret() {
        let key = ApiKey::generate();
        assert!(!format!("{key:?}").contains(&key.expose()[12..]));
    }
}
