use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{id_param, shop_param, AdminBodyErrors, AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::widgets::{self, NewWidget, Widget, WidgetPatch};
use crate::error::ApiError;
use crate::extract::{AppJson, AppPath};

#[derive(Serialize, ToSchema)]
pub struct WidgetList {
    pub widgets: Vec<Widget>,
}

/// Create a widget
#[utoipa::path(
    post, path = "/admin/v1/shops/{shop}/widgets", tag = "admin",
    params(ShopPath),
    request_body = NewWidget,
    responses((status = 201, body = Widget), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn create_widget(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
    AppJson(new): AppJson<NewWidget>,
) -> Result<(StatusCode, Json<Widget>), ApiError> {
    let widget = widgets::create(&state.db, &shop_param(&shop)?, new).await?;
    Ok((StatusCode::CREATED, Json(widget)))
}

/// List widgets, oldest first
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/widgets", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = WidgetList), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn list_widgets(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
) -> Result<Json<WidgetList>, ApiError> {
    let widgets = widgets::list(&state.db, &shop_param(&shop)?).await?;
    Ok(Json(WidgetList { widgets }))
}

/// Read a widget
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/widgets/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Widget id")),
    responses((status = 200, body = Widget), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn get_widget(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
) -> Result<Json<Widget>, ApiError> {
    let widget = widgets::get(&state.db, &shop_param(&shop)?, id_param(&id, "widget")?).await?;
    Ok(Json(widget))
}

/// Change a widget
///
/// Only the fields present change; `videoIds` and `rules` replace the whole value.
#[utoipa::path(
    patch, path = "/admin/v1/shops/{shop}/widgets/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Widget id")),
    request_body = WidgetPatch,
    responses((status = 200, body = Widget), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn patch_widget(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
    AppJson(patch): AppJson<WidgetPatch>,
) -> Result<Json<Widget>, ApiError> {
    let shop = shop_param(&shop)?;
    let widget = widgets::update(&state.db, &shop, id_param(&id, "widget")?, patch).await?;
    Ok(Json(widget))
}

/// Delete a widget
///
/// Its videos stay in the catalog.
#[utoipa::path(
    delete, path = "/admin/v1/shops/{shop}/widgets/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Widget id")),
    responses((status = 204, description = "Deleted"), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn delete_widget(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    widgets::delete(&state.db, &shop_param(&shop)?, id_param(&id, "widget")?).await?;
    Ok(StatusCode::NO_CONTENT)
}
