//! Bearer-key authentication and the per-key rate limit, run before any analytics handler.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use governor::clock::{Clock, DefaultClock};
use governor::middleware::StateInformationMiddleware;
use governor::state::keyed::DefaultKeyedStateStore;
use governor::{Quota, RateLimiter};
use moka::future::Cache;
use sqlx::PgPool;
use uuid::Uuid;

use super::keys::{self, ApiKey};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::{retry_seconds, ApiError};
use crate::platform::session_token::SessionToken;

/// Who is asking: the key (for the rate limit) and the one shop it may see.
#[derive(Debug, Clone)]
pub struct Caller {
    pub key_id: Uuid,
    pub shop: ShopDomain,
}

/// Key hash → caller (or `None`: unknown or revoked). Cached so a busy key costs no query;
/// revocations flush it on every instance (NOTIFY), and a TTL bounds it regardless.
#[derive(Clone)]
pub struct KeyCache {
    entries: Cache<[u8; 32], Option<Caller>>,
    uses_written: MinuteGuard,
    pool: PgPool,
}

impl KeyCache {
    pub fn new(pool: PgPool) -> Self {
        KeyCache {
            entries: Cache::builder()
                .max_capacity(100_000)
                .time_to_live(Duration::from_secs(30))
                .build(),
            uses_written: MinuteGuard::new(),
            pool,
        }
    }

    /// Records the key's use (`lastUsedAt`), kept to the minute, beside the request: a busy key
    /// costs one write a minute, and a failed write is only logged.
    fn record_use(&self, key_id: Uuid) {
        let now = Utc::now();
        let minute = now.duration_trunc(TimeDelta::minutes(1)).unwrap_or(now);
        if !self.uses_written.first_in(key_id, minute) {
            return;
        }
        let pool = self.pool.clone();
        tokio::spawn(async move {
            if let Err(e) = keys::record_use(&pool, key_id, minute).await {
                tracing::warn!(%key_id, error = %e, "could not record the API key's last use");
            }
        });
    }

    async fn lookup(&self, key: &ApiKey) -> Result<Option<Caller>, ApiError> {
        let hash = key.hash();
        let pool = self.pool.clone();
        self.entries
            .try_get_with(hash, async move {
                let holder = keys::find_active(&pool, &hash).await?;
                Ok::<_, sqlx::Error>(holder.map(|(key_id, shop)| Caller { key_id, shop }))
            })
            .await
            .map_err(|e: Arc<sqlx::Error>| {
                ApiError::Internal(anyhow::anyhow!("API key lookup: {e}"))
            })
    }

    /// Forget everything (a key was revoked somewhere).
    pub fn invalidate_all(&self) {
        self.entries.invalidate_all();
    }
}

/// Key id → the last minute this instance recorded its use: a use in a minute already recorded
/// writes nothing. Keyed by id, so no secret is kept; an entry idle for two minutes is of no
/// use (its minute is past) and is dropped.
#[derive(Clone)]
struct MinuteGuard {
    written: moka::sync::Cache<Uuid, Arc<AtomicI64>>,
}

impl MinuteGuard {
    fn new() -> Self {
        MinuteGuard {
            written: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_idle(Duration::from_secs(120))
                .build(),
        }
    }

    /// Whether `minute` is later than every minute recorded for `key_id` so far, recording it.
    /// Of concurrent callers in one minute, one gets `true`.
    fn first_in(&self, key_id: Uuid, minute: DateTime<Utc>) -> bool {
        let minute = minute.timestamp();
        let last = self
            .written
            .get_with(key_id, || Arc::new(AtomicI64::new(i64::MIN)));
        last.fetch_max(minute, Ordering::Relaxed) < minute
    }
}

type KeyedLimiter =
    RateLimiter<Uuid, DefaultKeyedStateStore<Uuid>, DefaultClock, StateInformationMiddleware>;

/// Requests per key per rolling minute (GCRA: the full quota as a burst, refilled evenly).
#[derive(Clone)]
pub struct KeyRateLimit {
    limiter: Arc<KeyedLimiter>,
    per_minute: u32,
}

impl KeyRateLimit {
    pub fn new(per_minute: NonZeroU32) -> Self {
        let limiter = RateLimiter::keyed(Quota::per_minute(per_minute))
            .with_middleware::<StateInformationMiddleware>();
        KeyRateLimit {
            limiter: Arc::new(limiter),
            per_minute: per_minute.get(),
        }
    }

    /// Drops the state of keys idle long enough to be back at a full quota, periodically.
    pub fn spawn_reclaimer(&self) -> tokio::task::JoinHandle<()> {
        let limiter = self.limiter.clone();
        tokio::spawn(async move {
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                limiter.retain_recent();
                limiter.shrink_to_fit();
            }
        })
    }

    /// How many keys have state now (for tests and diagnostics).
    pub fn tracked_keys(&self) -> usize {
        self.limiter.len()
    }

    pub fn reclaim_idle(&self) {
        self.limiter.retain_recent();
        self.limiter.shrink_to_fit();
    }

    fn check(&self, key: Uuid) -> Result<RateHeaders, (RateHeaders, Duration)> {
        let now = unix_now();
        let per_cell = 60.0 / f64::from(self.per_minute);
        match self.limiter.check_key(&key) {
            Ok(snapshot) => {
                let remaining = snapshot.remaining_burst_capacity();
                // Full again once the used cells have dripped back.
                let refill = (f64::from(self.per_minute - remaining) * per_cell).ceil() as u64;
                Ok(RateHeaders {
                    limit: self.per_minute,
                    remaining,
                    reset: now + refill,
                })
            }
            Err(not_until) => {
                let wait = not_until.wait_time_from(DefaultClock::default().now());
                metrics::counter!("rate_limit_rejections_total").increment(1);
                let headers = RateHeaders {
                    limit: self.per_minute,
                    remaining: 0,
                    reset: now + retry_seconds(wait),
                };
                Err((headers, wait))
            }
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

struct RateHeaders {
    limit: u32,
    remaining: u32,
    reset: u64,
}

impl RateHeaders {
    fn apply(&self, headers: &mut HeaderMap) {
        headers.insert("x-ratelimit-limit", HeaderValue::from(self.limit));
        headers.insert("x-ratelimit-remaining", HeaderValue::from(self.remaining));
        headers.insert("x-ratelimit-reset", HeaderValue::from(self.reset));
    }
}

/// `Authorization: Bearer vk_…` → the key, or `UNAUTHORIZED` for anything else.
fn presented_key(headers: &HeaderMap) -> Result<ApiKey, ApiError> {
    crate::bearer::token(headers)
        .and_then(ApiKey::parse)
        .ok_or(ApiError::ApiKeyRequired)
}

/// Route layer of the analytics API: authenticate, record the key's use, rate-limit, then run
/// the handler with the caller in the request's extensions. Every authenticated answer carries the rate headers.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let key = match presented_key(req.headers()) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    let caller = match state.api_keys.lookup(&key).await {
        Ok(Some(caller)) => caller,
        Ok(None) => return ApiError::InvalidApiKey.into_response(),
        Err(e) => return e.into_response(),
    };
    state.api_keys.record_use(caller.key_id);
    match state.rate_limit.check(caller.key_id) {
        Ok(headers) => {
            req.extensions_mut().insert(caller);
            let mut response = next.run(req).await;
            headers.apply(response.headers_mut());
            response
        }
        Err((headers, wait)) => {
            let mut response = ApiError::RateLimited(wait).into_response();
            headers.apply(response.headers_mut());
            response
        }
    }
}

/// The dashboard's caller: the shop of the session the dashboard router checked.
pub async fn caller_from_session(mut req: Request, next: Next) -> Response {
    let Some(session) = req.extensions().get::<SessionToken>() else {
        // Only reachable if this layer were mounted without the session check before it.
        return ApiError::InvalidSessionToken("no session token was checked".into())
            .into_response();
    };
    let caller = Caller {
        key_id: Uuid::nil(),
        shop: session.shop.clone(),
    };
    req.extensions_mut().insert(caller);
    next.run(req).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn minute(hh_mm: &str) -> DateTime<Utc> {
        format!("2026-11-21T{hh_mm}:00Z").parse().unwrap()
    }

    #[test]
    fn a_keys_use_is_written_once_a_minute_and_never_for_an_earlier_minute() {
        let guard = MinuteGuard::new();
        let key = Uuid::now_v7();
        let other = Uuid::now_v7();

        assert!(guard.first_in(key, minute("10:05")));
        assert!(!guard.first_in(key, minute("10:05")));
        assert!(guard.first_in(other, minute("10:05")), "keys are apart");
        assert!(guard.first_in(key, minute("10:06")), "a later minute");
        assert!(!guard.first_in(key, minute("10:05")), "an earlier minute");
        assert!(!guard.first_in(key, minute("10:06")));
    }
}
