//! Install through the platform: the embedded app's session token is exchanged for the shop's
//! offline access token, which is kept sealed; the shop is created (or reinstalled); and, as
//! recorded work after the answer, the app's checkout pixel is activated and the shop's
//! collections and products are imported from the Admin API, page by page.

use std::future::Future;

use axum::extract::State;
use axum::Json;
use chrono::Utc;
use secrecy::SecretString;
use serde::Serialize;
use utoipa::ToSchema;

use super::admin_api::{AdminApi, AdminApiError, CollectionNode, Page, ProductNode};
use super::credentials;
use super::session_token::SessionToken;
use super::topics::{self, Work};
use super::work::{self, Taken, Worker};
use crate::app::AppState;
use crate::catalog::collections::{self, Collection};
use crate::catalog::domain::{CollectionGid, ShopDomain, TextLine};
use crate::catalog::products::{self, PlatformChange};
use crate::catalog::shops::{self, ShopSettings};
use crate::catalog::CatalogError;
use crate::error::{ApiError, ErrorBody};

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// Always `true`.
    pub success: bool,
    pub shop: ShopDomain,
    /// `true` when this call installed the app (exchanged the token and started the install's
    /// work); `false` when the shop was installed already and nothing was done.
    pub installed_now: bool,
    /// `true` while the install's work (the checkout pixel's activation, the collections' and
    /// the products' import) is not all done: the app asks again until it is `false`.
    pub importing: bool,
}

/// The settings the app's checkout pixel is activated with, as its extension declares them
/// (`extensions/videoapp-pixel/shopify.extension.toml`): where the store forwards requests to
/// the service.
pub fn pixel_settings() -> serde_json::Value {
    serde_json::json!({ "proxyPath": PROXY_PATH })
}

/// The app proxy's path on every shop's domain (`shopify.app.toml`: prefix `apps`, subpath
/// `videoapp_sub`).
const PROXY_PATH: &str = "/apps/videoapp_sub";

/// Install the app for the session token's shop
///
/// The embedded app calls this when it loads. On the first call for a shop (or after an
/// uninstall) the session token is exchanged for the shop's offline access token, which is kept
/// sealed, and the shop is created with default settings; after the answer, the app's checkout
/// pixel is activated on the shop and its collections and products are imported from the
/// platform. Later calls change nothing; `importing` says whether that work is still under way.
#[utoipa::path(
    post, path = "/app/api/install", tag = "platform",
    security(("session_token" = [])),
    responses(
        (status = 200, description = "Installed (now, or before)", body = Installed),
        (status = 401, description = "INVALID_SESSION_TOKEN: missing, badly signed, expired, for another app, or refused by the platform", body = ErrorBody),
        (status = 404, description = "NOT_FOUND: the platform settings are off on this instance", body = ErrorBody),
        (status = 502, description = "PLATFORM_ERROR: the platform did not answer the token exchange", body = ErrorBody),
    )
)]
pub async fn install(
    State(state): State<AppState>,
    session: SessionToken,
) -> Result<Json<Installed>, ApiError> {
    let platform = state.platform.as_ref().ok_or(ApiError::PlatformOff)?;
    let shop = &session.shop;
    let installed = match shops::get(&state.db, shop).await {
        Ok(_) => true,
        Err(CatalogError::ShopNotFound) => false,
        Err(e) => return Err(e.into()),
    };
    if installed && credentials::exists(&state.db, shop).await? {
        return Ok(Json(Installed {
            success: true,
            shop: shop.clone(),
            installed_now: false,
            importing: work::install_pending(&state.db, shop).await?,
        }));
    }
    // Nothing is written before the platform grants the token.
    let granted = platform
        .api
        .exchange(shop, &session.raw)
        .await
        .map_err(|e| match e {
            AdminApiError::Refused(reason) => {
                ApiError::InvalidSessionToken(format!("the platform refused it: {reason}"))
            }
            other => ApiError::Platform(other.into()),
        })?;
    if !installed {
        shops::upsert(&state.db, shop, ShopSettings::default()).await?;
        state.catalog.invalidate(shop).await;
    }
    credentials::store(
        &state.db,
        &platform.token_key,
        shop,
        &granted.token,
        &granted.scope,
    )
    .await?;
    work::record_install(&state.db, shop).await?;
    state.webhook_work.notify_one();
    metrics::counter!("platform_installs_total").increment(1);
    tracing::info!(%shop, scope = %granted.scope, "installed through the platform");
    Ok(Json(Installed {
        success: true,
        shop: shop.clone(),
        installed_now: true,
        importing: true,
    }))
}

/// The work of the pixel's activation: the app's web pixel is read, then created with the
/// pixel's settings, or updated to them when it exists (a reinstall, or an earlier attempt).
pub async fn activate_pixel(worker: &Worker, shop: &ShopDomain) -> Result<(), String> {
    let (platform, token) = platform_and_token(worker, shop).await?;
    let existing = platform
        .api
        .web_pixel(shop, &token)
        .await
        .map_err(|e| e.to_string())?;
    let id = platform
        .api
        .activate_web_pixel(shop, &token, existing.as_deref(), &pixel_settings())
        .await
        .map_err(|e| e.to_string())?;
    let how = if existing.is_some() {
        "updated"
    } else {
        "created"
    };
    metrics::counter!("platform_pixels_activated_total").increment(1);
    tracing::info!(%shop, pixel = %id, how, "checkout pixel activated");
    Ok(())
}

/// Publishes the shop's holdout, as it is now, to its theme. A shop gone since (uninstalled) has
/// no theme of the app's to publish to: nothing to do.
pub async fn publish_holdout(worker: &Worker, shop: &ShopDomain) -> Result<(), String> {
    let percent = match shops::get(&worker.db, shop).await {
        Ok(found) => found.holdout_percent,
        Err(CatalogError::ShopNotFound) => return Ok(()),
        Err(e) => return Err(e.to_string()),
    };
    let (platform, token) = platform_and_token(worker, shop).await?;
    platform
        .api
        .publish_holdout(shop, &token, percent)
        .await
        .map_err(|e| e.to_string())?;
    tracing::info!(%shop, percent = percent.percent(), "holdout published to the theme");
    Ok(())
}

/// The platform's endpoints and the shop's access token, for the work of an install.
async fn platform_and_token<'w>(
    worker: &'w Worker,
    shop: &ShopDomain,
) -> Result<(&'w super::Platform, secrecy::SecretString), String> {
    let platform = worker
        .platform
        .as_deref()
        .ok_or("the platform settings are off on this instance")?;
    let token = credentials::load(&worker.db, &platform.token_key, shop)
        .await
        .map_err(|e| e.to_string())?;
    Ok((platform, token))
}

/// The work of an import, of the shop's collections or its products: every page after the saved
/// cursor, kept as [`Imported`] says, the cursor saved after each; at the end, the collections
/// this import did not see are forgotten.
pub async fn import(worker: &Worker, shop: &ShopDomain, delivery: &Taken) -> Result<(), String> {
    match &delivery.work.0 {
        Work::ImportCollections { after } => {
            let all_kept = import_pages::<CollectionNode>(worker, shop, delivery, after).await?;
            if all_kept {
                // Every collection the platform has was stored since the work was recorded.
                collections::forget_not_imported_since(&worker.db, shop, delivery.received_at)
                    .await
                    .map_err(|e| e.to_string())?;
                tracing::info!(%shop, "collection import done");
            }
        }
        Work::ImportProducts { after } => {
            let all_kept = import_pages::<ProductNode>(worker, shop, delivery, after).await?;
            if all_kept {
                tracing::info!(%shop, at = %Utc::now(), "product import done");
            }
        }
        _ => {}
    }
    Ok(())
}

/// The pages of an import after its saved cursor `after`: each read and kept, then the next
/// cursor saved as the work's progress, until the last page. `Ok(true)` once the last page is
/// kept; `Ok(false)` when the shop was uninstalled meanwhile (nothing to import into), with the
/// cursor left where it was.
async fn import_pages<N: Imported>(
    worker: &Worker,
    shop: &ShopDomain,
    delivery: &Taken,
    after: &Option<String>,
) -> Result<bool, String> {
    let (platform, token) = platform_and_token(worker, shop).await?;
    let mut after = after.clone();
    loop {
        let page = N::page(&platform.api, shop, &token, after.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        match N::keep(worker, shop, delivery, page.nodes).await {
            Ok(()) => {}
            Err(CatalogError::ShopNotFound) => return Ok(false),
            Err(e) => return Err(e.to_string()),
        }
        after = page.next;
        work::save_progress(
            &worker.db,
            &delivery.webhook_id,
            &N::progress(after.clone()),
        )
        .await
        .map_err(|e| e.to_string())?;
        if after.is_none() {
            return Ok(true);
        }
    }
}

/// What an import reads from the platform, page by page, and how the catalog keeps each page.
trait Imported: Sized {
    /// The import's work, saved with the cursor after the last page kept.
    fn progress(after: Option<String>) -> Work;

    /// The page after `after`.
    fn page<'a>(
        api: &'a AdminApi,
        shop: &'a ShopDomain,
        token: &'a SecretString,
        after: Option<&'a str>,
    ) -> impl Future<Output = Result<Page<Self>, AdminApiError>> + Send + 'a;

    /// Keeps one page; an item the catalog cannot hold is left out, and does not stop the others.
    fn keep<'a>(
        worker: &'a Worker,
        shop: &'a ShopDomain,
        delivery: &'a Taken,
        nodes: Vec<Self>,
    ) -> impl Future<Output = Result<(), CatalogError>> + Send + 'a;
}

/// Collections are stored as the platform gives them.
impl Imported for CollectionNode {
    fn progress(after: Option<String>) -> Work {
        Work::ImportCollections { after }
    }

    fn page<'a>(
        api: &'a AdminApi,
        shop: &'a ShopDomain,
        token: &'a SecretString,
        after: Option<&'a str>,
    ) -> impl Future<Output = Result<Page<Self>, AdminApiError>> + Send + 'a {
        api.collections_page(shop, token, after)
    }

    async fn keep(
        worker: &Worker,
        shop: &ShopDomain,
        _: &Taken,
        nodes: Vec<Self>,
    ) -> Result<(), CatalogError> {
        let mut imported = Vec::with_capacity(nodes.len());
        for node in nodes {
            match imported_collection(&node) {
                Ok(collection) => imported.push(collection),
                Err(reason) => {
                    tracing::warn!(%shop, collection = %node.id, %reason, "collection not imported");
                }
            }
        }
        collections::store_imported(&worker.db, shop, &imported).await
    }
}

/// A collection as the catalog keeps it, or why it cannot be.
fn imported_collection(node: &CollectionNode) -> Result<Collection, String> {
    let line = |field: &str, value: Option<&str>| {
        topics::platform_line(field, value).map_err(|invalid| invalid.0)
    };
    Ok(Collection {
        id: CollectionGid::parse(&node.id).map_err(|e| format!("id: {e}"))?,
        title: line("title", node.title.as_deref())?,
        handle: line("handle", node.handle.as_deref())?,
        image: match node.image_url() {
            Some(url) => line("image", Some(url))?,
            None => TextLine::default(),
        },
    })
}

/// Products are applied to the catalog as the platform's state of them at their `updatedAt`, so
/// a webhook's newer state is never overwritten.
impl Imported for ProductNode {
    fn progress(after: Option<String>) -> Work {
        Work::ImportProducts { after }
    }

    fn page<'a>(
        api: &'a AdminApi,
        shop: &'a ShopDomain,
        token: &'a SecretString,
        after: Option<&'a str>,
    ) -> impl Future<Output = Result<Page<Self>, AdminApiError>> + Send + 'a {
        api.products_page(shop, token, after)
    }

    async fn keep(
        worker: &Worker,
        shop: &ShopDomain,
        delivery: &Taken,
        nodes: Vec<Self>,
    ) -> Result<(), CatalogError> {
        let mut changes: Vec<PlatformChange> = Vec::with_capacity(nodes.len());
        for node in nodes {
            let id = node.id.clone();
            match topics::imported_change(shop, node, delivery.received_at) {
                Ok(change) => changes.push(change),
                Err(invalid) => {
                    metrics::counter!("platform_import_skipped_total").increment(1);
                    tracing::warn!(%shop, product = %id, reason = %invalid.0, "product not imported");
                }
            }
        }
        products::apply_platform_changes(&worker.db, shop, &changes).await?;
        worker.catalog.invalidate(shop).await;
        metrics::counter!("platform_imported_products_total").increment(changes.len() as u64);
        Ok(())
    }
}
