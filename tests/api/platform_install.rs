//! Install through the platform, against the local stand-in of its endpoints: the session token
//! checked and exchanged for an offline access token (kept sealed), the shop created, and its
//! products imported page by page through throttling and failures; and a change of the shop's
//! holdout published to the theme.

use std::time::Duration;

use chrono::Utc;
use reqwest::StatusCode;
use secrecy::ExposeSecret;
use serde_json::{json, Value};
use videoapp::catalog::domain::ShopDomain;
use videoapp::devstore::platform::{
    Behaviour, Operation, PlatformStandIn, StandInCollection, StandInProduct,
};
use videoapp::platform::admin_api::HOLDOUT_METAFIELD;
use videoapp::platform::credentials::TokenKey;

use crate::support::platform::*;
use crate::support::*;

const SHOP: &str = "webhook-shop.myshopify.com";

/// A session token for the install tests' shop, with `claims` changed.
fn session_token(secret: &str, change: impl FnOnce(&mut Value)) -> String {
    session_token_for(SHOP, secret, change)
}

fn good_token() -> String {
    session_token(PROXY_SECRET, |_| {})
}

/// `count` products; every tenth is a draft. Each is in one of three collections, but the
/// fourth is in none and the seventh in forty (more than a products page reads with it).
fn catalog(count: u64) -> Vec<StandInProduct> {
    (1..=count)
        .map(|id| StandInProduct {
            id,
            title: format!("Product {id}"),
            handle: format!("product-{id}"),
            active: id % 10 != 0,
            updated_at: "2026-11-20T10:00:00Z".into(),
            image: Some(format!("https://cdn.example/{id}.jpg")),
            collections: match id {
                4 => vec![],
                7 => (601..=640).collect(),
                _ => vec![501 + id % 3],
            },
        })
        .collect()
}

/// The cursors of each products page of a catalog of `count`, in order, each once.
fn pages_of(count: usize) -> Vec<Option<String>> {
    let page = videoapp::platform::admin_api::PRODUCT_PAGE_SIZE as usize;
    let cursors = (page..count)
        .step_by(page)
        .map(|n| Some(format!("cursor-{n}")));
    std::iter::once(None).chain(cursors).collect()
}

/// `(product, its collections)` of every product the catalog holds.
async fn memberships(app: &TestApp) -> Vec<(String, Vec<String>)> {
    sqlx::query_as("SELECT gid, collection_ids FROM products WHERE shop_domain = $1 ORDER BY gid")
        .bind(SHOP)
        .fetch_all(&app.db)
        .await
        .unwrap()
}

fn active_memberships(products: &[StandInProduct]) -> Vec<(String, Vec<String>)> {
    let mut expected: Vec<(String, Vec<String>)> = products
        .iter()
        .filter(|p| p.active)
        .map(|p| {
            let collections = p.collections.iter();
            (
                format!("gid://shopify/Product/{}", p.id),
                collections
                    .map(|c| format!("gid://shopify/Collection/{c}"))
                    .collect(),
            )
        })
        .collect();
    expected.sort();
    expected
}

/// The stand-in of the platform, on a port of its own.
async fn start_standin(behaviour: Behaviour) -> (PlatformStandIn, String) {
    let standin = PlatformStandIn::new(CLIENT_ID, PROXY_SECRET, behaviour);
    let origin = standin.serve_on_loopback().await.unwrap();
    (standin, origin)
}

async fn platform_app(origin: &str) -> TestApp {
    let origin = origin.parse().unwrap();
    spawn_app_with(|s| {
        platform_settings(s);
        s.platform_origin = Some(origin);
    })
    .await
}

async fn install(app: &TestApp, token: Option<&str>) -> (StatusCode, Value) {
    let mut request = app.client.post(app.url("/app/api/install"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    json_of(request.send().await.unwrap()).await
}

/// Does the webhook work, and waits until the product import recorded at install is done; fails
/// with its last error.
async fn wait_for_import(app: &TestApp) {
    app.work_webhooks().await;
    let db = &app.db;
    eventually(
        "the import is done",
        Duration::from_secs(30),
        move || async move {
            let row: Option<(Option<chrono::DateTime<Utc>>, Option<String>)> = sqlx::query_as(
            "SELECT done_at, last_error FROM webhook_deliveries WHERE topic = 'products/import'",
        )
        .fetch_optional(db)
        .await
        .unwrap();
            match row {
                Some((Some(_), _)) => Ok(()),
                _ => Err(row),
            }
        },
    )
    .await;
}

/// Does the webhook work, and asks the install endpoint until it says the install's work (pixel,
/// collections, products) is done; fails with the work's last errors.
async fn wait_for_install_work(app: &TestApp) {
    app.work_webhooks().await;
    eventually(
        "the install's work is done",
        Duration::from_secs(30),
        move || async move {
            let (status, body) = install(app, Some(&good_token())).await;
            assert_eq!(status, StatusCode::OK, "{body}");
            if body["importing"] == json!(false) {
                return Ok(());
            }
            let errors = unfinished_work(app).await;
            Err(errors)
        },
    )
    .await;
}

/// The work not done yet: each row's topic and last error.
async fn unfinished_work(app: &TestApp) -> Vec<(String, Option<String>)> {
    sqlx::query_as("SELECT topic, last_error FROM webhook_deliveries WHERE done_at IS NULL")
        .fetch_all(&app.db)
        .await
        .unwrap()
}

/// The attempts each piece of the install's work took, by topic.
async fn attempts_by_topic(app: &TestApp) -> Vec<(String, i32)> {
    sqlx::query_as(
        "SELECT topic, attempts FROM webhook_deliveries \
         WHERE topic IN ('web_pixel/activate', 'collections/import', 'products/import') \
         ORDER BY topic",
    )
    .fetch_all(&app.db)
    .await
    .unwrap()
}

/// `count` collections; the first has no image.
fn collections(count: u64) -> Vec<StandInCollection> {
    (1..=count)
        .map(|id| StandInCollection {
            id: 500 + id,
            title: format!("Collection {id}"),
            handle: format!("collection-{id}"),
            image: (id > 1).then(|| format!("https://cdn.example/c{id}.jpg")),
        })
        .collect()
}

fn expected_collections(collections: &[StandInCollection]) -> Vec<Value> {
    let mut expected: Vec<Value> = collections
        .iter()
        .map(|c| {
            json!({
                "id": format!("gid://shopify/Collection/{}", c.id),
                "title": c.title,
                "handle": c.handle,
                "image": c.image.clone().unwrap_or_default(),
            })
        })
        .collect();
    expected.sort_by_key(|c| c["title"].as_str().unwrap().to_string());
    expected
}

const PIXEL_SETTINGS: &str = r#"{"proxyPath":"/apps/videoapp_sub"}"#;

async fn product_titles(app: &TestApp) -> Vec<(String, String)> {
    sqlx::query_as("SELECT gid, title FROM products WHERE shop_domain = $1 ORDER BY gid")
        .bind(SHOP)
        .fetch_all(&app.db)
        .await
        .unwrap()
}

fn active_titles(products: &[StandInProduct]) -> Vec<(String, String)> {
    let mut titles: Vec<(String, String)> = products
        .iter()
        .filter(|p| p.active)
        .map(|p| (format!("gid://shopify/Product/{}", p.id), p.title.clone()))
        .collect();
    titles.sort();
    titles
}

#[tokio::test]
async fn installing_exchanges_the_session_token_keeps_the_access_token_sealed_and_imports_every_page(
) {
    // Arrange: 250 products (nine pages of 30), every third request throttled.
    let behaviour = Behaviour {
        throttle_every: Some(3),
        ..Behaviour::default()
    };
    let (standin, origin) = start_standin(behaviour).await;
    let products = catalog(250);
    standin.set_products(SHOP, products.clone());
    let app = platform_app(&origin).await;
    let token = good_token();

    // Act
    let (status, body) = install(&app, Some(&token)).await;
    wait_for_import(&app).await;
    let (again_status, again) = install(&app, Some(&good_token())).await;

    // Assert: one exchange, as the platform documents it.
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body,
        json!({ "success": true, "shop": SHOP, "installedNow": true, "importing": true })
    );
    assert_eq!(
        (again_status, &again["installedNow"]),
        (StatusCode::OK, &json!(false))
    );
    let exchanges = standin.seen().exchanges;
    assert_eq!(exchanges.len(), 1);
    assert_eq!(exchanges[0]["subject_token"], json!(token));
    assert_eq!(exchanges[0]["client_id"], json!(CLIENT_ID));
    // The shop is installed with the defaults.
    let shop = app
        .admin(reqwest::Method::GET, &format!("/shops/{SHOP}"))
        .send()
        .await
        .unwrap();
    let (shop_status, shop) = json_of(shop).await;
    assert_eq!(shop_status, StatusCode::OK, "{shop}");
    assert_eq!(shop["timezone"], "UTC");
    // The access token is held sealed: not in clear, and it opens with the key for this shop.
    let granted = standin.granted_tokens();
    let (sealed, scope): (Vec<u8>, String) = sqlx::query_as(
        "SELECT access_token_sealed, scope FROM shop_credentials WHERE shop_domain = $1",
    )
    .bind(SHOP)
    .fetch_one(&app.db)
    .await
    .unwrap();
    let clear = granted[0].as_bytes();
    assert!(!sealed.windows(clear.len()).any(|w| w == clear));
    let key = TokenKey::parse(TOKEN_KEY).unwrap();
    let opened = key
        .open(&ShopDomain::parse(SHOP).unwrap(), &sealed)
        .unwrap();
    assert_eq!(opened.expose_secret(), granted[0]);
    assert_eq!(scope, "read_products,write_pixels,read_customer_events");
    // Every active product, from every page, through the throttling; each page asked once.
    assert_eq!(product_titles(&app).await, active_titles(&products));
    assert_eq!(standin.seen().pages_asked, pages_of(250));
    // Each product with every collection it is in, the seventh's forty too.
    assert_eq!(memberships(&app).await, active_memberships(&products));
    assert!(standin.seen().throttled >= 1);
    // The throttled answers were waited out in the attempt, not failed and retried later.
    let attempts: i32 = sqlx::query_scalar(
        "SELECT attempts FROM webhook_deliveries WHERE topic = 'products/import'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(attempts, 1);
}

#[tokio::test]
async fn a_bad_session_token_is_refused_and_nothing_is_installed() {
    // Arrange
    let (standin, origin) = start_standin(Behaviour::default()).await;
    let app = platform_app(&origin).await;
    let now = Utc::now().timestamp();
    let cases = [
        (
            "wrong secret",
            Some(session_token("another-secret", |_| {})),
        ),
        (
            "expired",
            Some(session_token(PROXY_SECRET, |c| c["exp"] = json!(now - 30))),
        ),
        (
            "other app",
            Some(session_token(PROXY_SECRET, |c| {
                c["aud"] = json!("other-app")
            })),
        ),
        (
            "other shop's admin",
            Some(session_token(PROXY_SECRET, |c| {
                c["iss"] = json!("https://other-shop.myshopify.com/admin")
            })),
        ),
        ("not a JWT", Some("not-a-token".to_string())),
        ("no header", None),
    ];

    for (case, token) in cases {
        // Act
        let (status, body) = install(&app, token.as_deref()).await;

        // Assert
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{case}: {body}");
        assert_eq!(
            body["error"]["code"], "INVALID_SESSION_TOKEN",
            "{case}: {body}"
        );
    }
    assert!(standin.seen().exchanges.is_empty());
    let shops: i64 = sqlx::query_scalar("SELECT count(*) FROM shops")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(shops, 0);
}

#[tokio::test]
async fn a_session_token_the_platform_refuses_installs_nothing() {
    // Arrange
    let behaviour = Behaviour {
        refuse_exchange: true,
        ..Behaviour::default()
    };
    let (_standin, origin) = start_standin(behaviour).await;
    let app = platform_app(&origin).await;

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;

    // Assert
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("the platform refused it"),
        "{body}"
    );
    let written: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM shops) + (SELECT count(*) FROM shop_credentials) \
         + (SELECT count(*) FROM webhook_deliveries)",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(written, 0);
}

#[tokio::test]
async fn an_import_that_fails_half_way_goes_on_from_its_last_page() {
    // Arrange: the second page's request fails once.
    let behaviour = Behaviour {
        fail: vec![(Operation::Products, 2)],
        ..Behaviour::default()
    };
    let (standin, origin) = start_standin(behaviour).await;
    let products = catalog(250);
    standin.set_products(SHOP, products.clone());
    let app = platform_app(&origin).await;

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;
    wait_for_import(&app).await;

    // Assert: retried after the failure, from the saved cursor (the first page asked once).
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(product_titles(&app).await, active_titles(&products));
    assert_eq!(standin.seen().pages_asked, pages_of(250));
    let attempts: i32 = sqlx::query_scalar(
        "SELECT attempts FROM webhook_deliveries WHERE topic = 'products/import'",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(attempts, 2);
}

#[tokio::test]
async fn uninstalling_forgets_the_access_token() {
    // Arrange
    let (standin, origin) = start_standin(Behaviour::default()).await;
    standin.set_products(SHOP, catalog(3));
    let app = platform_app(&origin).await;
    let (status, body) = install(&app, Some(&good_token())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for_import(&app).await;

    // Act
    Delivery::new("app/uninstalled", &uninstalled_body(SHOP))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;

    // Assert
    let held: i64 = sqlx::query_scalar("SELECT count(*) FROM shop_credentials")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(held, 0);
    let (status, _) = install(&app, Some(&good_token())).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        standin.seen().exchanges.len(),
        2,
        "a reinstall exchanges again"
    );
}

#[tokio::test]
async fn without_the_platform_settings_install_is_not_found() {
    // Arrange
    let app = spawn_app().await;

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;

    // Assert
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert!(
        body["error"]["message"]
            .as_str()
            .unwrap()
            .contains("VIDEOAPP_CLIENT_ID"),
        "{body}"
    );
}

#[tokio::test]
async fn installing_activates_the_checkout_pixel_once_and_imports_the_collections() {
    // Arrange: 150 collections (two pages of 100).
    let (standin, origin) = start_standin(Behaviour::default()).await;
    standin.set_products(SHOP, catalog(3));
    let held = collections(150);
    standin.set_collections(SHOP, held.clone());
    let app = platform_app(&origin).await;

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;
    wait_for_install_work(&app).await;
    let (again_status, again) = install(&app, Some(&good_token())).await;

    // Assert: the pixel is created once, with the settings the extension declares.
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["importing"], json!(true), "{body}");
    assert_eq!(again_status, StatusCode::OK, "{again}");
    assert_eq!(
        again,
        json!({ "success": true, "shop": SHOP, "installedNow": false, "importing": false })
    );
    let seen = standin.seen();
    let settings: Value = serde_json::from_str(PIXEL_SETTINGS).unwrap();
    assert_eq!(seen.pixels_created, vec![(SHOP.to_string(), settings)]);
    assert!(seen.pixels_updated.is_empty());
    // Every collection, from both pages, listed by the admin API and the dashboard's.
    assert_eq!(
        seen.collection_pages_asked,
        vec![None, Some("cursor-100".into())]
    );
    let listed = app
        .admin(reqwest::Method::GET, &format!("/shops/{SHOP}/collections"))
        .send()
        .await
        .unwrap();
    let (listed_status, listed) = json_of(listed).await;
    assert_eq!(listed_status, StatusCode::OK, "{listed}");
    assert_eq!(listed["collections"], json!(expected_collections(&held)));
    let dashboard = app
        .client
        .get(app.url(&format!("/app/api/shops/{SHOP}/collections")))
        .bearer_auth(good_token())
        .send()
        .await
        .unwrap();
    let (dashboard_status, dashboard) = json_of(dashboard).await;
    assert_eq!(dashboard_status, StatusCode::OK, "{dashboard}");
    assert_eq!(dashboard, listed);
    assert_eq!(
        attempts_by_topic(&app).await,
        vec![
            ("collections/import".to_string(), 1),
            ("products/import".to_string(), 1),
            ("web_pixel/activate".to_string(), 1),
        ]
    );
}

#[tokio::test]
async fn a_reinstall_updates_the_pixel_and_forgets_the_collections_the_store_removed() {
    // Arrange: installed once, then uninstalled; the store drops a collection meanwhile.
    let (standin, origin) = start_standin(Behaviour::default()).await;
    standin.set_products(SHOP, catalog(3));
    standin.set_collections(SHOP, collections(3));
    let app = platform_app(&origin).await;
    install(&app, Some(&good_token())).await;
    wait_for_install_work(&app).await;
    Delivery::new("app/uninstalled", &uninstalled_body(SHOP))
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;
    let kept = collections(2);
    standin.set_collections(SHOP, kept.clone());
    // The store also moves a product to another collection, which does not date the product.
    let mut moved = catalog(3);
    moved[0].collections = vec![502];
    standin.set_products(SHOP, moved.clone());

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;
    wait_for_install_work(&app).await;

    // Assert
    assert_eq!(
        (status, &body["installedNow"]),
        (StatusCode::OK, &json!(true))
    );
    let seen = standin.seen();
    let settings: Value = serde_json::from_str(PIXEL_SETTINGS).unwrap();
    assert_eq!(seen.pixels_created.len(), 1, "{:?}", seen.pixels_created);
    assert_eq!(seen.pixels_updated, vec![(SHOP.to_string(), settings)]);
    let listed = app
        .admin(reqwest::Method::GET, &format!("/shops/{SHOP}/collections"))
        .send()
        .await
        .unwrap();
    let (_, listed) = json_of(listed).await;
    assert_eq!(listed["collections"], json!(expected_collections(&kept)));
    assert_eq!(memberships(&app).await, active_memberships(&moved));
}

#[tokio::test]
async fn a_product_webhook_keeps_the_collections_the_import_read() {
    // Arrange: installed, with each product's collections imported.
    let (standin, origin) = start_standin(Behaviour::default()).await;
    let products = catalog(3);
    standin.set_products(SHOP, products.clone());
    let app = platform_app(&origin).await;
    install(&app, Some(&good_token())).await;
    wait_for_install_work(&app).await;

    // Act: the merchant renames a product; the webhook's body lists no collections.
    let renamed = json!({
        "id": 1, "title": "Renamed", "handle": "product-1", "status": "active",
        "updated_at": Utc::now().to_rfc3339(), "variants": [],
    });
    Delivery::new("products/update", &renamed)
        .send_ok(&app)
        .await;
    wait_until_worked(&app).await;

    // Assert
    let titles = product_titles(&app).await;
    assert_eq!(
        titles[0],
        ("gid://shopify/Product/1".into(), "Renamed".into())
    );
    assert_eq!(memberships(&app).await, active_memberships(&products));
}

#[tokio::test]
async fn a_failing_pixel_or_collections_call_is_retried() {
    // Arrange: the pixel's creation and the first collections page each fail once.
    let behaviour = Behaviour {
        fail: vec![(Operation::WebPixelCreate, 1), (Operation::Collections, 1)],
        ..Behaviour::default()
    };
    let (standin, origin) = start_standin(behaviour).await;
    standin.set_products(SHOP, catalog(3));
    let held = collections(3);
    standin.set_collections(SHOP, held.clone());
    let app = platform_app(&origin).await;

    // Act
    let (status, body) = install(&app, Some(&good_token())).await;
    wait_for_install_work(&app).await;

    // Assert: each retried once, and the pixel created once all the same.
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        attempts_by_topic(&app).await,
        vec![
            ("collections/import".to_string(), 2),
            ("products/import".to_string(), 1),
            ("web_pixel/activate".to_string(), 2),
        ]
    );
    assert_eq!(standin.seen().pixels_created.len(), 1);
    let listed = app
        .admin(reqwest::Method::GET, &format!("/shops/{SHOP}/collections"))
        .send()
        .await
        .unwrap();
    let (_, listed) = json_of(listed).await;
    assert_eq!(listed["collections"], json!(expected_collections(&held)));
}

/// The holdout the theme reads: the app's own metafield on the stand-in.
fn published_holdout(standin: &PlatformStandIn) -> Option<String> {
    let (namespace, key) = HOLDOUT_METAFIELD;
    standin.app_metafield(SHOP, namespace, key)
}

/// Does the webhook work until the theme's holdout is `expected` and no publication is left to
/// do; fails with the work's errors.
async fn wait_for_published_holdout(app: &TestApp, standin: &PlatformStandIn, expected: &str) {
    eventually(
        "the holdout is published",
        Duration::from_secs(30),
        move || async move {
            app.work_webhooks().await;
            let unfinished = unfinished_work(app).await;
            let publishing = unfinished
                .iter()
                .any(|(topic, _)| topic == "holdout/publish");
            if published_holdout(standin).as_deref() == Some(expected) && !publishing {
                return Ok(());
            }
            Err((published_holdout(standin), unfinished))
        },
    )
    .await;
}

#[tokio::test]
async fn a_change_of_the_holdout_is_published_to_the_theme_and_the_last_change_wins() {
    // Arrange: an installed shop, whose first metafield write fails.
    let behaviour = Behaviour {
        fail: vec![(Operation::MetafieldsSet, 1)],
        ..Behaviour::default()
    };
    let (standin, origin) = start_standin(behaviour).await;
    standin.set_products(SHOP, catalog(3));
    let app = platform_app(&origin).await;
    let (status, body) = install(&app, Some(&good_token())).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    wait_for_install_work(&app).await;
    assert_eq!(
        published_holdout(&standin),
        None,
        "an install has no holdout to publish"
    );

    // Act 1: the merchant holds out 20% in the dashboard.
    let patched = app
        .client
        .patch(app.url(&format!("/app/api/shops/{SHOP}")))
        .bearer_auth(good_token())
        .json(&json!({ "holdoutPercent": 20 }))
        .send()
        .await
        .unwrap();
    assert_eq!(patched.status(), StatusCode::OK);

    // Assert 1: published, after a retry, on the app's installation.
    wait_for_published_holdout(&app, &standin, "20").await;
    let attempts: Vec<i32> = sqlx::query_scalar(
        "SELECT attempts FROM webhook_deliveries WHERE topic = 'holdout/publish' AND done_at IS NOT NULL",
    )
    .fetch_all(&app.db)
    .await
    .unwrap();
    assert_eq!(attempts, vec![2], "the failed write was tried again");

    // Act 2: the admin changes it twice before the work runs.
    for percent in [5, 0] {
        let put = app
            .admin(reqwest::Method::PUT, &format!("/shops/{SHOP}"))
            .json(&json!({ "holdoutPercent": percent }))
            .send()
            .await
            .unwrap();
        assert_eq!(put.status(), StatusCode::OK);
    }

    // Assert 2: the last change is what the theme reads, whatever order the work ran in.
    wait_for_published_holdout(&app, &standin, "0").await;
    app.work_webhooks().await;
    let writes = standin.seen().metafields_set;
    let last = writes.last().unwrap();
    assert_eq!(
        (
            last.0.as_str(),
            last.1.as_str(),
            last.2.as_str(),
            last.3.as_str()
        ),
        (SHOP, HOLDOUT_METAFIELD.0, HOLDOUT_METAFIELD.1, "0")
    );
    assert_eq!(published_holdout(&standin).as_deref(), Some("0"));
    let pending: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM webhook_deliveries WHERE topic = 'holdout/publish' AND done_at IS NULL",
    )
    .fetch_one(&app.db)
    .await
    .unwrap();
    assert_eq!(pending, 0);
}

#[tokio::test]
async fn a_holdout_of_a_shop_the_platform_did_not_install_is_kept_and_published_nowhere() {
    // Arrange: the platform settings are on, but the shop is made through the admin API.
    let (standin, origin) = start_standin(Behaviour::default()).await;
    let app = platform_app(&origin).await;

    // Act
    let put = app
        .admin(reqwest::Method::PUT, &format!("/shops/{SHOP}"))
        .json(&json!({ "holdoutPercent": 10 }))
        .send()
        .await
        .unwrap();

    // Assert: the setting holds; no work was recorded, and the platform was asked nothing.
    assert_eq!(put.status(), StatusCode::CREATED);
    let (_, shop) = json_of(put).await;
    assert_eq!(shop["holdoutPercent"], json!(10));
    let recorded: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(recorded, 0);
    assert!(standin.seen().metafields_set.is_empty());
}
