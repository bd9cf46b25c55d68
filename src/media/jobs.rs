//! The processing queue in Postgres: durable jobs a worker leases, renews while it works, and
//! publishes under its lease only. A worker that dies or stalls loses its lease when it runs out,
//! and the next worker to look takes the job (its attempt counted); what the first one made is
//! never shown, since publishing checks the lease in the same transaction.

use std::time::Duration;

use sqlx::{PgPool, Postgres, Transaction};
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;

/// Attempts a job gets before its video is marked failed.
pub const MAX_ATTEMPTS: i32 = 5;

#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type)]
#[sqlx(type_name = "text", rename_all = "lowercase")]
pub enum JobKind {
    /// Fetch the file at the job's URL, then as `Process`.
    Import,
    /// Every output, from the source.
    Process,
    /// The poster again, at the moment the merchant chose.
    Poster,
}

/// A job held by this worker until `lease` is no longer its token.
#[derive(Debug, Clone)]
pub struct Job {
    pub id: i64,
    pub video_id: Uuid,
    pub shop: ShopDomain,
    pub kind: JobKind,
    /// This one included.
    pub attempts: i32,
    pub lease: Uuid,
    /// What an import fetches.
    pub source_url: Option<String>,
}

/// Queues `kind` for a video in the caller's transaction (it runs once that commits). A video
/// has at most one unfinished job of a kind: queuing again while one waits is a no-op.
pub async fn enqueue(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    video: Uuid,
    kind: JobKind,
) -> Result<(), sqlx::Error> {
    enqueue_from(tx, shop, video, kind, None).await
}

/// [`enqueue`], for an import of `source_url`.
pub async fn enqueue_from(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    video: Uuid,
    kind: JobKind,
    source_url: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO media_jobs (video_id, shop_domain, kind, source_url) \
         SELECT $1, $2, $3, $4 WHERE NOT EXISTS (SELECT 1 FROM media_jobs \
         WHERE video_id = $1 AND kind = $3 AND state IN ('queued', 'running'))",
    )
    .bind(video)
    .bind(shop.as_str())
    .bind(kind)
    .bind(source_url)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Takes the oldest job that is due, or one whose lease ran out, for `lease_for`.
pub async fn claim(pool: &PgPool, lease_for: Duration) -> Result<Option<Job>, sqlx::Error> {
    #[allow(clippy::type_complexity)]
    let row: Option<(i64, Uuid, String, JobKind, i32, Uuid, Option<String>)> = sqlx::query_as(
        "UPDATE media_jobs SET state = 'running', attempts = attempts + 1, \
         lease_token = gen_random_uuid(), lease_until = now() + $1 * interval '1 millisecond', \
         step = NULL, updated_at = now() \
         WHERE id = (SELECT id FROM media_jobs \
                     WHERE (state = 'queued' AND run_after <= now()) \
                        OR (state = 'running' AND lease_until < now()) \
                     ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED) \
         RETURNING id, video_id, shop_domain, kind, attempts, lease_token, source_url",
    )
    .bind(millis(lease_for))
    .fetch_optional(pool)
    .await?;
    let Some((id, video_id, shop, kind, attempts, lease, source_url)) = row else {
        return Ok(None);
    };
    let shop = ShopDomain::parse(&shop).map_err(|e| sqlx::Error::Decode(e.into()))?;
    Ok(Some(Job {
        id,
        video_id,
        shop,
        kind,
        attempts,
        lease,
        source_url,
    }))
}

/// Renews the lease for another `lease_for`, recording the step; false when the job is no
/// longer this worker's (its lease ran out and another took it, or it was deleted).
pub async fn renew(
    pool: &PgPool,
    job: &Job,
    lease_for: Duration,
    step: &str,
) -> Result<bool, sqlx::Error> {
    let renewed = sqlx::query(
        "UPDATE media_jobs SET lease_until = now() + $3 * interval '1 millisecond', step = $4, \
         updated_at = now() WHERE id = $1 AND lease_token = $2 AND state = 'running'",
    )
    .bind(job.id)
    .bind(job.lease)
    .bind(millis(lease_for))
    .bind(step)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(renewed == 1)
}

/// Locks the job for the transaction that publishes its work; false when it is no longer this
/// worker's, and then nothing may be published.
pub async fn still_held(
    tx: &mut Transaction<'static, Postgres>,
    job: &Job,
) -> Result<bool, sqlx::Error> {
    let held: Option<i64> = sqlx::query_scalar(
        "SELECT id FROM media_jobs WHERE id = $1 AND lease_token = $2 AND state = 'running' \
         FOR UPDATE",
    )
    .bind(job.id)
    .bind(job.lease)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(held.is_some())
}

/// Marks the job done in the publishing transaction.
pub async fn done(tx: &mut Transaction<'static, Postgres>, job: &Job) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE media_jobs SET state = 'done', lease_token = NULL, lease_until = NULL, \
         last_error = NULL, updated_at = now() WHERE id = $1",
    )
    .bind(job.id)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Gives the job back to run again after `wait`, recording why it failed; false when it was no
/// longer this worker's.
pub async fn retry_later(
    pool: &PgPool,
    job: &Job,
    wait: Duration,
    error: &str,
) -> Result<bool, sqlx::Error> {
    let released = sqlx::query(
        "UPDATE media_jobs SET state = 'queued', lease_token = NULL, lease_until = NULL, \
         run_after = now() + $3 * interval '1 millisecond', last_error = $4, updated_at = now() \
         WHERE id = $1 AND lease_token = $2 AND state = 'running'",
    )
    .bind(job.id)
    .bind(job.lease)
    .bind(millis(wait))
    .bind(error)
    .execute(pool)
    .await?
    .rows_affected();
    Ok(released == 1)
}

/// Ends the job as failed in the caller's transaction (the video's state says why).
pub async fn failed(
    tx: &mut Transaction<'static, Postgres>,
    job: &Job,
    error: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE media_jobs SET state = 'failed', lease_token = NULL, lease_until = NULL, \
         last_error = $2, updated_at = now() WHERE id = $1",
    )
    .bind(job.id)
    .bind(error)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// How long a failed attempt waits before the next: 10 s, 40 s, 160 s, … at most 30 min.
pub fn backoff(attempts: i32) -> Duration {
    let exponent = u32::try_from(attempts.clamp(1, 8) - 1).unwrap_or(0);
    Duration::from_secs(10 * 4u64.pow(exponent)).min(Duration::from_secs(1800))
}

/// Queues the deletion of every object under `prefix` in the caller's transaction.
pub async fn delete_later(
    tx: &mut Transaction<'static, Postgres>,
    prefix: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO media_deletions (prefix) VALUES ($1) \
         ON CONFLICT (prefix) DO UPDATE SET run_after = now()",
    )
    .bind(prefix)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

fn millis(d: Duration) -> i64 {
    i64::try_from(d.as_millis()).unwrap_or(i64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_wait_longer_each_time_up_to_half_an_hour() {
        let waits: Vec<u64> = (1..=7).map(|a| backoff(a).as_secs()).collect();
        assert_eq!(waits, [10, 40, 160, 640, 1800, 1800, 1800]);
    }
}
