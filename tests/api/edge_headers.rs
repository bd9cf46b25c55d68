//! Headers every answer carries, whatever answered it: a handler, an error, the fallback, the
//! refusal of an oversized head before the router, or the metrics port.

use reqwest::{Method, StatusCode};
use serde_json::json;

use crate::support::*;

const SHOP: &str = "headers-shop.myshopify.com";

#[tokio::test]
async fn every_answer_forbids_content_sniffing() {
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let long_target = format!("/healthz?{}", "a".repeat(16 * 1024));
    let answers = [
        ("health", app.get("/healthz").await),
        ("document", app.get("/openapi.json").await),
        ("no route", app.get("/no/such/page").await),
        (
            "admin refused",
            app.get(&format!("/admin/v1/shops/{SHOP}/videos")).await,
        ),
        (
            "admin list",
            app.send_admin(Method::GET, &format!("/shops/{SHOP}/videos"))
                .await,
        ),
        (
            "storefront",
            app.storefront("contextual-widgets", SHOP, &[("location", "home")])
                .await,
        ),
        (
            "event",
            app.post_events(SHOP, &json!({ "eventType": "view", "videoId": "v" }))
                .await,
        ),
        (
            "webhook refused",
            app.client
                .post(app.url("/webhooks/shopify"))
                .body("{}")
                .send()
                .await
                .unwrap(),
        ),
        ("oversized head", app.get(&long_target).await),
        (
            "metrics",
            reqwest::get(format!("{}/metrics", app.metrics_address))
                .await
                .unwrap(),
        ),
    ];

    let statuses: Vec<(&str, StatusCode)> = answers.iter().map(|(n, r)| (*n, r.status())).collect();
    for (name, response) in &answers {
        assert_eq!(
            response
                .headers()
                .get("x-content-type-options")
                .and_then(|v| v.to_str().ok()),
            Some("nosniff"),
            "{name}: {:?}",
            response.status()
        );
    }
    // The answers above are of every kind: success, refusal, absence, and the head's limit.
    let status = |name: &str| statuses.iter().find(|(n, _)| *n == name).unwrap().1;
    assert_eq!(status("health"), StatusCode::OK);
    assert_eq!(status("no route"), StatusCode::NOT_FOUND);
    assert_eq!(status("admin refused"), StatusCode::UNAUTHORIZED);
    assert!(status("webhook refused").is_client_error());
    assert_eq!(status("oversized head"), StatusCode::URI_TOO_LONG);
    assert_eq!(status("metrics"), StatusCode::OK);
}
