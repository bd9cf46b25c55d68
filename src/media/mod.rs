//! Videos made from a file: resumable uploads (tus), imports from a URL, processing into a
//! poster, a mini version, HLS renditions and a progressive MP4 (ffmpeg, as leased jobs in
//! Postgres), the objects they are stored as, and `/media`, where the directory store is served.
//!
//! A video made here carries a processing state (`uploading`, `queued`, `processing`, `ready`,
//! `failed`); only a `ready` one can be published, so the storefront never shows a video that
//! cannot play.

pub mod ffmpeg;
pub mod import;
pub mod names;
pub mod samples;
pub mod serve;
pub mod store;

use std::sync::Arc;

use axum::http::StatusCode;

use crate::config::MediaConfig;
use crate::error::ApiError;
pub use store::MediaStore;

/// What the media handlers and workers share.
#[derive(Clone)]
pub struct Media {
    pub store: MediaStore,
    pub config: Arc<MediaConfig>,
    /// Signalled when a job is queued, to wake this instance's workers at once.
    pub work: Arc<tokio::sync::Notify>,
}

/// Why a file, an upload or an import is refused, with the code and status its answer carries
/// and a message that names the problem for a merchant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

impl Refusal {
    pub fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            status,
            code,
            message: message.into(),
        }
    }

    /// 422: the file's content is not what we take (not a video, too long, too large a frame).
    pub fn unprocessable(code: &'static str, message: impl Into<String>) -> Refusal {
        Refusal::new(StatusCode::UNPROCESSABLE_ENTITY, code, message)
    }
}

impl From<Refusal> for ApiError {
    fn from(r: Refusal) -> ApiError {
        ApiError::Media {
            status: r.status,
            code: r.code,
            message: r.message,
        }
    }
}
