//! Uploads over tus 1.0 (`media::uploads` has the protocol's state), and the other ways a video
//! is made from a file: an import from a URL, a retry, another poster.

use axum::body::Body;
use axum::extract::{OriginalUri, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, LOCATION};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Deserialize;
use utoipa::ToSchema;

use super::{AdminBodyErrors, AdminErrors, Object, ObjectPath, ShopPath};
use crate::app::AppState;
use crate::catalog::domain::{text_schema, TextLine};
use crate::catalog::videos::Video;
use crate::error::ApiError;
use crate::extract::AppJson;
use crate::media::uploads::TusResumable;
use crate::media::uploads::{
    self, TUS_CHECKSUMS, TUS_EXTENSIONS, TUS_RESUMABLE, TUS_VERSION, UPLOAD_DEFER_LENGTH,
    UPLOAD_EXPIRES, UPLOAD_LENGTH, UPLOAD_METADATA, UPLOAD_OFFSET,
};
use crate::media::{import, Refusal};

/// An upload, named by its video's id.
pub struct Upload;

impl Object for Upload {
    const NOUN: &'static str = "upload";
}

/// Every tus answer says which version it speaks.
fn tus(mut response: Response) -> Response {
    response
        .headers_mut()
        .insert(&TUS_RESUMABLE, HeaderValue::from_static(TUS_VERSION));
    response
}

fn tus_error(error: ApiError) -> Response {
    let precondition = matches!(
        &error,
        ApiError::Media {
            code: "TUS_VERSION_UNSUPPORTED",
            ..
        }
    );
    let mut response = tus(error.into_response());
    if precondition {
        response
            .headers_mut()
            .insert("tus-version", HeaderValue::from_static(TUS_VERSION));
    }
    response
}

fn header(value: impl ToString) -> HeaderValue {
    HeaderValue::from_str(&value.to_string()).unwrap_or(HeaderValue::from_static(""))
}

/// What the upload endpoint offers (tus discovery)
#[utoipa::path(
    options, path = "/shops/{shop}/uploads", tag = "admin",
    params(ShopPath),
    responses(
        (status = 204, description = "The tus version, extensions, largest size and checksums, in headers"),
        AdminErrors
    )
)]
pub async fn upload_options(State(state): State<AppState>, _shop: ShopPath) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    let headers = response.headers_mut();
    headers.insert("tus-version", HeaderValue::from_static(TUS_VERSION));
    headers.insert("tus-extension", HeaderValue::from_static(TUS_EXTENSIONS));
    headers.insert(
        "tus-checksum-algorithm",
        HeaderValue::from_static(TUS_CHECKSUMS),
    );
    headers.insert("tus-max-size", header(state.media.config.limits.max_bytes));
    tus(response)
}

/// Start an upload (tus creation)
///
/// Creates the video at once, in processing state `uploading`; `Location` is the upload's URL and
/// its last segment the video's id. `Upload-Metadata` may carry `title` and `filename` (base64).
/// A body of type `application/offset+octet-stream` is the file's first bytes (tus
/// creation-with-upload). The file is refused at once when it is empty, larger than the limit,
/// or would pass the shop's storage quota.
#[utoipa::path(
    post, path = "/shops/{shop}/uploads", tag = "admin",
    params(
        ShopPath,
        ("Tus-Resumable" = inline(TusResumable), Header, description = "The tus version: 1.0.0"),
        ("Upload-Length" = u64, Header, minimum = 1, description = "The file's size in bytes"),
        ("Upload-Metadata" = Option<String>, Header, description = "`title` and `filename`, base64"),
    ),
    request_body(content = Vec<u8>, content_type = "application/offset+octet-stream", description = "Optional: the file's first bytes"),
    responses(
        (status = 201, description = "Created; `Location` is the upload's URL"),
        (status = 412, description = "Not tus 1.0.0", body = crate::error::ErrorBody),
        (status = 413, description = "Too large, or the shop's storage is full", body = crate::error::ErrorBody),
        (status = 422, description = "The file is empty or not a video", body = crate::error::ErrorBody),
        AdminBodyErrors
    )
)]
pub async fn create_upload(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    OriginalUri(uri): OriginalUri,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let created = async {
        uploads::require_tus(&headers)?;
        if headers.contains_key(&UPLOAD_DEFER_LENGTH) {
            return Err(ApiError::from(Refusal::new(
                StatusCode::BAD_REQUEST,
                "INVALID_HEADER",
                "Upload-Defer-Length: not supported; send Upload-Length",
            )));
        }
        let length = uploads::integer_header(&headers, &UPLOAD_LENGTH)?.ok_or_else(|| {
            ApiError::from(Refusal::new(
                StatusCode::BAD_REQUEST,
                "INVALID_HEADER",
                "Upload-Length: required, the file's size in bytes",
            ))
        })?;
        let metadata = match headers.get(&UPLOAD_METADATA) {
            None => uploads::Metadata::default(),
            Some(raw) => uploads::parse_metadata(raw.to_str().map_err(|_| {
                ApiError::from(Refusal::new(
                    StatusCode::BAD_REQUEST,
                    "INVALID_HEADER",
                    "Upload-Metadata: not text",
                ))
            })?)?,
        };
        let with_body = content_type_is_offset_stream(&headers);
        let checksum = uploads::parse_checksum(&headers)?;
        let upload = uploads::create(&state.media, &state.db, &shop, length, &metadata).await?;
        let location = format!("{}/{}", uri.path().trim_end_matches('/'), upload.video_id);
        let mut offset = 0;
        if with_body {
            let appended =
                uploads::append(&state.media, &state.db, &shop, &upload, 0, checksum, body).await?;
            offset = appended.offset;
        }
        let mut response = StatusCode::CREATED.into_response();
        let h = response.headers_mut();
        h.insert(LOCATION, header(location));
        h.insert(
            &UPLOAD_EXPIRES,
            header(uploads::http_date(upload.expires_at)),
        );
        if with_body {
            h.insert(&UPLOAD_OFFSET, header(offset));
        }
        Ok::<_, ApiError>(response)
    }
    .await;
    match created {
        Ok(response) => tus(response),
        Err(e) => tus_error(e),
    }
}

fn content_type_is_offset_stream(headers: &HeaderMap) -> bool {
    headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(uploads::OFFSET_OCTET_STREAM))
}

/// Where an upload stands (tus)
#[utoipa::path(
    head, path = "/shops/{shop}/uploads/{id}", tag = "admin",
    params(ObjectPath<Upload>, ("Tus-Resumable" = inline(TusResumable), Header, description = "The tus version: 1.0.0")),
    responses(
        (status = 200, description = "`Upload-Offset`, `Upload-Length` and `Upload-Expires` in headers"),
        (status = 410, description = "The upload expired"),
        AdminErrors
    )
)]
pub async fn upload_offset(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Upload>,
    headers: HeaderMap,
) -> Response {
    let found = async {
        uploads::require_tus(&headers)?;
        uploads::find(&state.db, &shop, id).await
    }
    .await;
    match found {
        Ok(upload) => {
            let mut response = StatusCode::OK.into_response();
            let h = response.headers_mut();
            h.insert(&UPLOAD_OFFSET, header(upload.received));
            h.insert(&UPLOAD_LENGTH, header(upload.length));
            h.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
            if upload.completed_at.is_none() {
                h.insert(
                    &UPLOAD_EXPIRES,
                    header(uploads::http_date(upload.expires_at)),
                );
            }
            tus(response)
        }
        // A HEAD answer has no body: the status says it.
        Err(e) => {
            let mut response = tus_error(e);
            *response.body_mut() = Body::empty();
            response
        }
    }
}

/// Send the next bytes of an upload (tus)
///
/// `Upload-Offset` must be where the upload stands (`HEAD` tells). With `Upload-Checksum`
/// (`sha1` or `sha256`, base64) a chunk that does not match is refused with 460 and not kept.
/// The last chunk is answered once the whole file was probed: a file that is not a playable
/// video is refused then (422) and none of its bytes stay.
#[utoipa::path(
    patch, path = "/shops/{shop}/uploads/{id}", tag = "admin",
    params(
        ObjectPath<Upload>,
        ("Tus-Resumable" = inline(TusResumable), Header, description = "The tus version: 1.0.0"),
        ("Upload-Offset" = u64, Header, description = "Where these bytes begin"),
        ("Upload-Checksum" = Option<String>, Header, description = "`sha1 <base64>` or `sha256 <base64>`"),
    ),
    request_body(content = Vec<u8>, content_type = "application/offset+octet-stream"),
    responses(
        (status = 204, description = "Stored; `Upload-Offset` is where the upload now stands"),
        (status = 409, description = "`Upload-Offset` is not where the upload stands", body = crate::error::ErrorBody),
        (status = 410, description = "The upload expired", body = crate::error::ErrorBody),
        (status = 413, description = "More bytes than `Upload-Length`", body = crate::error::ErrorBody),
        (status = 415, description = "Not `application/offset+octet-stream`", body = crate::error::ErrorBody),
        (status = 422, description = "The file is not a playable video", body = crate::error::ErrorBody),
        (status = 460, description = "The checksum does not match", body = crate::error::ErrorBody),
        AdminBodyErrors
    )
)]
pub async fn append_upload(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Upload>,
    headers: HeaderMap,
    body: Body,
) -> Response {
    let appended = async {
        uploads::require_tus(&headers)?;
        if !content_type_is_offset_stream(&headers) {
            return Err(ApiError::UnsupportedMediaType(
                "application/offset+octet-stream",
            ));
        }
        let offset = uploads::integer_header(&headers, &UPLOAD_OFFSET)?.ok_or_else(|| {
            ApiError::from(Refusal::new(
                StatusCode::BAD_REQUEST,
                "INVALID_HEADER",
                "Upload-Offset: required",
            ))
        })?;
        let checksum = uploads::parse_checksum(&headers)?;
        let upload = uploads::find(&state.db, &shop, id).await?;
        uploads::append(
            &state.media,
            &state.db,
            &shop,
            &upload,
            offset,
            checksum,
            body,
        )
        .await
    }
    .await;
    match appended {
        Ok(appended) => {
            let mut response = StatusCode::NO_CONTENT.into_response();
            response
                .headers_mut()
                .insert(&UPLOAD_OFFSET, header(appended.offset));
            tus(response)
        }
        Err(e) => tus_error(e),
    }
}

/// Cancel an upload (tus termination)
///
/// The video and every byte of it are deleted.
#[utoipa::path(
    delete, path = "/shops/{shop}/uploads/{id}", tag = "admin",
    params(ObjectPath<Upload>, ("Tus-Resumable" = inline(TusResumable), Header, description = "The tus version: 1.0.0")),
    responses((status = 204, description = "Deleted"), AdminErrors)
)]
pub async fn terminate_upload(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Upload>,
    headers: HeaderMap,
) -> Response {
    let ended = async {
        uploads::require_tus(&headers)?;
        uploads::terminate(&state.media, &state.db, &shop, id).await
    }
    .await;
    match ended {
        Ok(()) => tus(StatusCode::NO_CONTENT.into_response()),
        Err(e) => tus_error(e),
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VideoImport {
    /// An https URL of the video file.
    #[schema(schema_with = text_schema::required_link)]
    pub url: TextLine,
    #[schema(schema_with = text_schema::required::<{ crate::catalog::TITLE_CHARS }>)]
    pub title: TextLine,
}

/// Import a video from a URL
///
/// The service fetches the file itself (https only; never from a private address), within the
/// upload limits, then processes it like an upload. Answers at once with the video, `queued`;
/// a file it cannot fetch or play fails the video with the reason.
#[utoipa::path(
    post, path = "/shops/{shop}/videos/import", tag = "admin",
    params(ShopPath),
    request_body = VideoImport,
    responses((status = 202, body = Video), AdminBodyErrors)
)]
pub async fn import_video(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
    AppJson(import): AppJson<VideoImport>,
) -> Result<(StatusCode, Json<Video>), ApiError> {
    crate::catalog::check_required_text("title", &import.title, crate::catalog::TITLE_CHARS)?;
    let rules = crate::media::import_rules(&state.media);
    let url = import::check_url(&import.url, &rules)?;
    let video =
        crate::media::start_import(&state.media, &state.db, &shop, &url, &import.title).await?;
    Ok((StatusCode::ACCEPTED, Json(video)))
}

/// Process a failed video again
#[utoipa::path(
    post, path = "/shops/{shop}/videos/{id}/retry", tag = "admin",
    params(ObjectPath<Video>),
    responses(
        (status = 202, body = Video),
        (status = 409, description = "VIDEO_NOT_FAILED: not a failed video; SOURCE_MISSING: its file is gone", body = crate::error::ErrorBody),
        AdminErrors
    )
)]
pub async fn retry_video(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Video>,
) -> Result<(StatusCode, Json<Video>), ApiError> {
    let video = crate::media::retry(&state.media, &state.db, &shop, id).await?;
    Ok((StatusCode::ACCEPTED, Json(video)))
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PosterChoice {
    /// The moment of the video to show, in milliseconds from its start.
    #[serde(deserialize_with = "crate::catalog::domain::json_i32")]
    #[schema(minimum = 0, maximum = 86_400_000)]
    pub at_ms: i32,
}

/// Choose the poster's moment
///
/// The poster (and `thumbnail`) is made again from that moment of the video; the video keeps
/// playing on the store meanwhile.
#[utoipa::path(
    post, path = "/shops/{shop}/videos/{id}/poster", tag = "admin",
    params(ObjectPath<Video>),
    request_body = PosterChoice,
    responses(
        (status = 202, body = Video),
        (status = 409, description = "VIDEO_NOT_READY: not processed yet; NOT_FROM_A_FILE: a video given as URLs", body = crate::error::ErrorBody),
        AdminBodyErrors
    )
)]
pub async fn choose_poster(
    State(state): State<AppState>,
    ObjectPath { shop, id, .. }: ObjectPath<Video>,
    AppJson(choice): AppJson<PosterChoice>,
) -> Result<(StatusCode, Json<Video>), ApiError> {
    let at_ms = u32::try_from(choice.at_ms)
        .map_err(|_| ApiError::validation("atMs", "must be 0 or more"))?;
    let video = crate::media::choose_poster(&state.media, &state.db, &shop, id, at_ms).await?;
    Ok((StatusCode::ACCEPTED, Json(video)))
}
