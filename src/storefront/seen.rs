//! Which shops' pages this instance has seen ask for widgets: the first request of a shop's
//! loader records in Postgres that its app embed is on (the first-run checklist's first step),
//! and later ones cost a cache lookup, not a write.

use std::time::Duration;

use crate::catalog::domain::ShopDomain;
use crate::catalog::shops;

/// Shops noted by this instance; forgotten after a day, so a row reset by hand is noted again.
#[derive(Clone)]
pub struct SeenShops(moka::sync::Cache<ShopDomain, ()>);

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
    /// Notes `shop`, in the background, unless this instance did so within the day.
    pub fn note(&self, db: &sqlx::PgPool, shop: &ShopDomain) {
        if self.0.contains_key(shop) {
            return;
        }
        self.0.insert(shop.clone(), ());
        let (db, shop, cache) = (db.clone(), shop.clone(), self.0.clone());
        tokio::spawn(async move {
            if let Err(e) = shops::note_storefront_seen(&db, &shop).await {
                // Tried again on a later request.
                cache.invalidate(&shop);
                tracing::debug!(%shop, error = %e, "cannot note the storefront as seen");
            }
        });
    }
}
