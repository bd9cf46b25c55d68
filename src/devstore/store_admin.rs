//! The platform's admin, for the store's own things: its products (rename, make draft or active,
//! delete) and its apps (uninstall videoapp). Each change is made to the platform stand-in's
//! catalog, then told to the service as the platform tells an app: a webhook
//! (`products/update`, `products/delete`, `app/uninstalled`) posted to `/webhooks/shopify`,
//! signed with the app's secret.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use base64::Engine as _;
use serde_json::{json, Value};
use std::collections::HashMap;

use super::pages::esc;
use super::platform::StandInProduct;
use super::DevStore;

/// The links every page of the admin stand-in shows.
pub(super) const ADMIN_NAV: &str = r#"<nav class="admin-nav"><a href="/admin">videoapp</a> · <a href="/admin/products">Products</a> · <a href="/admin/themes/current/editor?context=apps">Theme editor</a> · <a href="/admin/apps">Apps</a> · <a href="/">View the store</a></nav>"#;

const STYLE: &str = "<style>body{font:16px/1.5 system-ui,sans-serif;max-width:48rem;margin:2rem auto;padding:0 1rem}\
table{border-collapse:collapse;width:100%}td,th{padding:.5rem;border-bottom:1px solid #ddd;text-align:left}\
input,select,button{font:inherit;min-height:44px}button{padding:.5rem 1rem}.admin-nav{margin-bottom:1rem}</style>";

fn page(title: &str, status: Option<&String>, main: &str) -> Html<String> {
    let status = status.map(|s| esc(s)).unwrap_or_default();
    Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>{STYLE}</head>
<body>{ADMIN_NAV}<h1>{title}</h1><p role="status">{status}</p>{main}</body></html>"#
    ))
}

/// Which product form was sent, and what it says.
enum ProductChange {
    Save { title: String, active: bool },
    Delete,
}

fn product_change(body: &[u8]) -> Option<ProductChange> {
    let form: HashMap<String, String> = url::form_urlencoded::parse(body).into_owned().collect();
    if form.get("action").map(String::as_str) == Some("delete") {
        return Some(ProductChange::Delete);
    }
    let title = form.get("title")?.trim().to_string();
    if title.is_empty() {
        return None;
    }
    let active = form.get("status").map(String::as_str) != Some("draft");
    Some(ProductChange::Save { title, active })
}

/// `GET /admin/products`: the store's products, each with a form to rename, change its status or
/// delete it.
pub(super) async fn products(
    State(store): State<DevStore>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    let Some(platform) = &store.platform else {
        return not_an_admin();
    };
    let mut rows = String::new();
    for p in platform.products(store.shop.as_str()) {
        let id = p.id;
        let (active, draft) = if p.active {
            (" selected", "")
        } else {
            ("", " selected")
        };
        rows.push_str(&format!(
            r#"<tr data-product="{id}"><td><form method="post" action="/admin/products/{id}">
<label>Title <input name="title" value="{title}" required></label>
<label>Status <select name="status"><option value="active"{active}>Active</option><option value="draft"{draft}>Draft</option></select></label>
<button type="submit">Save</button></form></td>
<td><form method="post" action="/admin/products/{id}"><input type="hidden" name="action" value="delete"><button type="submit">Delete</button></form></td></tr>"#,
            title = esc(&p.title),
        ));
    }
    page(
        "Products",
        query.get("status"),
        &format!("<table><tbody>{rows}</tbody></table>"),
    )
    .into_response()
}

/// `POST /admin/products/{id}`: saves or deletes the product, then sends the app its webhook.
pub(super) async fn change_product(
    State(store): State<DevStore>,
    Path(id): Path<u64>,
    body: Bytes,
) -> Response {
    let Some(platform) = &store.platform else {
        return not_an_admin();
    };
    let shop = store.shop.as_str();
    let sent = match product_change(&body) {
        None => return (StatusCode::BAD_REQUEST, "a product needs a title").into_response(),
        Some(ProductChange::Delete) => {
            if !platform.remove_product(shop, id) {
                return (StatusCode::NOT_FOUND, "no such product").into_response();
            }
            send(&store, "products/delete", &json!({ "id": id })).await
        }
        Some(ProductChange::Save { title, active }) => {
            let Some(product) = platform.change_product(shop, id, |p| {
                p.title = title;
                p.active = active;
            }) else {
                return (StatusCode::NOT_FOUND, "no such product").into_response();
            };
            send(&store, "products/update", &product_body(&product)).await
        }
    };
    redirect_with("/admin/products", sent)
}

/// `GET /admin/apps`: the apps installed, videoapp with its Uninstall button.
pub(super) async fn apps(
    State(store): State<DevStore>,
    Query(query): Query<HashMap<String, String>>,
) -> Response {
    if store.platform.is_none() {
        return not_an_admin();
    }
    page(
        "Apps",
        query.get("status"),
        r#"<table><tbody><tr><td>videoapp – shoppable video</td><td><a href="/admin">Open</a></td>
<td><form method="post" action="/admin/apps/videoapp/uninstall"><button type="submit">Uninstall</button></form></td></tr></tbody></table>"#,
    )
    .into_response()
}

/// `POST /admin/apps/videoapp/uninstall`: the app's access token, pixel and app embed go, and
/// the app is told by `app/uninstalled`. Opening the app again installs it afresh.
pub(super) async fn uninstall(State(store): State<DevStore>) -> Response {
    let Some(platform) = &store.platform else {
        return not_an_admin();
    };
    let shop = store.shop.as_str();
    platform.uninstall(shop);
    // The platform takes an app's blocks out of the theme with it.
    store
        .app_embed
        .store(false, std::sync::atomic::Ordering::Relaxed);
    let body = json!({
        "id": 1,
        "name": shop,
        "domain": shop,
        "myshopify_domain": shop,
    });
    let sent = send(&store, "app/uninstalled", &body).await;
    redirect_with("/admin/apps", sent)
}

fn not_an_admin() -> Response {
    let message = "the demo store stands in for the admin only with VIDEOAPP_CLIENT_ID set";
    (StatusCode::NOT_FOUND, message).into_response()
}

/// Back to `path`, saying what became of the webhook.
fn redirect_with(path: &str, sent: Result<String, String>) -> Response {
    let status = match sent {
        Ok(topic) => format!("Saved. videoapp was told ({topic})."),
        Err(problem) => format!("Saved, but videoapp was not told: {problem}"),
    };
    let query: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("status", &status)
        .finish();
    Redirect::to(&format!("{path}?{query}")).into_response()
}

/// A product as the platform's `products/*` webhooks carry it (a few of its many fields).
fn product_body(p: &StandInProduct) -> Value {
    json!({
        "id": p.id,
        "admin_graphql_api_id": format!("gid://shopify/Product/{}", p.id),
        "title": p.title,
        "handle": p.handle,
        "status": if p.active { "active" } else { "draft" },
        "updated_at": p.updated_at,
        "image": p.image.as_ref().map(|src| json!({ "src": src })),
        "variants": [],
    })
}

/// Posts a webhook to the service as the platform does: its topic, shop, a fresh delivery id
/// and the time in headers, the body signed with the app's secret (the one that signs the app
/// proxy). The topic, or why it was not taken.
async fn send(store: &DevStore, topic: &str, body: &Value) -> Result<String, String> {
    let body = serde_json::to_vec(body).map_err(|e| e.to_string())?;
    let hmac = base64::engine::general_purpose::STANDARD.encode(store.secret.mac_bytes(&body));
    let answer = store
        .http
        .post(format!("{}/webhooks/shopify", store.upstream))
        .header("content-type", "application/json")
        .header("x-shopify-topic", topic)
        .header("x-shopify-shop-domain", store.shop.as_str())
        .header("x-shopify-webhook-id", uuid::Uuid::new_v4().to_string())
        .header("x-shopify-triggered-at", chrono::Utc::now().to_rfc3339())
        .header(
            "x-shopify-api-version",
            crate::platform::admin_api::API_VERSION,
        )
        .header("x-shopify-hmac-sha256", hmac)
        .body(body)
        .send()
        .await
        .map_err(|e| format!("the service did not answer: {e}"))?;
    if answer.status().is_success() {
        Ok(topic.to_string())
    } else {
        Err(format!("the service answered {}", answer.status()))
    }
}
