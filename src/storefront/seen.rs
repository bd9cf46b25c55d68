//! Which shops' pages this instance has seen ask for widgets: the first request of a shop's
//! loader records in Postgres that its app embed is on (the first-run checklist's first step),
//! and later ones cost a cache lookup, not a write. Noted once per catalog version: a reinstall
//! (which moves the version, and forgets the embed, as the platform takes an app's blocks out
//! of the theme with it) is noted again.

use std::time::Duration;

use crate::catalog::domain::ShopDomain;
use crate::catalog::shops;

/// Shops noted by this instance, by catalog version; forgotten after a day, so a row reset by
/// hand is noted again.
#[derive(Clone)]
pub struct SeenShops(moka::sync::Cache<(ShopDomain, i64), ()>);

impl Default for SeenShops {
    fn default() -> Self {
        SeenShops(
            moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(24 * 3600))
                .build(),
        )
    }
}

impl SeenShops {
    /// Notes `shop` at its catalog `version`, in the background, unless this instance did so
    /// within the day.
    pub fn note(&self, db: &sqlx::PgPool, shop: &ShopDomain, version: i64) {
        let key = (shop.clone(), version);
        if self.0.contains_key(&key) {
            return;
        }
        self.0.insert(key.clone(), ());
        let (db, cache) = (db.clone(), self.0.clone());
        tokio::spawn(async move {
            let shop = &key.0;
            if let Err(e) = shops::note_storefront_seen(&db, shop).await {
                // Tried again on a later request.
                cache.invalidate(&key);
                tracing::debug!(%shop, error = %e, "cannot note the storefront as seen");
            }
        });
    }
}
