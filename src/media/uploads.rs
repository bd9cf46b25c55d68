//! tus 1.0 resumable uploads (core, creation, creation-with-upload, expiration, termination,
//! checksum). An upload's id is its video's: the video exists, `uploading`, from the creation on.
//! Its state is in Postgres and its bytes in object storage, so any instance takes any request
//! of any upload, and a connection that drops keeps what it delivered.

use std::path::PathBuf;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use base64::Engine;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use sha1::Digest;
use sqlx::PgPool;
use uuid::Uuid;

use super::ffmpeg::StepError;
use super::jobs::{self, JobKind};
use super::store::ObjectWriter;
use super::worker::{discard_source, private_dir};
use super::{index, names, Media, Refusal};
use crate::catalog::domain::ShopDomain;
use crate::catalog::video_media::{self, mark_failed, CheckedFile, FirstState};
use crate::catalog::{self, CatalogError, TITLE_CHARS};
use crate::error::ApiError;

pub const TUS_VERSION: &str = "1.0.0";
pub const TUS_EXTENSIONS: &str = "creation,creation-with-upload,expiration,termination,checksum";
pub const TUS_CHECKSUMS: &str = "sha1,sha256";
pub const OFFSET_OCTET_STREAM: &str = "application/offset+octet-stream";

pub static TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");
pub static UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");
pub static UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
pub static UPLOAD_METADATA: HeaderName = HeaderName::from_static("upload-metadata");
pub static UPLOAD_EXPIRES: HeaderName = HeaderName::from_static("upload-expires");
pub static UPLOAD_CHECKSUM: HeaderName = HeaderName::from_static("upload-checksum");
pub static UPLOAD_DEFER_LENGTH: HeaderName = HeaderName::from_static("upload-defer-length");

/// 460, the tus checksum extension's answer to a chunk whose checksum does not match.
pub const CHECKSUM_MISMATCH: StatusCode = match StatusCode::from_u16(460) {
    Ok(status) => status,
    Err(_) => StatusCode::BAD_REQUEST,
};

/// The first bytes of a file, enough to tell an image or a sound from a video.
const SNIFF_BYTES: usize = 64;

/// An upload as Postgres has it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct UploadState {
    pub video_id: Uuid,
    pub length: i64,
    pub received: i64,
    pub expires_at: DateTime<Utc>,
    pub completed_at: Option<DateTime<Utc>>,
    pub filename: String,
}

/// What `Upload-Metadata` carries that we use.
#[derive(Debug, Default, PartialEq)]
pub struct Metadata {
    pub title: Option<String>,
    pub filename: Option<String>,
}

/// Refuses a request that does not speak tus 1.0.0: another version is answered 412 with the
/// version we speak (as tus says), a missing or empty header 400.
pub fn require_tus(headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get(&TUS_RESUMABLE).map(HeaderValue::as_bytes) {
        Some(b"1.0.0") => Ok(()),
        Some(version) if !version.trim_ascii().is_empty() => Err(refusal(
            StatusCode::PRECONDITION_FAILED,
            "TUS_VERSION_UNSUPPORTED",
            "Tus-Resumable: only version 1.0.0 is supported",
        )),
        _ => Err(bad_header(
            "INVALID_HEADER",
            "Tus-Resumable: required, with the value 1.0.0",
        )),
    }
}

/// The value of `Tus-Resumable`, for the document.
#[derive(utoipa::ToSchema)]
pub enum TusResumable {
    #[schema(rename = "1.0.0")]
    V1,
}

fn refusal(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
    Refusal::new(status, code, message).into()
}

fn bad_header(code: &'static str, message: impl Into<String>) -> ApiError {
    refusal(StatusCode::BAD_REQUEST, code, message)
}

/// A non-negative integer header (`Upload-Length`, `Upload-Offset`).
pub fn integer_header(headers: &HeaderMap, name: &HeaderName) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let parsed = value
        .to_str()
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| i64::try_from(*v).is_ok());
    match parsed {
        Some(n) => Ok(Some(n)),
        None => Err(bad_header(
            "INVALID_HEADER",
            format!("{}: must be a whole number of bytes", display_name(name)),
        )),
    }
}

/// A tus header's name as the protocol writes it (`HeaderName`s are lowercase).
fn display_name(name: &HeaderName) -> String {
    name.as_str()
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        })
        .collect::<Vec<String>>()
        .join("-")
}

/// `Upload-Metadata`: comma-separated `key base64-value` pairs (a key alone has no value).
pub fn parse_metadata(raw: &str) -> Result<Metadata, ApiError> {
    let invalid = |why: String| bad_header("INVALID_HEADER", format!("Upload-Metadata: {why}"));
    let mut metadata = Metadata::default();
    let mut seen = std::collections::HashSet::new();
    for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut parts = pair.split(' ');
        let key = parts.next().unwrap_or_default();
        let value = parts.next();
        if parts.next().is_some() {
            return Err(invalid(format!("'{key}' has more than one value")));
        }
        if !seen.insert(key.to_string()) {
            return Err(invalid(format!("'{key}' is given twice")));
        }
        let decoded = match value {
            None => String::new(),
            Some(v) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(v)
                    .map_err(|_| invalid(format!("the value of '{key}' is not base64")))?;
                String::from_utf8(bytes)
                    .map_err(|_| invalid(format!("the value of '{key}' is not UTF-8 text")))?
            }
        };
        match key {
            "title" | "name" if metadata.title.is_none() || key == "title" => {
                metadata.title = Some(decoded)
            }
            "filename" => metadata.filename = Some(decoded),
            // Other keys (a client's `filetype`, …) are the client's own.
            _ => {}
        }
    }
    Ok(metadata)
}

/// The video's title: the metadata's `title`, or the file's name without its extension.
fn title_of(metadata: &Metadata) -> Result<String, ApiError> {
    let from_file = metadata.filename.as_deref().map(|name| {
        let name = name.rsplit(['/', '\\']).next().unwrap_or(name);
        name.rsplit_once('.')
            .map_or(name, |(stem, _)| stem)
            .to_string()
    });
    let title = metadata
        .title
        .clone()
        .or(from_file)
        .map(|t| {
            t.trim()
                .chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "Untitled video".to_string());
    if title.chars().count() > TITLE_CHARS {
        return Err(ApiError::validation(
            "title",
            format!("at most {TITLE_CHARS} characters"),
        ));
    }
    Ok(title)
}

/// Creates the video and its upload (tus creation). The caller checked the tus version.
pub async fn create(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    length: u64,
    metadata: &Metadata,
) -> Result<UploadState, ApiError> {
    let limits = media.config.limits;
    if length == 0 {
        return Err(Refusal::unprocessable("EMPTY_FILE", "the file is empty (0 bytes)").into());
    }
    if length > limits.max_bytes {
        metrics::counter!("media_uploads_refused_total", "reason" => "FILE_TOO_LARGE").increment(1);
        return Err(too_large(length, limits.max_bytes));
    }
    let title = title_of(metadata)?;
    let filename: String = metadata
        .filename
        .as_deref()
        .unwrap_or_default()
        .chars()
        .filter(|c| !c.is_control())
        .take(255)
        .collect();
    let (mut tx, _) = catalog::begin_write(db, shop).await?;
    let used: i64 = sqlx::query_scalar(
        "SELECT ((SELECT COALESCE(SUM(media_bytes), 0) FROM videos WHERE shop_domain = $1) \
              + (SELECT COALESCE(SUM(length), 0) FROM media_uploads WHERE shop_domain = $1))::BIGINT",
    )
    .bind(shop.as_str())
    .fetch_one(&mut *tx)
    .await
    .map_err(CatalogError::from)?;
    let used = u64::try_from(used).unwrap_or(0);
    if used.saturating_add(length) > limits.shop_quota_bytes {
        metrics::counter!("media_uploads_refused_total", "reason" => "QUOTA_EXCEEDED").increment(1);
        return Err(Refusal::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "QUOTA_EXCEEDED",
            format!(
                "the shop's video storage is full: {} of {} used, and this file is {}; delete \
                 videos you no longer show",
                human_bytes(used),
                human_bytes(limits.shop_quota_bytes),
                human_bytes(length)
            ),
        )
        .into());
    }
    let id = Uuid::now_v7();
    let expires_at =
        Utc::now() + chrono::Duration::from_std(limits.upload_expiry).unwrap_or_default();
    video_media::insert_from_file(&mut *tx, shop, id, &title, FirstState::Uploading)
        .await
        .map_err(CatalogError::from)?;
    let upload: UploadState = sqlx::query_as(
        "INSERT INTO media_uploads (video_id, shop_domain, length, filename, expires_at) \
         VALUES ($1, $2, $3, $4, $5) \
         RETURNING video_id, length, received, expires_at, completed_at, filename",
    )
    .bind(id)
    .bind(shop.as_str())
    .bind(i64::try_from(length).unwrap_or(i64::MAX))
    .bind(&filename)
    .bind(expires_at)
    .fetch_one(&mut *tx)
    .await
    .map_err(CatalogError::from)?;
    tx.commit().await.map_err(CatalogError::from)?;
    metrics::counter!("media_uploads_created_total").increment(1);
    Ok(upload)
}

fn too_large(length: u64, max: u64) -> ApiError {
    Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "FILE_TOO_LARGE",
        format!(
            "the file is {}, more than the {} a video may be",
            human_bytes(length),
            human_bytes(max)
        ),
    )
    .into()
}

/// The upload of `video`, if the shop has one by that id.
pub async fn find(db: &PgPool, shop: &ShopDomain, video: Uuid) -> Result<UploadState, ApiError> {
    let upload: Option<UploadState> = sqlx::query_as(
        "SELECT video_id, length, received, expires_at, completed_at, filename \
         FROM media_uploads WHERE video_id = $1 AND shop_domain = $2",
    )
    .bind(video)
    .bind(shop.as_str())
    .fetch_optional(db)
    .await?;
    let upload = upload.ok_or(ApiError::NotFound("upload"))?;
    if upload.completed_at.is_none() && upload.expires_at < Utc::now() {
        return Err(expired());
    }
    Ok(upload)
}

fn expired() -> ApiError {
    refusal(
        StatusCode::GONE,
        "UPLOAD_EXPIRED",
        "the upload was not finished in time and has expired; upload the file again",
    )
}

/// A checksum the client sent with a chunk (`Upload-Checksum: sha1 <base64>`).
pub enum Checksum {
    Sha1(Vec<u8>),
    Sha256(Vec<u8>),
}

pub fn parse_checksum(headers: &HeaderMap) -> Result<Option<Checksum>, ApiError> {
    let Some(value) = headers.get(&UPLOAD_CHECKSUM) else {
        return Ok(None);
    };
    let invalid = |why: &str| bad_header("INVALID_HEADER", format!("Upload-Checksum: {why}"));
    let value = value.to_str().map_err(|_| invalid("not text"))?;
    let (algorithm, digest) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| invalid("use '<algorithm> <base64 digest>'"))?;
    let digest = base64::engine::general_purpose::STANDARD
        .decode(digest.trim())
        .map_err(|_| invalid("the digest is not base64"))?;
    match algorithm {
        "sha1" => Ok(Some(Checksum::Sha1(digest))),
        "sha256" => Ok(Some(Checksum::Sha256(digest))),
        other => Err(bad_header(
            "CHECKSUM_ALGORITHM_UNSUPPORTED",
            format!("Upload-Checksum: '{other}' is not one of {TUS_CHECKSUMS}"),
        )),
    }
}

/// What a `PATCH` (or a creation with its first bytes) delivered.
pub struct Appended {
    pub offset: u64,
    pub completed: bool,
}

/// Appends the request's body at `offset`. The body is read and stored by a task of its own,
/// so that what arrived is kept even when the client disconnects midway (its connection, and
/// with it this request's handler, is dropped then).
pub async fn append(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    upload: &UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    body: Body,
) -> Result<Appended, ApiError> {
    if upload.completed_at.is_some() && offset == upload.received as u64 {
        return Ok(Appended {
            offset,
            completed: true,
        });
    }
    if offset != upload.received as u64 {
        return Err(refusal(
            StatusCode::CONFLICT,
            "UPLOAD_OFFSET_MISMATCH",
            format!(
                "Upload-Offset: {offset} is not where the upload stands ({}); ask with HEAD and \
                 resume from there",
                upload.received
            ),
        ));
    }
    let task = tokio::spawn(store_chunk(
        media.clone(),
        db.clone(),
        shop.clone(),
        upload.clone(),
        offset,
        checksum,
        body,
    ));
    task.await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("storing a chunk: {e}")))?
}

async fn store_chunk(
    media: Media,
    db: PgPool,
    shop: ShopDomain,
    upload: UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    body: Body,
) -> Result<Appended, ApiError> {
    let remaining = (upload.length - upload.received) as u64;
    let part = names::upload_part(upload.video_id, offset, Uuid::new_v4());
    let digest = Digests::for_checksum(checksum.as_ref());
    let sniffed = offset == 0;
    let writer = media.store.writer(&part);
    let received = receive(body, writer, remaining, digest, sniffed).await;
    commit_chunk(
        &media, &db, &shop, &upload, offset, checksum, &part, received,
    )
    .await
}

/// What reading a chunk's body gave: its size, its digest (only the one its client asked to be
/// checked), its first bytes, whether the body ended cleanly, and the part its bytes went to,
/// not yet stored under its name (`None` when the first bytes were refused: nothing was kept).
struct Received {
    bytes: u64,
    digest: Digests,
    head: Vec<u8>,
    complete: bool,
    too_long: bool,
    part: Option<ObjectWriter>,
}

/// The running digest of a chunk: hashing costs more than storing, so only when asked.
enum Digests {
    None,
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Digests {
    /// The digest of the algorithm `checksum` names, if the client sent one.
    fn for_checksum(checksum: Option<&Checksum>) -> Digests {
        match checksum {
            None => Digests::None,
            Some(Checksum::Sha1(_)) => Digests::Sha1(sha1::Sha1::new()),
            Some(Checksum::Sha256(_)) => Digests::Sha256(sha2::Sha256::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Digests::None => {}
            Digests::Sha1(d) => d.update(bytes),
            Digests::Sha256(d) => d.update(bytes),
        }
    }

    fn finalize(self) -> Vec<u8> {
        match self {
            Digests::None => Vec::new(),
            Digests::Sha1(d) => d.finalize().to_vec(),
            Digests::Sha256(d) => d.finalize().to_vec(),
        }
    }
}

/// Reads the body into `part` as it arrives. With `sniffed` (the file's first chunk) the bytes
/// wait in memory until its first `SNIFF_BYTES` are known: an image or a sound is never stored;
/// the rest of its body is read only to answer as for any other chunk.
async fn receive(
    body: Body,
    part: ObjectWriter,
    remaining: u64,
    digest: Digests,
    sniffed: bool,
) -> anyhow::Result<Received> {
    let mut received = Received {
        bytes: 0,
        digest,
        head: Vec::with_capacity(SNIFF_BYTES),
        complete: true,
        too_long: false,
        part: Some(part),
    };
    let mut waiting: Option<Vec<Bytes>> = sniffed.then(Vec::new);
    let mut stream = body.into_data_stream();
    let stored = async {
        while let Some(chunk) = stream.next().await {
            let Ok(mut chunk) = chunk else {
                received.complete = false;
                break;
            };
            let room = usize::try_from(remaining - received.bytes).unwrap_or(usize::MAX);
            if chunk.len() > room {
                received.too_long = true;
                chunk.truncate(room);
            }
            if received.head.len() < SNIFF_BYTES {
                let want = SNIFF_BYTES - received.head.len();
                received
                    .head
                    .extend_from_slice(&chunk[..chunk.len().min(want)]);
            }
            received.digest.update(&chunk);
            received.bytes += chunk.len() as u64;
            match &mut waiting {
                Some(held) if received.head.len() < SNIFF_BYTES => held.push(chunk),
                Some(held) => {
                    held.push(chunk);
                    let held = std::mem::take(held);
                    waiting = None;
                    pass_sniff(&mut received, held).await?;
                }
                None => {
                    if let Some(part) = &mut received.part {
                        part.write(chunk).await?;
                    }
                }
            }
            if received.too_long {
                break;
            }
        }
        // A first chunk shorter than the sniffed bytes.
        if let Some(held) = waiting {
            pass_sniff(&mut received, held).await?;
        }
        Ok::<_, anyhow::Error>(())
    }
    .await;
    if let Err(e) = stored {
        if let Some(part) = received.part {
            let _ = part.abort().await;
        }
        return Err(e);
    }
    Ok(received)
}

/// The first bytes are known: a file that is clearly no video keeps none of them (its part is
/// dropped before anything was written), anything else goes on to be stored.
async fn pass_sniff(received: &mut Received, held: Vec<Bytes>) -> anyhow::Result<()> {
    if sniff(&received.head).is_some() {
        if let Some(part) = received.part.take() {
            part.abort().await?;
        }
        return Ok(());
    }
    if let Some(part) = &mut received.part {
        for bytes in held {
            part.write(bytes).await?;
        }
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
async fn commit_chunk(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    upload: &UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    part: &object_store::path::Path,
    received: anyhow::Result<Received>,
) -> Result<Appended, ApiError> {
    let mut received = received.map_err(|e| ApiError::Internal(e.context("receiving a chunk")))?;
    let writer = received.part.take();
    let judged = judge_chunk(upload, offset, checksum, received);
    let bytes = match judged {
        Ok(Some(bytes)) => bytes,
        // Nothing of a refused chunk stays: its part is dropped before it has a name.
        refused => {
            if let Some(writer) = writer {
                if let Err(e) = writer.abort().await {
                    tracing::warn!(error = %e, "cannot drop a refused chunk's part");
                }
            }
            return match refused {
                Ok(_) => Ok(Appended {
                    offset,
                    completed: false,
                }),
                Err(ChunkRefused::File(refused)) => {
                    refuse_upload(media, db, upload.video_id, &refused).await?;
                    Err(refused.into())
                }
                Err(ChunkRefused::Chunk(e)) => Err(e),
            };
        }
    };
    let writer = writer.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("a chunk's part")))?;
    writer
        .finish()
        .await
        .map_err(|e| ApiError::Internal(anyhow::Error::from(e).context("storing a chunk")))?;
    let now: Option<(i64, i64)> = sqlx::query_as(
        "UPDATE media_uploads SET received = received + $3, parts = array_append(parts, $4) \
         WHERE video_id = $1 AND received = $2 AND completed_at IS NULL \
         RETURNING received, length",
    )
    .bind(upload.video_id)
    .bind(i64::try_from(offset).unwrap_or(i64::MAX))
    .bind(i64::try_from(bytes).unwrap_or(i64::MAX))
    .bind(part.as_ref())
    .fetch_optional(db)
    .await?;
    let Some((now_received, length)) = now else {
        // Another request stored this offset first: ours is not part of the upload.
        let _ = media.store.objects().delete(part).await;
        return Err(refusal(
            StatusCode::CONFLICT,
            "UPLOAD_OFFSET_MISMATCH",
            "Upload-Offset: another request has just written at this offset; ask with HEAD and \
             resume from there",
        ));
    };
    metrics::counter!("media_upload_bytes_total").increment(bytes);
    let offset = now_received as u64;
    if now_received < length {
        return Ok(Appended {
            offset,
            completed: false,
        });
    }
    finish(media, db, shop, upload.video_id).await?;
    Ok(Appended {
        offset,
        completed: true,
    })
}

/// Why a chunk is not kept: the request is refused, or the whole file is (its first bytes are
/// no video's).
enum ChunkRefused {
    Chunk(ApiError),
    File(Refusal),
}

/// Whether a received chunk is kept: its size when it is, `None` when it is empty.
fn judge_chunk(
    upload: &UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    received: Received,
) -> Result<Option<u64>, ChunkRefused> {
    if received.too_long {
        return Err(ChunkRefused::Chunk(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "FILE_TOO_LARGE",
            format!(
                "the body goes past Upload-Length ({} bytes); nothing of it was kept",
                upload.length
            ),
        )));
    }
    if let Some(expected) = checksum {
        if !received.complete {
            // A partial chunk cannot be checked against the whole chunk's checksum.
            return Err(ChunkRefused::Chunk(ApiError::RequestTimeout));
        }
        let matches = match expected {
            Checksum::Sha1(digest) | Checksum::Sha256(digest) => {
                received.digest.finalize() == digest
            }
        };
        if !matches {
            return Err(ChunkRefused::Chunk(refusal(
                CHECKSUM_MISMATCH,
                "CHECKSUM_MISMATCH",
                "Upload-Checksum: the chunk's checksum does not match; nothing of it was kept, \
                 send it again",
            )));
        }
    }
    if received.bytes == 0 {
        return Ok(None);
    }
    if offset == 0 {
        if let Some(refused) = sniff(&received.head) {
            return Err(ChunkRefused::File(refused));
        }
    }
    Ok(Some(received.bytes))
}

/// The upload is whole: look at it now, so a file we cannot play is refused to the client that
/// sent it; queue its processing otherwise.
async fn finish(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
) -> Result<(), ApiError> {
    let (parts, length): (Vec<String>, i64) =
        sqlx::query_as("SELECT parts, length FROM media_uploads WHERE video_id = $1")
            .bind(video)
            .fetch_optional(db)
            .await?
            .unwrap_or_default();
    let parts: Vec<object_store::path::Path> = parts
        .iter()
        .map(|p| object_store::path::Path::from(p.as_str()))
        .collect();
    let objects = media.store.objects().as_ref();
    let vouched = match index::Parts::new(objects, &parts, length.unsigned_abs()) {
        Some(file) => index::vouch(&file, &media.config.limits).await,
        None => None,
    };
    let facts = match vouched {
        Some(vouched) => {
            metrics::counter!("media_uploads_checked_total", "by" => "index").increment(1);
            Some(vouched)
        }
        None => {
            metrics::counter!("media_uploads_checked_total", "by" => "ffprobe").increment(1);
            probe_or_refuse(media, db, video, &parts).await?
        }
    };
    let mut tx = db.begin().await?;
    sqlx::query("UPDATE media_uploads SET completed_at = now() WHERE video_id = $1")
        .bind(video)
        .execute(&mut *tx)
        .await?;
    let checked = facts.as_ref().map(|f| CheckedFile {
        duration_ms: f.duration_ms,
        width: f.width,
        height: f.height,
    });
    video_media::queue_uploaded(&mut *tx, video, checked).await?;
    jobs::enqueue(&mut tx, shop, video, JobKind::Process).await?;
    tx.commit().await?;
    media.work.notify_one();
    metrics::counter!("media_uploads_finished_total").increment(1);
    Ok(())
}

/// Probes a finished upload with ffprobe, refusing it (none of its bytes stay) when it is no
/// video we take; `None` when ffprobe could not run, for the worker to try again.
async fn probe_or_refuse(
    media: &Media,
    db: &PgPool,
    video: Uuid,
    parts: &[object_store::path::Path],
) -> Result<Option<index::Vouched>, ApiError> {
    // The directory store's parts are read where they are; a bucket's are fetched once, here.
    let scratch = scratch_dir();
    let probed = async {
        private_dir(&scratch).await?;
        let source = media.store.readable_in_place(parts, &scratch).await?;
        Ok::<_, anyhow::Error>(media.ffmpeg().probe(&source, &media.config.limits).await)
    }
    .await;
    let _ = tokio::fs::remove_dir_all(&scratch).await;
    match probed {
        Ok(Ok(facts)) => Ok(Some(index::Vouched {
            duration_ms: facts.duration_ms,
            width: facts.width,
            height: facts.height,
        })),
        Ok(Err(StepError::Refused(refused))) => {
            refuse_upload(media, db, video, &refused).await?;
            Err(refused.into())
        }
        // The worker probes again and retries; the upload itself is complete.
        Ok(Err(StepError::Failed(e))) | Err(e) => {
            tracing::warn!(error = format!("{e:#}"), "cannot probe a finished upload");
            Ok(None)
        }
    }
}

/// A refused file: the video says why, and none of its bytes stay.
async fn refuse_upload(
    media: &Media,
    db: &PgPool,
    video: Uuid,
    refused: &Refusal,
) -> Result<(), ApiError> {
    let mut tx = db.begin().await?;
    mark_failed(&mut *tx, video, refused.code, &refused.message).await?;
    discard_source(&mut tx, video).await?;
    tx.commit().await?;
    // At once rather than when a worker next looks: the client is told none of it stays.
    media.delete_now(db, &names::upload_prefix(video)).await;
    metrics::counter!("media_uploads_refused_total", "reason" => refused.code).increment(1);
    Ok(())
}

/// Tells from a file's first bytes that it is clearly no video: an image, a sound, a document.
/// Anything else is left to ffprobe once the file is whole.
pub fn sniff(head: &[u8]) -> Option<Refusal> {
    let image = |kind: &str| {
        Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            format!("this is {kind} image, not a video; upload a video file (MP4, MOV, WebM)"),
        ))
    };
    let starts = |magic: &[u8]| head.starts_with(magic);
    if starts(b"\x89PNG\r\n\x1a\n") {
        return image("a PNG");
    }
    if starts(b"\xff\xd8\xff") {
        return image("a JPEG");
    }
    if starts(b"GIF87a") || starts(b"GIF89a") {
        return image("a GIF");
    }
    if starts(b"RIFF") && head.get(8..12) == Some(b"WEBP") {
        return image("a WebP");
    }
    if head
        .get(4..12)
        .is_some_and(|b| b == b"ftypheic" || b == b"ftypheix" || b == b"ftypavif")
    {
        return image("an HEIC or AVIF");
    }
    let sound = || {
        Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            "this file has sound but no picture; upload a video file (MP4, MOV, WebM)",
        ))
    };
    if starts(b"ID3") || starts(b"fLaC") || (starts(b"RIFF") && head.get(8..12) == Some(b"WAVE")) {
        return sound();
    }
    if head.get(4..11) == Some(b"ftypM4A") {
        return sound();
    }
    if starts(b"%PDF") {
        return Some(Refusal::unprocessable(
            "NOT_A_VIDEO",
            "this is a PDF document, not a video; upload a video file (MP4, MOV, WebM)",
        ));
    }
    None
}

/// Ends an upload at the client's request (tus termination), expired or not: the video and
/// all its bytes go.
pub async fn terminate(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
) -> Result<(), ApiError> {
    let found: Option<i32> =
        sqlx::query_scalar("SELECT 1 FROM media_uploads WHERE video_id = $1 AND shop_domain = $2")
            .bind(video)
            .bind(shop.as_str())
            .fetch_optional(db)
            .await?;
    found.ok_or(ApiError::NotFound("upload"))?;
    catalog::videos::delete(db, shop, video).await?;
    media.delete_now(db, &names::upload_prefix(video)).await;
    media
        .delete_now(db, &names::video_prefix(shop, video))
        .await;
    Ok(())
}

/// A scratch directory for probing a finished upload.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("videoapp-upload-{}", Uuid::new_v4()))
}

/// The answer's `Upload-Expires`, in the HTTP date format tus asks for.
pub fn http_date(at: DateTime<Utc>) -> String {
    at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["bytes", "KB", "MB", "GB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1000.0 && unit < UNITS.len() - 1 {
        value /= 1000.0;
        unit += 1;
    }
    match unit {
        0 => format!("{bytes} bytes"),
        _ => format!("{value:.1} {}", UNITS[unit]),
    }
}

/// How long a client is told to keep an upload's URL: the expiry the settings give.
pub fn expiry(media: &Media) -> Duration {
    media.config.limits.upload_expiry
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn metadata_gives_the_title_and_the_file_name() {
        let raw = format!(
            "filename {},title {},filetype {}",
            b64("clip.mov"),
            b64("Red dress"),
            b64("video/quicktime")
        );
        let metadata = parse_metadata(&raw).unwrap();
        assert_eq!(metadata.title.as_deref(), Some("Red dress"));
        assert_eq!(metadata.filename.as_deref(), Some("clip.mov"));
        assert_eq!(title_of(&metadata).unwrap(), "Red dress");
        let only_file =
            parse_metadata(&format!("filename {}", b64("summer/IMG_0042.MOV"))).unwrap();
        assert_eq!(title_of(&only_file).unwrap(), "IMG_0042");
        assert_eq!(title_of(&Metadata::default()).unwrap(), "Untitled video");
    }

    #[test]
    fn malformed_metadata_is_refused_naming_the_key() {
        for (raw, says) in [
            ("title !!!", "'title' is not base64"),
            ("title a b", "more than one value"),
            ("title YQ==,title YQ==", "given twice"),
        ] {
            let message = parse_metadata(raw).unwrap_err().to_string();
            assert!(message.contains(says), "{raw}: {message}");
        }
    }

    #[test]
    fn images_sounds_and_documents_are_told_from_their_first_bytes() {
        assert_eq!(sniff(b"\x89PNG\r\n\x1a\n....").unwrap().code, "NOT_A_VIDEO");
        assert!(sniff(b"\xff\xd8\xff\xe0").unwrap().message.contains("JPEG"));
        assert!(sniff(b"ID3\x04").unwrap().message.contains("no picture"));
        assert!(sniff(b"\0\0\0\x20ftypM4A \0\0")
            .unwrap()
            .message
            .contains("no picture"));
        assert!(sniff(b"\0\0\0\x18ftypheic")
            .unwrap()
            .message
            .contains("HEIC"));
        // Videos pass to the probe.
        assert!(sniff(b"\0\0\0\x20ftypisom\0\0").is_none());
        assert!(sniff(b"\x1a\x45\xdf\xa3").is_none());
    }

    #[test]
    fn offsets_and_lengths_are_whole_numbers() {
        let mut headers = HeaderMap::new();
        headers.insert(&UPLOAD_OFFSET, HeaderValue::from_static("12"));
        assert_eq!(integer_header(&headers, &UPLOAD_OFFSET).unwrap(), Some(12));
        for bad in ["-1", "1.5", "", "99999999999999999999", " 3"] {
            headers.insert(&UPLOAD_OFFSET, HeaderValue::from_str(bad).unwrap());
            assert!(integer_header(&headers, &UPLOAD_OFFSET).is_err(), "{bad}");
        }
    }
}
