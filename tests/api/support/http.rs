//! Requests to a running service and what tests assert of its JSON answers.

use super::*;

use reqwest::{Method, RequestBuilder, Response, StatusCode};
use serde_json::{json, Value};

/// Shallow merge of JSON objects: `extra`'s keys win.
pub fn merge(base: &mut Value, extra: Value) {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
}

pub async fn json_of(response: Response) -> (StatusCode, Value) {
    let status = response.status();
    let text = response.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or_else(|_| panic!("not JSON: {text}"))
    };
    (status, body)
}

/// Asserts our error body with `code`, and that the message mentions `needle`.
pub async fn assert_error(response: Response, status: StatusCode, code: &str, needle: &str) {
    let (actual, body) = json_of(response).await;
    assert_eq!(actual, status, "{body}");
    assert_eq!(body["success"], json!(false), "{body}");
    assert_eq!(body["error"]["code"], json!(code), "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(needle),
        "message {message:?} does not mention {needle:?}"
    );
}

/// `GET`, `PATCH` (a new title) and `DELETE` of the admin item at `path` (below `/admin/v1`).
pub async fn get_patch_delete(app: &impl Service, path: &str) -> [Response; 3] {
    let get = app.send_admin(Method::GET, path).await;
    let patch = app
        .send_admin_json(Method::PATCH, path, &json!({ "title": "Changed" }))
        .await;
    let delete = app.send_admin(Method::DELETE, path).await;
    [get, patch, delete]
}

/// The ids of a JSON array's items, in order.
pub fn ids_of(items: &Value) -> Vec<String> {
    items
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {items}"))
        .iter()
        .map(|item| item["id"].as_str().expect("an id").to_string())
        .collect()
}

/// `body` without its `updatedAt`, which every write moves.
pub fn without_updated_at(mut body: Value) -> Value {
    body.as_object_mut().unwrap().remove("updatedAt");
    body
}

/// Asserts a 400 `VALIDATION_ERROR` whose message mentions `needle` (the field at fault).
pub async fn assert_validation_error(response: Response, needle: &str) {
    assert_error(
        response,
        StatusCode::BAD_REQUEST,
        "VALIDATION_ERROR",
        needle,
    )
    .await;
}

/// `text` with a control character in its middle, for each kind a stored text refuses: NUL
/// (which Postgres cannot store), other C0 controls with tab and newline among them, DEL, C1.
pub fn with_control_characters(text: &str) -> Vec<String> {
    let middle = text
        .char_indices()
        .nth(text.chars().count() / 2)
        .map_or(text.len(), |(i, _)| i);
    let (head, tail) = text.split_at(middle);
    [
        '\0', '\u{1}', '\t', '\n', '\r', '\u{1b}', '\u{7f}', '\u{85}', '\u{9f}',
    ]
    .into_iter()
    .map(|c| format!("{head}{c}{tail}"))
    .collect()
}

/// Asserts the 400 that names `field` for a control character in its text.
pub async fn assert_control_character_refused(response: Response, field: &str) {
    assert_validation_error(
        response,
        &format!("{field}: must not contain control characters"),
    )
    .await;
}

pub trait Service: std::ops::Deref<Target = Instance> {
    /// How many catalog snapshots the service has read from Postgres so far.
    async fn catalog_loads(&self) -> u64;

    fn url(&self, path: &str) -> String {
        format!("{}{}", self.address, path)
    }

    /// An admin API request (`path` is below `/admin/v1`), with the admin token.
    fn admin(&self, method: Method, path: &str) -> RequestBuilder {
        self.client
            .request(method, self.url(&format!("/admin/v1{path}")))
            .bearer_auth(ADMIN_TOKEN)
    }

    /// Sends an admin API request without a body.
    async fn send_admin(&self, method: Method, path: &str) -> Response {
        self.admin(method, path).send().await.unwrap()
    }

    /// Sends an admin API request with a JSON body.
    async fn send_admin_json(
        &self,
        method: Method,
        path: &str,
        body: &impl serde::Serialize,
    ) -> Response {
        self.admin(method, path).json(body).send().await.unwrap()
    }

    /// The array `field` of the admin API's answer to `GET path`; asserts a 200.
    async fn admin_list(&self, path: &str, field: &str) -> Vec<Value> {
        let (status, body) = json_of(self.send_admin(Method::GET, path).await).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body[field]
            .as_array()
            .unwrap_or_else(|| panic!("no {field} array: {body}"))
            .clone()
    }

    async fn get(&self, path: &str) -> Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }

    /// A signed `POST /apps/videoapp_sub/analytics` with a JSON body.
    async fn post_events(&self, shop: &str, body: &Value) -> Response {
        let url = format!("/apps/videoapp_sub/analytics?{}", signed(shop, &[]));
        self.client
            .post(self.url(&url))
            .json(body)
            .send()
            .await
            .unwrap()
    }

    /// A signed storefront GET of `/apps/videoapp_sub/{endpoint}` for `shop`.
    async fn storefront(&self, endpoint: &str, shop: &str, params: &[(&str, &str)]) -> Response {
        let url = format!("/apps/videoapp_sub/{endpoint}?{}", signed(shop, params));
        self.get(&url).await
    }

    /// Creates (or updates) a shop with default settings.
    async fn create_shop(&self, shop: &str) {
        self.create_shop_with(shop, json!({})).await;
    }

    /// Creates (or updates) a shop with `settings` (e.g. its `timezone`) over the defaults.
    async fn create_shop_with(&self, shop: &str, settings: Value) {
        let mut body = json!({ "name": "Test shop" });
        merge(&mut body, settings);
        let response = self
            .send_admin_json(Method::PUT, &format!("/shops/{shop}"), &body)
            .await;
        assert!(
            response.status().is_success(),
            "create shop: {}",
            response.status()
        );
    }

    /// Creates a published video and returns its id.
    async fn create_video(&self, shop: &str, body: Value) -> String {
        let mut video = json!({
            "title": "A video",
            "videoUrl": "https://cdn.example.com/v.mp4",
            "status": "PUBLISHED",
        });
        merge(&mut video, body);
        let response = self
            .send_admin_json(Method::POST, &format!("/shops/{shop}/videos"), &video)
            .await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates an active widget and returns its id.
    async fn create_widget(&self, shop: &str, body: Value) -> String {
        let mut widget = json!({ "type": "carousel", "status": "active" });
        merge(&mut widget, body);
        let response = self
            .send_admin_json(Method::POST, &format!("/shops/{shop}/widgets"), &widget)
            .await;
        let (status, body) = json_of(response).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["id"].as_str().unwrap().to_string()
    }

    /// Creates a shop with one published video (`video`'s fields over the defaults) and an active
    /// widget showing it; returns the ids of the video and of the widget.
    async fn create_shop_showing_a_video(&self, shop: &str, video: Value) -> (String, String) {
        self.create_shop(shop).await;
        let video = self.create_video(shop, video).await;
        let widget = self
            .create_widget(shop, json!({ "videoIds": [video] }))
            .await;
        (video, widget)
    }

    /// Creates an analytics API key named `name`; returns the creation answer (`id`, `key`, …).
    async fn create_api_key(&self, shop: &str, name: &str) -> Value {
        let path = format!("/shops/{shop}/api-keys");
        let body = json!({ "name": name });
        self.admin_expecting(Method::POST, &path, &body, StatusCode::CREATED)
            .await
    }

    /// The admin API's answer to `method path` with `body`; asserts its status is `expected`.
    async fn admin_expecting(
        &self,
        method: Method,
        path: &str,
        body: &Value,
        expected: StatusCode,
    ) -> Value {
        let (status, answer) =
            json_of(self.send_admin_json(method.clone(), path, body).await).await;
        assert_eq!(status, expected, "{method} {path}: {answer}");
        answer
    }

    async fn catalog_version(&self, shop: &str) -> i64 {
        let response = self
            .send_admin(Method::GET, &format!("/shops/{shop}"))
            .await;
        let (_, body) = json_of(response).await;
        body["catalogVersion"].as_i64().unwrap()
    }

    /// The Prometheus text of the metrics listener. A [`TestApp`]'s recorder is the test
    /// process's, shared by every test in it: assert on a [`ProcessApp`]'s.
    async fn metrics(&self) -> String {
        self.client
            .get(format!("{}/metrics", self.metrics_address))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}
