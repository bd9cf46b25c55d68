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

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Context};
use axum::http::StatusCode;
use ipnet::{Ipv4Net, Ipv6Net};
use reqwest::dns::{Name, Resolve, Resolving};
use reqwest::header::{ACCEPT_ENCODING, LOCATION};
use tokio::io::AsyncWriteExt;
use url::{Host, Url};

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

/// Redirects followed from the URL given; one more is refused.
pub const MAX_REDIRECTS: usize = 3;
/// Longer URLs are refused before anything is parsed.
const MAX_URL_BYTES: usize = 4096;
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

/// Why an import may not connect to an address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddressProblem {
    /// Plain http, to an address other than an allowed loopback one.
    PlainHttp,
    /// Not the public internet: "a private address", "a cloud metadata address", …
    NotPublic(&'static str),
}

/// Why an import may not connect to `ip`, if it may not.
fn address_problem(ip: IpAddr, plain_http: bool, rules: &ImportRules) -> Option<AddressProblem> {
    let not_public = |what| Some(AddressProblem::NotPublic(what));
    match address_kind(ip) {
        AddressKind::Loopback if rules.allow_loopback_http => None,
        _ if plain_http => Some(AddressProblem::PlainHttp),
        AddressKind::Public => None,
        AddressKind::Loopback => not_public("a loopback address"),
        AddressKind::Private => not_public("a private address"),
        AddressKind::LinkLocal => not_public("a link-local address"),
        AddressKind::Metadata => not_public("a cloud metadata address"),
        AddressKind::Reserved => not_public("a reserved address"),
    }
}

/// The refusal of a URL whose host is (or, for a name, resolves to) an address we do not reach.
fn url_refused(host: &str, problem: AddressProblem, resolved: bool) -> Refusal {
    let message = match problem {
        AddressProblem::PlainHttp => {
            format!("url: {host}: plain http is fetched from loopback addresses only; use https")
        }
        AddressProblem::NotPublic(what) => {
            let verb = if resolved { "resolves to" } else { "is" };
            format!("url: {host} {verb} {what}; only public addresses are fetched")
        }
    };
    Refusal::new(StatusCode::BAD_REQUEST, "IMPORT_URL_REFUSED", message)
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

/// The host of `url`, all that logs and messages show of it.
fn host_of(url: &Url) -> String {
    url.host_str().unwrap_or("(no host)").to_string()
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AddressKind {
    Public,
    Loopback,
    Private,
    LinkLocal,
    Metadata,
    Reserved,
}

/// Cloud providers' instance metadata services, named apart from the ranges that hold them.
const METADATA: [IpAddr; 4] = [
    IpAddr::V4(Ipv4Addr::new(169, 254, 169, 254)),
    IpAddr::V4(Ipv4Addr::new(100, 100, 100, 200)),
    IpAddr::V4(Ipv4Addr::new(192, 0, 0, 192)),
    IpAddr::V6(Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254)),
];

/// IPv4 ranges that are not the public internet: IANA's special-purpose registry, without its
/// few globally reachable anycast entries (no video is served from them).
const IPV4_NOT_PUBLIC: [(Ipv4Net, AddressKind); 15] = {
    use AddressKind::*;
    const fn net(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> Ipv4Net {
        Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
    }
    [
        (net(0, 0, 0, 0, 8), Reserved),       // "this network", unspecified
        (net(10, 0, 0, 0, 8), Private),       // private
        (net(100, 64, 0, 0, 10), Private),    // carrier-grade NAT
        (net(127, 0, 0, 0, 8), Loopback),     // loopback
        (net(169, 254, 0, 0, 16), LinkLocal), // link-local
        (net(172, 16, 0, 0, 12), Private),    // private
        (net(192, 0, 0, 0, 24), Reserved),    // IETF protocol assignments
        (net(192, 0, 2, 0, 24), Reserved),    // documentation (TEST-NET-1)
        (net(192, 88, 99, 0, 24), Reserved),  // 6to4 relay anycast
        (net(192, 168, 0, 0, 16), Private),   // private
        (net(198, 18, 0, 0, 15), Reserved),   // benchmarking
        (net(198, 51, 100, 0, 24), Reserved), // documentation (TEST-NET-2)
        (net(203, 0, 113, 0, 24), Reserved),  // documentation (TEST-NET-3)
        (net(224, 0, 0, 0, 4), Reserved),     // multicast
        (net(240, 0, 0, 0, 4), Reserved),     // reserved, and broadcast
    ]
};

/// Within the global unicast range (2000::/3), the parts that are not the public internet.
const IPV6_NOT_PUBLIC: [Ipv6Net; 4] = {
    const fn net(first: u16, second: u16, prefix: u8) -> Ipv6Net {
        Ipv6Net::new_assert(Ipv6Addr::new(first, second, 0, 0, 0, 0, 0, 0), prefix)
    }
    [
        net(0x2001, 0, 23),      // IETF protocol assignments (Teredo among them)
        net(0x2001, 0x0db8, 32), // documentation
        net(0x2002, 0, 16),      // 6to4: an IPv4 address inside, reached through a relay
        net(0x3fff, 0, 20),      // documentation
    ]
};

fn address_kind(ip: IpAddr) -> AddressKind {
    if METADATA.contains(&ip) {
        return AddressKind::Metadata;
    }
    match ip {
        IpAddr::V4(ip) => ipv4_kind(ip),
        IpAddr::V6(ip) => ipv6_kind(ip),
    }
}

fn ipv4_kind(ip: Ipv4Addr) -> AddressKind {
    IPV4_NOT_PUBLIC
        .iter()
        .find(|(net, _)| net.contains(&ip))
        .map_or(AddressKind::Public, |(_, kind)| *kind)
}

fn ipv6_kind(ip: Ipv6Addr) -> AddressKind {
    // An IPv4 address written as IPv6 reaches that IPv4 address: it is judged as one.
    if let Some(v4) = embedded_ipv4(ip) {
        return address_kind(IpAddr::V4(v4));
    }
    if ip.is_loopback() {
        AddressKind::Loopback
    } else if ip.is_unicast_link_local() {
        AddressKind::LinkLocal
    } else if ip.is_unique_local() {
        AddressKind::Private
    } else if (ip.segments()[0] & 0xe000) != 0x2000
        || IPV6_NOT_PUBLIC.iter().any(|net| net.contains(&ip))
    {
        // Outside 2000::/3: unspecified, multicast, site-local, discard-only and unassigned.
        AddressKind::Reserved
    } else {
        AddressKind::Public
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`)
/// or well-known NAT64 (`64:ff9b::a.b.c.d`) address.
fn embedded_ipv4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let segments = ip.segments();
    let low = Ipv4Addr::new(
        (segments[6] >> 8) as u8,
        segments[6] as u8,
        (segments[7] >> 8) as u8,
        segments[7] as u8,
    );
    let compatible = segments[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified();
    let nat64 = segments[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (compatible || nat64).then_some(low)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use axum::body::Body;
    use axum::extract::{Path as UrlPath, Query, State};
    use axum::response::{IntoResponse, Response};
    use axum::routing::get;
    use axum::Router;
    use bytes::Bytes;

    use super::*;

    const VIDEO: &[u8] = b"\x00\x00\x00\x18ftypmp42 not really a video, but bytes to compare";

    fn loopback_allowed(max_bytes: u64) -> ImportRules {
        ImportRules {
            max_bytes,
            allow_loopback_http: true,
        }
    }

    fn production(max_bytes: u64) -> ImportRules {
        ImportRules {
            max_bytes,
            allow_loopback_http: false,
        }
    }

    /// A real server on a loopback port, counting the requests it receives.
    struct Remote {
        port: u16,
        requests: Arc<AtomicUsize>,
    }

    impl Remote {
        fn url(&self, path: &str) -> Url {
            Url::parse(&format!("http://127.0.0.1:{}{path}", self.port)).unwrap()
        }

        fn requests(&self) -> usize {
            self.requests.load(Ordering::SeqCst)
        }
    }

    async fn remote() -> Remote {
        let requests = Arc::new(AtomicUsize::new(0));
        let app = Router::new()
            .route("/video.mp4", get(|| async { VIDEO }))
            .route("/hop/{n}", get(hop))
            .route("/to", get(redirect_to))
            .route("/status/{code}", get(status))
            .route("/large-declared/{length}", get(large_declared))
            .route("/large-chunked/{length}", get(large_chunked))
            .layer(axum::middleware::from_fn_with_state(
                Arc::clone(&requests),
                count,
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await });
        Remote { port, requests }
    }

    async fn count(
        State(requests): State<Arc<AtomicUsize>>,
        request: axum::extract::Request,
        next: axum::middleware::Next,
    ) -> Response {
        requests.fetch_add(1, Ordering::SeqCst);
        next.run(request).await
    }

    /// `/hop/{n}` redirects to `/hop/{n-1}`, and `/hop/0` to the video: `n + 1` redirects.
    async fn hop(UrlPath(n): UrlPath<u32>) -> Response {
        let next = match n {
            0 => "/video.mp4".to_string(),
            n => format!("/hop/{}", n - 1),
        };
        (StatusCode::FOUND, [(LOCATION, next)]).into_response()
    }

    #[derive(serde::Deserialize)]
    struct Target {
        target: String,
    }

    async fn redirect_to(Query(Target { target }): Query<Target>) -> Response {
        (StatusCode::TEMPORARY_REDIRECT, [(LOCATION, target)]).into_response()
    }

    /// A URL of `remote` that redirects to `target`.
    fn redirecting_to(remote: &Remote, target: &str) -> Url {
        let mut url = remote.url("/to");
        url.query_pairs_mut().append_pair("target", target);
        url
    }

    async fn status(UrlPath(code): UrlPath<u16>) -> StatusCode {
        StatusCode::from_u16(code).unwrap()
    }

    /// Declares `length` bytes, sends one small chunk, then never finishes: only a client that
    /// refuses on the declared length returns.
    async fn large_declared(UrlPath(length): UrlPath<u64>) -> Response {
        let first =
            futures::stream::once(async { Ok::<_, std::io::Error>(Bytes::from_static(b"0123")) });
        let body = Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()));
        Response::builder()
            .header(axum::http::header::CONTENT_LENGTH, length)
            .body(body)
            .unwrap()
    }

    /// Sends `length` bytes with no declared length, then never finishes: only a client that
    /// counts what it receives returns.
    async fn large_chunked(UrlPath(length): UrlPath<usize>) -> Response {
        let bytes = Bytes::from(vec![7u8; length]);
        let first = futures::stream::once(async move { Ok::<_, std::io::Error>(bytes) });
        Body::from_stream(futures::StreamExt::chain(first, futures::stream::pending()))
            .into_response()
    }

    fn refusal(result: Result<u64, ImportError>) -> Refusal {
        match result {
            Err(ImportError::Refused(refusal)) => refusal,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    /// Fails the test instead of hanging when a refusal that should come at once does not.
    async fn within_moments<T>(future: impl std::future::Future<Output = T>) -> T {
        tokio::time::timeout(Duration::from_secs(20), future)
            .await
            .expect("the fetch should have ended at once")
    }

    #[tokio::test]
    async fn a_file_on_an_allowed_loopback_server_is_fetched_whole() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = loopback_allowed(1024);
        let url = check_url(remote.url("/video.mp4").as_str(), &rules).unwrap();

        let size = fetch(&url, &dest, &rules).await.unwrap();

        assert_eq!(size, VIDEO.len() as u64);
        assert_eq!(std::fs::read(&dest).unwrap(), VIDEO);
    }

    #[tokio::test]
    async fn the_name_localhost_is_resolved_and_fetched_when_loopback_is_allowed() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let url = Url::parse(&format!("http://localhost:{}/video.mp4", remote.port)).unwrap();

        let size = fetch(&url, &dest, &loopback_allowed(1024)).await.unwrap();

        assert_eq!(size, VIDEO.len() as u64);
    }

    #[tokio::test]
    async fn loopback_is_refused_when_not_allowed_by_address_and_by_name() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = production(1024);
        for url in [
            format!("https://127.0.0.1:{}/video.mp4", remote.port),
            format!("https://localhost:{}/video.mp4", remote.port),
            format!("https://[::1]:{}/video.mp4", remote.port),
            format!("https://[::ffff:127.0.0.1]:{}/video.mp4", remote.port),
        ] {
            let refused = refusal(fetch(&Url::parse(&url).unwrap(), &dest, &rules).await);
            assert_eq!(refused.code, "IMPORT_URL_REFUSED", "{url}");
            assert_eq!(refused.status, StatusCode::BAD_REQUEST);
            assert!(refused.message.contains("loopback"), "{}", refused.message);
        }
        assert_eq!(remote.requests(), 0);
        assert!(!dest.exists());

        let at_request_time =
            check_url(&format!("https://127.0.0.1:{}/v.mp4", remote.port), &rules);
        assert_eq!(at_request_time.unwrap_err().code, "IMPORT_URL_REFUSED");
    }

    #[tokio::test]
    async fn plain_http_is_refused_unless_allowed_and_then_only_to_loopback() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");

        let refused = check_url("http://videos.example.com/v.mp4", &production(1024)).unwrap_err();
        assert_eq!(refused.code, "INVALID_URL");
        assert!(refused.message.contains("https"), "{}", refused.message);

        let refused = refusal(fetch(&remote.url("/video.mp4"), &dest, &production(1024)).await);
        assert_eq!(refused.code, "IMPORT_URL_REFUSED");
        assert_eq!(remote.requests(), 0);

        // Allowed for loopback, plain http still goes nowhere else.
        let refused = check_url("http://192.0.2.7/v.mp4", &loopback_allowed(1024)).unwrap_err();
        assert_eq!(refused.code, "IMPORT_URL_REFUSED");
        assert!(
            refused.message.contains("plain http"),
            "{}",
            refused.message
        );
    }

    #[tokio::test]
    async fn three_redirects_are_followed_and_a_fourth_is_refused() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = loopback_allowed(1024);

        let size = fetch(&remote.url("/hop/2"), &dest, &rules).await.unwrap();
        assert_eq!(size, VIDEO.len() as u64);
        assert_eq!(remote.requests(), 4);

        let refused = refusal(fetch(&remote.url("/hop/3"), &dest, &rules).await);
        assert_eq!(refused.code, "IMPORT_URL_REFUSED");
        assert!(refused.message.contains("redirects"), "{}", refused.message);
        // The fourth redirect's target is never asked for.
        assert_eq!(remote.requests(), 4 + 4);
        assert!(!dest.exists());
    }

    #[tokio::test]
    async fn a_redirect_to_a_private_link_local_or_metadata_address_is_refused_before_connecting() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = loopback_allowed(1024);
        for (target, problem) in [
            ("https://10.1.2.3/v.mp4", "a private address"),
            ("https://192.168.0.10/v.mp4", "a private address"),
            ("https://100.64.0.1/v.mp4", "a private address"),
            ("https://169.254.10.20/v.mp4", "a link-local address"),
            ("https://[fe80::1]/v.mp4", "a link-local address"),
            (
                "https://169.254.169.254/latest/meta-data/",
                "a cloud metadata address",
            ),
            (
                "https://[fd00:ec2::254]/latest/meta-data/",
                "a cloud metadata address",
            ),
            (
                "https://[::ffff:169.254.169.254]/latest/",
                "a cloud metadata address",
            ),
            ("https://[fd12:3456::1]/v.mp4", "a private address"),
            ("http://10.1.2.3/v.mp4", "plain http"),
        ] {
            let url = redirecting_to(&remote, target);

            let refused = refusal(within_moments(fetch(&url, &dest, &rules)).await);

            assert_eq!(refused.code, "IMPORT_URL_REFUSED", "{target}");
            assert!(
                refused.message.contains(problem),
                "{target}: {}",
                refused.message
            );
        }
        assert!(!dest.exists());
    }

    #[tokio::test]
    async fn a_file_declared_larger_than_the_limit_is_refused_at_once() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");

        let url = remote.url("/large-declared/1001");
        let refused = refusal(within_moments(fetch(&url, &dest, &loopback_allowed(1000))).await);

        assert_eq!(refused.code, "FILE_TOO_LARGE");
        assert_eq!(refused.status, StatusCode::PAYLOAD_TOO_LARGE);
        assert!(
            refused.message.contains("1001 bytes"),
            "{}",
            refused.message
        );
        assert!(!dest.exists());
    }

    #[tokio::test]
    async fn a_stream_without_a_length_is_refused_once_it_passes_the_limit_and_its_bytes_removed() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");

        let url = remote.url("/large-chunked/1001");
        let refused = refusal(within_moments(fetch(&url, &dest, &loopback_allowed(1000))).await);

        assert_eq!(refused.code, "FILE_TOO_LARGE");
        assert!(!dest.exists());
    }

    #[tokio::test]
    async fn a_file_of_exactly_the_limit_is_taken() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = loopback_allowed(VIDEO.len() as u64);

        let size = fetch(&remote.url("/video.mp4"), &dest, &rules)
            .await
            .unwrap();

        assert_eq!(size, VIDEO.len() as u64);
    }

    #[tokio::test]
    async fn a_remote_4xx_is_refused_with_its_status_and_a_5xx_is_worth_retrying() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let dest = dir.path().join("source");
        let rules = loopback_allowed(1000);

        let refused = refusal(fetch(&remote.url("/status/404"), &dest, &rules).await);
        assert_eq!(refused.code, "IMPORT_FAILED");
        assert!(refused.message.contains("404"), "{}", refused.message);

        for code in [503, 429] {
            let failed = fetch(&remote.url(&format!("/status/{code}")), &dest, &rules).await;
            assert!(
                matches!(failed, Err(ImportError::Failed(_))),
                "{code}: {failed:?}"
            );
        }
        assert!(!dest.exists());
    }

    #[tokio::test]
    async fn a_failure_to_connect_is_worth_retrying_and_its_message_shows_no_query() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        drop(listener);
        let dir = tempfile::tempdir().unwrap();
        let url = Url::parse(&format!("http://127.0.0.1:{port}/v.mp4?token=hush-hush")).unwrap();

        let failed = fetch(&url, &dir.path().join("source"), &loopback_allowed(1000)).await;

        let Err(ImportError::Failed(cause)) = failed else {
            panic!("expected a failure to retry, got {failed:?}");
        };
        let shown = format!("{cause:#}");
        assert!(shown.contains("127.0.0.1"), "{shown}");
        assert!(!shown.contains("hush-hush"), "{shown}");
    }

    #[tokio::test]
    async fn a_redirect_to_a_url_with_a_user_name_is_refused() {
        let remote = remote().await;
        let dir = tempfile::tempdir().unwrap();
        let target = format!("http://me:secret@127.0.0.1:{}/video.mp4", remote.port);
        let url = redirecting_to(&remote, &target);

        let refused =
            refusal(fetch(&url, &dir.path().join("source"), &loopback_allowed(1000)).await);

        assert_eq!(refused.code, "IMPORT_URL_REFUSED");
        assert!(refused.message.contains("user name"), "{}", refused.message);
        assert_eq!(remote.requests(), 1);
    }

    #[test]
    fn urls_that_are_not_absolute_https_with_a_host_and_no_user_are_invalid() {
        let rules = production(1000);
        for (url, problem) in [
            ("videos/v.mp4", "relative URL"),
            ("ftp://files.example.com/v.mp4", "https"),
            ("file:///etc/passwd", "https"),
            (
                "https://user:pass@videos.example.com/v.mp4",
                "user name or password",
            ),
            (
                "https://user@videos.example.com/v.mp4",
                "user name or password",
            ),
            ("https://", "empty host"),
            ("data:video/mp4;base64,AAAA", "https"),
        ] {
            let refused = check_url(url, &rules).unwrap_err();
            assert_eq!(refused.code, "INVALID_URL", "{url}");
            assert_eq!(refused.status, StatusCode::BAD_REQUEST);
            assert!(refused.message.starts_with("url: "), "{}", refused.message);
            assert!(
                refused.message.contains(problem),
                "{url}: {}",
                refused.message
            );
        }
        let long = format!("https://videos.example.com/{}", "a".repeat(MAX_URL_BYTES));
        assert_eq!(check_url(&long, &rules).unwrap_err().code, "INVALID_URL");
    }

    #[test]
    fn a_public_https_url_is_taken_as_given_without_its_fragment() {
        let url = check_url(
            " https://videos.example.com/v.mp4?sig=abc#t=10 ",
            &production(1000),
        )
        .unwrap();
        assert_eq!(url.as_str(), "https://videos.example.com/v.mp4?sig=abc");
        assert!(check_url("https://93.184.215.14/v.mp4", &production(1000)).is_ok());
        assert!(check_url("https://[2606:4700::1111]/v.mp4", &production(1000)).is_ok());
    }

    #[test]
    fn every_address_that_is_not_the_public_internet_is_refused() {
        let rules = production(1000);
        for ip in [
            "0.0.0.0",
            "0.1.2.3",
            "10.0.0.1",
            "100.64.0.1",
            "100.127.255.254",
            "127.0.0.1",
            "127.255.255.254",
            "169.254.0.1",
            "169.254.169.254",
            "100.100.100.200",
            "172.16.0.1",
            "172.31.255.255",
            "192.0.0.192",
            "192.0.2.1",
            "192.168.1.1",
            "198.18.0.1",
            "198.51.100.1",
            "203.0.113.1",
            "224.0.0.1",
            "239.255.255.250",
            "240.0.0.1",
            "255.255.255.255",
            "::",
            "::1",
            "::ffff:10.0.0.1",
            "::ffff:127.0.0.1",
            "::10.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "fc00::1",
            "fd00:ec2::254",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "100::1",
            "2001::1",
            "2001:db8::1",
            "2002:a00:1::1",
            "3fff::1",
        ] {
            let address: IpAddr = ip.parse().unwrap();
            assert!(
                address_problem(address, false, &rules).is_some(),
                "{ip} was let through"
            );
        }
        for ip in [
            "1.1.1.1",
            "8.8.8.8",
            "93.184.215.14",
            "100.128.0.1",
            "172.32.0.1",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
            "2606:4700::1111",
            "2a00:1450:4001::1",
        ] {
            let address: IpAddr = ip.parse().unwrap();
            assert_eq!(
                address_problem(address, false, &rules),
                None,
                "{ip} was refused"
            );
        }
    }

    #[test]
    fn loopback_is_allowed_only_by_the_setting_and_nothing_else_with_it() {
        let allowed = loopback_allowed(1000);
        assert_eq!(
            address_problem("127.0.0.1".parse().unwrap(), true, &allowed),
            None
        );
        assert_eq!(
            address_problem("::1".parse().unwrap(), true, &allowed),
            None
        );
        assert!(address_problem("10.0.0.1".parse().unwrap(), false, &allowed).is_some());
        assert!(address_problem("8.8.8.8".parse().unwrap(), true, &allowed).is_some());
    }
}
