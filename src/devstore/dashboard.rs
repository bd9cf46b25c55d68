//! The platform's admin, as far as the dashboard needs it: `/admin` opens the app, whose page and
//! API are forwarded to the service (`/app`, `/app/*`), and `/admin/session-token` mints the
//! session tokens App Bridge would give it (HS256 under the app's secret, one minute), so the
//! dashboard runs outside the platform.

use axum::body::Bytes;
use axum::extract::{OriginalUri, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use jsonwebtoken::{encode, EncodingKey, Header};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;

use super::DevStore;
use crate::catalog::domain::ShopDomain;

/// How long a minted token is valid, as the platform's are.
const TOKEN_SECONDS: i64 = 60;

/// What the demo store needs to stand in for the admin: the app's client id and secret.
pub struct DemoAdmin {
    pub client_id: String,
    pub secret: SecretString,
}

/// The largest body passed to the service: a tus chunk, with room.
pub(super) const MAX_FORWARDED_BODY: usize = 32 * 1024 * 1024;

/// The browser's own headers, `Accept-Encoding` among them: the platform's admin frames the app,
/// so the browser gets the service's compressed answers as they are, and so does this stand-in.
const REQUEST_HEADERS: [header::HeaderName; 10] = [
    header::AUTHORIZATION,
    header::CONTENT_TYPE,
    header::ACCEPT,
    header::ACCEPT_ENCODING,
    header::HeaderName::from_static("tus-resumable"),
    header::HeaderName::from_static("upload-length"),
    header::HeaderName::from_static("upload-offset"),
    header::HeaderName::from_static("upload-metadata"),
    header::HeaderName::from_static("upload-checksum"),
    header::HeaderName::from_static("upload-defer-length"),
];
const RESPONSE_HEADERS: [header::HeaderName; 14] = [
    header::CONTENT_TYPE,
    header::CONTENT_ENCODING,
    header::CONTENT_DISPOSITION,
    header::CACHE_CONTROL,
    header::VARY,
    header::RETRY_AFTER,
    header::LOCATION,
    header::HeaderName::from_static("upload-offset"),
    header::HeaderName::from_static("upload-length"),
    header::HeaderName::from_static("upload-expires"),
    header::HeaderName::from_static("tus-resumable"),
    header::HeaderName::from_static("tus-version"),
    header::HeaderName::from_static("tus-extension"),
    header::HeaderName::from_static("tus-max-size"),
];

/// Opens the app as the platform's admin does: its URL names the shop and carries a fresh session
/// token (`id_token`), so the app's first calls need not wait for one.
pub(super) async fn open_app(State(store): State<DevStore>) -> Redirect {
    let mut to = format!("/app?shop={}", store.shop);
    if let Some(Ok(token)) = store.admin.as_ref().map(|admin| mint(&store.shop, admin)) {
        to.push_str("&id_token=");
        to.push_str(&token);
    }
    Redirect::to(&to)
}

pub(super) async fn session_token(State(store): State<DevStore>) -> Response {
    let Some(admin) = &store.admin else {
        let message = "the demo store mints session tokens only with VIDEOAPP_CLIENT_ID set";
        return (StatusCode::NOT_FOUND, message).into_response();
    };
    match mint(&store.shop, admin) {
        Ok(token) => (
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-store"),
            ],
            token,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// A session token for `shop`, as App Bridge would give the app: HS256 under the app's secret.
fn mint(shop: &ShopDomain, admin: &DemoAdmin) -> jsonwebtoken::errors::Result<String> {
    let now = chrono::Utc::now().timestamp();
    let claims = json!({
        "iss": format!("https://{shop}/admin"),
        "dest": format!("https://{shop}"),
        "aud": admin.client_id,
        "sub": "1",
        "exp": now + TOKEN_SECONDS,
        "nbf": now - 1,
        "iat": now - 1,
        "jti": uuid::Uuid::new_v4().to_string(),
        "sid": "demo-admin",
    });
    let key = EncodingKey::from_secret(admin.secret.expose_secret().as_bytes());
    encode(&Header::default(), &claims, &key)
}

/// `/app` and everything under it, to the service as it was asked.
pub(super) async fn forward(
    State(store): State<DevStore>,
    OriginalUri(uri): OriginalUri,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = uri.path_and_query().map_or(uri.path(), |p| p.as_str());
    let request = store
        .http
        .request(method, format!("{}{path}", store.upstream))
        .body(body);
    super::proxy::relay(
        request,
        &headers,
        &REQUEST_HEADERS,
        "the admin",
        &RESPONSE_HEADERS,
    )
    .await
}

/// The app embed block's id in a theme editor deep link: `{client id}/{block file name}`.
const EMBED_BLOCK: &str = "videoapp-embed";

/// The theme editor, as far as the app embed goes: the deep link the dashboard's checklist
/// opens (`?context=apps&activateAppId={client id}/videoapp-embed`) shows the app embed to turn
/// on, as the platform's editor selects it.
pub(super) async fn theme_editor(
    State(store): State<DevStore>,
    axum::extract::Query(query): axum::extract::Query<std::collections::HashMap<String, String>>,
) -> axum::response::Html<String> {
    use std::sync::atomic::Ordering;
    let on = store.app_embed.load(Ordering::Relaxed);
    let asked = query.get("activateAppId").map(String::as_str);
    let ours = store
        .admin
        .as_ref()
        .map(|a| format!("{}/{EMBED_BLOCK}", a.client_id));
    let selected = asked.is_some() && asked == ours.as_deref();
    let saved = query.contains_key("saved");
    axum::response::Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Theme editor – App embeds</title>
<style>body{{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:2rem auto;padding:0 1rem}}
.embed{{border:1px solid #ccc;border-radius:8px;padding:1rem;display:flex;gap:1rem;align-items:center;justify-content:space-between}}
.embed.selected{{border:2px solid #005bd3}} button{{font:inherit;padding:.5rem 1rem;min-height:44px}}</style></head>
<body>{nav}<h1>Theme editor</h1><h2>App embeds</h2>
<form method="post" action="/admin/themes/current/editor">
<div class="embed{selected_class}" data-demo-embed="{state}">
<label><input type="checkbox" name="embed" value="on"{checked}> videoapp – shoppable video widgets</label>
<button type="submit">Save</button></div></form>
<p role="status">{status}</p>
<p><a href="/">View the store</a> · <a href="/admin">Back to videoapp</a></p></body></html>"#,
        nav = super::store_admin::ADMIN_NAV,
        selected_class = if selected { " selected" } else { "" },
        state = if on { "on" } else { "off" },
        checked = if on { " checked" } else { "" },
        status = if saved {
            if on {
                "Saved. The app embed is on: videoapp loads on your store."
            } else {
                "Saved. The app embed is off."
            }
        } else {
            ""
        },
    ))
}

/// Saves the app embed's switch, as the editor's Save does.
pub(super) async fn save_theme_editor(State(store): State<DevStore>, body: Bytes) -> Redirect {
    let on = url::form_urlencoded::parse(&body).any(|(k, v)| k == "embed" && v == "on");
    store
        .app_embed
        .store(on, std::sync::atomic::Ordering::Relaxed);
    Redirect::to("/admin/themes/current/editor?saved=1")
}
