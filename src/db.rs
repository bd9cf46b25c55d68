//! The Postgres pool, its schema migrations (`migrations/`, embedded at build time), and what
//! this instance knows of whether Postgres can be reached.

use std::future::Future;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool};
use tokio::sync::watch;

/// How long a request waits for a Postgres connection unless told otherwise.
pub const DEFAULT_ACQUIRE_TIMEOUT: Duration = Duration::from_secs(5);

pub async fn connect(database_url: &str) -> Result<PgPool, sqlx::Error> {
    connect_with(database_url, DEFAULT_ACQUIRE_TIMEOUT).await
}

/// The pool, whose requests give up on a connection after `acquire_timeout`. While Postgres
/// refuses connections sqlx keeps trying for that long: requests that know it is down
/// ([`Reachability`]) do not ask.
pub async fn connect_with(
    database_url: &str,
    acquire_timeout: Duration,
) -> Result<PgPool, sqlx::Error> {
    PgPoolOptions::new()
        .max_connections(16)
        .acquire_timeout(acquire_timeout)
        .connect(database_url)
        .await
}

/// Applies pending migrations. Safe to run from several instances at once: sqlx holds an
/// advisory lock while it migrates.
pub async fn migrate(pool: &PgPool) -> Result<(), sqlx::migrate::MigrateError> {
    sqlx::migrate!("./migrations").run(pool).await
}

/// Whether `e` means Postgres could not be reached (no connection, a connection lost, a server
/// shutting down or starting up), as opposed to a statement it refused.
pub fn is_unreachable(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::WorkerCrashed => true,
        // Class 08: connection exceptions; 57P01–57P03: shutting down, crashed, starting up;
        // class 53: insufficient resources (too many connections during a restart or failover,
        // a full disk), which pass as Postgres recovers.
        sqlx::Error::Database(db) => db.code().is_some_and(|code| {
            code.starts_with("08") || code.starts_with("57P") || code.starts_with("53")
        }),
        _ => false,
    }
}

/// Postgres is known to be unreachable: the request was not sent to it.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("Postgres is unreachable")]
pub struct Unreachable;

/// Whether this instance can reach Postgres, as it last found out. A failure that means
/// Postgres is unreachable marks it down at once; from then on a probe (a connection of its own,
/// so a busy pool cannot fail it) tries every [`PROBE_INTERVAL`] until one gets through. While
/// it is down, work that needs Postgres fails at once instead of waiting out the acquire
/// timeout, and caches serve what they hold.
#[derive(Clone)]
pub struct Reachability {
    inner: Arc<ReachabilityInner>,
}

struct ReachabilityInner {
    down: watch::Sender<bool>,
    options: PgConnectOptions,
}

/// Between probes while Postgres is down: how soon its return is noticed.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);
/// A probe that has not connected by then failed (a server that accepts and never answers).
const PROBE_TIMEOUT: Duration = Duration::from_secs(2);

impl Reachability {
    pub fn new(database_url: &str) -> Result<Reachability, sqlx::Error> {
        let options = PgConnectOptions::from_str(database_url)?;
        metrics::gauge!("postgres_reachable").set(1.0);
        Ok(Reachability {
            inner: Arc::new(ReachabilityInner {
                down: watch::channel(false).0,
                options,
            }),
        })
    }

    pub fn is_down(&self) -> bool {
        *self.inner.down.borrow()
    }

    /// `Err` when Postgres is known to be unreachable: the caller should not wait for it.
    pub fn check(&self) -> Result<(), Unreachable> {
        match self.is_down() {
            true => Err(Unreachable),
            false => Ok(()),
        }
    }

    /// `work`, unless Postgres is known to be unreachable or is found so while `work` waits:
    /// then `Err` at once, and `work` is dropped. A request that began waiting for a connection
    /// just before the outage was noticed does not wait out the acquire timeout.
    pub async fn unless_down<F: Future>(&self, work: F) -> Result<F::Output, Unreachable> {
        let mut down = self.inner.down.subscribe();
        tokio::select! {
            biased;
            _ = down.wait_for(|down| *down) => Err(Unreachable),
            output = work => Ok(output),
        }
    }

    /// Notes a failed Postgres call: one that means Postgres is unreachable marks it down.
    /// Returns whether it did.
    pub fn observe(&self, e: &sqlx::Error) -> bool {
        let unreachable = is_unreachable(e);
        if unreachable {
            self.set_down(true, Some(e));
        }
        unreachable
    }

    fn set_down(&self, down: bool, cause: Option<&sqlx::Error>) {
        let changed = self.inner.down.send_if_modified(|was| {
            let changed = *was != down;
            *was = down;
            changed
        });
        if !changed {
            return;
        }
        metrics::gauge!("postgres_reachable").set(if down { 0.0 } else { 1.0 });
        match (down, cause) {
            (true, Some(e)) => {
                tracing::warn!(error = %e, "Postgres is unreachable; serving from caches")
            }
            (true, None) => tracing::warn!("Postgres is unreachable; serving from caches"),
            (false, _) => tracing::info!("Postgres is reachable again"),
        }
    }

    /// Connects once, on a connection of its own, and records the outcome. Returns whether
    /// Postgres answered.
    pub async fn probe(&self) -> bool {
        let attempt = PgConnection::connect_with(&self.inner.options);
        let result = match tokio::time::timeout(PROBE_TIMEOUT, attempt).await {
            Ok(Ok(connection)) => {
                let _ = connection.close().await;
                Ok(())
            }
            Ok(Err(e)) => Err(e),
            Err(_) => Err(sqlx::Error::PoolTimedOut),
        };
        match result {
            Ok(()) => {
                self.set_down(false, None);
                true
            }
            Err(e) => {
                self.set_down(true, Some(&e));
                false
            }
        }
    }

    /// Probes whenever Postgres is marked down, at once and then every [`PROBE_INTERVAL`],
    /// until it answers. Runs until the runtime stops.
    pub fn spawn_prober(&self) -> tokio::task::JoinHandle<()> {
        let reachability = self.clone();
        let mut down = self.inner.down.subscribe();
        tokio::spawn(async move {
            loop {
                if down.wait_for(|down| *down).await.is_err() {
                    return;
                }
                while !reachability.probe().await {
                    tokio::time::sleep(PROBE_INTERVAL).await;
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connection_failures_are_unreachable_and_refused_statements_are_not() {
        let refused = std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        assert!(is_unreachable(&sqlx::Error::Io(refused)));
        assert!(is_unreachable(&sqlx::Error::PoolTimedOut));
        assert!(is_unreachable(&sqlx::Error::PoolClosed));
        assert!(!is_unreachable(&sqlx::Error::RowNotFound));
        assert!(!is_unreachable(&sqlx::Error::ColumnNotFound("x".into())));
    }

    #[tokio::test]
    async fn an_unreachable_failure_marks_postgres_down_and_a_refused_statement_does_not() {
        let reachability = Reachability::new("postgres://u:p@127.0.0.1:1/db").unwrap();
        assert!(reachability.check().is_ok());
        assert!(!reachability.observe(&sqlx::Error::RowNotFound));
        assert!(reachability.check().is_ok());
        assert!(reachability.observe(&sqlx::Error::PoolTimedOut));
        assert!(reachability.check().is_err());
        // Nothing listens on port 1: the probe fails and Postgres stays down.
        assert!(!reachability.probe().await);
        assert!(reachability.is_down());
    }

    #[tokio::test]
    async fn work_waiting_for_postgres_stops_waiting_once_it_is_found_unreachable() {
        let reachability = Reachability::new("postgres://u:p@127.0.0.1:1/db").unwrap();
        assert_eq!(reachability.unless_down(async { 7 }).await.ok(), Some(7));
        let waiting = tokio::spawn({
            let reachability = reachability.clone();
            async move { reachability.unless_down(std::future::pending::<()>()).await }
        });
        reachability.observe(&sqlx::Error::PoolTimedOut);
        assert!(waiting.await.unwrap().is_err());
        assert!(reachability.unless_down(async { 7 }).await.is_err());
    }
}
