//! What the benches share: fresh `bench_<uuid>` databases on the local Postgres and ClickHouse,
//! the real service (in process, or as its own process), seeded with one realistic shop, and
//! signed storefront URLs for it. [`Databases::drop_all`] removes what a run created; a run that
//! dies half-way leaves `bench_*` databases behind (drop them by hand). The service runs with the
//! integration tests' secrets, and is found, signed for and read as they do.

// Each bench target uses its own part of this module, and of the tests' harness.
#![allow(dead_code)]

#[path = "../../tests/api/helpers.rs"]
pub mod helpers;
pub mod load;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use futures::stream::{self, StreamExt};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;
use videoapp::app::{Application, PublicService};
use videoapp::config::{LogFormat, Settings};
use videoapp::storefront::signature::ProxySecret;

use helpers::{clickhouse_url, postgres_admin_url, signed, ADMIN_TOKEN, PROXY_SECRET};

pub const SHOP: &str = "bench-store.myshopify.com";
pub const CONTEXTUAL_WIDGETS: &str = "/apps/videoapp_sub/contextual-widgets";
/// `POST` here records shopper events.
pub const EVENTS: &str = "/apps/videoapp_sub/analytics";

const PRODUCTS: usize = 500;
const VIDEOS: usize = 500;
const WIDGETS: usize = 50;
const VIDEOS_PER_MANUAL_WIDGET: usize = 10;
/// How many of the 50 widgets a `location=home` page renders (see [`widget_plan`]).
pub const WIDGETS_AT_HOME: usize = 20;

/// Longer than any run, so one pre-signed URL stays valid throughout.
pub const SIGNATURE_MAX_AGE_SECONDS: u64 = 3600;
const START_TIMEOUT: Duration = Duration::from_secs(180);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Logs as `videoapp serve` has them (RUST_LOG, default `info`).
pub fn init_tracing() {
    videoapp::telemetry::init_tracing(LogFormat::Human);
}

/// Stops the process with one clear line: benches have nothing useful to do without the stack.
pub fn fail(message: impl std::fmt::Display) -> ! {
    eprintln!("error: {message}");
    std::process::exit(2);
}

/// The exit code of a run, saying why it failed.
pub fn exit(outcome: Result<(), String>) -> std::process::ExitCode {
    let Err(e) = outcome else {
        return std::process::ExitCode::SUCCESS;
    };
    eprintln!("error: {e}");
    std::process::ExitCode::FAILURE
}

/// The app-proxy secret the service runs with, to check signatures beside it.
pub fn proxy_secret() -> ProxySecret {
    ProxySecret::new(PROXY_SECRET)
}

/// A Postgres and a ClickHouse database of one name, and a spool directory.
#[derive(Clone, Debug)]
pub struct Databases {
    pub name: String,
    pub spool_dir: PathBuf,
}

impl Databases {
    /// A fresh `bench_<uuid>` pair, with the Postgres database created (the service's migrations
    /// create the ClickHouse one); returns the database's URL too. One clear line and exit 2 when
    /// Postgres is not reachable.
    pub async fn create() -> (Databases, String) {
        let name = format!("bench_{}", Uuid::new_v4().simple());
        let connect = PgConnection::connect(&postgres_admin_url());
        let Ok(Ok(mut admin)) = tokio::time::timeout(CONNECT_TIMEOUT, connect).await else {
            fail(
                "Postgres is not reachable: start it with `source scripts/lib.sh && ensure_stack`, \
                 or set VIDEOAPP_TEST_DATABASE_URL",
            )
        };
        let sql = format!(r#"CREATE DATABASE "{name}""#);
        let created = admin.execute(sql.as_str()).await;
        created.unwrap_or_else(|e| fail(format!("CREATE DATABASE {name}: {e}")));
        let mut url = url::Url::parse(&postgres_admin_url()).expect("a Postgres URL");
        url.set_path(&name);
        let spool_dir = std::env::temp_dir().join(format!("videoapp-{name}"));
        (Databases { name, spool_dir }, url.to_string())
    }

    /// Drops both databases and the spool directory, best effort. Call it after the runtime that
    /// ran the service is gone (its pools would hold the database open).
    pub fn drop_all(&self) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build();
        runtime.expect("a runtime").block_on(async {
            let sql = format!(r#"DROP DATABASE IF EXISTS "{}" WITH (FORCE)"#, self.name);
            let dropped = async {
                let mut admin = PgConnection::connect(&postgres_admin_url()).await?;
                admin.execute(sql.as_str()).await.map(drop)
            };
            if let Err(e) = dropped.await {
                eprintln!("warning: could not drop Postgres {}: {e}", self.name);
            }
            let sql = format!("DROP DATABASE IF EXISTS {}", self.name);
            if let Err(e) = clickhouse_query(&reqwest::Client::new(), "default", &sql).await {
                eprintln!("warning: could not drop ClickHouse {}: {e}", self.name);
            }
        });
        let _ = std::fs::remove_dir_all(&self.spool_dir);
    }
}

/// The service on this runtime, with the bench shop seeded.
pub struct BenchApp {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The same service the listener serves, for in-process requests (`oneshot`).
    pub router: PublicService,
    pub databases: Databases,
}

impl BenchApp {
    /// Creates the databases, starts the service and seeds the shop; fails the process with a
    /// clear message when the stack is not there. Never hangs.
    pub async fn start() -> BenchApp {
        let started = async {
            let (databases, database_url) = Databases::create().await;
            let (base_url, router) =
                start_service(service_settings(database_url, &databases)).await;
            seed(&Admin::new(&base_url)).await;
            BenchApp {
                base_url,
                router,
                databases,
            }
        };
        match tokio::time::timeout(START_TIMEOUT, started).await {
            Ok(app) => app,
            Err(_) => fail(format!(
                "the service did not start within {START_TIMEOUT:?}"
            )),
        }
    }

    /// A freshly signed query for the bench shop's home page, as the app proxy sends it.
    pub fn signed_query(&self) -> String {
        signed(SHOP, &[("location", "home")])
    }

    /// Path and query of a freshly signed contextual-widgets request (`location=home`).
    pub fn contextual_widgets_uri(&self) -> String {
        format!("{CONTEXTUAL_WIDGETS}?{}", self.signed_query())
    }
}

/// The integration tests' settings for `databases`, with the bench spool and a signature window
/// longer than any run.
pub fn service_settings(database_url: String, databases: &Databases) -> Settings {
    Settings {
        spool_dir: databases.spool_dir.clone(),
        signature_max_age: Duration::from_secs(SIGNATURE_MAX_AGE_SECONDS),
        ..helpers::test_settings(&database_url, &databases.name)
    }
}

/// Builds the service from `settings` (migrating both databases) and serves it on this runtime;
/// returns its base URL (`http://127.0.0.1:PORT`) and its router.
pub async fn start_service(settings: Settings) -> (String, PublicService) {
    let config = settings
        .server_config()
        .unwrap_or_else(|e| fail(format!("settings: {e}")));
    let app = Application::build(config)
        .await
        .unwrap_or_else(|e| fail(format!("the service did not build: {e:#}")));
    let started = (format!("http://{}", app.local_addr()), app.router());
    tokio::spawn(app.run_until(std::future::pending()));
    started
}

/// Runs `sql` on the bench ClickHouse server in `database`; returns its output, trimmed.
pub async fn clickhouse_query(
    client: &reqwest::Client,
    database: &str,
    sql: &str,
) -> Result<String, String> {
    let response = client
        .post(format!("{}/?database={database}", clickhouse_url()))
        .timeout(Duration::from_secs(600))
        .body(sql.to_string())
        .send()
        .await
        .map_err(|e| {
            format!("ClickHouse is not reachable ({e}); set VIDEOAPP_TEST_CLICKHOUSE_URL")
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(format!("ClickHouse: {sql}: {status}: {}", text.trim()));
    }
    Ok(text.trim().to_string())
}

/// The real service as a process of its own (`videoapp serve`, the binary cargo built for the
/// bench target, or `BENCH_SERVICE_BIN` to compare builds), so that its CPU time and memory are
/// its own. With `BENCH_CALLGRIND=FILE` it runs under `valgrind --tool=callgrind` with counting
/// off until [`ServiceProcess::callgrind_control`] turns it on. Killed when dropped.
pub struct ServiceProcess {
    process: helpers::ServiceProcess,
    pub pid: i32,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    pub binary: PathBuf,
    pub callgrind: Option<PathBuf>,
}

impl ServiceProcess {
    /// Starts the service against `databases` with the production defaults except free loopback
    /// ports, the bench spool and a long signature window; creates the bench shop. The
    /// environment passes on (`RUST_LOG`, or `VIDEOAPP_BATCH_*` for an experiment).
    pub async fn start(
        databases: &Databases,
        database_url: &str,
    ) -> Result<ServiceProcess, String> {
        let binary = std::env::var_os("BENCH_SERVICE_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_videoapp")),
            PathBuf::from,
        );
        let callgrind = std::env::var_os("BENCH_CALLGRIND").map(PathBuf::from);
        let command = match &callgrind {
            Some(file) => {
                let mut command = Command::new("valgrind");
                command
                    .args(["--tool=callgrind", "--instr-atstart=no"])
                    .arg(format!("--callgrind-out-file={}", file.display()))
                    .arg(&binary);
                command
            }
            None => Command::new(&binary),
        };
        let env = [
            ("DATABASE_URL", database_url.to_string()),
            ("CLICKHOUSE_URL", clickhouse_url()),
            ("CLICKHOUSE_DATABASE", databases.name.clone()),
            (
                "VIDEOAPP_SPOOL_DIR",
                databases.spool_dir.display().to_string(),
            ),
            (
                "VIDEOAPP_SIGNATURE_MAX_AGE_SECONDS",
                SIGNATURE_MAX_AGE_SECONDS.to_string(),
            ),
        ];
        // A service that cannot start panics on that thread, which says why.
        let process = tokio::task::spawn_blocking(move || helpers::spawn_serving(command, &env));
        let process = process
            .await
            .map_err(|_| format!("{} did not start serving", binary.display()))?;
        seed_shop(&Admin::new(&process.address)).await;
        Ok(ServiceProcess {
            pid: process.child.id() as i32,
            base_url: process.address.clone(),
            process,
            binary,
            callgrind,
        })
    }

    /// Path and query of a signed events request for the bench shop, as the app proxy forwards
    /// the loader's beacon. The signature covers only the query: one URL serves a whole run.
    pub fn events_uri(&self) -> String {
        format!(
            "{EVENTS}?{}",
            signed(SHOP, &[("logged_in_customer_id", "")])
        )
    }

    /// The Prometheus exposition of the service.
    pub async fn metrics(&self, client: &reqwest::Client) -> Result<String, String> {
        let url = format!("{}/metrics", self.process.metrics_address);
        let sent = client.get(&url).send().await;
        let text = async { sent?.error_for_status()?.text().await };
        text.await.map_err(|e| format!("GET {url}: {e}"))
    }

    /// `callgrind_control` on the service: `--instr=on` (count from now), `--zero`, `--dump`.
    pub fn callgrind_control(&self, arg: &str) -> Result<(), String> {
        let output = Command::new("callgrind_control")
            .args([arg, &self.pid.to_string()])
            .output()
            .map_err(|e| format!("callgrind_control: {e}"))?;
        let said = String::from_utf8_lossy(&output.stdout);
        match said.contains("OK") {
            true => Ok(()),
            false => Err(format!("callgrind_control {arg}: {said}")),
        }
    }

    /// Peak resident memory of the process, in KiB (`VmHWM`).
    pub fn peak_rss_kib(&self) -> Option<u64> {
        let status = procfs::process::Process::new(self.pid).and_then(|p| p.status());
        status.ok()?.vmhwm
    }
}

/// The bench shop's admin API: `…/admin/v1/shops/{SHOP}`.
struct Admin(String);

impl Admin {
    fn new(base_url: &str) -> Admin {
        Admin(format!("{base_url}/admin/v1/shops/{SHOP}"))
    }

    async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.0);
        let request = reqwest::Client::new().request(method.clone(), &url);
        let sent = request.bearer_auth(ADMIN_TOKEN).json(&body).send().await;
        let response = sent.unwrap_or_else(|e| fail(format!("{method} {url}: {e}")));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            fail(format!("{method} {url} answered {status}: {text}"));
        }
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// POSTs each body to `path`, a few at a time; returns what was created, in order.
    async fn create_all(&self, path: &str, bodies: Vec<Value>) -> Vec<Value> {
        let created = bodies
            .into_iter()
            .map(|body| self.send(reqwest::Method::POST, path, body));
        stream::iter(created).buffered(8).collect().await
    }
}

const ADJECTIVES: &str =
    "Organic,Relaxed,Vintage,Everyday,Lightweight,Oversized,Recycled,Classic,Cropped,\
    Tailored,Ribbed,Washed";
const MATERIALS: &str = "Cotton,Linen,Merino Wool,Denim,Cashmere,Silk,Corduroy,Hemp";
const GARMENTS: &str = "Crew Neck T-Shirt,Button-Down Shirt,Wide-Leg Trousers,Midi Skirt,Hoodie,\
    Bomber Jacket,Cardigan,Chino Shorts,Wrap Dress,Tote Bag";
const COLOURS: &str = "Heather Grey,Sage,Navy,Off White,Black,Terracotta,Sand,Olive,Dusty Rose";
const HOOKS: &str = "Styling the,3 ways to wear the,Unboxing our,Behind the seams:,Try-on haul:,\
    Why customers love the,Care guide for the,Outfit of the day with the";

/// One comma-separated word of each list, in order.
fn pick<const N: usize>(rng: &mut StdRng, lists: [&'static str; N]) -> [&'static str; N] {
    lists.map(|list| {
        *list
            .split(',')
            .collect::<Vec<_>>()
            .choose(rng)
            .expect("a word")
    })
}

fn slug(text: &str) -> String {
    let words = text.split(|c: char| !c.is_ascii_alphanumeric());
    let words: Vec<&str> = words.filter(|w| !w.is_empty()).collect();
    words.join("-").to_ascii_lowercase()
}

fn product_gid(i: usize) -> String {
    format!("gid://shopify/Product/{}", 8_091_234_560_000 + i as u64)
}

fn product(rng: &mut StdRng, i: usize) -> Value {
    let [adjective, material, garment, colour] =
        pick(rng, [ADJECTIVES, MATERIALS, GARMENTS, COLOURS]);
    let title = format!("{adjective} {material} {garment} – {colour}");
    let handle = format!("{}-{i}", slug(&title));
    let collections: BTreeSet<String> = (0..rng.gen_range(1..=3))
        .map(|_| 4_123_456_000u64 + rng.gen_range(0..40u64))
        .map(|id| format!("gid://shopify/Collection/{id}"))
        .collect();
    let version = rng.gen_range(0..100_000_000u32);
    json!({
        "id": product_gid(i),
        "title": title,
        "handle": handle,
        "image": format!(
            "https://cdn.shopify.com/s/files/1/0612/3456/7890/files/{handle}_1024x1024.jpg?v=17{version:08}"
        ),
        "url": format!("https://{SHOP}/products/{handle}"),
        "collectionIds": collections,
    })
}

fn video(rng: &mut StdRng, i: usize) -> Value {
    let [hook, adjective, material, garment] = pick(rng, [HOOKS, ADJECTIVES, MATERIALS, GARMENTS]);
    let rest = format!("{adjective} {material} {garment}").to_lowercase();
    let title = format!("{hook} {rest}");
    let file = format!("{}-{i:04}", slug(&title));
    let media = format!(
        "https://cdn.videoapp.example/media/{}",
        Uuid::from_u128(rng.gen()).simple()
    );
    let linked = rng.gen_range(1..=3);
    let products = rand::seq::index::sample(rng, PRODUCTS, linked)
        .into_iter()
        .map(product_gid);
    json!({
        "title": title,
        "thumbnail": format!("{media}/thumbnails/{file}-poster.jpg"),
        "videoUrl": format!("{media}/{file}-1080p.mp4"),
        "miniVersionUrl": format!("{media}/{file}-preview-360p.mp4"),
        "duration": (rng.gen_range(8.0..95.0f64) * 1000.0).round() / 1000.0,
        "status": "PUBLISHED",
        "productIds": products.collect::<Vec<_>>(),
    })
}

/// The 50 widgets, all `active`. Exactly [`WIDGETS_AT_HOME`] of them render on the home page:
///
/// - 20 manual carousels and stories with no location rule, or one that includes `home`;
/// - 10 `productpage` widgets (product pages only);
/// - 10 manual carousels limited to `product` or `collection` pages;
/// - 5 product-sourced carousels (nothing to show without a current product);
/// - 5 manual stories limited to some products (no product on the home page).
fn widget(rng: &mut StdRng, i: usize, video_ids: &[String]) -> Value {
    let (kind, source, rules, label) = match i {
        0..20 => {
            let locations = [
                json!([]),
                json!(["home"]),
                json!(["home", "collection", "page"]),
            ];
            let rules = json!({ "locations": locations[i % 3] });
            (["carousel", "story"][i % 2], "manual", rules, "Homepage")
        }
        20..30 => (
            "productpage",
            ["manual", "product"][i % 2],
            json!({}),
            "Product page",
        ),
        30..40 => {
            let rules = json!({ "locations": [(["product", "collection"][i % 2])] });
            ("carousel", "manual", rules, "Collection")
        }
        40..45 => ("carousel", "product", json!({}), "Shop the look"),
        _ => {
            let products = (0..5).map(|_| product_gid(rng.gen_range(0..PRODUCTS)));
            let rules = json!({ "productIds": products.collect::<BTreeSet<_>>() });
            ("story", "manual", rules, "Featured")
        }
    };
    let videos: Vec<&String> = match source {
        "manual" => video_ids
            .choose_multiple(rng, VIDEOS_PER_MANUAL_WIDGET)
            .collect(),
        _ => Vec::new(),
    };
    json!({
        "type": kind,
        "title": format!("{label} {kind} #{:02} – new season picks", i + 1),
        "status": "active",
        "priority": rng.gen_range(0..10),
        "viewStyle": (["default", "compact", "large"][i % 3]),
        "clickBehavior": (["open_modal", "open_product", "none"][i % 3]),
        "modalLayout": (["vertical", "horizontal"][i % 2]),
        "sourceType": source,
        "videoIds": videos,
        "rules": rules,
    })
}

/// The bench shop itself (no catalog), through the admin API.
async fn seed_shop(admin: &Admin) {
    let shop = json!({ "name": "Bench Store", "currency": "EUR", "timezone": "Europe/Paris" });
    admin.send(reqwest::Method::PUT, "", shop).await;
}

/// The shop, its products, videos and widgets, through the admin API. Deterministic.
async fn seed(admin: &Admin) {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    seed_shop(admin).await;
    let products: Vec<Value> = (0..PRODUCTS).map(|i| product(&mut rng, i)).collect();
    let products = json!({ "products": products });
    admin
        .send(reqwest::Method::PUT, "/products", products)
        .await;
    let videos: Vec<Value> = (0..VIDEOS).map(|i| video(&mut rng, i)).collect();
    let created = admin.create_all("/videos", videos).await;
    let video_ids: Vec<String> = created
        .iter()
        .map(|v| v["id"].as_str().unwrap_or_default().to_string())
        .collect();
    let widgets = (0..WIDGETS)
        .map(|i| widget(&mut rng, i, &video_ids))
        .collect();
    admin.create_all("/widgets", widgets).await;
}
