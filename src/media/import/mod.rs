//! Importing a video from a URL: the service fetches an https file itself, within the upload
//! limits, through a guard against server-side request forgery.
//!
//! The guard checks addresses, not names: every address a host resolves to must be public, and
//! the connection goes only to the addresses checked (the client is handed them and resolves
//! nothing itself), so a name that answers differently the second time it is asked cannot lead
//! the fetch to a private address. Each redirect is a new request, checked the same way.
//!
//! What goes wrong is either the merchant's to mend ([`ImportError::Refused`]: a URL we do not
//! fetch, a file too large, a remote 4xx) or worth trying again ([`ImportError::Failed`]: every
//! transport failure — refused or reset connections, timeouts, TLS — and a remote 5xx, 408 or
//! 429). From outside, a transient failure and a lasting one look alike; the job's bounded
//! retries end a lasting one, with the last cause as its message.
//!
//! A URL's query may carry a token, so neither logs nor messages show more than its host.
//!
//! The URL's form is checked here; `addresses` says which addresses are the public internet, and
//! `fetch` makes the requests and writes the file.

mod addresses;
mod fetch;
#[cfg(test)]
mod tests;

use std::net::IpAddr;

use axum::http::StatusCode;
use url::{Host, Url};

use crate::media::Refusal;
use addresses::{address_problem, url_refused};
pub use fetch::fetch;

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

/// Redirects followed from the URL given; one more is refused.
pub const MAX_REDIRECTS: usize = 3;
/// Longer URLs are refused before anything is parsed.
const MAX_URL_BYTES: usize = 4096;

/// Checks `url` before anything is fetched: its scheme and form, and its host when that is an
/// address (the addresses a name resolves to are checked when fetched).
pub fn check_url(url: &str, rules: &ImportRules) -> Result<Url, Refusal> {
    let invalid = |problem: &str| {
        Refusal::new(
            StatusCode::BAD_REQUEST,
            "INVALID_URL",
            format!("url: {problem}"),
        )
    };
    let url = url.trim();
    if url.len() > MAX_URL_BYTES {
        return Err(invalid(&format!("is longer than {MAX_URL_BYTES} bytes")));
    }
    let mut parsed = Url::parse(url).map_err(|e| invalid(&e.to_string()))?;
    if let Some(problem) = form_problem(&parsed, rules) {
        return Err(invalid(problem));
    }
    let literal = match parsed.host() {
        Some(Host::Ipv4(ip)) => Some(IpAddr::V4(ip)),
        Some(Host::Ipv6(ip)) => Some(IpAddr::V6(ip)),
        _ => None,
    };
    if let Some(ip) = literal {
        if let Some(problem) = address_problem(ip, is_plain_http(&parsed), rules) {
            return Err(url_refused(&host_of(&parsed), problem, false));
        }
    }
    // Never sent to the server; kept out of what is stored and shown.
    parsed.set_fragment(None);
    Ok(parsed)
}

/// What is wrong with the form of `url` for an import, if anything.
fn form_problem(url: &Url, rules: &ImportRules) -> Option<&'static str> {
    match url.scheme() {
        "https" => {}
        "http" if rules.allow_loopback_http => {}
        _ => return Some("must be an https URL"),
    }
    if url.host_str().is_none_or(str::is_empty) {
        return Some("has no host");
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Some("must not carry a user name or password");
    }
    None
}

fn is_plain_http(url: &Url) -> bool {
    url.scheme() == "http"
}

/// The host of `url`, all that logs and messages show of it.
fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or("(no host)").to_string()
}
