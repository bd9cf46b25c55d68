//! Building and running the service: shared state, the router, listeners, graceful shutdown.

use std::future::{Future, IntoFuture};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::routing::get;
use axum::{Json, Router};
use backon::Retryable;
use secrecy::ExposeSecret;
use tokio::net::TcpListener;
use tokio::sync::watch;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;

use crate::admin::{self, AdminToken};
use crate::analytics::auth::{KeyCache, KeyRateLimit};
use crate::analytics::list_cache::ListCaches;
use crate::catalog::cache::CatalogCache;
use crate::config::{Config, ConnectionLimits};
use crate::extract::{BodyBudget, KnownParamsLayer};
use crate::ingest::{Ingest, IngestConfig, Pipeline};
use crate::openapi::ApiDoc;
use crate::storefront::caching::RenderedPages;
use crate::storefront::signature::ProxySecret;
use crate::storefront::view_counts::ViewCounts;
use crate::warehouse::{compaction, migrations, Warehouse};
use crate::{
    analytics, cache_invalidation, dashboard, db, media, ops, platform, serve, storefront,
    telemetry,
};

/// What every handler can reach. One `Arc`: axum clones the state for every request, and the
/// parts inside (pools, caches, ClickHouse clients with their strings) are not free to clone.
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl std::ops::Deref for AppState {
    type Target = Shared;
    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub struct Shared {
    pub config: Config,
    pub db: sqlx::PgPool,
    /// Whether Postgres is known to be unreachable: work that needs it then fails at once.
    pub postgres: db::Reachability,
    pub warehouse: Warehouse,
    pub admin_token: AdminToken,
    /// The app proxy's secret, as the HMAC state that checks storefront signatures.
    pub proxy_secret: ProxySecret,
    pub catalog: CatalogCache,
    pub ingest: Ingest,
    pub api_keys: KeyCache,
    pub rate_limit: KeyRateLimit,
    pub view_counts: ViewCounts,
    pub rendered_pages: RenderedPages,
    /// Sorted analytics listings, exact for the shop's data versions they were computed at.
    pub analytics_lists: ListCaches,
    /// Signalled when a webhook delivery is recorded, to wake this instance's worker.
    pub webhook_work: Arc<tokio::sync::Notify>,
    /// The memory webhook bodies may hold before their HMAC is checked.
    pub webhook_bodies: BodyBudget,
    /// Session tokens, the platform's endpoints and the token key; `None` when the platform
    /// settings are off.
    pub platform: Option<Arc<platform::Platform>>,
    /// Uploaded and processed videos: their store, limits and workers' wake-up.
    pub media: media::Media,
    /// Shops whose pages this instance saw ask for widgets.
    pub storefront_seen: crate::storefront::seen::SeenShops,
}

/// A built service with its listeners bound, so callers (and tests, with port 0) can learn the
/// addresses before it runs.
pub struct Application {
    listener: TcpListener,
    metrics_listener: TcpListener,
    router: PublicService,
    metrics_router: Router,
    shutdown_grace: Duration,
    connections: ConnectionLimits,
    catalog: CatalogCache,
    webhook_worker: platform::work::Worker,
    pipeline: Pipeline,
}

impl Application {
    pub async fn build(config: Config) -> anyhow::Result<Application> {
        // Before anything takes a metric handle: handles taken earlier would count nowhere.
        telemetry::prometheus();
        let db = db::connect_with(
            config.database_url.expose_secret(),
            config.postgres_acquire_timeout,
        )
        .await
        .context("cannot connect to Postgres (DATABASE_URL)")?;
        db::migrate(&db)
            .await
            .context("Postgres migrations failed")?;
        let warehouse = Warehouse::new(&config.clickhouse);
        let schema_current = migrate_clickhouse_or_keep_trying(db.clone(), warehouse.clone()).await;

        if config.insecure_skip_signature {
            tracing::warn!(
                "VIDEOAPP_INSECURE_SKIP_SIGNATURE is on: storefront requests are not authenticated"
            );
        }
        let listener = TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {} (VIDEOAPP_LISTEN)", config.listen))?;
        let metrics_listener = TcpListener::bind(config.metrics_listen)
            .await
            .with_context(|| {
                format!(
                    "cannot listen on {} (VIDEOAPP_METRICS_LISTEN)",
                    config.metrics_listen
                )
            })?;
        compaction::spawn(
            warehouse.clone(),
            db.clone(),
            schema_current.clone(),
            config.compaction_quiet,
        );
        let pipeline = Pipeline::start(
            IngestConfig::from(&config),
            warehouse.clone(),
            schema_current,
            config.shutdown_grace,
        )
        .await
        .with_context(|| {
            format!(
                "cannot open the spool at {} (VIDEOAPP_SPOOL_DIR)",
                config.spool_dir.display()
            )
        })?;
        let postgres =
            db::Reachability::new(config.database_url.expose_secret()).context("DATABASE_URL")?;
        postgres.spawn_prober();
        let catalog = CatalogCache::new(
            db.clone(),
            postgres.clone(),
            config.catalog_cache_ttl,
            100_000,
        );
        let api_keys = KeyCache::new(db.clone());
        cache_invalidation::spawn_listener(
            config.database_url.clone(),
            catalog.clone(),
            api_keys.clone(),
            postgres.clone(),
        );
        let platform = config
            .platform
            .as_ref()
            .map(|platform| Arc::new(platform::Platform::new(platform, &config.proxy_secret)));
        let webhook_work = Arc::new(tokio::sync::Notify::new());
        let webhook_worker = platform::work::Worker {
            db: db.clone(),
            warehouse: warehouse.clone(),
            catalog: catalog.clone(),
            platform: platform.clone(),
            retention: config.webhooks.retention,
        };
        if config.webhook_work {
            platform::work::spawn_worker(webhook_worker.clone(), webhook_work.clone());
        }
        let media = media::Media::open(&config.media, listener.local_addr()?)?;
        if config.media.workers > 0 {
            let worker = media::worker::Worker {
                db: db.clone(),
                media: media.clone(),
            };
            media::worker::spawn(worker, config.media.workers);
        }
        let rate_limit = KeyRateLimit::new(config.rate_limit_per_minute, db.clone());
        let state = AppState(Arc::new(Shared {
            view_counts: ViewCounts::new(warehouse.clone(), config.view_count_refresh),
            rendered_pages: RenderedPages::new(256 * 1024 * 1024),
            analytics_lists: ListCaches::default(),
            webhook_work,
            webhook_bodies: BodyBudget::new(config.webhooks.body_budget_bytes),
            platform,
            media,
            storefront_seen: Default::default(),
            api_keys,
            rate_limit,
            ingest: pipeline.ingest.clone(),
            catalog,
            admin_token: AdminToken::new(config.admin_token.expose_secret()),
            proxy_secret: ProxySecret::new(config.proxy_secret.expose_secret()),
            config,
            db,
            postgres,
            warehouse,
        }));
        let shutdown_grace = state.config.shutdown_grace;
        let connections = state.config.connections;
        let catalog = state.catalog.clone();
        Ok(Application {
            pipeline,
            catalog,
            webhook_worker,
            listener,
            metrics_listener,
            router: router(state),
            metrics_router: metrics_router(),
            shutdown_grace,
            connections,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// The public service, for in-process benchmarks (`tower::ServiceExt::oneshot`).
    pub fn router(&self) -> PublicService {
        self.router.clone()
    }

    /// The catalog cache, for tests and diagnostics.
    pub fn catalog_cache(&self) -> CatalogCache {
        self.catalog.clone()
    }

    /// This instance's webhook work, to do the due work at once
    /// ([`platform::work::work_until_idle`]) rather than wait for the worker to.
    pub fn webhook_worker(&self) -> platform::work::Worker {
        self.webhook_worker.clone()
    }

    pub fn metrics_addr(&self) -> SocketAddr {
        self.metrics_listener
            .local_addr()
            .expect("a bound listener has an address")
    }

    /// Serves until `shutdown` completes, then stops accepting and gives in-flight requests the
    /// configured grace period.
    pub async fn run_until(
        self,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> anyhow::Result<()> {
        // Flips to true once shutdown begins; every waiter sees it, whenever it starts waiting.
        let (stopping_tx, stopping) = tokio::sync::watch::channel(false);
        let stopped = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|stopping| *stopping).await;
        };
        let metrics = tokio::spawn(
            axum::serve(self.metrics_listener, self.metrics_router)
                .with_graceful_shutdown(stopped(stopping.clone()))
                .into_future(),
        );
        let server = serve::serve(self.listener, self.router, self.connections, async move {
            shutdown.await;
            tracing::info!("shutting down: no new connections");
            let _ = stopping_tx.send(true);
        });
        let grace = self.shutdown_grace;
        let deadline = async {
            stopped(stopping.clone()).await;
            tokio::time::sleep(grace).await;
        };
        tokio::select! {
            () = server => {}
            () = deadline => tracing::warn!(?grace, "grace period over; dropping open requests"),
        }
        metrics.abort();
        // Requests are done: ship what the grace period allows, keep the rest spooled.
        self.pipeline.shutdown().await;
        Ok(())
    }
}

/// Applies the ClickHouse schema now if ClickHouse answers; otherwise keeps trying in the
/// background, so a ClickHouse outage at start does not stop the catalog and storefront.
/// Returns whether the schema is current, turning true once it is: the shipper inserts nothing
/// before, since a back-fill counts what `events` holds when it runs.
async fn migrate_clickhouse_or_keep_trying(
    db: sqlx::PgPool,
    warehouse: Warehouse,
) -> watch::Receiver<bool> {
    let (current, schema_current) = watch::channel(false);
    let apply = move || {
        let (db, warehouse) = (db.clone(), warehouse.clone());
        async move { migrations::apply_exclusively(&db, &warehouse, migrations::MIGRATIONS).await }
    };
    match apply().await {
        Ok(_) => {
            current.send_replace(true);
            return schema_current;
        }
        Err(e) => {
            tracing::warn!(error = %e, "ClickHouse migrations failed; retrying in the background")
        }
    }
    let backoff = backon::ExponentialBuilder::default()
        .with_min_delay(Duration::from_secs(1))
        .with_max_delay(Duration::from_secs(30))
        .without_max_times();
    tokio::spawn(async move {
        let applied = apply
            .retry(backoff)
            .notify(|e, _| tracing::warn!(error = %e, "ClickHouse migrations failed; retrying"))
            .await;
        if applied.is_ok() {
            tracing::info!("ClickHouse migrations applied");
            current.send_replace(true);
        }
    });
    schema_current
}

/// The public port's service: the router inside the request-id layer.
pub type PublicService = telemetry::RequestId<Router>;

/// The routes, each with [`telemetry::HttpMetricsLayer`] outside [`KnownParamsLayer`] (both need
/// the matched route), inside [`telemetry::RequestIdLayer`], which wraps the router as a whole
/// (unmatched requests get an id too). Around the router rather than through `Router::layer`,
/// which wraps every route in one more boxed service that axum clones, with a boxed future, on
/// every request.
fn router(state: AppState) -> PublicService {
    let (api, mut openapi) = OpenApiRouter::with_openapi(ApiDoc::openapi())
        .merge(ops::router())
        .merge(storefront::router())
        .merge(analytics::router(state.clone()))
        .merge(admin::router(state.clone()))
        .merge(platform::router())
        .merge(dashboard::router(state.clone()))
        .split_for_parts();
    crate::openapi::document_the_edge(&mut openapi);
    let known_params = KnownParamsLayer::from_document(&openapi);
    let openapi = Arc::new(openapi);
    let media = state.media.store.clone();
    let routes: Router = api
        .route(
            "/openapi.json",
            get(move || async move { Json(openapi.as_ref().clone()) }),
        )
        .route_layer(known_params)
        .nest_service("/media", media::serve::service(media))
        // The dashboard's page takes whatever the platform's admin adds to its URL.
        .merge(dashboard::pages())
        .route_layer(telemetry::HttpMetricsLayer)
        .fallback(telemetry::not_found)
        .with_state(state);
    tower::Layer::layer(&telemetry::RequestIdLayer, routes)
}

fn metrics_router() -> Router {
    let handle = telemetry::prometheus();
    Router::new()
        .route("/metrics", get(move || async move { handle.render() }))
        .layer(axum::middleware::map_response(serve::no_sniffing))
}

/// Resolves on SIGTERM or Ctrl-C. The handlers are installed by this call, not when the future is
/// first polled: a signal that arrives after the service announced its address but before the
/// server's loop first looked at the future would otherwise end the process with the default
/// action, skipping the graceful stop. Call it before binding.
pub fn shutdown_signal() -> std::io::Result<impl Future<Output = ()> + Send + 'static> {
    use tokio::signal::unix::{signal, SignalKind};
    let mut interrupt = signal(SignalKind::interrupt())?;
    let mut terminate = signal(SignalKind::terminate())?;
    Ok(async move {
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
    })
}
