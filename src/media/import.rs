//! Importing a video from a URL: the service fetches an https file itself, within the upload
//! limits, through a guard against server-side request forgery.

use std::path::Path;

use crate::media::Refusal;

/// What an import is allowed: its largest file, and whether plain http on loopback is taken
/// (tests and the demo only).
#[derive(Debug, Clone, Copy)]
pub struct ImportRules {
    pub max_bytes: u64,
    pub allow_loopback_http: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The URL or what it answered is refused (a 4xx for the merchant).
    #[error("{}", .0.message)]
    Refused(Refusal),
    /// The fetch failed in a way worth retrying.
    #[error(transparent)]
    Failed(#[from] anyhow::Error),
}

/// Checks `url` before anything is fetched: its scheme and form (the addresses are checked again
/// when fetched, after DNS resolution).
pub fn check_url(url: &str, rules: &ImportRules) -> Result<url::Url, Refusal> {
    let _ = rules;
    url::Url::parse(url).map_err(|e| {
        Refusal::new(
            axum::http::StatusCode::BAD_REQUEST,
            "INVALID_URL",
            format!("url: {e}"),
        )
    })
}

/// Fetches `url` into the file `dest`; returns its size.
pub async fn fetch(url: &url::Url, dest: &Path, rules: &ImportRules) -> Result<u64, ImportError> {
    let _ = (url, dest, rules);
    Err(ImportError::Failed(anyhow::anyhow!("not built yet")))
}
