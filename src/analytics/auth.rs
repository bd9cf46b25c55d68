//! Bearer-key authentication and the per-key rate limit, run before any analytics handler.

use std::num::NonZeroU32;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use moka::future::Cache;
use sqlx::PgPool;
use uuid::Uuid;

use super::keys::{self, ApiKey};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
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

    async fn lookup(&self, key: &ApiKey) -> Result<Option<Caller>, Arc<sqlx::Error>> {
        let hash = key.hash();
        let pool = self.pool.clone();
        self.entries
            .try_get_with(hash, async move {
                let holder = keys::find_active(&pool, &hash).await?;
                Ok::<_, sqlx::Error>(holder.map(|(key_id, shop)| Caller { key_id, shop }))
            })
            .await
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

/// Requests per key per rolling minute, one quota for the key however many instances serve it.
/// GCRA: the full quota as a burst, then one request back every minute / quota.
///
/// The state is a row per key in Postgres (`api_key_rate`), which every instance shares. One
/// statement reads it, decides and advances it, under the row's lock, so concurrent requests on
/// any instances take a unit each and never more than the quota between them. Times are
/// Postgres's, so instances whose clocks differ still agree.
///
/// A refusal is also kept in this instance until the unit it waits for is back: until then no
/// instance can be given one (units come back only with time), so the key's further requests are
/// refused here without asking Postgres, and a flood on one key costs Postgres one statement per
/// returning unit, not one per request.
#[derive(Clone)]
pub struct KeyRateLimit {
    quota: Quota,
    pool: PgPool,
    refused: moka::sync::Cache<Uuid, Refusal>,
}

/// A key refused until `until` (this instance's clock), with the reset its answers carry.
#[derive(Debug, Clone, Copy)]
struct Refusal {
    until: Instant,
    reset: u64,
}

impl KeyRateLimit {
    pub fn new(per_minute: NonZeroU32, pool: PgPool) -> Self {
        KeyRateLimit {
            quota: Quota::new(per_minute),
            pool,
            refused: moka::sync::Cache::builder()
                .max_capacity(100_000)
                // No wait is longer than a minute / quota, at most a minute.
                .time_to_live(Duration::from_secs(61))
                .build(),
        }
    }

    /// Takes a unit of the key's quota if one is left. When Postgres cannot be asked the request
    /// is refused as unavailable: a limit that failed open would be no limit.
    async fn check(&self, key_id: Uuid) -> Result<Verdict, sqlx::Error> {
        let asked = Instant::now();
        let verdict = match self.refused.get(&key_id).filter(|r| asked < r.until) {
            Some(refusal) => Verdict::Refused {
                headers: RateHeaders {
                    limit: self.quota.per_minute,
                    remaining: 0,
                    reset: refusal.reset,
                },
                wait: refusal.until - asked,
            },
            None => {
                let decision = take_unit(&self.pool, key_id, &self.quota).await?;
                let verdict = self.quota.verdict(decision);
                if let Verdict::Refused { headers, wait } = &verdict {
                    // From before the question: Postgres's now is no earlier, so this ends no
                    // later than the unit comes back.
                    let until = asked + *wait;
                    let reset = headers.reset;
                    self.refused.insert(key_id, Refusal { until, reset });
                }
                verdict
            }
        };
        if let Verdict::Refused { .. } = verdict {
            metrics::counter!("rate_limit_rejections_total").increment(1);
        }
        Ok(verdict)
    }
}

/// One GCRA step for a key. `tat`, the theoretical arrival time, is when the key's quota would be
/// full again; a request is allowed if pushing it one emission interval on (from now, if it is
/// past) leaves it at most a quota's worth ahead of now, and only then is it advanced. A new key
/// starts full. The decision is written beside it (`last_allowed`) because RETURNING sees only
/// the row as written. `now()` is the statement's start, one instant for the whole decision.
const TAKE_UNIT: &str = "\
    INSERT INTO api_key_rate AS rate (key_id, tat, last_allowed) \
    VALUES ($1, now() + $2::interval, true) \
    ON CONFLICT (key_id) DO UPDATE SET \
        tat = CASE \
            WHEN greatest(rate.tat + $2::interval, excluded.tat) <= now() + $3::interval \
            THEN greatest(rate.tat + $2::interval, excluded.tat) \
            ELSE rate.tat END, \
        last_allowed = greatest(rate.tat + $2::interval, excluded.tat) <= now() + $3::interval \
    RETURNING last_allowed, \
        (extract(epoch FROM tat - now()) * 1000000)::bigint, \
        (extract(epoch FROM now()) * 1000000)::bigint";

async fn take_unit(pool: &PgPool, key_id: Uuid, quota: &Quota) -> Result<Decision, sqlx::Error> {
    let (allowed, ahead_micros, now_micros) = sqlx::query_as(TAKE_UNIT)
        .bind(key_id)
        .bind(TimeDelta::microseconds(quota.emission_micros))
        .bind(TimeDelta::microseconds(quota.window_micros))
        .fetch_one(pool)
        .await?;
    Ok(Decision {
        allowed,
        ahead_micros,
        now_micros,
    })
}

/// A key that is gone (its row in `api_keys` deleted while this instance still knew it) is
/// refused as unknown; any other failure is Postgres being unavailable.
fn refusal_of(e: sqlx::Error) -> ApiError {
    let key_is_gone = e
        .as_database_error()
        .is_some_and(|db| db.is_foreign_key_violation());
    if key_is_gone {
        ApiError::InvalidApiKey
    } else {
        ApiError::Unavailable(anyhow::Error::new(e).context("checking the key's rate limit"))
    }
}

/// What Postgres decided for one request, on its clock.
#[derive(Debug, Clone, Copy)]
struct Decision {
    allowed: bool,
    /// How far the key's theoretical arrival time is ahead of now, after the decision.
    ahead_micros: i64,
    /// Postgres's now, in Unix microseconds.
    now_micros: i64,
}

/// The GCRA parameters of a quota, in microseconds (Postgres's resolution).
#[derive(Debug, Clone, Copy)]
struct Quota {
    per_minute: u32,
    /// How long one request takes to come back: a minute / quota, rounded up, so a key never
    /// gets more than its quota a minute.
    emission_micros: i64,
    /// How far ahead of now the theoretical arrival time may be after an allowed request: the
    /// whole quota's worth, which is what lets the full quota go at once.
    window_micros: i64,
}

impl Quota {
    fn new(per_minute: NonZeroU32) -> Self {
        let emission = MICROS_PER_MINUTE.div_ceil(u64::from(per_minute.get()));
        // At most 60 s, and times the quota at most 60 s + the quota in microseconds: both far
        // inside i64.
        let emission_micros = emission as i64;
        Quota {
            per_minute: per_minute.get(),
            emission_micros,
            window_micros: emission_micros * i64::from(per_minute.get()),
        }
    }

    /// The answer's headers for Postgres's decision, and the wait if it refused.
    fn verdict(&self, decision: Decision) -> Verdict {
        if decision.allowed {
            Verdict::Allowed(self.allowed_headers(decision))
        } else {
            let wait = self.wait_after_refusal(decision);
            let headers = RateHeaders {
                limit: self.per_minute,
                remaining: 0,
                // When the next request would be allowed, rounded up to the second.
                reset: unix_seconds_ceil(decision.now_micros.saturating_add(micros(wait))),
            };
            Verdict::Refused { headers, wait }
        }
    }

    fn allowed_headers(&self, decision: Decision) -> RateHeaders {
        let unused = (self.window_micros - decision.ahead_micros).max(0);
        let remaining = (unused / self.emission_micros).min(i64::from(self.per_minute));
        RateHeaders {
            limit: self.per_minute,
            remaining: remaining as u32,
            // Full again once the theoretical arrival time is reached.
            reset: unix_seconds_ceil(decision.now_micros + decision.ahead_micros),
        }
    }

    /// After a refusal the arrival time is as it was: the next request is allowed once that time
    /// plus one emission interval is at most a window ahead of now.
    fn wait_after_refusal(&self, decision: Decision) -> Duration {
        let wait = decision.ahead_micros + self.emission_micros - self.window_micros;
        Duration::from_micros(u64::try_from(wait).unwrap_or(0))
    }
}

const MICROS_PER_MINUTE: u64 = 60_000_000;
const MICROS_PER_SECOND: i64 = 1_000_000;

fn micros(duration: Duration) -> i64 {
    i64::try_from(duration.as_micros()).unwrap_or(i64::MAX)
}

fn unix_seconds_floor(micros: i64) -> u64 {
    u64::try_from(micros.div_euclid(MICROS_PER_SECOND)).unwrap_or(0)
}

fn unix_seconds_ceil(micros: i64) -> u64 {
    unix_seconds_floor(micros + MICROS_PER_SECOND - 1)
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Allowed(RateHeaders),
    Refused {
        headers: RateHeaders,
        wait: Duration,
    },
}

#[derive(Debug, PartialEq, Eq)]
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
///
/// Every request here needs Postgres (its quota is kept there, and a limit that failed open would
/// be no limit), so while Postgres is known to be unreachable a well-formed key is answered 503
/// at once, cached or not: a key held in memory could not be served anyway.
pub async fn authenticate(State(state): State<AppState>, mut req: Request, next: Next) -> Response {
    let key = match presented_key(req.headers()) {
        Ok(key) => key,
        Err(e) => return e.into_response(),
    };
    if let Err(e) = postgres_available(&state) {
        return e.into_response();
    }
    // Postgres found unreachable while a call waits ends the wait: 503 at once.
    let caller = match state
        .postgres
        .unless_down(state.api_keys.lookup(&key))
        .await
    {
        Ok(Ok(Some(caller))) => caller,
        Ok(Ok(None)) => return ApiError::InvalidApiKey.into_response(),
        Ok(Err(e)) => return postgres_failed(&state, &e, "looking up the API key").into_response(),
        Err(down) => return ApiError::Unavailable(down.into()).into_response(),
    };
    state.api_keys.record_use(caller.key_id);
    let verdict = match state
        .postgres
        .unless_down(state.rate_limit.check(caller.key_id))
        .await
    {
        Ok(verdict) => verdict,
        Err(down) => return ApiError::Unavailable(down.into()).into_response(),
    };
    match verdict {
        Ok(Verdict::Allowed(headers)) => {
            req.extensions_mut().insert(caller);
            let mut response = next.run(req).await;
            headers.apply(response.headers_mut());
            response
        }
        Ok(Verdict::Refused { headers, wait }) => {
            let mut response = ApiError::RateLimited(wait).into_response();
            headers.apply(response.headers_mut());
            response
        }
        Err(e) => {
            state.postgres.observe(&e);
            refusal_of(e).into_response()
        }
    }
}

/// 503 at once when Postgres is known to be unreachable, for analytics work that needs it.
pub(super) fn postgres_available(state: &AppState) -> Result<(), ApiError> {
    state
        .postgres
        .check()
        .map_err(|e| ApiError::Unavailable(anyhow::Error::new(e)))
}

/// A failed Postgres call of the analytics API: 503 when Postgres could not be reached (and it is
/// then known to be down), else an internal error.
pub(super) fn postgres_failed(state: &AppState, e: &sqlx::Error, doing: &str) -> ApiError {
    let cause = anyhow::anyhow!("{doing}: {e}");
    match state.postgres.observe(e) {
        true => ApiError::Unavailable(cause),
        false => ApiError::Internal(cause),
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

    fn quota(per_minute: u32) -> Quota {
        Quota::new(NonZeroU32::new(per_minute).unwrap())
    }

    /// 2026-11-21T10:05:00.250Z in Unix microseconds: a quarter second into a second.
    const NOW: i64 = 1_795_255_500_250_000;

    fn decided(allowed: bool, ahead_micros: i64) -> Decision {
        Decision {
            allowed,
            ahead_micros,
            now_micros: NOW,
        }
    }

    #[test]
    fn a_quota_gives_back_one_request_every_minute_over_the_quota_rounded_up() {
        let per_second = quota(60);
        assert_eq!(per_second.emission_micros, 1_000_000);
        assert_eq!(per_second.window_micros, 60_000_000);
        // 60 s / 7 is not a whole number of microseconds: rounded up, never over 7 a minute.
        let seven = quota(7);
        assert_eq!(seven.emission_micros, 8_571_429);
        assert!(seven.window_micros >= 60_000_000);
        let most = quota(u32::MAX);
        assert_eq!(most.emission_micros, 1);
        assert_eq!(most.window_micros, i64::from(u32::MAX));
    }

    #[test]
    fn an_allowed_request_tells_what_is_left_and_when_the_quota_is_full_again() {
        let five = quota(5);
        // A fresh key: its arrival time is one interval (12 s) ahead.
        assert_eq!(
            five.verdict(decided(true, 12_000_000)),
            Verdict::Allowed(RateHeaders {
                limit: 5,
                remaining: 4,
                reset: 1_795_255_513,
            })
        );
        // The last unit: the arrival time a whole window ahead.
        assert_eq!(
            five.verdict(decided(true, 60_000_000)),
            Verdict::Allowed(RateHeaders {
                limit: 5,
                remaining: 0,
                reset: 1_795_255_561,
            })
        );
        // Part of an interval dripped back is not a unit yet.
        assert_eq!(
            five.verdict(decided(true, 59_000_000)),
            Verdict::Allowed(RateHeaders {
                limit: 5,
                remaining: 0,
                reset: 1_795_255_560,
            })
        );
    }

    #[test]
    fn a_refused_request_waits_until_one_unit_has_come_back() {
        let five = quota(5);
        // Spent, 0.5 s ago: one unit is back 11.5 s from now.
        let verdict = five.verdict(decided(false, 59_500_000));
        assert_eq!(
            verdict,
            Verdict::Refused {
                headers: RateHeaders {
                    limit: 5,
                    remaining: 0,
                    reset: 1_795_255_500 + 12,
                },
                wait: Duration::from_millis(11_500),
            }
        );
    }

    #[test]
    fn a_refusals_reset_is_never_before_the_next_request_is_allowed() {
        let five = quota(5);
        // 0.9 s into a second, 11.5 s to wait: allowed at 12.4 s from that second, so 13.
        let decision = Decision {
            now_micros: NOW + 900_000,
            ..decided(false, 59_500_000)
        };
        let Verdict::Refused { headers, wait } = five.verdict(decision) else {
            panic!("refused")
        };
        assert_eq!(wait, Duration::from_millis(11_500));
        assert_eq!(headers.reset, 1_795_255_500 + 13);
    }

    #[test]
    fn postgres_failing_refuses_the_request_as_unavailable() {
        let error = refusal_of(sqlx::Error::PoolTimedOut);
        assert!(matches!(error, ApiError::Unavailable(_)), "{error:?}");
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
