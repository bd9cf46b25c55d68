//! The platform's side: signed webhook deliveries, session tokens, the platform settings, and
//! the demo store that stands in for the admin.

use std::time::Duration;

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use jsonwebtoken::{encode, EncodingKey, Header};
use reqwest::{Response, StatusCode};
use serde_json::{json, Value};
use sha2::Sha256;
use uuid::Uuid;

use super::*;

pub const SHOP: &str = "webhook-shop.myshopify.com";

/// The `X-Shopify-Hmac-Sha256` of `body` under `secret`.
pub fn hmac_of(secret: &str, body: &[u8]) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(body);
    base64::engine::general_purpose::STANDARD.encode(mac.finalize().into_bytes())
}

/// `app/uninstalled`'s body: the platform's shop resource (a few of its many fields). Its
/// `domain` is the shop's primary domain, here one of its own.
pub fn uninstalled_body(shop: &str) -> Value {
    json!({
        "id": 548380009,
        "name": "Super Toys",
        "email": "owner@example.com",
        "domain": "www.toys.example",
        "myshopify_domain": shop,
        "plan_name": "basic",
    })
}

/// One delivery: its headers as the platform sends them, and its body.
pub struct Delivery {
    pub topic: &'static str,
    pub shop: &'static str,
    pub id: String,
    pub body: Vec<u8>,
    pub hmac: Option<String>,
    /// `X-Shopify-Triggered-At`; sent without it when `None`.
    pub triggered_at: Option<DateTime<Utc>>,
}

impl Delivery {
    /// A delivery of `body`, sent now, signed with the app's secret.
    pub fn new(topic: &'static str, body: &Value) -> Delivery {
        Delivery::of_bytes(topic, serde_json::to_vec(body).unwrap())
    }

    pub fn of_bytes(topic: &'static str, body: Vec<u8>) -> Delivery {
        Delivery {
            topic,
            shop: SHOP,
            id: Uuid::new_v4().to_string(),
            hmac: Some(hmac_of(PROXY_SECRET, &body)),
            body,
            triggered_at: Some(Utc::now()),
        }
    }

    pub async fn send(&self, app: &impl Service) -> Response {
        let mut request = app
            .client
            .post(app.url("/webhooks/shopify"))
            .header("content-type", "application/json")
            .header("x-shopify-topic", self.topic)
            .header("x-shopify-shop-domain", self.shop)
            .header("x-shopify-webhook-id", &self.id)
            .header("x-shopify-api-version", "2025-10")
            .body(self.body.clone());
        if let Some(hmac) = &self.hmac {
            request = request.header("x-shopify-hmac-sha256", hmac);
        }
        if let Some(triggered_at) = self.triggered_at {
            request = request.header("x-shopify-triggered-at", triggered_at.to_rfc3339());
        }
        request.send().await.unwrap()
    }

    pub async fn send_ok(&self, app: &impl Service) {
        let response = self.send(app).await;
        let status = response.status();
        let body = response.text().await.unwrap();
        assert_eq!(status, StatusCode::OK, "{}: {body}", self.topic);
        assert_eq!(body, r#"{"success":true}"#);
    }
}

/// Does the recorded deliveries' work, then waits until every delivery is done (those the
/// instance's own worker had taken, too).
pub async fn wait_until_worked(app: &TestApp) {
    app.work_webhooks().await;
    wait_until_the_service_worked(app).await;
}

/// Waits until every recorded delivery is done, by the service's own worker.
pub async fn wait_until_the_service_worked(app: &TestApp) {
    let db = &app.db;
    eventually(
        "every recorded delivery is done",
        Duration::from_secs(20),
        move || async move {
            let open: Vec<(String, Option<String>)> = sqlx::query_as(
                "SELECT topic, last_error FROM webhook_deliveries WHERE done_at IS NULL",
            )
            .fetch_all(db)
            .await
            .unwrap();
            match open.is_empty() {
                true => Ok(()),
                false => Err(open),
            }
        },
    )
    .await;
}

/// An instance that does the webhook work (pruning included, at once) on the databases of
/// `recorder`, an instance that did none, once it has stopped: rows a test wrote beside the
/// recorder meet a worker that has not looked at them yet.
pub async fn worker_after(recorder: TestApp) -> TestApp {
    recorder.shutdown().await;
    let settings = test_settings(&recorder.database_url, &recorder.clickhouse_database);
    spawn_with_settings(
        settings,
        recorder.database_url.clone(),
        recorder.clickhouse_database.clone(),
    )
    .await
}

pub const CLIENT_ID: &str = "videoapp-client-id";
pub const TOKEN_KEY: &str = "5f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0";

/// A session token as App Bridge gives the embedded app of `shop`, with `claims` changed.
pub fn session_token_for(shop: &str, secret: &str, change: impl FnOnce(&mut Value)) -> String {
    let now = Utc::now().timestamp();
    let mut claims = json!({
        "iss": format!("https://{shop}/admin"),
        "dest": format!("https://{shop}"),
        "aud": CLIENT_ID,
        "sub": "42",
        "exp": now + 60,
        "nbf": now - 1,
        "iat": now - 1,
        "jti": uuid::Uuid::new_v4().to_string(),
        "sid": "a-session",
    });
    change(&mut claims);
    encode(
        &Header::new(jsonwebtoken::Algorithm::HS256),
        &claims,
        &EncodingKey::from_secret(secret.as_bytes()),
    )
    .unwrap()
}

/// The platform settings on: the test client id and token key.
pub fn platform_settings(settings: &mut videoapp::config::Settings) {
    settings.client_id = Some(CLIENT_ID.into());
    settings.token_key = Some(videoapp::config::TokenKeyBytes::parse(TOKEN_KEY).unwrap());
}

/// The demo store for `shop`, standing in for the admin (its app embed on or off); its origin.
pub async fn demo_store(app: &TestApp, shop: &str, app_embed: bool) -> String {
    let store = videoapp::devstore::DevStoreServer::bind(videoapp::devstore::DevStoreConfig {
        shop: videoapp::catalog::domain::ShopDomain::parse(shop).unwrap(),
        listen: ([127, 0, 0, 1], 0).into(),
        upstream: app.url(""),
        secret: videoapp::storefront::signature::ProxySecret::new(PROXY_SECRET),
        database_url: app.database_url.clone().into(),
        extensions_dir: "extensions".into(),
        admin: Some(videoapp::devstore::dashboard::DemoAdmin {
            client_id: CLIENT_ID.into(),
            secret: PROXY_SECRET.into(),
        }),
        app_embed,
    })
    .await
    .unwrap();
    let base = format!("http://{}", store.local_addr());
    tokio::spawn(store.run_until(std::future::pending()));
    base
}
