use axum::extract::State;
use axum::http::StatusCode;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{AdminBodyErrors, AdminErrors, Object, ObjectPath, ShopPath};
use crate::app::AppState;
use crate::catalog::videos::{self, NewVideo, Video, VideoPatch};
use crate::error::ApiError;
use crate::extract::AppJson;

#[derive(Serialize, ToSchema)]
pub struct VideoList {
    pub videos: Vec<Video>,
}

impl Object for Video {
    const NOUN: &'static str = "video";
}

/// Create a video
#[utoipa::path(
    post, path = "/shops/{shop}/videos", tag = "admin",
    params(ShopPath),
    request_body = NewVideo,
    responses((status = 201, body = Video), AdminBodyErrors)
)]
pub async fn create_video(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(new): AppJson<NewVideo>,
) -> Result<(StatusCode, Json<Video>), ApiError> {
    let video = videos::create(&state.db, &shop, new).await?;
    Ok((StatusCode::CREATED, Json(video)))
}

/// List videos, oldest first
#[utoipa::path(
    get, path = "/shops/{shop}/videos", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = VideoList), AdminErrors)
)]
pub async fn list_videos(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<VideoList>, ApiError> {
    let videos = videos::list(&state.db, &shop).await?;
    Ok(Json(VideoList { videos }))
}

/// Read a video
#[utoipa::path(
    get, path = "/shops/{shop}/videos/{id}", tag = "admin",
    params(ObjectPath<Video>),
    responses((status = 200, body = Video), AdminErrors)
)]
pub async fn get_video(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Video>,
) -> Result<Json<Video>, ApiError> {
    let video = videos::get(&state.db, &shop, id).await?;
    Ok(Json(video))
}

/// Change a video
///
/// Only the fields present change; `productIds` replaces the whole list.
#[utoipa::path(
    patch, path = "/shops/{shop}/videos/{id}", tag = "admin",
    params(ObjectPath<Video>),
    request_body = VideoPatch,
    responses((status = 200, body = Video), AdminBodyErrors)
)]
pub async fn patch_video(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Video>,
    AppJson(patch): AppJson<VideoPatch>,
) -> Result<Json<Video>, ApiError> {
    let video = videos::update(&state.db, &shop, id, patch).await?;
    Ok(Json(video))
}

/// Delete a video
///
/// The video is removed from every widget that showed it.
#[utoipa::path(
    delete, path = "/shops/{shop}/videos/{id}", tag = "admin",
    params(ObjectPath<Video>),
    responses((status = 204, description = "Deleted"), AdminErrors)
)]
pub async fn delete_video(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Video>,
) -> Result<StatusCode, ApiError> {
    videos::delete(&state.db, &shop, id).await?;
    // Its objects were queued for deletion with it; most go at once.
    let media = &state.media;
    media
        .delete_now(&state.db, &crate::media::names::upload_prefix(id))
        .await;
    media
        .delete_now(&state.db, &crate::media::names::video_prefix(&shop, id))
        .await;
    Ok(StatusCode::NO_CONTENT)
}
