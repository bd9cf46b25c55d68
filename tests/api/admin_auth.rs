use reqwest::{Method, StatusCode};

use crate::support::*;

/// Every admin route, with a path that would otherwise be valid.
const ROUTES: &[(&str, &str)] = &[
    ("PUT", "/admin/v1/shops/a.myshopify.com"),
    ("GET", "/admin/v1/shops/a.myshopify.com"),
    ("DELETE", "/admin/v1/shops/a.myshopify.com"),
    ("PUT", "/admin/v1/shops/a.myshopify.com/products"),
    ("GET", "/admin/v1/shops/a.myshopify.com/products"),
    ("DELETE", "/admin/v1/shops/a.myshopify.com/products"),
    ("POST", "/admin/v1/shops/a.myshopify.com/videos"),
    ("GET", "/admin/v1/shops/a.myshopify.com/videos"),
    (
        "GET",
        "/admin/v1/shops/a.myshopify.com/videos/01a20082-29f1-702f-93f8-69422999f903",
    ),
    (
        "PATCH",
        "/admin/v1/shops/a.myshopify.com/videos/01a20082-29f1-702f-93f8-69422999f903",
    ),
    (
        "DELETE",
        "/admin/v1/shops/a.myshopify.com/videos/01a20082-29f1-702f-93f8-69422999f903",
    ),
    ("POST", "/admin/v1/shops/a.myshopify.com/widgets"),
    ("GET", "/admin/v1/shops/a.myshopify.com/widgets"),
    (
        "GET",
        "/admin/v1/shops/a.myshopify.com/widgets/01a20082-29f1-702f-93f8-69422999f903",
    ),
    (
        "PATCH",
        "/admin/v1/shops/a.myshopify.com/widgets/01a20082-29f1-702f-93f8-69422999f903",
    ),
    (
        "DELETE",
        "/admin/v1/shops/a.myshopify.com/widgets/01a20082-29f1-702f-93f8-69422999f903",
    ),
    ("POST", "/admin/v1/shops/a.myshopify.com/api-keys"),
    ("GET", "/admin/v1/shops/a.myshopify.com/api-keys"),
    (
        "DELETE",
        "/admin/v1/shops/a.myshopify.com/api-keys/01a20082-29f1-702f-93f8-69422999f903",
    ),
];

#[tokio::test]
async fn every_admin_route_refuses_a_missing_or_wrong_token() {
    let app = spawn_app().await;
    app.create_shop("a.myshopify.com").await;
    let wrong = [
        None,
        Some("Bearer wrong-token".to_string()),
        Some(format!("Basic {ADMIN_TOKEN}")),
        Some(format!("Bearer {ADMIN_TOKEN}x")),
        Some("Bearer ".to_string()),
    ];
    for (method, path) in ROUTES {
        for header in &wrong {
            let mut request = app
                .client
                .request(
                    Method::from_bytes(method.as_bytes()).unwrap(),
                    app.url(path),
                )
                .header("content-type", "application/json")
                .body("{}");
            if let Some(header) = header {
                request = request.header("authorization", header);
            }
            let response = request.send().await.unwrap();
            assert_eq!(
                response
                    .headers()
                    .get("www-authenticate")
                    .map(|v| v.to_str().unwrap()),
                Some("Bearer"),
                "{method} {path} with {header:?}"
            );
            assert_error(
                response,
                StatusCode::UNAUTHORIZED,
                "UNAUTHORIZED",
                "Authorization: Bearer",
            )
            .await;
        }
    }
    // Nothing was changed by the refused calls.
    let response = app.send_admin(Method::GET, "/shops/a.myshopify.com").await;
    assert_eq!(response.status(), StatusCode::OK);
}

#[tokio::test]
async fn the_right_token_is_accepted_on_every_route() {
    let app = spawn_app().await;
    app.create_shop("a.myshopify.com").await;
    for (method, path) in ROUTES {
        let response = app
            .client
            .request(
                Method::from_bytes(method.as_bytes()).unwrap(),
                app.url(path),
            )
            .bearer_auth(ADMIN_TOKEN)
            .header("content-type", "application/json")
            .body("{}")
            .send()
            .await
            .unwrap();
        assert_ne!(
            response.status(),
            StatusCode::UNAUTHORIZED,
            "{method} {path}"
        );
    }
}

#[tokio::test]
async fn the_bearer_scheme_is_accepted_in_any_case() {
    let app = spawn_app().await;
    app.create_shop("a.myshopify.com").await;
    for header in [
        format!("bearer {ADMIN_TOKEN}"),
        format!("BEARER {ADMIN_TOKEN}"),
        format!("Bearer   {ADMIN_TOKEN}"),
    ] {
        let response = app
            .client
            .get(app.url("/admin/v1/shops/a.myshopify.com"))
            .header("authorization", &header)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{header:?}");
    }
}
