//! The fetch of an import: one request at a time to addresses checked first, redirects
//! followed by hand, and the body written to a file within the size limit and a deadline.

use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use axum::http::StatusCode;
use reqwest::dns::{Name, Resolve, Resolving};
use reqwest::header::{ACCEPT_ENCODING, LOCATION};
use tokio::io::AsyncWriteExt;
use url::{Host, Url};

use super::addresses::{address_problem, url_refused};
use super::{form_problem, host_of, is_plain_http, ImportError, ImportRules, MAX_REDIRECTS};
use crate::media::Refusal;

const RESOLVE_TIMEOUT: Duration = Duration::from_secs(10);
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest a server may stay silent: before it answers, or between two reads of the body.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// The whole fetch may take this long plus the largest file at the slowest rate we wait for, so
/// a server trickling bytes just fast enough to beat the idle timeout cannot hold a worker for
/// hours.
const DEADLINE_BASE: Duration = Duration::from_secs(60);
const SLOWEST_BYTES_PER_SECOND: u64 = 1 << 20;
/// Received bytes are written to the file in blocks this large rather than chunk by chunk.
const WRITE_BUFFER_BYTES: usize = 1 << 20;

/// Fetches `url` into the file `dest`; returns its size. On any error, nothing is left at `dest`.
pub async fn fetch(url: &Url, dest: &Path, rules: &ImportRules) -> Result<u64, ImportError> {
    let deadline = DEADLINE_BASE + Duration::from_secs(rules.max_bytes / SLOWEST_BYTES_PER_SECOND);
    let outcome = match tokio::time::timeout(deadline, fetch_following(url, dest, rules)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(ImportError::Failed(anyhow!(
            "the file at {} did not arrive within {} seconds",
            host_of(url),
            deadline.as_secs()
        ))),
    };
    match &outcome {
        Ok(bytes) => tracing::info!(host = %host_of(url), bytes, "import fetched"),
        Err(e) => {
            tracing::info!(host = %host_of(url), error = %e, "import not fetched");
            remove_partial(dest).await;
        }
    }
    outcome
}

async fn fetch_following(url: &Url, dest: &Path, rules: &ImportRules) -> Result<u64, ImportError> {
    let mut url = url.clone();
    let mut redirects = 0;
    loop {
        let response = request(&url, rules).await?;
        let status = response.status();
        if !is_followed_redirect(status) {
            return save(response, &url, dest, rules).await;
        }
        if redirects == MAX_REDIRECTS {
            return Err(ImportError::Refused(Refusal::new(
                StatusCode::BAD_REQUEST,
                "IMPORT_URL_REFUSED",
                format!("url: more than {MAX_REDIRECTS} redirects; give the file's own address"),
            )));
        }
        redirects += 1;
        let next = response
            .headers()
            .get(LOCATION)
            .and_then(|location| location.to_str().ok())
            .and_then(|location| url.join(location).ok());
        let Some(mut next) = next else {
            return Err(import_failed(format!(
                "url: the server at {} answered {status} without a usable Location",
                host_of(&url)
            )));
        };
        next.set_fragment(None);
        tracing::debug!(from = %host_of(&url), to = %host_of(&next), "import redirected");
        url = next;
    }
}

/// One request to `url`, after its form and every address of its host are checked, over a
/// client that connects to those addresses only and follows no redirect.
async fn request(url: &Url, rules: &ImportRules) -> Result<reqwest::Response, ImportError> {
    if let Some(problem) = form_problem(url, rules) {
        return Err(ImportError::Refused(Refusal::new(
            StatusCode::BAD_REQUEST,
            "IMPORT_URL_REFUSED",
            format!("url: a redirect to {}: {problem}", host_of(url)),
        )));
    }
    let addresses = checked_addresses(url, rules).await?;
    let client = reqwest::Client::builder()
        .dns_resolver(Arc::new(CheckedAddresses(addresses)))
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve the name itself, past the guard.
        .no_proxy()
        .connect_timeout(CONNECT_TIMEOUT)
        .read_timeout(IDLE_TIMEOUT)
        .user_agent(concat!("videoapp/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| ImportError::Failed(anyhow::Error::new(e.without_url())))?;
    client
        .get(url.clone())
        // The file as stored: its size is what the limit counts.
        .header(ACCEPT_ENCODING, "identity")
        .send()
        .await
        .map_err(|e| transport_failure(e, url))
}

/// The addresses `url`'s host resolves to, every one of them allowed, or why not.
async fn checked_addresses(url: &Url, rules: &ImportRules) -> Result<Vec<SocketAddr>, ImportError> {
    let host = host_of(url);
    let port = url
        .port_or_known_default()
        .ok_or_else(|| import_failed(format!("url: {host} has no port")))?;
    let (addresses, literal): (Vec<SocketAddr>, bool) = match url.host() {
        Some(Host::Ipv4(ip)) => (vec![SocketAddr::new(IpAddr::V4(ip), port)], true),
        Some(Host::Ipv6(ip)) => (vec![SocketAddr::new(IpAddr::V6(ip), port)], true),
        Some(Host::Domain(name)) => {
            let resolved =
                tokio::time::timeout(RESOLVE_TIMEOUT, tokio::net::lookup_host((name, port)))
                    .await
                    .map_err(|_| anyhow!("resolving {host} took longer than {RESOLVE_TIMEOUT:?}"))?
                    .with_context(|| format!("cannot resolve {host}"))?;
            (resolved.collect(), false)
        }
        None => return Err(import_failed("url: has no host".to_string())),
    };
    if addresses.is_empty() {
        return Err(anyhow!("{host} resolves to no address").into());
    }
    let plain_http = is_plain_http(url);
    for address in &addresses {
        if let Some(problem) = address_problem(address.ip(), plain_http, rules) {
            return Err(ImportError::Refused(url_refused(&host, problem, !literal)));
        }
    }
    Ok(addresses)
}

/// The resolver of one request's client: the addresses already checked, whatever the name.
struct CheckedAddresses(Vec<SocketAddr>);

impl Resolve for CheckedAddresses {
    fn resolve(&self, _: Name) -> Resolving {
        let addresses = self.0.clone();
        Box::pin(async move { Ok(Box::new(addresses.into_iter()) as reqwest::dns::Addrs) })
    }
}

/// Writes the body of a final answer to `dest`, refusing it as soon as it is known to be too large.
async fn save(
    mut response: reqwest::Response,
    url: &Url,
    dest: &Path,
    rules: &ImportRules,
) -> Result<u64, ImportError> {
    let host = host_of(url);
    let status = response.status();
    if status.is_server_error()
        || status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
    {
        return Err(anyhow!("the server at {host} answered {status}").into());
    }
    if !status.is_success() {
        return Err(import_failed(format!(
            "url: the server at {host} answered {status}"
        )));
    }
    if let Some(length) = response.content_length() {
        if length > rules.max_bytes {
            return Err(too_large(format!(
                "url: the file at {host} is {length} bytes, more than the limit of {} bytes",
                rules.max_bytes
            )));
        }
    }
    let file = tokio::fs::File::create(dest)
        .await
        .with_context(|| format!("cannot create {}", dest.display()))?;
    let mut out = tokio::io::BufWriter::with_capacity(WRITE_BUFFER_BYTES, file);
    let mut received: u64 = 0;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| transport_failure(e, url))?
    {
        received += chunk.len() as u64;
        if received > rules.max_bytes {
            return Err(too_large(format!(
                "url: the file at {host} is more than the limit of {} bytes",
                rules.max_bytes
            )));
        }
        out.write_all(&chunk)
            .await
            .with_context(|| format!("cannot write {}", dest.display()))?;
    }
    out.flush()
        .await
        .with_context(|| format!("cannot write {}", dest.display()))?;
    out.into_inner()
        .sync_all()
        .await
        .with_context(|| format!("cannot write {}", dest.display()))?;
    Ok(received)
}

async fn remove_partial(dest: &Path) {
    match tokio::fs::remove_file(dest).await {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => {
            tracing::warn!(file = %dest.display(), error = %e, "cannot remove a partial import")
        }
    }
}

fn import_failed(message: String) -> ImportError {
    ImportError::Refused(Refusal::new(
        StatusCode::UNPROCESSABLE_ENTITY,
        "IMPORT_FAILED",
        message,
    ))
}

fn too_large(message: String) -> ImportError {
    ImportError::Refused(Refusal::new(
        StatusCode::PAYLOAD_TOO_LARGE,
        "FILE_TOO_LARGE",
        message,
    ))
}

/// A failure to connect or to read, without the URL reqwest would name (its query may carry a
/// token).
fn transport_failure(e: reqwest::Error, url: &Url) -> ImportError {
    let what = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "cannot connect"
    } else {
        "failed"
    };
    ImportError::Failed(
        anyhow::Error::new(e.without_url())
            .context(format!("fetching from {}: {what}", host_of(url))),
    )
}

fn is_followed_redirect(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::MOVED_PERMANENTLY
            | StatusCode::FOUND
            | StatusCode::SEE_OTHER
            | StatusCode::TEMPORARY_REDIRECT
            | StatusCode::PERMANENT_REDIRECT
    )
}
