//! A video's captions: one WebVTT file per language, put and deleted by language.

use axum::body::Body;
use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap};
use axum::Json;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};
use utoipa::IntoParams;
use uuid::Uuid;

use super::{AdminBodyErrors, AdminErrors, ObjectPath};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::catalog::videos::Video;
use crate::error::{ApiError, ErrorBody};
use crate::extract::{read_body, AppPath};
use crate::media::captions::{self, MAX_CAPTION_BYTES};

/// The `{shop}`, `{id}` and `{language}` of a video's captions.
pub struct CaptionPath {
    shop: ShopDomain,
    id: Uuid,
    language: String,
}

impl<S: Send + Sync> FromRequestParts<S> for CaptionPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let AppPath((shop, id, language)) =
            AppPath::<(String, String, String)>::from_request_parts(parts, state).await?;
        Ok(CaptionPath {
            shop: ShopDomain::parse(&shop).map_err(|e| ApiError::validation("shop", e.0))?,
            id: Uuid::parse_str(&id).map_err(|_| ApiError::NotFound("video"))?,
            language: captions::parse_language(&language)?,
        })
    }
}

impl IntoParams for CaptionPath {
    fn into_params(parameter_in_provider: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let mut params = ObjectPath::<Video>::into_params(parameter_in_provider);
        params.push(
            ParameterBuilder::new()
                .name("language")
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .description(Some("A BCP 47 language tag: `en`, `fr`, `pt-BR`"))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .pattern(Some(captions::LANGUAGE_PATTERN))
                        .max_length(Some(35)),
                ))
                .build(),
        );
        params
    }
}

/// Attach captions in a language
///
/// The body is a WebVTT file (`Content-Type: text/vtt`, at most 512 KiB); it replaces the
/// video's captions in that language. The player shows them, on by default while muted.
#[utoipa::path(
    put, path = "/shops/{shop}/videos/{id}/captions/{language}", tag = "admin",
    params(CaptionPath),
    request_body(content = String, content_type = "text/vtt", description = "A WebVTT file"),
    responses(
        (status = 200, body = Video),
        (status = 415, description = "UNSUPPORTED_MEDIA_TYPE: the body is not sent as text/vtt", body = ErrorBody),
        (status = 422, description = "INVALID_CAPTIONS: not a WebVTT file a player can show; the message names the line", body = ErrorBody),
        AdminBodyErrors
    )
)]
pub async fn put_captions(
    State(state): State<AppState>,
    CaptionPath { shop, id, language }: CaptionPath,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<Video>, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let essence = content_type.split(';').next().unwrap_or_default().trim();
    if !essence.eq_ignore_ascii_case("text/vtt") {
        return Err(ApiError::UnsupportedMediaType("text/vtt"));
    }
    let file = read_body(body, MAX_CAPTION_BYTES).await?;
    captions::check_webvtt(&file)?;
    let video = captions::attach(&state.media, &state.db, &shop, id, &language, file).await?;
    Ok(Json(video))
}

/// Remove the captions in a language
#[utoipa::path(
    delete, path = "/shops/{shop}/videos/{id}/captions/{language}", tag = "admin",
    params(CaptionPath),
    responses((status = 200, body = Video), (status = 400, body = ErrorBody), AdminErrors)
)]
pub async fn delete_captions(
    State(state): State<AppState>,
    CaptionPath { shop, id, language }: CaptionPath,
) -> Result<Json<Video>, ApiError> {
    let video = captions::detach(&state.media, &state.db, &shop, id, &language).await?;
    Ok(Json(video))
}
