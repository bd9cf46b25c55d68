//! The analytics API's per-key rate limit is one quota however many instances serve the key: its
//! state is in Postgres, which every instance shares. What happens when Postgres cannot be asked,
//! and what the state leaves behind.

use std::time::Duration;

use futures::future::join_all;
use reqwest::{Response, StatusCode};

use crate::support::analytics::{
    analytics, analytics_ok, create_key, error_of, number_header, shop_with_key, SHOP,
};
use crate::support::*;

/// A quota small enough to spend at once, and whose first request comes back only after
/// 60 / 5 = 12 s, far longer than any of these tests takes to spend it.
const LIMIT: u32 = 5;

/// Two instances of the service, each allowing `LIMIT` a minute, on one Postgres and one
/// ClickHouse database (each with its own spool), as behind a load balancer.
async fn two_instances() -> (TestApp, TestApp) {
    let first = spawn_app_with(|s| s.rate_limit_per_minute = LIMIT).await;
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    settings.rate_limit_per_minute = LIMIT;
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    (first, second)
}

async fn quota_rows(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM api_key_rate")
        .fetch_one(&app.db)
        .await
        .unwrap()
}

/// Asserts a 429 as the contract writes it, and returns its `Retry-After` and `X-RateLimit-Reset`.
async fn assert_refused(response: Response, instance: &str) -> (u64, u64) {
    let (status, headers, code, message) = error_of(response).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{instance}");
    assert_eq!(code, "RATE_LIMIT_EXCEEDED", "{instance}");
    let retry_after = number_header(&headers, "retry-after");
    assert!(
        (1..=60).contains(&retry_after),
        "{instance}: Retry-After {retry_after}"
    );
    assert_eq!(
        message,
        format!("Too many requests. Please retry after {retry_after} seconds."),
        "{instance}"
    );
    assert_eq!(
        number_header(&headers, "x-ratelimit-limit"),
        u64::from(LIMIT)
    );
    assert_eq!(number_header(&headers, "x-ratelimit-remaining"), 0);
    (retry_after, number_header(&headers, "x-ratelimit-reset"))
}

#[tokio::test]
async fn requests_alternating_between_two_instances_spend_one_quota() {
    // Arrange
    let (first, second) = two_instances().await;
    let fixture = shop_with_key(&first, SHOP).await;
    let instances = [&first, &second];

    // Act: the quota spent half on each instance.
    for n in 0..LIMIT {
        let response = analytics(instances[n as usize % 2], &fixture.key, "/summary").await;

        // Assert: each request counts down the one quota, whichever instance took it.
        assert_eq!(response.status(), StatusCode::OK, "request {n}");
        let headers = response.headers();
        assert_eq!(
            number_header(headers, "x-ratelimit-limit"),
            u64::from(LIMIT)
        );
        assert_eq!(
            number_header(headers, "x-ratelimit-remaining"),
            u64::from(LIMIT - 1 - n),
            "request {n}"
        );
    }

    // Assert: both refuse the next request, and agree on when to come back.
    let (first_wait, first_reset) =
        assert_refused(analytics(&first, &fixture.key, "/videos").await, "first").await;
    let (second_wait, second_reset) =
        assert_refused(analytics(&second, &fixture.key, "/videos").await, "second").await;
    assert!(
        first_wait.abs_diff(second_wait) <= 1,
        "Retry-After {first_wait} on the first instance, {second_wait} on the second"
    );
    assert!(
        first_reset.abs_diff(second_reset) <= 1,
        "X-RateLimit-Reset {first_reset} on the first instance, {second_reset} on the second"
    );
}

#[tokio::test]
async fn concurrent_requests_on_two_instances_never_pass_more_than_the_limit() {
    // Arrange
    let (first, second) = two_instances().await;
    let fixture = shop_with_key(&first, SHOP).await;
    let total = 8 * LIMIT as usize;

    // Act: all at once, half through each instance.
    let requests = (0..total).map(|n| {
        let instance = if n % 2 == 0 { &first } else { &second };
        analytics(instance, &fixture.key, "/summary")
    });
    let responses = join_all(requests).await;

    // Assert: exactly the quota passed, each taking a unit of its own.
    let mut remaining_of_passed = Vec::new();
    let mut refused = 0;
    for response in responses {
        match response.status() {
            StatusCode::OK => {
                remaining_of_passed.push(number_header(response.headers(), "x-ratelimit-remaining"))
            }
            StatusCode::TOO_MANY_REQUESTS => refused += 1,
            other => panic!("unexpected {other}: {}", response.text().await.unwrap()),
        }
    }
    remaining_of_passed.sort_unstable();
    let expected: Vec<u64> = (0..u64::from(LIMIT)).collect();
    assert_eq!(
        remaining_of_passed, expected,
        "remaining of each passed request"
    );
    assert_eq!(refused, total - LIMIT as usize);
}

#[tokio::test]
async fn every_refusal_counts_in_rate_limit_rejections_total() {
    // Arrange: a process of its own, whose metrics count only this test's requests.
    let app = spawn_process_app(&[("VIDEOAPP_RATE_LIMIT_PER_MINUTE", LIMIT.to_string())]).await;
    let fixture = shop_with_key(&app, SHOP).await;

    // Act
    for _ in 0..LIMIT + 3 {
        analytics(&app, &fixture.key, "/summary").await;
    }

    // Assert
    let refusals = app
        .wait_for_metric(
            "rate_limit_rejections_total",
            &[],
            |n| n >= 3.0,
            Duration::from_secs(5),
        )
        .await;
    assert_eq!(refusals, 3.0);
}

#[tokio::test]
async fn a_request_whose_quota_postgres_cannot_check_is_refused_with_503_not_served() {
    // Arrange: the key known to the instance already, so only the quota needs Postgres.
    let app = spawn_app_with(|s| s.rate_limit_per_minute = LIMIT).await;
    let fixture = shop_with_key(&app, SHOP).await;
    analytics_ok(&app, &fixture.key, "/summary").await;
    sqlx::query("ALTER TABLE api_key_rate RENAME TO api_key_rate_away")
        .execute(&app.db)
        .await
        .unwrap();

    // Act
    let response = analytics(&app, &fixture.key, "/summary").await;

    // Assert
    let (status, headers, code, _) = error_of(response).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(code, "SERVICE_UNAVAILABLE");
    assert!(number_header(&headers, "retry-after") >= 1);
    assert!(
        headers.get("x-ratelimit-remaining").is_none(),
        "no quota to tell of"
    );

    // Once Postgres answers again, the quota goes on where it was: the refusal took nothing.
    sqlx::query("ALTER TABLE api_key_rate_away RENAME TO api_key_rate")
        .execute(&app.db)
        .await
        .unwrap();
    analytics_ok(&app, &fixture.key, "/summary").await;
    let response = analytics(&app, &fixture.key, "/summary").await;
    assert_eq!(
        number_header(response.headers(), "x-ratelimit-remaining"),
        u64::from(LIMIT - 3)
    );
}

#[tokio::test]
async fn a_keys_quota_is_one_row_that_goes_with_the_key() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = LIMIT).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let second = create_key(&app, SHOP).await;

    // Act: one key used past its quota, the other once.
    for _ in 0..2 * LIMIT {
        analytics(&app, &fixture.key, "/summary").await;
    }
    analytics_ok(&app, &second, "/summary").await;

    // Assert: a row per key, however many requests, and none once the keys are gone (the shop's
    // deletion takes them).
    assert_eq!(quota_rows(&app).await, 2);
    sqlx::query("DELETE FROM shops WHERE domain = $1")
        .bind(SHOP)
        .execute(&app.db)
        .await
        .unwrap();
    assert_eq!(quota_rows(&app).await, 0);
    // Deleted without the notice a revocation sends, the key is still in the instance's memory;
    // its quota has nothing to belong to, so it is refused as unknown.
    let response = analytics(&app, &second, "/summary").await;
    assert_error(
        response,
        StatusCode::UNAUTHORIZED,
        "INVALID_API_KEY",
        "Invalid or revoked API key",
    )
    .await;
    assert_eq!(quota_rows(&app).await, 0);
}

#[tokio::test]
async fn a_refused_key_is_refused_again_by_its_instance_without_asking_postgres() {
    // Arrange: the quota spent through the first instance, which is then refused once.
    let (first, second) = two_instances().await;
    let fixture = shop_with_key(&first, SHOP).await;
    analytics_ok(&second, &fixture.key, "/summary").await; // the key known to both
    for _ in 1..LIMIT {
        analytics_ok(&first, &fixture.key, "/summary").await;
    }
    let refused = analytics(&first, &fixture.key, "/summary").await;
    let (_, reset) = assert_refused(refused, "first").await;
    sqlx::query("ALTER TABLE api_key_rate RENAME TO api_key_rate_away")
        .execute(&first.db)
        .await
        .unwrap();

    // Act
    let again = analytics(&first, &fixture.key, "/summary").await;
    let elsewhere = analytics(&second, &fixture.key, "/summary").await;

    // Assert: the first instance knows the unit is not back yet; the second has to ask.
    let (_, reset_again) = assert_refused(again, "first, again").await;
    assert_eq!(reset_again, reset);
    assert_eq!(elsewhere.status(), StatusCode::SERVICE_UNAVAILABLE);
    sqlx::query("ALTER TABLE api_key_rate_away RENAME TO api_key_rate")
        .execute(&first.db)
        .await
        .unwrap();
}
