//! The app proxy: `/apps/videoapp_sub/*` on the shop's domain, forwarded to the service with the
//! parameters the platform adds (`shop`, `logged_in_customer_id`, `path_prefix`, `timestamp`)
//! and its signature, exactly as the platform signs them.

use axum::body::{Body, Bytes};
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, Method, StatusCode};
use axum::response::{IntoResponse, Response};

use super::{cookie, DevStore};
use crate::storefront::signature::signed_query;

/// Set by the platform; a shopper's copy in the query never reaches the service.
const PLATFORM_PARAMS: [&str; 5] = [
    "shop",
    "logged_in_customer_id",
    "path_prefix",
    "timestamp",
    "signature",
];
const PATH_PREFIX: &str = "/apps/videoapp_sub";
/// Request headers the proxy passes on, and response headers it passes back.
const REQUEST_HEADERS: [header::HeaderName; 4] = [
    header::CONTENT_TYPE,
    header::ACCEPT_ENCODING,
    header::IF_NONE_MATCH,
    header::USER_AGENT,
];
const RESPONSE_HEADERS: [header::HeaderName; 6] = [
    header::CONTENT_TYPE,
    header::CONTENT_ENCODING,
    header::ETAG,
    header::CACHE_CONTROL,
    header::VARY,
    header::RETRY_AFTER,
];

pub async fn forward(
    State(store): State<DevStore>,
    Path(rest): Path<String>,
    RawQuery(query): RawQuery,
    method: Method,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let mut params: Vec<(String, String)> =
        url::form_urlencoded::parse(query.unwrap_or_default().as_bytes())
            .into_owned()
            .filter(|(k, _)| !PLATFORM_PARAMS.contains(&k.as_str()))
            .collect();
    params.push(("shop".into(), store.shop.to_string()));
    params.push((
        "logged_in_customer_id".into(),
        cookie(&headers, "customer").unwrap_or_default().to_string(),
    ));
    params.push(("path_prefix".into(), PATH_PREFIX.into()));
    let signed = signed_query(&store.secret, &params, chrono::Utc::now());
    let url = format!("{}{PATH_PREFIX}/{rest}?{signed}", store.upstream);

    let request = store.http.request(method, url).body(body);
    // What the platform shows when the app's server cannot be reached.
    relay(
        request,
        &headers,
        &REQUEST_HEADERS,
        "the app proxy",
        &RESPONSE_HEADERS,
    )
    .await
}

/// Sends `request` to the app with the browser's `headers` that `asked` lists, and gives the
/// app's answer back with the headers `answered` lists; `who` names the stand-in when the app
/// cannot be reached.
pub(super) async fn relay(
    mut request: reqwest::RequestBuilder,
    headers: &HeaderMap,
    asked: &[header::HeaderName],
    who: &str,
    answered: &[header::HeaderName],
) -> Response {
    for name in asked {
        for value in headers.get_all(name) {
            request = request.header(name, value);
        }
    }
    match request.send().await {
        Ok(answer) => pass_back(answer, answered).await,
        Err(e) => (
            StatusCode::BAD_GATEWAY,
            format!("{who} cannot reach the app: {e}"),
        )
            .into_response(),
    }
}

/// The app's answer as the store's: its status, body and the headers `names` lists.
async fn pass_back(answer: reqwest::Response, names: &[header::HeaderName]) -> Response {
    let status = answer.status();
    let mut response_headers = HeaderMap::new();
    for name in names {
        for value in answer.headers().get_all(name) {
            response_headers.append(name, value.clone());
        }
    }
    match answer.bytes().await {
        Ok(bytes) => {
            let mut response = Response::new(Body::from(bytes));
            *response.status_mut() = status;
            *response.headers_mut() = response_headers;
            response
        }
        Err(e) => (
            StatusCode::BAD_GATEWAY,
            format!("the app's answer was cut off: {e}"),
        )
            .into_response(),
    }
}
