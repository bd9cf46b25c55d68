//! Install through the platform: the embedded app's session token is exchanged for the shop's
//! offline access token, which is kept sealed; the shop is created (or reinstalled); and its
//! products are imported from the Admin API as recorded work, page by page, after the answer.

use axum::extract::State;
use axum::Json;
use chrono::Utc;
use serde::Serialize;
use utoipa::ToSchema;

use super::admin_api::AdminApiError;
use super::credentials;
use super::session_token::SessionToken;
use super::topics::{self, Work};
use super::work::{self, Taken, Worker};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
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
    /// `true` when this call installed the app (exchanged the token and started the product
    /// import); `false` when the shop was installed already and nothing was done.
    pub installed_now: bool,
}

/// Install the app for the session token's shop
///
/// The embedded app calls this when it loads. On the first call for a shop (or after an
/// uninstall) the session token is exchanged for the shop's offline access token, which is kept
/// sealed, the shop is created with default settings, and its products are imported from the
/// platform after the answer. Later calls change nothing.
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
    work::record_import(&state.db, shop).await?;
    state.webhook_work.notify_one();
    metrics::counter!("platform_installs_total").increment(1);
    tracing::info!(%shop, scope = %granted.scope, "installed through the platform");
    Ok(Json(Installed {
        success: true,
        shop: shop.clone(),
        installed_now: true,
    }))
}

/// The work of a product import: every page after the saved cursor, each applied to the catalog
/// as the platform's state of its products at their `updatedAt` (so a webhook's newer state is
/// never overwritten), the cursor saved after each.
pub async fn import_products(
    worker: &Worker,
    shop: &ShopDomain,
    delivery: &Taken,
) -> Result<(), String> {
    let Work::ImportProducts { after } = &delivery.work.0 else {
        return Ok(());
    };
    let platform = worker
        .platform
        .as_ref()
        .ok_or("the platform settings are off on this instance")?;
    let token = credentials::load(&worker.db, &platform.token_key, shop)
        .await
        .map_err(|e| e.to_string())?;
    let mut after = after.clone();
    loop {
        let page = platform
            .api
            .products_page(shop, &token, after.as_deref())
            .await
            .map_err(|e| e.to_string())?;
        let mut changes: Vec<PlatformChange> = Vec::with_capacity(page.products.len());
        for node in page.products {
            let id = node.id.clone();
            match topics::imported_change(shop, node, delivery.received_at) {
                Ok(change) => changes.push(change),
                // One product the catalog cannot hold does not stop the others.
                Err(invalid) => {
                    metrics::counter!("platform_import_skipped_total").increment(1);
                    tracing::warn!(%shop, product = %id, reason = %invalid.0, "product not imported");
                }
            }
        }
        match products::apply_platform_changes(&worker.db, shop, &changes).await {
            Ok(()) => {}
            // Uninstalled meanwhile: nothing to import into.
            Err(CatalogError::ShopNotFound) => return Ok(()),
            Err(e) => return Err(e.to_string()),
        }
        worker.catalog.invalidate(shop).await;
        metrics::counter!("platform_imported_products_total").increment(changes.len() as u64);
        after = page.next;
        let progress = Work::ImportProducts {
            after: after.clone(),
        };
        work::save_progress(&worker.db, &delivery.webhook_id, &progress)
            .await
            .map_err(|e| e.to_string())?;
        if after.is_none() {
            tracing::info!(%shop, at = %Utc::now(), "product import done");
            return Ok(());
        }
    }
}
