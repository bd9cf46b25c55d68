//! The catalog's change listener: waiting until it is live and has caught up.

use super::*;

use reqwest::StatusCode;
use uuid::Uuid;

// ---- the catalog's change listener ------------------------------------------------------------

/// Waits until the service's change listener is live and has caught up: it has invalidated the
/// catalog cache as it does once it starts listening, and has handled every notification sent
/// before this call (the NOTIFY of each catalog write included). So a later change to the cache
/// is the doing of what the test does next, not of a start-up flush or an old notification.
///
/// Observed, not assumed: a shop nobody installed is cached (as not installed), a notification
/// names it, and the next request for it must read it again. The first such probe may go
/// unheard (sent before LISTEN took effect), and what it sees may be the start-up flush rather
/// than the notification; a second probe, sent once the first was seen, can only be answered by
/// the listener handling it, after everything sent before.
pub async fn wait_until_listening(app: &impl Service, within: std::time::Duration) {
    let started = std::time::Instant::now();
    let db = &sqlx::PgPool::connect(&app.database_url).await.unwrap();
    for _ in 0..2 {
        let within = within.saturating_sub(started.elapsed());
        eventually("the change listener answers", within, move || async move {
            change_heard(app, db).await.then_some(()).ok_or("not heard")
        })
        .await;
    }
}

/// One probe of [`wait_until_listening`]: did the service reload a cached shop within half a
/// second of a notification naming it? (Half a second is well inside any cache TTL a test uses,
/// so the reload cannot be the entry expiring.)
async fn change_heard(app: &impl Service, db: &sqlx::PgPool) -> bool {
    let shop = format!("probe-{}.myshopify.com", Uuid::new_v4().simple());
    let request = || app.storefront("contextual-widgets", &shop, &[("location", "home")]);
    let loaded_at = std::time::Instant::now();
    assert_eq!(request().await.status(), StatusCode::NOT_FOUND);
    let loads = app.catalog_loads().await;
    sqlx::query("SELECT pg_notify($1, $2)")
        .bind(videoapp::catalog::CHANGES_CHANNEL)
        .bind(&shop)
        .execute(db)
        .await
        .unwrap();
    while loaded_at.elapsed() < std::time::Duration::from_millis(500) {
        assert_eq!(request().await.status(), StatusCode::NOT_FOUND);
        if app.catalog_loads().await > loads {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    false
}
