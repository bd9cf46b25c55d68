//! The shops' offline access tokens: sealed with AES-256-GCM under the token key (a setting)
//! before they reach Postgres, so a copy of the database alone does not give access to a store.
//!
//! Each sealed token is bound to its shop (the shop domain is the cipher's associated data): a
//! sealed token copied to another shop's row does not open.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;

use crate::catalog::domain::ShopDomain;
use crate::config::TokenKeyBytes;

/// Bytes of an AES-GCM nonce, stored before the ciphertext.
const NONCE_LEN: usize = 12;

/// The key that seals access tokens: 32 bytes, given as 64 hex digits or in base64.
#[derive(Clone)]
pub struct TokenKey(Aes256Gcm);

impl std::fmt::Debug for TokenKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TokenKey([redacted])")
    }
}

impl TokenKey {
    pub fn new(bytes: &TokenKeyBytes) -> TokenKey {
        TokenKey(Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(bytes.expose())))
    }

    /// The key `raw` writes; the message never repeats the value.
    pub fn parse(raw: &str) -> Result<TokenKey, &'static str> {
        TokenKeyBytes::parse(raw).map(|bytes| TokenKey::new(&bytes))
    }

    /// The token sealed for `shop`: a fresh nonce, then the ciphertext with its tag.
    pub fn seal(&self, shop: &ShopDomain, token: &SecretString) -> Vec<u8> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let payload = Payload {
            msg: token.expose_secret().as_bytes(),
            aad: shop.as_str().as_bytes(),
        };
        let ciphertext = self
            .0
            .encrypt(&nonce, payload)
            .expect("AES-GCM seals any message shorter than 64 GiB");
        let mut sealed = nonce.to_vec();
        sealed.extend(ciphertext);
        sealed
    }

    /// The token `sealed` holds, if it was sealed under this key for `shop`.
    pub fn open(&self, shop: &ShopDomain, sealed: &[u8]) -> Option<SecretString> {
        if sealed.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
        let payload = Payload {
            msg: ciphertext,
            aad: shop.as_str().as_bytes(),
        };
        let plain = self.0.decrypt(Nonce::from_slice(nonce), payload).ok()?;
        String::from_utf8(plain).ok().map(SecretString::from)
    }
}

/// Why a shop's token cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("the shop has no access token (it is not installed through the platform)")]
    Missing,
    #[error("the shop's access token does not open with the token key (was the key changed?)")]
    Unreadable,
    #[error(transparent)]
    Db(#[from] sqlx::Error),
}

/// Keeps the shop's offline access token (replacing one held before).
pub async fn store(
    db: &PgPool,
    key: &TokenKey,
    shop: &ShopDomain,
    token: &SecretString,
    scope: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO shop_credentials (shop_domain, access_token_sealed, scope) \
         VALUES ($1, $2, $3) ON CONFLICT (shop_domain) DO UPDATE SET \
         access_token_sealed = EXCLUDED.access_token_sealed, scope = EXCLUDED.scope, \
         obtained_at = now()",
    )
    .bind(shop.as_str())
    .bind(key.seal(shop, token))
    .bind(scope)
    .execute(db)
    .await?;
    Ok(())
}

/// Whether the shop has a token.
pub async fn exists(db: &PgPool, shop: &ShopDomain) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar("SELECT EXISTS (SELECT 1 FROM shop_credentials WHERE shop_domain = $1)")
        .bind(shop.as_str())
        .fetch_one(db)
        .await
}

/// The shop's token, opened.
pub async fn load(
    db: &PgPool,
    key: &TokenKey,
    shop: &ShopDomain,
) -> Result<SecretString, CredentialError> {
    let sealed: Option<Vec<u8>> = sqlx::query_scalar(
        "SELECT access_token_sealed FROM shop_credentials WHERE shop_domain = $1",
    )
    .bind(shop.as_str())
    .fetch_optional(db)
    .await?;
    let sealed = sealed.ok_or(CredentialError::Missing)?;
    key.open(shop, &sealed).ok_or(CredentialError::Unreadable)
}

/// Forgets the shop's token: the platform revokes it when the app is uninstalled.
pub async fn erase<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    shop: &ShopDomain,
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM shop_credentials WHERE shop_domain = $1")
        .bind(shop.as_str())
        .execute(executor)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> TokenKey {
        TokenKey::parse(&"ab".repeat(32)).unwrap()
    }

    fn shop(name: &str) -> ShopDomain {
        ShopDomain::parse(&format!("{name}.myshopify.com")).unwrap()
    }

    #[test]
    fn a_sealed_token_opens_for_its_shop_only_and_does_not_show_the_token() {
        let token = SecretString::from("shpat_0123456789abcdef");
        let sealed = key().seal(&shop("a"), &token);
        assert!(!sealed
            .windows(b"shpat_".len())
            .any(|w| w == b"shpat_".as_slice()));
        let opened = key().open(&shop("a"), &sealed).unwrap();
        assert_eq!(opened.expose_secret(), token.expose_secret());
        assert!(key().open(&shop("b"), &sealed).is_none());
        let other = TokenKey::parse(&"cd".repeat(32)).unwrap();
        assert!(other.open(&shop("a"), &sealed).is_none());
    }

    #[test]
    fn a_key_is_32_bytes_in_hex_or_base64() {
        assert!(TokenKey::parse(&"0f".repeat(32)).is_ok());
        use base64::Engine as _;
        let b64 = base64::engine::general_purpose::STANDARD.encode([7u8; 32]);
        assert!(TokenKey::parse(&b64).is_ok());
        for bad in ["", "short", &"0f".repeat(31), &"zz".repeat(32)] {
            assert!(TokenKey::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(format!("{:?}", key()), "TokenKey([redacted])");
    }
}
