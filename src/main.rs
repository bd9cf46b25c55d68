use std::process::ExitCode;

use clap::{Parser, Subcommand};
use videoapp::app::{shutdown_signal, Application};
use videoapp::catalog::domain::ShopDomain;
use videoapp::config::Settings;
use videoapp::storefront::signature::signed_query;
use videoapp::warehouse::{migrations, Warehouse};
use videoapp::{db, telemetry};

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
    /// Apply the Postgres and ClickHouse migrations, then exit.
    Migrate,
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
    let cli = Cli::parse();
    // Configuration problems get one line naming the setting, then exit code 2.
    let log_format = match cli.settings.log_format() {
        Ok(format) => format,
        Err(e) => return config_error(e),
    };
    match cli.command {
        Command::Sign {
            shop,
            base_url,
            path,
            params,
        } => sign(&cli.settings, &shop, &base_url, &path, &params),
        Command::Serve => {
            let config = match cli.settings.server_config() {
                Ok(config) => config,
                Err(e) => return config_error(e),
            };
            telemetry::init_tracing(log_format);
            run(async move {
                let app = Application::build(config).await?;
                tracing::info!(listen = %app.local_addr(), metrics = %app.metrics_addr(), "videoapp serving");
                app.run_until(shutdown_signal()).await
            })
        }
        Command::Migrate => {
            let (database_url, clickhouse) =
                match (cli.settings.database_url(), cli.settings.clickhouse()) {
                    (Ok(d), Ok(c)) => (d, c),
                    (Err(e), _) | (_, Err(e)) => return config_error(e),
                };
            telemetry::init_tracing(log_format);
            run(async move {
                let pool = db::connect(&database_url).await?;
                db::migrate(&pool).await?;
                let applied =
                    migrations::apply(&Warehouse::new(&clickhouse), migrations::MIGRATIONS).await?;
                println!("migrations applied (ClickHouse: {} new)", applied.len());
                Ok(())
            })
        }
    }
}

fn config_error(e: videoapp::config::ConfigError) -> ExitCode {
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
    settings: &Settings,
    shop: &str,
    base_url: &str,
    path: &str,
    params: &[String],
) -> ExitCode {
    let secret = match settings.proxy_secret() {
        Ok(secret) => secret,
        Err(e) => return config_error(e),
    };
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
    let query = signed_query(&secret, &pairs, chrono::Utc::now());
    println!("{}{}?{}", base_url.trim_end_matches('/'), path, query);
    ExitCode::SUCCESS
}
