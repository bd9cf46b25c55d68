//! The analytics API's keys: a bearer key of the shop, refused when malformed, unknown, revoked
//! or uninstalled (on every instance, within a second), and its own rate limit.

use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde_json::json;
use uuid::Uuid;

use crate::support::analytics::*;
use crate::support::*;

// ---- 1. keys and authentication ---------------------------------------------------------------

#[tokio::test]
async fn a_request_without_a_well_formed_bearer_key_is_unauthorized_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let valid = fixture.key.secret.as_str();
    let hex = &valid[3..];
    let cases = [
        None,
        Some("Basic dXNlcjpwYXNzd29yZA==".to_string()),
        Some(format!("Token {valid}")),
        Some(valid.to_string()),
        Some("Bearer".to_string()),
        Some("Bearer ".to_string()),
        Some(format!("Bearer xk_{hex}")),
        Some(format!("Bearer {hex}")),
        Some(format!("Bearer {}", &valid[..valid.len() - 1])),
        Some(format!("Bearer {valid}0")),
        Some(format!("Bearer vk_{}", hex.to_uppercase())),
        Some(format!("Bearer vk_{}g", &hex[1..])),
    ];

    for path in endpoints(&fixture.video, &fixture.widget) {
        // The key itself is good: only the form of the header is at fault below.
        analytics_ok(&app, &fixture.key, &path).await;
        for case in &cases {
            // Act
            let response = analytics_with(&app, case.as_deref(), &path).await;

            // Assert
            assert_unauthenticated(
                response,
                "UNAUTHORIZED",
                UNAUTHORIZED_MESSAGE,
                &format!("{path} with {case:?}"),
            )
            .await;
        }
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_accepted_in_any_case_on_every_endpoint() {
    // Arrange
    let app = spawn_app_with(|s| s.rate_limit_per_minute = UNLIMITED).await;
    let fixture = shop_with_key(&app, SHOP).await;
    let key = fixture.key.secret.as_str();

    for path in endpoints(&fixture.video, &fixture.widget) {
        for header in [
            format!("bearer {key}"),
            format!("BEARER {key}"),
            format!("Bearer   {key}"),
        ] {
            // Act
            let response = analytics_with(&app, Some(&header), &path).await;

            // Assert
            assert_eq!(response.status(), StatusCode::OK, "{path} with {header:?}");
        }
    }
}

#[tokio::test]
async fn a_well_formed_unknown_key_is_an_invalid_api_key_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let unknown = format!("vk_{}{}", Uuid::new_v4().simple(), Uuid::new_v4().simple());

    for path in endpoints(&fixture.video, &fixture.widget) {
        // Act
        let response = analytics_with(&app, Some(&format!("Bearer {unknown}")), &path).await;

        // Assert
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, &path).await;
    }
}

#[tokio::test]
async fn a_revoked_key_is_an_invalid_api_key_at_once_on_every_endpoint() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let kept = create_key(&app, SHOP).await;
    let paths = endpoints(&fixture.video, &fixture.widget);
    // Used first, so the instance has the key cached.
    for path in &paths {
        analytics_ok(&app, &fixture.key, path).await;
    }

    // Act
    revoke_key(&app, SHOP, &fixture.key).await;

    // Assert
    for path in &paths {
        let response = analytics(&app, &fixture.key, path).await;
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, path).await;
        // Only that key: the shop's other key still works.
        analytics_ok(&app, &kept, path).await;
    }
}

#[tokio::test]
async fn uninstalling_a_shop_makes_its_key_an_invalid_api_key_at_once() {
    // Arrange
    let app = spawn_app().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let paths = endpoints(&fixture.video, &fixture.widget);
    for path in &paths {
        analytics_ok(&app, &fixture.key, path).await;
    }

    // Act
    let response = app
        .send_admin(Method::DELETE, &format!("/shops/{SHOP}"))
        .await;
    assert_eq!(response.status(), StatusCode::NO_CONTENT);

    // Assert
    for path in &paths {
        let response = analytics(&app, &fixture.key, path).await;
        assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, path).await;
    }
}

#[tokio::test]
async fn a_key_sees_only_its_own_shops_videos_widgets_and_events() {
    // Arrange
    let app = spawn_app().await;
    let ours = shop_with_key(&app, SHOP).await;
    let theirs = shop_with_key(&app, OTHER_SHOP).await;
    let their_second_video = app.create_video(OTHER_SHOP, json!({})).await;
    let their_target = json!({ "videoId": theirs.video, "widgetId": theirs.widget });
    let our_target = json!({ "videoId": ours.video, "widgetId": ours.widget });
    record(
        &app,
        OTHER_SHOP,
        Activity::new([5, 5, 5, 5], &["9.00"]).events(&their_target),
    )
    .await;
    record(
        &app,
        SHOP,
        Activity::new([1, 1, 0, 0], &[]).events(&our_target),
    )
    .await;

    // Act
    let their_video = analytics(&app, &ours.key, &format!("/video/{}", theirs.video)).await;
    let their_widget = analytics(&app, &ours.key, &format!("/widget/{}", theirs.widget)).await;
    let (videos, _) = analytics_ok(&app, &ours.key, "/videos").await;
    let (widgets, _) = analytics_ok(&app, &ours.key, "/widgets").await;
    let (summary, _) = analytics_ok(&app, &ours.key, "/summary").await;

    // Assert
    assert_not_found(their_video).await;
    assert_not_found(their_widget).await;
    assert_eq!(ids_of(&videos["data"]), vec![ours.video.clone()]);
    assert_eq!(videos["pagination"]["total_count"], json!(1));
    assert!(!videos.to_string().contains(&their_second_video));
    assert_eq!(ids_of(&widgets["data"]), vec![ours.widget.clone()]);
    assert_eq!(widgets["pagination"]["total_count"], json!(1));
    assert_eq!(summary["data"]["impressions"], json!(1));
    assert_eq!(summary["data"]["views"], json!(1));
    assert_eq!(summary["data"]["orders"], json!(0));
}

// ---- 2. revocation across instances -----------------------------------------------------------

#[tokio::test]
async fn a_revoked_key_is_refused_by_every_instance_within_a_second() {
    // Arrange
    let first = spawn_app().await;
    let fixture = shop_with_key(&first, SHOP).await;
    let mut settings = test_settings(&first.database_url, &first.clickhouse_database);
    settings.rate_limit_per_minute = UNLIMITED;
    let second = spawn_with_settings(
        settings,
        first.database_url.clone(),
        first.clickhouse_database.clone(),
    )
    .await;
    // The second instance now has the key cached.
    analytics_ok(&second, &fixture.key, "/summary").await;

    // Act
    revoke_key(&first, SHOP, &fixture.key).await;
    let revoked = Instant::now();

    // Assert
    let (second, key) = (&second, &fixture.key);
    let within = Duration::from_secs(1).saturating_sub(revoked.elapsed());
    let what = "the second instance refuses the key";
    let (response, elapsed) = eventually(what, within, move || async move {
        let response = analytics(second, key, "/summary").await;
        let elapsed = revoked.elapsed();
        if response.status() == StatusCode::UNAUTHORIZED {
            return Ok((response, elapsed));
        }
        assert_eq!(response.status(), StatusCode::OK);
        Err(elapsed)
    })
    .await;
    assert_unauthenticated(response, "INVALID_API_KEY", INVALID_KEY_MESSAGE, "second").await;
    assert!(
        elapsed <= Duration::from_secs(1),
        "refused after {elapsed:?}"
    );
}

// ---- 3. rate limit ----------------------------------------------------------------------------

#[tokio::test]
async fn every_answer_after_authentication_carries_the_rate_limit_counting_down() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let requests = [
        ("/videos".to_string(), StatusCode::OK),
        (
            "/summary?start_date=2026-13-01".to_string(),
            StatusCode::BAD_REQUEST,
        ),
        (format!("/video/{}", Uuid::now_v7()), StatusCode::NOT_FOUND),
        ("/videos?limit=0".to_string(), StatusCode::BAD_REQUEST),
        (format!("/widget/{}", fixture.widget), StatusCode::OK),
    ];

    for (n, (path, expected_status)) in requests.iter().enumerate() {
        // Act
        let before = unix_now();
        let response = analytics(&app, &fixture.key, path).await;

        // Assert
        assert_eq!(response.status(), *expected_status, "{path}");
        let headers = response.headers();
        assert_eq!(number_header(headers, "x-ratelimit-limit"), 5, "{path}");
        assert_eq!(
            number_header(headers, "x-ratelimit-remaining"),
            4 - n as u64,
            "{path}"
        );
        let reset = number_header(headers, "x-ratelimit-reset");
        assert!(
            reset > before && reset <= unix_now() + 61,
            "{path}: reset {reset} is not a Unix time within the next minute of {before}"
        );
    }
}

#[tokio::test]
async fn the_request_over_the_limit_is_refused_with_retry_after_matching_the_message() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    for _ in 0..5 {
        analytics_ok(&app, &fixture.key, "/summary").await;
    }

    // Act
    let before = unix_now();
    let response = analytics(&app, &fixture.key, "/summary").await;

    // Assert
    let (status, headers, code, message) = error_of(response).await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(code, "RATE_LIMIT_EXCEEDED");
    let retry_after = number_header(&headers, "retry-after");
    assert!((1..=60).contains(&retry_after), "Retry-After {retry_after}");
    assert_eq!(
        message,
        format!("Too many requests. Please retry after {retry_after} seconds.")
    );
    assert_eq!(number_header(&headers, "x-ratelimit-limit"), 5);
    assert_eq!(number_header(&headers, "x-ratelimit-remaining"), 0);
    let reset = number_header(&headers, "x-ratelimit-reset");
    assert!(
        reset >= before && reset <= unix_now() + 61,
        "reset {reset} at {before}"
    );
    // Still refused: refusals do not wait the quota back.
    let again = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn each_key_of_a_shop_has_its_own_quota() {
    // Arrange
    let app = spawn_limited_to_five().await;
    let fixture = shop_with_key(&app, SHOP).await;
    let second = create_key(&app, SHOP).await;
    for _ in 0..5 {
        analytics_ok(&app, &fixture.key, "/videos").await;
    }
    let spent = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(spent.status(), StatusCode::TOO_MANY_REQUESTS);

    // Act
    let response = analytics(&app, &second, "/videos").await;

    // Assert
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        number_header(response.headers(), "x-ratelimit-remaining"),
        4
    );
    let spent = analytics(&app, &fixture.key, "/videos").await;
    assert_eq!(spent.status(), StatusCode::TOO_MANY_REQUESTS);
}
