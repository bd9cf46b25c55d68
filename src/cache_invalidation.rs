//! Change notifications between instances: one Postgres `LISTEN` connection per instance hears
//! catalog writes and key revocations made anywhere, and invalidates the caches they affect.
//!
//! Whenever the connection is lost, notifications may be missed: every cached snapshot is marked
//! for a reload (kept, to fall back on while Postgres is away) and the key cache is emptied, once
//! when the loss is seen and again once `LISTEN` is back, so no change made meanwhile is missed.
//! The listener never gives up: it reconnects every [`RECONNECT_INTERVAL`] for as long as it
//! takes.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use sqlx::postgres::{PgListener, PgPoolOptions};
use sqlx::PgPool;

use crate::analytics::auth::KeyCache;
use crate::analytics::keys::REVOCATIONS_CHANNEL;
use crate::catalog::cache::CatalogCache;
use crate::catalog::domain::ShopDomain;
use crate::catalog::CHANGES_CHANNEL;
use crate::db::Reachability;

/// Between attempts to listen again after the connection was lost.
const RECONNECT_INTERVAL: Duration = Duration::from_secs(1);
/// One attempt to connect: sqlx retries a refused connection until then.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Runs until the runtime stops, reconnecting on its own.
pub fn spawn_listener(
    database_url: SecretString,
    catalog: CatalogCache,
    keys: KeyCache,
    postgres: Reachability,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        // The listener's own connection, never one a request could be waiting for.
        let pool = match PgPoolOptions::new()
            .max_connections(1)
            .acquire_timeout(CONNECT_TIMEOUT)
            .max_lifetime(None)
            .idle_timeout(None)
            .connect_lazy(database_url.expose_secret())
        {
            Ok(pool) => pool,
            Err(e) => {
                tracing::error!(error = %e, "change listener cannot start");
                return;
            }
        };
        loop {
            let mut listener = match listen(&pool).await {
                Ok(listener) => listener,
                Err(e) => {
                    postgres.observe(&e);
                    tracing::debug!(error = %e, "change listener cannot connect; retrying");
                    tokio::time::sleep(RECONNECT_INTERVAL).await;
                    continue;
                }
            };
            // Changes made before LISTEN took effect were not heard: everything is read again.
            invalidate_everything(&catalog, &keys);
            if postgres.is_down() {
                postgres.probe().await;
            }
            let lost = hear(&mut listener, &catalog, &keys).await;
            drop(listener);
            // Before the caches are marked: a request that then finds its snapshot stale
            // already knows whether to wait for Postgres or serve what is held. (A probe, not
            // the error: one connection killed says nothing of the server.)
            let reachable = postgres.probe().await;
            match lost {
                Err(e) => {
                    tracing::warn!(error = %e, reachable, "change listener lost its connection; caches will reload")
                }
                Ok(()) => tracing::warn!(
                    reachable,
                    "change listener lost its connection; caches will reload"
                ),
            }
            invalidate_everything(&catalog, &keys);
            tokio::time::sleep(RECONNECT_INTERVAL).await;
        }
    })
}

/// Every snapshot is reloaded before it is served fresh again; keys are looked up again (a
/// revocation may have been missed, and a revoked key must not be honoured from memory).
fn invalidate_everything(catalog: &CatalogCache, keys: &KeyCache) {
    catalog.invalidate_all();
    keys.invalidate_all();
}

async fn listen(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let mut listener = PgListener::connect_with(pool).await?;
    // A lost connection ends [`hear`]; the loop above decides when to come back.
    listener.eager_reconnect(false);
    listener
        .listen_all([CHANGES_CHANNEL, REVOCATIONS_CHANNEL])
        .await?;
    Ok(listener)
}

/// Invalidates what each notification names, until the connection is lost: `Ok` when it
/// dropped, `Err` when it failed.
async fn hear(
    listener: &mut PgListener,
    catalog: &CatalogCache,
    keys: &KeyCache,
) -> Result<(), sqlx::Error> {
    loop {
        match listener.try_recv().await? {
            Some(notification) if notification.channel() == REVOCATIONS_CHANNEL => {
                keys.invalidate_all()
            }
            Some(notification) => match ShopDomain::parse(notification.payload()) {
                Ok(shop) => catalog.invalidate(&shop).await,
                Err(_) => catalog.invalidate_all(),
            },
            None => return Ok(()),
        }
    }
}
