//! Operational endpoints for load balancers: liveness and readiness.

use std::collections::BTreeMap;
use std::time::Duration;

use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
}

#[derive(Serialize, ToSchema)]
pub struct Health {
    /// `ok`.
    pub status: &'static str,
}

/// Liveness: the process answers
#[utoipa::path(get, path = "/healthz", tag = "operations", responses((status = 200, body = Health)))]
pub async fn healthz() -> Json<Health> {
    Json(Health { status: "ok" })
}

#[derive(Serialize, ToSchema)]
pub struct Readiness {
    /// `ready` or `unavailable`.
    pub status: &'static str,
    /// The dependencies that failed their check, by name (`postgres`, `clickhouse`).
    pub unavailable: Vec<&'static str>,
    /// Each dependency's state: `ok` or `unavailable`.
    pub checks: BTreeMap<&'static str, &'static str>,
    /// Spool segments this release cannot read (written by a newer release, before a rollback),
    /// set aside whole in the spool's `unreadable/` for a release that can. They do not make the
    /// instance unready: every other segment ships.
    pub unreadable_spool_segments: u64,
}

/// Readiness: Postgres and ClickHouse both answer
#[utoipa::path(
    get, path = "/readyz", tag = "operations",
    responses(
        (status = 200, description = "Ready", body = Readiness),
        (status = 503, description = "A dependency is unreachable; `unavailable` names it", body = Readiness),
    )
)]
pub async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Readiness>) {
    let postgres = async {
        let ping = sqlx::query("SELECT 1").execute(&state.db);
        match tokio::time::timeout(CHECK_TIMEOUT, ping).await {
            Ok(result) => result.map(drop).map_err(anyhow::Error::from),
            Err(_) => Err(anyhow::anyhow!("no answer within {CHECK_TIMEOUT:?}")),
        }
    };
    let clickhouse = async {
        let ping = state.warehouse.ping(CHECK_TIMEOUT).await;
        ping.map_err(anyhow::Error::from)
    };
    let (postgres, clickhouse) = tokio::join!(postgres, clickhouse);
    let mut checks = BTreeMap::new();
    let mut unavailable = Vec::new();
    for (name, result) in [("postgres", postgres), ("clickhouse", clickhouse)] {
        match result {
            Ok(()) => {
                checks.insert(name, "ok");
            }
            Err(reason) => {
                tracing::warn!(dependency = name, %reason, "readiness check failed");
                checks.insert(name, "unavailable");
                unavailable.push(name);
            }
        }
    }
    let status = if unavailable.is_empty() {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    let body = Readiness {
        status: if unavailable.is_empty() {
            "ready"
        } else {
            "unavailable"
        },
        unavailable,
        checks,
        unreadable_spool_segments: unreadable_spool_segments(&state).await,
    };
    (status, Json(body))
}

/// The files in the spool's `unreadable/` (none when it does not exist or cannot be listed).
async fn unreadable_spool_segments(state: &AppState) -> u64 {
    let dir = state.ingest.spool.unreadable_dir();
    let count = tokio::task::spawn_blocking(move || match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(Result::ok).count() as u64,
        Err(_) => 0,
    });
    count.await.unwrap_or(0)
}
