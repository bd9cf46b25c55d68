//! `POST` / `GET /admin/v1/shops/{shop}/api-keys` and `DELETE …/api-keys/{id}`.

use crate::support::*;
use chrono::{DateTime, Utc};
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

const SHOP: &str = "keys-shop.myshopify.com";
const OTHER_SHOP: &str = "other-keys-shop.myshopify.com";

async fn post_key(app: &TestApp, shop: &str, body: Value) -> Response {
    app.send_admin_json(Method::POST, &format!("/shops/{shop}/api-keys"), &body)
        .await
}

async fn revoke(app: &TestApp, shop: &str, id: &str) -> Response {
    app.send_admin(Method::DELETE, &format!("/shops/{shop}/api-keys/{id}"))
        .await
}

async fn list_keys(app: &TestApp, shop: &str) -> Vec<Value> {
    app.admin_list(&format!("/shops/{shop}/api-keys"), "apiKeys")
        .await
}

fn timestamp(value: &Value) -> DateTime<Utc> {
    value
        .as_str()
        .unwrap_or_else(|| panic!("{value} is not a timestamp string"))
        .parse()
        .unwrap_or_else(|e| panic!("{value} is not an RFC 3339 timestamp: {e}"))
}

fn is_well_formed_key(key: &str) -> bool {
    key.strip_prefix("vk_").is_some_and(|hex| {
        hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

/// Every string anywhere in `value`, object keys included.
fn strings_in(value: &Value) -> Vec<String> {
    match value {
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items.iter().flat_map(strings_in).collect(),
        Value::Object(map) => map
            .iter()
            .flat_map(|(k, v)| std::iter::once(k.clone()).chain(strings_in(v)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The key's secret part: all of it beyond the visible prefix.
fn secret_of(key: &str) -> &str {
    &key[11..]
}

#[tokio::test]
async fn creating_an_api_key_answers_201_with_the_key_and_its_prefix() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let before = Utc::now() - chrono::Duration::seconds(5);

    // Act
    let response = post_key(&app, SHOP, json!({ "name": "Looker" })).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let key = body["key"].as_str().expect("a key");
    assert!(
        is_well_formed_key(key),
        "{key} is not vk_ + 64 lowercase hex"
    );
    assert_eq!(body["prefix"], json!(&key[..11]));
    assert_eq!(body["name"], json!("Looker"));
    Uuid::parse_str(body["id"].as_str().expect("an id")).expect("a UUID id");
    let created_at = timestamp(&body["createdAt"]);
    assert!(
        created_at > before && created_at < Utc::now() + chrono::Duration::seconds(5),
        "{created_at}"
    );
}

#[tokio::test]
async fn two_api_keys_differ() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let first = app.create_api_key(SHOP, "Same name").await;
    let second = app.create_api_key(SHOP, "Same name").await;

    // Assert
    assert_ne!(first["key"], second["key"]);
    assert_ne!(first["id"], second["id"]);
    assert_ne!(
        secret_of(first["key"].as_str().unwrap()),
        secret_of(second["key"].as_str().unwrap())
    );
}

#[tokio::test]
async fn the_key_list_never_shows_a_key() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let first = app.create_api_key(SHOP, "Looker").await;
    let second = app.create_api_key(SHOP, "Metabase").await;

    // Act
    let keys = list_keys(&app, SHOP).await;

    // Assert
    assert_eq!(keys.len(), 2);
    for (listed, created) in keys.iter().zip([&first, &second]) {
        assert_eq!(listed["id"], created["id"]);
        assert_eq!(listed["name"], created["name"]);
        assert_eq!(listed["prefix"], created["prefix"]);
        assert_eq!(
            timestamp(&listed["createdAt"]),
            timestamp(&created["createdAt"])
        );
        assert_eq!(listed["revokedAt"], Value::Null);
        assert!(listed.get("key").is_none(), "{listed}");
    }
    let shown = strings_in(&json!(keys));
    for created in [&first, &second] {
        let key = created["key"].as_str().unwrap();
        for s in &shown {
            assert!(
                !s.contains(secret_of(key)),
                "the list shows key {key} in {s:?}"
            );
        }
    }
}

#[tokio::test]
async fn api_keys_are_stored_only_as_their_sha256_hash() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let created = app.create_api_key(SHOP, "Looker").await;

    // Assert
    let key = created["key"].as_str().unwrap();
    let id = Uuid::parse_str(created["id"].as_str().unwrap()).unwrap();
    let stored_hash: Vec<u8> = sqlx::query_scalar("SELECT key_hash FROM api_keys WHERE id = $1")
        .bind(id)
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored_hash, Sha256::digest(key.as_bytes()).to_vec());
    // Every column rendered as text, so a key kept in any of them (in clear or hex) would show.
    let rows: Vec<String> = sqlx::query_scalar("SELECT row_to_json(k)::text FROM api_keys k")
        .fetch_all(&app.db)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert!(!rows[0].contains(secret_of(key)), "{} holds {key}", rows[0]);
    assert!(
        !rows[0].contains(&hex::encode(key)),
        "{} holds {key} as hex",
        rows[0]
    );
}

#[tokio::test]
async fn revoking_a_key_answers_204_and_the_list_shows_when() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let revoked = app.create_api_key(SHOP, "Old").await;
    let kept = app.create_api_key(SHOP, "Current").await;

    // Act
    let response = revoke(&app, SHOP, revoked["id"].as_str().unwrap()).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let keys = list_keys(&app, SHOP).await;
    assert_eq!(keys.len(), 2, "a revoked key stays listed");
    assert_eq!(keys[0]["id"], revoked["id"]);
    let revoked_at = timestamp(&keys[0]["revokedAt"]);
    assert!(
        revoked_at >= timestamp(&revoked["createdAt"]),
        "{revoked_at}"
    );
    assert!(
        revoked_at < Utc::now() + chrono::Duration::seconds(5),
        "{revoked_at}"
    );
    assert_eq!(keys[1]["id"], kept["id"]);
    assert_eq!(keys[1]["revokedAt"], Value::Null);
}

#[tokio::test]
async fn revoking_a_key_twice_answers_204_both_times_and_keeps_the_first_time() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let created = app.create_api_key(SHOP, "Looker").await;
    let id = created["id"].as_str().unwrap();
    assert_eq!(
        revoke(&app, SHOP, id).await.status(),
        StatusCode::NO_CONTENT
    );
    let first_revocation = list_keys(&app, SHOP).await[0]["revokedAt"].clone();

    // Act
    let again = revoke(&app, SHOP, id).await;

    // Assert
    assert_eq!(again.status(), StatusCode::NO_CONTENT);
    assert_ne!(first_revocation, Value::Null);
    assert_eq!(
        list_keys(&app, SHOP).await[0]["revokedAt"],
        first_revocation
    );
}

#[tokio::test]
async fn an_api_key_needs_a_name() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let cases = [
        (json!({ "name": "" }), "name:"),
        (json!({ "name": "   " }), "name:"),
        (json!({ "name": "x".repeat(257) }), "name:"),
        (json!({ "name": 7 }), "name:"),
        (json!({}), "missing field `name`"),
        (
            json!({ "name": "Looker", "scope": "all" }),
            "scope: unknown field",
        ),
    ];

    for (body, needle) in cases {
        // Act
        let response = post_key(&app, SHOP, body).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_keys(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_control_character_in_the_name_is_rejected_naming_it() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    for bad in with_control_characters("Looker") {
        // Act
        let response = post_key(&app, SHOP, json!({ "name": bad })).await;

        // Assert
        assert_control_character_refused(response, "name").await;
    }
    assert!(list_keys(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_malformed_api_key_body_is_an_invalid_body() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = app
        .admin(Method::POST, &format!("/shops/{SHOP}/api-keys"))
        .header("content-type", "application/json")
        .body("{name: Looker}")
        .send()
        .await
        .unwrap();

    // Assert
    assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", "").await;
    assert!(list_keys(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn revoking_an_unknown_key_is_not_found() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    app.create_api_key(SHOP, "Ours").await;
    let theirs = app.create_api_key(OTHER_SHOP, "Theirs").await;

    // Act
    let unknown = revoke(&app, SHOP, &Uuid::now_v7().to_string()).await;
    let not_a_uuid = revoke(&app, SHOP, "vk_not-an-id").await;
    let other_shops = revoke(&app, SHOP, theirs["id"].as_str().unwrap()).await;

    // Assert
    for response in [unknown, not_a_uuid, other_shops] {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "API key").await;
    }
    assert_eq!(list_keys(&app, SHOP).await[0]["revokedAt"], Value::Null);
    assert_eq!(
        list_keys(&app, OTHER_SHOP).await[0]["revokedAt"],
        Value::Null
    );
}

#[tokio::test]
async fn api_keys_of_an_unknown_shop_are_not_found() {
    // Arrange
    let app = spawn_app().await;
    let unknown = "no-such-shop.myshopify.com";

    // Act
    let post = post_key(&app, unknown, json!({ "name": "Looker" })).await;
    let list = app
        .send_admin(Method::GET, &format!("/shops/{unknown}/api-keys"))
        .await;
    let delete = revoke(&app, unknown, &Uuid::now_v7().to_string()).await;

    // Assert
    for response in [post, list, delete] {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    }
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM api_keys")
        .fetch_one(&app.db)
        .await
        .unwrap();
    assert_eq!(stored, 0);
}

#[tokio::test]
async fn a_shop_sees_only_its_own_keys() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    let ours = app.create_api_key(SHOP, "Ours").await;
    app.create_api_key(OTHER_SHOP, "Theirs").await;

    // Act
    let keys = list_keys(&app, SHOP).await;

    // Assert
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0]["id"], ours["id"]);
}

#[tokio::test]
async fn the_key_list_shows_the_minute_a_key_was_last_used_and_null_before_its_first_use() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let created = app.create_api_key(SHOP, "Looker").await;
    let unused = app.create_api_key(SHOP, "Unused").await;
    assert_eq!(created["lastUsedAt"], Value::Null, "{created}");
    let key = created["key"].as_str().unwrap();
    let before = Utc::now();

    // Act: two uses in (at most) two minutes; the write happens beside the request.
    for _ in 0..2 {
        let response = reqwest::Client::new()
            .get(app.url("/api/v1/analytics/summary"))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK);
    }
    let after = Utc::now();

    // Assert: the use is written within a moment, truncated to its minute.
    let (app, id) = (&app, &created["id"]);
    let used = eventually(
        "the use is written",
        std::time::Duration::from_secs(5),
        move || async move {
            let keys = list_keys(app, SHOP).await;
            let used = keys.iter().find(|k| k["id"] == *id).unwrap()["lastUsedAt"].clone();
            match used.is_null() {
                true => Err(used),
                false => Ok(used),
            }
        },
    )
    .await;
    let used = timestamp(&used);
    let minute = |t: DateTime<Utc>| t.timestamp() - t.timestamp().rem_euclid(60);
    assert_eq!(used.timestamp() % 60, 0, "{used} is not a whole minute");
    assert!(
        (minute(before)..=minute(after)).contains(&used.timestamp()),
        "{used} is not the minute of the use ({before} to {after})"
    );
    let keys = list_keys(app, SHOP).await;
    let never = keys.iter().find(|k| k["id"] == unused["id"]).unwrap();
    assert_eq!(never["lastUsedAt"], Value::Null, "{never}");
}
