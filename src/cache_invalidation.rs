//! Change notifications between instances: one Postgres `LISTEN` connection per instance hears
//! catalog writes and key revocations made anywhere, and invalidates the caches they affect.
//! Whenever the connection was lost, notifications may have been missed: everything is flushed.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use sqlx::postgres::PgListener;

use crate::analytics::auth::KeyCache;
use crate::analytics::keys::REVOCATIONS_CHANNEL;
use crate::catalog::cache::CatalogCache;
use crate::catalog::domain::ShopDomain;
use crate::catalog::CHANGES_CHANNEL;

/// Runs until the runtime stops, reconnecting on its own.
pub fn spawn_listener(
    database_url: SecretString,
    catalog: CatalogCache,
    keys: KeyCache,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            if let Err(e) = listen(database_url.expose_secret(), &catalog, &keys).await {
                tracing::warn!(error = %e, "change listener failed; flushing caches");
            }
            flush(&catalog, &keys);
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    })
}

fn flush(catalog: &CatalogCache, keys: &KeyCache) {
    catalog.invalidate_all();
    keys.invalidate_all();
}

async fn listen(
    database_url: &str,
    catalog: &CatalogCache,
    keys: &KeyCache,
) -> Result<(), sqlx::Error> {
    let mut listener = PgListener::connect(database_url).await?;
    listener
        .listen_all([CHANGES_CHANNEL, REVOCATIONS_CHANNEL])
        .await?;
    // Changes made before LISTEN took effect were not heard: start from nothing.
    flush(catalog, keys);
    loop {
        match listener.try_recv().await? {
            Some(notification) if notification.channel() == REVOCATIONS_CHANNEL => {
                keys.invalidate_all()
            }
            Some(notification) => match ShopDomain::parse(notification.payload()) {
                Ok(shop) => catalog.invalidate(&shop).await,
                Err(_) => catalog.invalidate_all(),
            },
            None => {
                // The connection dropped and sqlx reconnects; what was sent meanwhile is lost.
                tracing::warn!("change listener reconnected; flushing caches");
                flush(catalog, keys);
            }
        }
    }
}
