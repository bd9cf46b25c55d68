use std::process::ExitCode;

use clap::{Parser, Subcommand};
use secrecy::ExposeSecret;
use videoapp::app::{shutdown_signal, Application};
use videoapp::catalog::domain::ShopDomain;
use videoapp::config::{self, Settings};
use videoapp::devstore::dashboard::DemoAdmin;
use videoapp::devstore::{DevStoreConfig, DevStoreServer};
use videoapp::media::{worker, Media};
use videoapp::storefront::signature::{signed_query, ProxySecret};
use videoapp::warehouse::cluster::{Cluster, Step};
use videoapp::warehouse::{migrations, Warehouse};
use videoapp::{db, telemetry};

/// glibc's allocator was a fifth of the service's CPU under event load (BENCHMARKS.md, Ingest);
/// mimalloc's per-thread free lists suit many small, short-lived request allocations.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "videoapp",
    version,
    about = "Shoppable video widgets and their analytics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    settings: Settings,
}

#[derive(Subcommand)]
enum Command {
    /// Run the HTTP service (applies pending migrations first).
    Serve,
    /// Run media processing workers only (no HTTP): they take jobs from the queue in Postgres
    /// and share the media store with the service (an S3 bucket, or the same directory).
    Worker,
    /// Apply the Postgres and ClickHouse migrations, then exit.
    Migrate,
    /// Print every ClickHouse statement the migrations run, in the form they take with these
    /// settings (CLICKHOUSE_DATABASE, CLICKHOUSE_CLUSTER), for review; connects to nothing.
    Schema,
    /// Load a realistic data set for the scale benchmark: shops and videos in Postgres, events
    /// straight into ClickHouse. Prints the shops and their API keys as JSON.
    Generate(videoapp::generate::Plan),
    /// Run the demo store: the platform's storefront emulated for one shop, with the app's
    /// blocks, its app proxy (signed), cart API and checkout pixel.
    DevStore {
        /// The shop whose catalog the store shows, e.g. demo.myshopify.com.
        #[arg(long)]
        shop: String,
        /// The service the app proxy forwards to.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        upstream: String,
        /// Where the built loader and pixel are.
        #[arg(long, default_value = concat!(env!("CARGO_MANIFEST_DIR"), "/extensions"))]
        extensions_dir: std::path::PathBuf,
        /// Whether the theme's app embed starts on (the admin's theme editor switches it).
        #[arg(long, default_value = "on", value_parser = ["on", "off"])]
        app_embed: String,
    },
    /// Print a freshly signed storefront URL, as the platform's app proxy would send it.
    Sign {
        /// The shop, e.g. demo.myshopify.com.
        #[arg(long)]
        shop: String,
        /// Where the service listens.
        #[arg(long, default_value = "http://127.0.0.1:8080")]
        base_url: String,
        /// Path, e.g. /apps/videoapp_sub/contextual-widgets.
        path: String,
        /// Query parameters as key=value.
        params: Vec<String>,
    },
}

fn main() -> ExitCode {
    // Configuration problems get one line naming every malformed or missing setting, then exit
    // code 2: those found while parsing, and those the command finds missing.
    let (cli, problems) = config::parse::<Cli>();
    let settings = &cli.settings;
    let log_format = settings.log_format;
    match cli.command {
        Command::Sign {
            shop,
            base_url,
            path,
            params,
        } => {
            let secret = match problems.and(settings.proxy_secret()) {
                Ok(secret) => ProxySecret::new(secret.expose_secret()),
                Err(e) => return config_error(e),
            };
            sign(&secret, &shop, &base_url, &path, &params)
        }
        Command::DevStore {
            shop,
            upstream,
            extensions_dir,
            app_embed,
        } => {
            let shop = match ShopDomain::parse(&shop) {
                Ok(shop) => shop,
                Err(e) => {
                    eprintln!("error: --shop: {e}");
                    return ExitCode::from(2);
                }
            };
            let (secret, database_url, admin) = match problems.and(config::both(
                settings.proxy_secret(),
                settings.database_url(),
            )) {
                Ok((secret, url)) => {
                    let admin = settings.client_id.clone().map(|client_id| DemoAdmin {
                        client_id,
                        secret: secret.clone(),
                    });
                    (ProxySecret::new(secret.expose_secret()), url.clone(), admin)
                }
                Err(e) => return config_error(e),
            };
            let listen = settings.dev_store_listen();
            telemetry::init_tracing(log_format);
            run(async move {
                let shutdown = shutdown_signal()?;
                let store = DevStoreServer::bind(DevStoreConfig {
                    shop,
                    listen,
                    upstream,
                    secret,
                    database_url,
                    extensions_dir,
                    admin,
                    app_embed: app_embed == "on",
                })
                .await?;
                tracing::info!(listen = %store.local_addr(), "demo store serving");
                store.run_until(shutdown).await
            })
        }
        Command::Serve => {
            let config = match problems.and(settings.server_config()) {
                Ok(config) => config,
                Err(e) => return config_error(e),
            };
            telemetry::init_tracing(log_format);
            run(async move {
                let shutdown = shutdown_signal()?;
                let app = Application::build(config).await?;
                tracing::info!(listen = %app.local_addr(), metrics = %app.metrics_addr(), "videoapp serving");
                app.run_until(shutdown).await
            })
        }
        Command::Worker => {
            let (database_url, media) = match problems.and(config::both(
                settings.database_url(),
                settings.media.media_config(),
            )) {
                Ok((url, media)) => (url.clone(), media),
                Err(e) => return config_error(e),
            };
            let listen = settings.serve_listen();
            telemetry::init_tracing(log_format);
            run(async move {
                let shutdown = shutdown_signal()?;
                telemetry::prometheus();
                let pool = db::connect(database_url.expose_secret()).await?;
                db::migrate(&pool).await?;
                let media = Media::open(&media, listen)?;
                let workers = media.config.workers.max(1);
                worker::spawn(worker::Worker { db: pool, media }, workers);
                tracing::info!(workers, "videoapp media workers running");
                shutdown.await;
                Ok(())
            })
        }
        Command::Generate(plan) => {
            let (database_url, clickhouse) = match problems.and(settings.storage()) {
                Ok(storage) => storage,
                Err(e) => return config_error(e),
            };
            if plan.shops == 0 || plan.videos < plan.shops || plan.days == 0 {
                eprintln!("error: need at least one shop, a video per shop and one day");
                return ExitCode::from(2);
            }
            telemetry::init_tracing(log_format);
            run(async move {
                let pool = db::connect(database_url.expose_secret()).await?;
                db::migrate(&pool).await?;
                let warehouse = Warehouse::new(&clickhouse);
                migrations::apply_exclusively(&pool, &warehouse, migrations::MIGRATIONS).await?;
                let generated = videoapp::generate::run(&pool, &warehouse, &plan).await?;
                println!("{}", serde_json::to_string_pretty(&generated)?);
                Ok(())
            })
        }
        Command::Schema => {
            if !problems.is_empty() {
                return config_error(problems);
            }
            let cluster = settings.clickhouse_cluster.as_ref().map(|name| Cluster {
                name: name.clone(),
                database: settings.clickhouse_database.clone(),
            });
            match migrations::schema(cluster.as_ref()) {
                Ok(files) => {
                    for (name, statements) in files {
                        println!("-- {name}");
                        for step in statements {
                            match step {
                                Step::Sql(sql) => println!("{sql};\n"),
                                // Made at run time from the node table's columns.
                                distributed => println!("{distributed}\n"),
                            }
                        }
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Migrate => {
            let (database_url, clickhouse) = match problems.and(settings.storage()) {
                Ok(storage) => storage,
                Err(e) => return config_error(e),
            };
            telemetry::init_tracing(log_format);
            run(async move {
                let pool = db::connect(database_url.expose_secret()).await?;
                db::migrate(&pool).await?;
                let warehouse = Warehouse::new(&clickhouse);
                let applied =
                    migrations::apply_exclusively(&pool, &warehouse, migrations::MIGRATIONS)
                        .await?;
                println!("migrations applied (ClickHouse: {} new)", applied.len());
                Ok(())
            })
        }
    }
}

fn config_error(e: config::ConfigErrors) -> ExitCode {
    eprintln!("error: {e}");
    ExitCode::from(2)
}

fn run(work: impl std::future::Future<Output = anyhow::Result<()>>) -> ExitCode {
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(work) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn sign(
    secret: &ProxySecret,
    shop: &str,
    base_url: &str,
    path: &str,
    params: &[String],
) -> ExitCode {
    let shop = match ShopDomain::parse(shop) {
        Ok(shop) => shop,
        Err(e) => {
            eprintln!("error: --shop: {e}");
            return ExitCode::from(2);
        }
    };
    if !path.starts_with('/') {
        eprintln!("error: the path must start with /, e.g. /apps/videoapp_sub/contextual-widgets");
        return ExitCode::from(2);
    }
    let mut pairs = vec![
        ("shop".to_string(), shop.to_string()),
        ("path_prefix".to_string(), "/apps/videoapp_sub".to_string()),
    ];
    for param in params {
        match param.split_once('=') {
            Some((key, value)) if !key.is_empty() => {
                pairs.push((key.to_string(), value.to_string()))
            }
            _ => {
                eprintln!("error: parameter '{param}' is not key=value");
                return ExitCode::from(2);
            }
        }
    }
    let query = signed_query(secret, &pairs, chrono::Utc::now());
    println!("{}{}?{}", base_url.trim_end_matches('/'), path, query);
    ExitCode::SUCCESS
}
