//! The demo store: a small emulation of the platform's storefront for development and the
//! browser tests. It serves a home page, product and collection pages for the shop's catalog, a
//! cart and a checkout; embeds the loader exactly as the theme app extension's app embed block
//! does; forwards `/apps/videoapp_sub/*` to the service, signed as the platform's app proxy
//! signs; answers the platform's cart API; runs the checkout pixel under an emulation of the
//! web-pixel API; and offers a consent switch. `?videoapp=off` serves a page without the app.
//! With the app's client id, it also stands in for the platform's admin (`/admin` opens the
//! dashboard) and for the platform's endpoints an install calls (`platform`), holding a demo
//! catalog of its own for the shop.
//!
//! It keeps carts and orders in memory: it is a stand-in for the platform, not a store.

mod cart;
pub mod dashboard;
mod media;
mod pages;
pub mod platform;
mod proxy;
mod store_admin;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{any, get, post};
use axum::Router;
use secrecy::{ExposeSecret, SecretString};
use sqlx::PgPool;
use tokio::net::TcpListener;

use crate::catalog::domain::ShopDomain;
use crate::catalog::products::Product;
use crate::catalog::shops::Shop;
use crate::catalog::{self, CatalogError};
use crate::storefront::signature::ProxySecret;

/// What the demo store runs with.
pub struct DevStoreConfig {
    pub shop: ShopDomain,
    pub listen: SocketAddr,
    /// The service, e.g. http://127.0.0.1:8080.
    pub upstream: String,
    pub secret: ProxySecret,
    pub database_url: SecretString,
    /// Where the built loader and pixel are (`extensions/` of the repository).
    pub extensions_dir: PathBuf,
    /// Set with the app's client id: the demo store then stands in for the platform's admin
    /// too, and opens the dashboard at `/admin`.
    pub admin: Option<dashboard::DemoAdmin>,
    /// Whether the theme's app embed is on when the store starts; the admin's theme editor
    /// (`/admin/themes/current/editor`) switches it.
    pub app_embed: bool,
}

#[derive(Clone)]
struct DevStore(Arc<Shared>);

struct Shared {
    shop: ShopDomain,
    upstream: String,
    secret: ProxySecret,
    db: PgPool,
    extensions_dir: PathBuf,
    admin: Option<dashboard::DemoAdmin>,
    /// The platform it stands in for, with the admin: its catalog is the store's.
    platform: Option<platform::PlatformStandIn>,
    /// The theme's app embed: the loader is on the store's pages only while it is on.
    app_embed: std::sync::atomic::AtomicBool,
    http: reqwest::Client,
    carts: Mutex<HashMap<String, cart::Cart>>,
    orders: Mutex<HashMap<String, cart::Order>>,
}

impl std::ops::Deref for DevStore {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

/// A bound demo store, so callers (and tests, with port 0) can learn its address first.
pub struct DevStoreServer {
    listener: TcpListener,
    router: Router,
    platform: Option<platform::PlatformStandIn>,
}

impl DevStoreServer {
    pub async fn bind(config: DevStoreConfig) -> anyhow::Result<DevStoreServer> {
        use anyhow::Context;
        let db = crate::db::connect(config.database_url.expose_secret())
            .await
            .context("cannot connect to Postgres (DATABASE_URL)")?;
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let origin = format!("http://{}", listener.local_addr()?);
        // The admin's platform holds the demo catalog, whose images this store serves.
        let platform = config.admin.as_ref().map(|admin| {
            let standin = platform::PlatformStandIn::new(
                &admin.client_id,
                admin.secret.expose_secret(),
                platform::Behaviour::default(),
            );
            let (products, collections) = platform::demo_catalog(&origin);
            standin.set_products(config.shop.as_str(), products);
            standin.set_collections(config.shop.as_str(), collections);
            standin
        });
        let state = DevStore(Arc::new(Shared {
            shop: config.shop,
            upstream: config.upstream.trim_end_matches('/').to_string(),
            secret: config.secret,
            db,
            extensions_dir: config.extensions_dir,
            admin: config.admin,
            platform: platform.clone(),
            app_embed: config.app_embed.into(),
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .context("cannot build the HTTP client")?,
            carts: Mutex::new(HashMap::new()),
            orders: Mutex::new(HashMap::new()),
        }));
        let mut router = router(state);
        if let Some(platform) = &platform {
            router = router.merge(platform.router());
        }
        Ok(DevStoreServer {
            listener,
            router,
            platform,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The platform it stands in for (with the admin only): what it was asked.
    pub fn platform(&self) -> Option<&platform::PlatformStandIn> {
        self.platform.as_ref()
    }

    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        axum::serve(self.listener, self.router)
            .with_graceful_shutdown(shutdown)
            .await?;
        Ok(())
    }
}

fn router(state: DevStore) -> Router {
    Router::new()
        .route("/", get(pages::home))
        .route("/products/{handle}", get(product_page_or_json))
        .route("/collections/{handle}", get(pages::collection))
        .route("/cart", get(pages::cart))
        .route("/cart.js", get(cart::cart_js))
        .route("/cart/add.js", post(cart::add_js))
        .route("/cart/add", post(cart::add_form))
        .route("/cart/clear", post(cart::clear))
        .route("/checkout", get(pages::checkout).post(cart::place_order))
        .route("/checkout/thank-you/{order}", get(pages::thank_you))
        .route("/account/login", post(pages::log_in))
        .route("/account/logout", post(pages::log_out))
        .route("/apps/videoapp_sub/{*rest}", any(proxy::forward))
        .route("/admin", get(dashboard::open_app))
        .route("/admin/session-token", get(dashboard::session_token))
        .route(
            "/admin/themes/current/editor",
            get(dashboard::theme_editor).post(dashboard::save_theme_editor),
        )
        .route("/admin/products", get(store_admin::products))
        .route("/admin/products/{id}", post(store_admin::change_product))
        .route("/admin/apps", get(store_admin::apps))
        .route(
            "/admin/apps/videoapp/uninstall",
            post(store_admin::uninstall),
        )
        .route("/app", any(dashboard::forward))
        .route(
            "/app/{*rest}",
            // An upload's chunk (8 MiB from the dashboard) passes whole.
            any(dashboard::forward).layer(axum::extract::DefaultBodyLimit::max(
                dashboard::MAX_FORWARDED_BODY,
            )),
        )
        .route("/cdn/{file}", get(built_asset))
        .route("/media/{file}", get(media::file))
        // Browsers ask for it on every page; the pages name none (`data:,`) but a direct ask.
        .route("/favicon.ico", get(|| async { StatusCode::NO_CONTENT }))
        .fallback(not_found)
        .with_state(state)
}

/// `/products/<handle>` is the page; `/products/<handle>.js` the platform's product JSON.
async fn product_page_or_json(Path(handle): Path<String>, visit: pages::Visit) -> Response {
    match handle.strip_suffix(".js") {
        Some(handle) => cart::product_js(&visit.products, handle),
        None => pages::product(visit, &handle),
    }
}

/// The built loader, its player and the pixel, as the platform's CDN serves an extension's assets.
async fn built_asset(State(store): State<DevStore>, Path(file): Path<String>) -> Response {
    let path = match file.as_str() {
        "videoapp-loader.js" => store
            .extensions_dir
            .join("videoapp-theme/assets/videoapp-loader.js"),
        "videoapp-player.js" => store
            .extensions_dir
            .join("videoapp-theme/assets/videoapp-player.js"),
        "videoapp-pixel.js" => store
            .extensions_dir
            .join("videoapp-pixel/dist/videoapp-pixel.js"),
        _ => return not_found().await,
    };
    crate::dashboard::pages::built_file(&path, "text/javascript; charset=utf-8").await
}

async fn not_found() -> Response {
    (StatusCode::NOT_FOUND, Html(pages::not_found_html())).into_response()
}

/// The shop and its products, read on every page: the store follows catalog changes at once.
async fn catalog(store: &DevStore) -> Result<(Shop, Vec<Product>), Response> {
    let loaded = async {
        let shop = catalog::shops::get(&store.db, &store.shop).await?;
        let products = catalog::products::list(&store.db, &store.shop).await?;
        Ok::<_, CatalogError>((shop, products))
    };
    loaded.await.map_err(|e| {
        let message = match e {
            CatalogError::ShopNotFound if store.admin.is_some() => format!(
                "videoapp is not installed on the demo shop {} yet: open /admin to install it",
                store.shop
            ),
            e => format!("the demo shop {} cannot be read: {e}", store.shop),
        };
        (StatusCode::SERVICE_UNAVAILABLE, message).into_response()
    })
}

/// The number of a product's global id (`gid://shopify/Product/1001` → 1001).
fn product_number(product: &Product) -> u64 {
    numeric_tail(product.id.as_str())
}

fn numeric_tail(gid: &str) -> u64 {
    gid.rsplit('/')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// Demo prices: the catalog has none, so each product gets a fixed one from its number, in
/// cents (1001 → 11.90, 1002 → 12.90, …).
fn price_cents(product: &Product) -> u64 {
    (product_number(product) % 50 + 10) * 100 + 90
}

/// A cookie's value from the request.
fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}
