//! The dashboard's page: `/app`, a shell that loads the built bundle, and `/app/assets/*`, the
//! bundle itself. Embedded in the platform's admin (the admin adds `host` to the URL) the shell
//! also loads App Bridge, which the bundle asks for session tokens.
//!
//! The shell names each file of the bundle by its content (`dashboard.<hash>.js`), so a browser
//! keeps it for a year and asks again only for a new build; the shell itself is never stored.
//! `boot.js`, a few kilobytes, runs as soon as it arrives (`async`: no stylesheet holds it back)
//! and starts the dashboard's first calls while the bundle is still on its way
//! (`web/dashboard/boot.ts`).
//! Files are sent compressed (brotli or gzip, made once per build) — the bundle is ~1 MB as
//! built and ~215 KB gzipped, which is most of a first open on a phone.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::compressed::Page;

/// The files of the built dashboard the service serves, and their types.
const ASSETS: [(&str, &str); 3] = [
    ("boot.js", "text/javascript; charset=utf-8"),
    ("dashboard.js", "text/javascript; charset=utf-8"),
    ("dashboard.css", "text/css; charset=utf-8"),
];

/// App Bridge, as the platform requires embedded apps to load it: from its own address, first.
const APP_BRIDGE: &str = "https://cdn.shopify.com/shopifycloud/app-bridge.js";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/app", get(shell))
        .route("/app/assets/{file}", get(asset))
}

/// What the shell reads of its URL; anything else the admin adds is the bundle's.
struct PageQuery {
    shop: Option<String>,
    host: Option<String>,
}

impl PageQuery {
    fn parse(raw: Option<&str>) -> PageQuery {
        let pairs: Vec<(String, String)> =
            url::form_urlencoded::parse(raw.unwrap_or_default().as_bytes())
                .into_owned()
                .collect();
        let first = |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        };
        PageQuery {
            shop: first("shop"),
            host: first("host"),
        }
    }
}

async fn shell(State(state): State<AppState>, RawQuery(raw): RawQuery) -> Response {
    let query = PageQuery::parse(raw.as_deref());
    let Some(platform) = &state.config.platform else {
        let message = "The dashboard needs the platform settings (VIDEOAPP_CLIENT_ID and \
                       VIDEOAPP_TOKEN_KEY) on this instance.";
        return (StatusCode::NOT_FOUND, message).into_response();
    };
    let client_id = escape(&platform.client_id);
    let app_bridge = if query.host.is_some() {
        format!(
            r#"<meta name="shopify-api-key" content="{client_id}"><script src="{APP_BRIDGE}"></script>"#
        )
    } else {
        String::new()
    };
    let [boot, script, style] =
        [("boot", "js"), ("dashboard", "js"), ("dashboard", "css")].map(|(stem, ext)| {
            let dir = &state.config.dashboard_dir;
            async move {
                match built(&dir.join(format!("{stem}.{ext}"))).await {
                    Ok(file) => format!("/app/assets/{stem}.{}.{ext}", file.hash),
                    // Not built: the plain name answers how to build it.
                    Err(_) => format!("/app/assets/{stem}.{ext}"),
                }
            }
        });
    let (boot, script, style) = tokio::join!(boot, script, style);
    let html = format!(
        r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">{app_bridge}<title>videoapp</title><link rel="icon" href="data:,"><link rel="stylesheet" href="{style}"></head><body><div id="app" data-client-id="{client_id}"></div><script src="{boot}" async></script><script src="{script}" defer></script></body></html>"#
    );
    let policy = content_security_policy(&state, query.shop.as_deref()).await;
    let mut response = Html(html).into_response();
    if let Ok(value) = HeaderValue::from_str(&policy) {
        response
            .headers_mut()
            .insert(header::CONTENT_SECURITY_POLICY, value);
    }
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// The shell's policy: its scripts come from the service and App Bridge's own folder, its styles
/// from the service and inline (the player's preview injects its own `<style>`, as on a store,
/// and Polaris sets `style` attributes to measure; neither can run script), nothing is a plugin,
/// and only the platform's admin may frame it.
/// The shop's own domain (its legacy admin) is named too, but only when it is a shop the service
/// knows: a made-up `?shop=` must not open the dashboard to framing by any page of that name.
/// Without a shop domain, nothing may frame it.
async fn content_security_policy(state: &AppState, shop: Option<&str>) -> String {
    let ancestors = match shop.map(ShopDomain::parse) {
        // Read from Postgres, not through the catalog cache: a page anyone may ask for must not
        // load snapshots, or evict real shops', for made-up names.
        Some(Ok(shop)) => match crate::catalog::shops::get(&state.db, &shop).await {
            Ok(_) => format!("https://{shop} {ADMIN}"),
            // A shop installing the app for the first time opens it from the admin too.
            _ => ADMIN.to_string(),
        },
        // The admin always names the shop: a page without one is not framed at all.
        _ => "'none'".to_string(),
    };
    format!(
        "script-src 'self' {APP_BRIDGE_SCRIPTS}; style-src 'self' 'unsafe-inline'; object-src 'none'; \
         base-uri 'none'; frame-ancestors {ancestors};"
    )
}

/// Where App Bridge and the scripts it loads live: the platform's own scripts, not the whole
/// CDN, which also serves files merchants upload.
const APP_BRIDGE_SCRIPTS: &str = "https://cdn.shopify.com/shopifycloud/";

/// The platform's admin, which frames embedded apps.
const ADMIN: &str = "https://admin.shopify.com";

async fn asset(
    State(state): State<AppState>,
    Path(file): Path<String>,
    request: HeaderMap,
) -> Response {
    // `dashboard.js`, or `dashboard.<hash>.js` as the shell names it.
    let (stem, rest) = file.split_once('.').unwrap_or((&file, ""));
    let (hash, ext) = rest.rsplit_once('.').unwrap_or(("", rest));
    let name = format!("{stem}.{ext}");
    let Some((name, content_type)) = ASSETS.iter().find(|(known, _)| *known == name) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let path = state.config.dashboard_dir.join(name);
    let file = match built(&path).await {
        Ok(file) => file,
        Err(e) => return not_built(&path, &e),
    };
    let caching = if hash.is_empty() {
        "no-cache"
    } else if hash == file.hash {
        "public, max-age=31536000, immutable"
    } else {
        // A build this instance does not have: the shell, asked again, names the current one.
        return StatusCode::NOT_FOUND.into_response();
    };
    let mut response = file.page.response(&request, content_type).await;
    response
        .headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static(caching));
    response
}

/// A built file of the bundle: its content's hash and its bytes, compressed once when asked.
struct Built {
    hash: String,
    page: Page,
    modified: SystemTime,
    len: u64,
}

/// The built files read so far, by path, each kept until the file on disk changes (a new build).
fn built_files() -> &'static Mutex<HashMap<std::path::PathBuf, Arc<Built>>> {
    static FILES: OnceLock<Mutex<HashMap<std::path::PathBuf, Arc<Built>>>> = OnceLock::new();
    FILES.get_or_init(Default::default)
}

async fn built(path: &std::path::Path) -> std::io::Result<Arc<Built>> {
    use sha2::Digest;
    let meta = tokio::fs::metadata(path).await?;
    let (modified, len) = (meta.modified()?, meta.len());
    let known = built_files().lock().ok().and_then(|files| {
        let file = files.get(path)?;
        (file.modified == modified && file.len == len).then(|| file.clone())
    });
    if let Some(file) = known {
        return Ok(file);
    }
    let bytes = tokio::fs::read(path).await?;
    let hash = hex::encode(&sha2::Sha256::digest(&bytes)[..8]);
    let file = Arc::new(Built {
        hash,
        page: Page::new(bytes.into()),
        modified,
        len,
    });
    if let Ok(mut files) = built_files().lock() {
        files.insert(path.to_path_buf(), file.clone());
    }
    Ok(file)
}

fn not_built(path: &std::path::Path, e: &std::io::Error) -> Response {
    (
        StatusCode::NOT_FOUND,
        format!(
            "{} is not built ({e}): run `npm ci && npm run build` in web/",
            path.display()
        ),
    )
        .into_response()
}

/// A file `npm run build` in web/ writes, served as the front end's builds are: never cached
/// without asking again, and a 404 that says how to build it when it is missing.
pub(crate) async fn built_file(path: &std::path::Path, content_type: &'static str) -> Response {
    match tokio::fs::read(path).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, content_type),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            bytes,
        )
            .into_response(),
        Err(e) => not_built(path, &e),
    }
}

/// Text for an HTML attribute.
fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}
