use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{AdminBodyErrors, AdminErrors, Object, ObjectPath, ShopPath};
use crate::app::AppState;
use crate::catalog::widgets::{self, NewWidget, Widget, WidgetPatch};
use crate::error::ApiError;
use crate::extract::AppJson;

#[derive(Serialize, ToSchema)]
pub struct WidgetList {
    pub widgets: Vec<Widget>,
}

impl Object for Widget {
    const NOUN: &'static str = "widget";
}

/// Create a widget
#[utoipa::path(
    post, path = "/shops/{shop}/widgets", tag = "admin",
    params(ShopPath),
    request_body = NewWidget,
    responses((status = 201, body = Widget), AdminBodyErrors)
)]
pub async fn create_widget(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(new): AppJson<NewWidget>,
) -> Result<(StatusCode, Json<Widget>), ApiError> {
    let widget = widgets::create(&state.db, &shop, new).await?;
    Ok((StatusCode::CREATED, Json(widget)))
}

/// List widgets, oldest first
#[utoipa::path(
    get, path = "/shops/{shop}/widgets", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = WidgetList), AdminErrors)
)]
pub async fn list_widgets(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<WidgetList>, ApiError> {
    let widgets = widgets::list(&state.db, &shop).await?;
    Ok(Json(WidgetList { widgets }))
}

/// Read a widget
#[utoipa::path(
    get, path = "/shops/{shop}/widgets/{id}", tag = "admin",
    params(ObjectPath<Widget>),
    responses((status = 200, body = Widget), AdminErrors)
)]
pub async fn get_widget(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Widget>,
) -> Result<Json<Widget>, ApiError> {
    let widget = widgets::get(&state.db, &shop, id).await?;
    Ok(Json(widget))
}

/// Change a widget
///
/// Only the fields present change; `videoIds` and `rules` replace the whole value.
#[utoipa::path(
    patch, path = "/shops/{shop}/widgets/{id}", tag = "admin",
    params(ObjectPath<Widget>),
    request_body = WidgetPatch,
    responses((status = 200, body = Widget), AdminBodyErrors)
)]
pub async fn patch_widget(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Widget>,
    AppJson(patch): AppJson<WidgetPatch>,
) -> Result<Json<Widget>, ApiError> {
    let widget = widgets::update(&state.db, &shop, id, patch).await?;
    Ok(Json(widget))
}

/// Delete a widget
///
/// Its videos stay in the catalog.
#[utoipa::path(
    delete, path = "/shops/{shop}/widgets/{id}", tag = "admin",
    params(ObjectPath<Widget>),
    responses((status = 204, description = "Deleted"), AdminErrors)
)]
pub async fn delete_widget(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Widget>,
) -> Result<StatusCode, ApiError> {
    widgets::delete(&state.db, &shop, id).await?;
    Ok(StatusCode::NO_CONTENT)
}
