use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{id_param, shop_param, AdminBodyErrors, AdminErrors, ShopPath};
use crate::app::AppState;
use crate::catalog::videos::{self, NewVideo, Video, VideoPatch};
use crate::error::ApiError;
use crate::extract::{AppJson, AppPath};

#[derive(Serialize, ToSchema)]
pub struct VideoList {
    pub videos: Vec<Video>,
}

/// Create a video
#[utoipa::path(
    post, path = "/admin/v1/shops/{shop}/videos", tag = "admin",
    params(ShopPath),
    request_body = NewVideo,
    responses((status = 201, body = Video), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn create_video(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
    AppJson(new): AppJson<NewVideo>,
) -> Result<(StatusCode, Json<Video>), ApiError> {
    let video = videos::create(&state.db, &shop_param(&shop)?, new).await?;
    Ok((StatusCode::CREATED, Json(video)))
}

/// List videos, oldest first
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/videos", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = VideoList), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn list_videos(
    State(state): State<AppState>,
    AppPath(shop): AppPath<String>,
) -> Result<Json<VideoList>, ApiError> {
    let videos = videos::list(&state.db, &shop_param(&shop)?).await?;
    Ok(Json(VideoList { videos }))
}

/// Read a video
#[utoipa::path(
    get, path = "/admin/v1/shops/{shop}/videos/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Video id")),
    responses((status = 200, body = Video), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn get_video(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
) -> Result<Json<Video>, ApiError> {
    let video = videos::get(&state.db, &shop_param(&shop)?, id_param(&id, "video")?).await?;
    Ok(Json(video))
}

/// Change a video
///
/// Only the fields present change; `productIds` replaces the whole list.
#[utoipa::path(
    patch, path = "/admin/v1/shops/{shop}/videos/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Video id")),
    request_body = VideoPatch,
    responses((status = 200, body = Video), AdminBodyErrors),
    security(("admin_token" = []))
)]
pub async fn patch_video(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
    AppJson(patch): AppJson<VideoPatch>,
) -> Result<Json<Video>, ApiError> {
    let shop = shop_param(&shop)?;
    let video = videos::update(&state.db, &shop, id_param(&id, "video")?, patch).await?;
    Ok(Json(video))
}

/// Delete a video
///
/// The video is removed from every widget that showed it.
#[utoipa::path(
    delete, path = "/admin/v1/shops/{shop}/videos/{id}", tag = "admin",
    params(ShopPath, ("id" = String, Path, description = "Video id")),
    responses((status = 204, description = "Deleted"), AdminErrors),
    security(("admin_token" = []))
)]
pub async fn delete_video(
    State(state): State<AppState>,
    AppPath((shop, id)): AppPath<(String, String)>,
) -> Result<StatusCode, ApiError> {
    videos::delete(&state.db, &shop_param(&shop)?, id_param(&id, "video")?).await?;
    Ok(StatusCode::NO_CONTENT)
}
