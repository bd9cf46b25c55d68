//! What the storefront benches share: the real service on port 0 against a fresh Postgres
//! database (and a fresh ClickHouse database) on the local servers, seeded through the admin API
//! with one realistic shop, and signed storefront URLs for it.
//!
//! Databases are named `bench_<uuid>`; [`Databases::drop_all`] removes them at the end of a run.
//! A run that dies half-way leaves them behind (they are harmless; drop `bench_*` by hand).

// Each bench target uses its own part of this module.
#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use axum::Router;
use chrono::Utc;
use futures::stream::{self, StreamExt};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;
use videoapp::app::Application;
use videoapp::catalog::cache::CatalogCache;
use videoapp::config::{LogFormat, Settings};
use videoapp::storefront::signature::{signed_query, ProxySecret};

pub const SHOP: &str = "bench-store.myshopify.com";
pub const PATH_PREFIX: &str = "/apps/videoapp_sub";
pub const CONTEXTUAL_WIDGETS: &str = "/apps/videoapp_sub/contextual-widgets";

pub const PRODUCTS: usize = 500;
pub const VIDEOS: usize = 500;
pub const WIDGETS: usize = 50;
pub const VIDEOS_PER_MANUAL_WIDGET: usize = 10;
/// How many of the 50 widgets a `location=home` page renders (see [`widget_plan`]).
pub const WIDGETS_AT_HOME: usize = 20;

/// Longer than any run, so one pre-signed URL stays valid throughout.
const SIGNATURE_MAX_AGE_SECONDS: &str = "3600";
/// Start-up (connect, migrate, seed) must never hang a run.
const START_TIMEOUT: Duration = Duration::from_secs(180);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// The Postgres server's maintenance database, as for the tests.
pub fn postgres_admin_url() -> String {
    std::env::var("VIDEOAPP_TEST_DATABASE_URL")
        .unwrap_or_else(|_| "postgres://videoapp:videoapp@127.0.0.1:54329/postgres".to_string())
}

pub fn clickhouse_url() -> String {
    std::env::var("VIDEOAPP_TEST_CLICKHOUSE_URL")
        .unwrap_or_else(|_| "http://127.0.0.1:18123".to_string())
}

/// Logs as `videoapp serve` has them (RUST_LOG, default `info`), so the per-request span costs
/// what it costs in production.
pub fn init_tracing() {
    videoapp::telemetry::init_tracing(LogFormat::Human);
}

/// Stops the process with one clear line: benches have nothing useful to do without the stack.
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// What a run created, so it can be removed afterwards.
#[derive(Clone, Debug)]
pub struct Databases {
    pub postgres_admin_url: String,
    pub postgres: String,
    pub clickhouse_url: String,
    pub clickhouse: String,
    pub spool_dir: PathBuf,
}

impl Databases {
    /// Drops both databases and the spool directory. Call it after the runtime that ran the
    /// service is gone (its pools and listener would otherwise hold the database open).
    /// Best effort: a failure is reported, not fatal.
    pub fn drop_all(&self) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a current-thread runtime");
        runtime.block_on(async {
            let dropped_pg = async {
                let mut admin = PgConnection::connect(&self.postgres_admin_url).await?;
                let sql = format!(
                    r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#,
                    self.postgres
                );
                admin.execute(sql.as_str()).await?;
                Ok::<_, sqlx::Error>(())
            };
            if let Err(e) = tokio::time::timeout(CONNECT_TIMEOUT, dropped_pg)
                .await
                .unwrap_or_else(|_| Err(sqlx::Error::PoolTimedOut))
            {
                eprintln!(
                    "warning: could not drop Postgres database {}: {e}",
                    self.postgres
                );
            }
            let dropped_ch = reqwest::Client::new()
                .post(&self.clickhouse_url)
                .timeout(CONNECT_TIMEOUT)
                .body(format!("DROP DATABASE IF EXISTS {}", self.clickhouse))
                .send()
                .await
                .and_then(|r| r.error_for_status());
            if let Err(e) = dropped_ch {
                eprintln!(
                    "warning: could not drop ClickHouse database {}: {e}",
                    self.clickhouse
                );
            }
        });
        let _ = std::fs::remove_dir_all(&self.spool_dir);
    }
}

/// The service, running on this runtime, with the bench shop seeded and its cache warm.
pub struct BenchApp {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The same router the listener serves, for in-process requests (`oneshot`).
    pub router: Router,
    /// The service's catalog cache (the per-shop snapshots).
    pub catalog: CatalogCache,
    pub databases: Databases,
    secret: ProxySecret,
}

impl BenchApp {
    /// Creates the databases, builds and starts the service, seeds the shop and warms its cache.
    /// Fails the process with a clear message when Postgres is unreachable; never hangs.
    pub async fn start() -> BenchApp {
        match tokio::time::timeout(START_TIMEOUT, Self::start_inner()).await {
            Ok(app) => app,
            Err(_) => fail(format!(
                "the bench service did not start and seed within {START_TIMEOUT:?}"
            )),
        }
    }

    async fn start_inner() -> BenchApp {
        let id = Uuid::new_v4().simple().to_string();
        let databases = Databases {
            postgres_admin_url: postgres_admin_url(),
            postgres: format!("bench_{id}"),
            clickhouse_url: clickhouse_url(),
            clickhouse: format!("bench_{id}"),
            spool_dir: std::env::temp_dir().join(format!("videoapp-bench-{id}")),
        };
        let database_url =
            create_database(&databases.postgres_admin_url, &databases.postgres).await;
        let admin_token = format!("bench-admin-token-{id}");
        let secret = format!("bench-proxy-secret-{id}");
        let settings = Settings {
            database_url: Some(database_url),
            clickhouse_url: Some(databases.clickhouse_url.clone()),
            clickhouse_database: Some(databases.clickhouse.clone()),
            listen: Some("127.0.0.1:0".to_string()),
            metrics_listen: Some("127.0.0.1:0".to_string()),
            proxy_secret: Some(secret.clone()),
            admin_token: Some(admin_token.clone()),
            spool_dir: Some(databases.spool_dir.clone()),
            signature_max_age_seconds: Some(SIGNATURE_MAX_AGE_SECONDS.to_string()),
            shutdown_grace_seconds: Some("1".to_string()),
            ..Settings::default()
        };
        let config = settings
            .server_config()
            .unwrap_or_else(|e| fail(format!("bench settings: {e}")));
        let app = Application::build(config)
            .await
            .unwrap_or_else(|e| fail(format!("the service did not build: {e:#}")));
        let base_url = format!("http://{}", app.local_addr());
        let router = app.router();
        let catalog = app.catalog_cache();
        tokio::spawn(app.run_until(std::future::pending()));

        let bench = BenchApp {
            base_url,
            router,
            catalog,
            databases,
            secret: ProxySecret::new(secret),
        };
        let admin = Admin {
            client: reqwest::Client::new(),
            base: format!("{}/admin/v1/shops/{SHOP}", bench.base_url),
            token: admin_token,
        };
        seed(&admin).await;
        bench.warm_up().await;
        bench
    }

    /// A freshly signed query for the bench shop's home page, as the app proxy sends it.
    pub fn signed_query(&self) -> String {
        let params = [
            ("shop", SHOP),
            ("path_prefix", PATH_PREFIX),
            ("location", "home"),
        ]
        .map(|(k, v)| (k.to_string(), v.to_string()));
        signed_query(&self.secret, &params, Utc::now())
    }

    /// Path and query of a freshly signed contextual-widgets request (`location=home`).
    pub fn contextual_widgets_uri(&self) -> String {
        format!("{CONTEXTUAL_WIDGETS}?{}", self.signed_query())
    }

    /// The same, as a full URL on the service's listener.
    pub fn contextual_widgets_url(&self) -> String {
        format!("{}{}", self.base_url, self.contextual_widgets_uri())
    }

    pub fn proxy_secret(&self) -> &ProxySecret {
        &self.secret
    }

    /// Loads the shop's snapshot into the cache and checks the home page shows what the seed
    /// promises.
    async fn warm_up(&self) {
        let response = reqwest::get(self.contextual_widgets_url())
            .await
            .unwrap_or_else(|e| fail(format!("contextual-widgets: {e}")));
        let status = response.status();
        let body: Value = response
            .json()
            .await
            .unwrap_or_else(|e| fail(format!("contextual-widgets body: {e}")));
        if status != reqwest::StatusCode::OK {
            fail(format!("contextual-widgets answered {status}: {body}"));
        }
        let shown = body["widgets"].as_array().map_or(0, Vec::len);
        if shown != WIDGETS_AT_HOME {
            fail(format!(
                "the home page shows {shown} widgets, the seed meant {WIDGETS_AT_HOME}"
            ));
        }
    }
}

async fn create_database(admin_url: &str, name: &str) -> String {
    let connect = PgConnection::connect(admin_url);
    let mut admin = match tokio::time::timeout(CONNECT_TIMEOUT, connect).await {
        Ok(Ok(conn)) => conn,
        Ok(Err(e)) => fail(format!(
            "Postgres is not reachable at {} ({e}). Start it with \
             `source scripts/lib.sh && ensure_stack` (or scripts/test), or set \
             VIDEOAPP_TEST_DATABASE_URL",
            redact(admin_url)
        )),
        Err(_) => fail(format!(
            "Postgres at {} did not answer within {CONNECT_TIMEOUT:?}. Start it with \
             `source scripts/lib.sh && ensure_stack`",
            redact(admin_url)
        )),
    };
    admin
        .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
        .await
        .unwrap_or_else(|e| fail(format!("CREATE DATABASE {name}: {e}")));
    let mut url = url::Url::parse(admin_url).expect("the admin URL parsed once already");
    url.set_path(name);
    url.to_string()
}

/// The URL without its password, for messages.
fn redact(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut u) => {
            if u.password().is_some() {
                let _ = u.set_password(Some("***"));
            }
            u.to_string()
        }
        Err(_) => "(unparsable URL)".to_string(),
    }
}

struct Admin {
    client: reqwest::Client,
    /// `…/admin/v1/shops/{SHOP}`.
    base: String,
    token: String,
}

impl Admin {
    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.base);
        let response = self
            .client
            .request(method.clone(), &url)
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .unwrap_or_else(|e| fail(format!("{method} {url}: {e}")));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            fail(format!("{method} {url} answered {status}: {text}"));
        }
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }
}

const ADJECTIVES: [&str; 12] = [
    "Organic",
    "Relaxed",
    "Vintage",
    "Everyday",
    "Lightweight",
    "Oversized",
    "Recycled",
    "Classic",
    "Cropped",
    "Tailored",
    "Ribbed",
    "Washed",
];
const MATERIALS: [&str; 8] = [
    "Cotton",
    "Linen",
    "Merino Wool",
    "Denim",
    "Cashmere",
    "Silk",
    "Corduroy",
    "Hemp",
];
const GARMENTS: [&str; 10] = [
    "Crew Neck T-Shirt",
    "Button-Down Shirt",
    "Wide-Leg Trousers",
    "Midi Skirt",
    "Hoodie",
    "Bomber Jacket",
    "Cardigan",
    "Chino Shorts",
    "Wrap Dress",
    "Tote Bag",
];
const COLOURS: [&str; 9] = [
    "Heather Grey",
    "Sage",
    "Navy",
    "Off White",
    "Black",
    "Terracotta",
    "Sand",
    "Olive",
    "Dusty Rose",
];
const HOOKS: [&str; 8] = [
    "Styling the",
    "3 ways to wear the",
    "Unboxing our",
    "Behind the seams:",
    "Try-on haul:",
    "Why customers love the",
    "Care guide for the",
    "Outfit of the day with the",
];

fn slug(text: &str) -> String {
    let mut slug = String::with_capacity(text.len());
    for word in text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        if !slug.is_empty() {
            slug.push('-');
        }
        slug.push_str(&word.to_ascii_lowercase());
    }
    slug
}

fn product_gid(i: usize) -> String {
    format!("gid://shopify/Product/{}", 8_091_234_560_000 + i as u64)
}

fn product(rng: &mut StdRng, i: usize) -> Value {
    let title = format!(
        "{} {} {} – {}",
        ADJECTIVES.choose(rng).unwrap(),
        MATERIALS.choose(rng).unwrap(),
        GARMENTS.choose(rng).unwrap(),
        COLOURS.choose(rng).unwrap()
    );
    let handle = format!("{}-{i}", slug(&title));
    let collections: Vec<String> = (0..rng.gen_range(1..=3))
        .map(|_| {
            format!(
                "gid://shopify/Collection/{}",
                4_123_456_000u64 + rng.gen_range(0..40u64)
            )
        })
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    json!({
        "id": product_gid(i),
        "title": title,
        "handle": handle,
        "image": format!(
            "https://cdn.shopify.com/s/files/1/0612/3456/7890/files/{handle}_1024x1024.jpg?v=17{:08}",
            rng.gen_range(0..100_000_000u32)
        ),
        "url": format!("https://{SHOP}/products/{handle}"),
        "collectionIds": collections,
    })
}

fn video(rng: &mut StdRng, i: usize) -> Value {
    let title = format!(
        "{} {} {} {}",
        HOOKS.choose(rng).unwrap(),
        ADJECTIVES.choose(rng).unwrap().to_lowercase(),
        MATERIALS.choose(rng).unwrap().to_lowercase(),
        GARMENTS.choose(rng).unwrap().to_lowercase()
    );
    let file = format!("{}-{i:04}", slug(&title));
    let asset = Uuid::from_u128(rng.gen()).simple().to_string();
    let linked = rng.gen_range(1..=3);
    let products: Vec<String> = rand::seq::index::sample(rng, PRODUCTS, linked)
        .into_iter()
        .map(product_gid)
        .collect();
    json!({
        "title": title,
        "thumbnail": format!("https://cdn.videoapp.example/media/{asset}/thumbnails/{file}-poster.jpg"),
        "videoUrl": format!("https://cdn.videoapp.example/media/{asset}/{file}-1080p.mp4"),
        "miniVersionUrl": format!("https://cdn.videoapp.example/media/{asset}/{file}-preview-360p.mp4"),
        "duration": (rng.gen_range(8.0..95.0f64) * 1000.0).round() / 1000.0,
        "status": "PUBLISHED",
        "productIds": products,
    })
}

/// The 50 widgets, all `active`. Exactly [`WIDGETS_AT_HOME`] of them render on the home page:
///
/// - 20 manual carousels and stories with no location rule, or one that includes `home`;
/// - 10 `productpage` widgets (product pages only);
/// - 10 manual carousels limited to `product` or `collection` pages;
/// - 5 product-sourced carousels (nothing to show without a current product);
/// - 5 manual stories limited to some products (no product on the home page).
fn widget_plan(rng: &mut StdRng, video_ids: &[String]) -> Vec<Value> {
    let manual_videos = |rng: &mut StdRng| -> Vec<String> {
        video_ids
            .choose_multiple(rng, VIDEOS_PER_MANUAL_WIDGET)
            .cloned()
            .collect()
    };
    let styles = ["default", "compact", "large"];
    let clicks = ["open_modal", "open_product", "none"];
    let layouts = ["vertical", "horizontal"];
    let mut widgets = Vec::with_capacity(WIDGETS);
    for i in 0..WIDGETS {
        let (widget_type, source, rules, label) = match i {
            0..20 => {
                let locations = match i % 3 {
                    0 => json!([]),
                    1 => json!(["home"]),
                    _ => json!(["home", "collection", "page"]),
                };
                let kind = if i % 2 == 0 { "carousel" } else { "story" };
                (
                    kind,
                    "manual",
                    json!({ "locations": locations }),
                    "Homepage",
                )
            }
            20..30 => {
                let source = if i % 2 == 0 { "manual" } else { "product" };
                ("productpage", source, json!({}), "Product page")
            }
            30..40 => {
                let location = if i % 2 == 0 { "product" } else { "collection" };
                (
                    "carousel",
                    "manual",
                    json!({ "locations": [location] }),
                    "Collection",
                )
            }
            40..45 => ("carousel", "product", json!({}), "Shop the look"),
            _ => {
                let products: Vec<String> = (0..5)
                    .map(|_| product_gid(rng.gen_range(0..PRODUCTS)))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect();
                (
                    "story",
                    "manual",
                    json!({ "productIds": products }),
                    "Featured",
                )
            }
        };
        let videos = if source == "manual" {
            manual_videos(rng)
        } else {
            Vec::new()
        };
        widgets.push(json!({
            "type": widget_type,
            "title": format!("{label} {widget_type} #{:02} – new season picks", i + 1),
            "status": "active",
            "priority": rng.gen_range(0..10),
            "viewStyle": styles[i % styles.len()],
            "clickBehavior": clicks[i % clicks.len()],
            "modalLayout": layouts[i % layouts.len()],
            "sourceType": source,
            "videoIds": videos,
            "rules": rules,
        }));
    }
    widgets
}

/// The shop, its products, videos and widgets, through the admin API. Deterministic.
async fn seed(admin: &Admin) {
    const PARALLEL: usize = 8;
    let mut rng = StdRng::seed_from_u64(0x5eed);
    admin
        .send(
            reqwest::Method::PUT,
            "",
            json!({ "name": "Bench Store", "currency": "EUR", "timezone": "Europe/Paris" }),
        )
        .await;
    let products: Vec<Value> = (0..PRODUCTS).map(|i| product(&mut rng, i)).collect();
    admin
        .send(
            reqwest::Method::PUT,
            "/products",
            json!({ "products": products }),
        )
        .await;
    let videos: Vec<Value> = (0..VIDEOS).map(|i| video(&mut rng, i)).collect();
    let video_ids: Vec<String> = stream::iter(videos)
        .map(|body| async move {
            let created = admin.send(reqwest::Method::POST, "/videos", body).await;
            created["id"]
                .as_str()
                .unwrap_or_else(|| fail(format!("a created video without an id: {created}")))
                .to_string()
        })
        .buffered(PARALLEL)
        .collect()
        .await;
    let widgets = widget_plan(&mut rng, &video_ids);
    stream::iter(widgets)
        .map(|body| admin.send(reqwest::Method::POST, "/widgets", body))
        .buffered(PARALLEL)
        .collect::<Vec<_>>()
        .await;
}
