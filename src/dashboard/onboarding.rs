//! The first-run checklist on the dashboard's home: each step ticks itself from what the
//! service sees, never from what the merchant clicked.

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use crate::admin::ShopPath;
use crate::app::AppState;
use crate::catalog::{shops, videos, widgets};
use crate::error::{ApiError, ErrorBody};
use crate::warehouse::changes;

/// The theme app extension's app embed block (extensions/videoapp-theme/blocks/).
const EMBED_BLOCK: &str = "videoapp-embed";

#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Onboarding {
    /// In the order a merchant takes them.
    pub steps: Vec<OnboardingStep>,
    /// The theme editor with the app embed selected to turn on, relative to the store's admin
    /// (`https://{shop}/admin`); absent when the platform settings are off.
    pub theme_editor_path: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OnboardingStep {
    pub id: StepId,
    pub done: bool,
}

#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepId {
    /// The store's pages asked for widgets: the app embed is on.
    Embed,
    /// The shop has a published video.
    Video,
    /// An active widget shows a published video: the store shows something.
    Widget,
    /// Shoppers' events have landed: the numbers are no longer zeros.
    Numbers,
}

/// The first-run checklist
#[utoipa::path(
    get, path = "/shops/{shop}/onboarding", tag = "dashboard",
    params(ShopPath),
    responses(
        (status = 200, body = Onboarding),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 503, body = ErrorBody),
    )
)]
pub async fn onboarding(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<Onboarding>, ApiError> {
    // An unknown shop is a 404, as everywhere under a shop.
    shops::get(&state.db, &shop).await?;
    let (seen, video, widget, numbers) = tokio::try_join!(
        shops::storefront_seen_at(&state.db, &shop),
        videos::any_published(&state.db, &shop),
        widgets::any_showing(&state.db, &shop),
        changes::has_numbers(&state.db, &shop),
    )?;
    let step = |id, done| OnboardingStep { id, done };
    let theme_editor_path = state.config.platform.as_ref().map(|p| {
        format!(
            "/themes/current/editor?context=apps&template=index&activateAppId={}/{EMBED_BLOCK}",
            p.client_id
        )
    });
    Ok(Json(Onboarding {
        steps: vec![
            step(StepId::Embed, seen.is_some()),
            step(StepId::Video, video),
            step(StepId::Widget, widget),
            step(StepId::Numbers, numbers),
        ],
        theme_editor_path,
    }))
}
