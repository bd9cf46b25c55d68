//! The Postgres pool and its schema migrations (`migrations/`, embedded at build time).

use std::time::Duration;

use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;

pub async fn connect(database_url: &str) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(16)
        // A request should fail fast rather than queue behind a dead database.
        .acquire_timeout(Duration::from_secs(5))
        .connect(database_url)
        .await
}

/// Applies pending migrations. Safe to run from several instances at once: sqlx holds an
/// advisory lock while it migrates.
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    sqlx::migrate!("./migrations").run(pool).await
}
