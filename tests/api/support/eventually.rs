//! Waiting on a condition, with a deadline.

use std::fmt::Debug;
use std::future::Future;
use std::time::Duration;

/// How long between two looks at a condition that did not hold.
const LOOK_EVERY: Duration = Duration::from_millis(50);

/// Looks at `check` until it holds (`Ok`, with what the test wants of it), and returns that.
/// Fails the test, naming `what` and what `check` last saw (its `Err`), once `within` has passed
/// without it holding.
pub async fn eventually<T, Seen: Debug, Look: Future<Output = Result<T, Seen>>>(
    what: &str,
    within: Duration,
    mut check: impl FnMut() -> Look,
) -> T {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let seen = match check().await {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        if tokio::time::Instant::now() >= deadline {
            panic!("{what}: not within {within:?}; last seen: {seen:?}");
        }
        tokio::time::sleep(LOOK_EVERY).await;
    }
}
