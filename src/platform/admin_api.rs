//! The platform's per-shop endpoints the service calls: the token exchange (a session token for
//! an offline access token) and the Admin GraphQL API (the shop's products, page by page).
//!
//! GraphQL requests are paid from a bucket of cost points per shop that refills at a fixed rate.
//! A request the bucket cannot pay is answered `THROTTLED`; it is sent again once the bucket has
//! refilled enough (computed from the answer's `throttleStatus`), and before each page the client
//! waits if the last answer left less in the bucket than a page costs. A query whose own cost is
//! over the platform's limit (`MAX_COST_EXCEEDED`) is asked again for half as many products.

use std::time::Duration;

use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use serde_json::json;
use url::Url;

use crate::catalog::domain::ShopDomain;

/// The Admin API version the service speaks.
pub const API_VERSION: &str = "2025-10";
/// Products asked per page: the query's cost stays well under the platform's per-query limit.
pub const PAGE_SIZE: u32 = 100;
/// Throttled answers taken for one page before the attempt fails (and the work is retried later).
const MAX_THROTTLED: u32 = 20;
/// The longest wait for the bucket to refill, whatever the answer says.
const MAX_THROTTLE_WAIT: Duration = Duration::from_secs(60);

const PRODUCTS_QUERY: &str = "query Products($first: Int!, $after: String) {
  products(first: $first, after: $after, sortKey: ID) {
    pageInfo { hasNextPage endCursor }
    nodes {
      id title handle status updatedAt
      featuredMedia { preview { image { url } } }
    }
  }
}";

/// The service's client of the platform.
pub struct AdminApi {
    http: reqwest::Client,
    client_id: String,
    secret: SecretString,
    /// Where every shop's endpoints are, instead of `https://{shop}` (a local stand-in).
    origin: Option<Url>,
}

/// Why a call to the platform did not give what was asked.
#[derive(Debug, thiserror::Error)]
pub enum AdminApiError {
    /// The platform refused the request's credentials (the session token, or the access token).
    #[error("the platform refused the credentials: {0}")]
    Refused(String),
    #[error("the platform answered {status}: {body}")]
    Status { status: u16, body: String },
    #[error("the platform's answer is not what it documents: {0}")]
    Answer(String),
    #[error("the platform kept throttling after {MAX_THROTTLED} waits")]
    Throttled,
    #[error("cannot reach the platform: {0}")]
    Transport(#[from] reqwest::Error),
}

/// An offline access token and the scopes granted with it.
pub struct OfflineToken {
    pub token: SecretString,
    pub scope: String,
}

/// One product as the Admin API gives it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProductNode {
    pub id: String,
    pub title: Option<String>,
    pub handle: Option<String>,
    /// `ACTIVE`, `DRAFT`, `ARCHIVED`.
    pub status: Option<String>,
    pub updated_at: Option<chrono::DateTime<chrono::Utc>>,
    pub featured_media: Option<MediaNode>,
}

#[derive(Debug, Deserialize)]
pub struct MediaNode {
    preview: Option<PreviewNode>,
}

#[derive(Debug, Deserialize)]
struct PreviewNode {
    image: Option<ImageNode>,
}

#[derive(Debug, Deserialize)]
struct ImageNode {
    url: Option<String>,
}

impl ProductNode {
    pub fn image_url(&self) -> Option<&str> {
        let media = self.featured_media.as_ref()?;
        media.preview.as_ref()?.image.as_ref()?.url.as_deref()
    }
}

/// A page of products, and the cursor after it when there are more.
pub struct ProductsPage {
    pub products: Vec<ProductNode>,
    pub next: Option<String>,
}

#[derive(Deserialize)]
struct GraphqlAnswer {
    data: Option<serde_json::Value>,
    #[serde(default)]
    errors: Option<serde_json::Value>,
    extensions: Option<Extensions>,
}

#[derive(Deserialize)]
struct Extensions {
    cost: Option<Cost>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct Cost {
    requested_query_cost: Option<f64>,
    throttle_status: Option<ThrottleStatus>,
}

#[derive(Deserialize, Clone, Copy)]
#[serde(rename_all = "camelCase")]
struct ThrottleStatus {
    currently_available: f64,
    restore_rate: f64,
}

impl Cost {
    /// How long until the bucket holds what the request cost (zero if it already does).
    fn wait_for_bucket(&self) -> Duration {
        let (Some(needed), Some(status)) = (self.requested_query_cost, self.throttle_status) else {
            return Duration::from_secs(1);
        };
        let missing = needed - status.currently_available;
        if missing <= 0.0 || status.restore_rate <= 0.0 {
            return Duration::ZERO;
        }
        Duration::from_secs_f64(missing / status.restore_rate).min(MAX_THROTTLE_WAIT)
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProductsData {
    products: Connection,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection {
    page_info: PageInfo,
    nodes: Vec<ProductNode>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
    end_cursor: Option<String>,
}

/// The codes of the errors of a GraphQL answer (`errors[].extensions.code`).
fn error_codes(errors: &serde_json::Value) -> Vec<&str> {
    match errors {
        serde_json::Value::Array(errors) => errors
            .iter()
            .filter_map(|e| e.pointer("/extensions/code")?.as_str())
            .collect(),
        _ => Vec::new(),
    }
}

impl AdminApi {
    pub fn new(client_id: String, secret: SecretString, origin: Option<Url>) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .timeout(Duration::from_secs(30))
            .build()
            .expect("the HTTP client builds with these settings");
        AdminApi {
            http,
            client_id,
            secret,
            origin,
        }
    }

    fn url(&self, shop: &ShopDomain, path: &str) -> String {
        match &self.origin {
            Some(origin) => format!("{}{path}", origin.as_str().trim_end_matches('/')),
            None => format!("https://{shop}{path}"),
        }
    }

    /// Exchanges the session token for the shop's offline access token.
    pub async fn exchange(
        &self,
        shop: &ShopDomain,
        session_token: &SecretString,
    ) -> Result<OfflineToken, AdminApiError> {
        let body = json!({
            "client_id": self.client_id,
            "client_secret": self.secret.expose_secret(),
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "subject_token": session_token.expose_secret(),
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "requested_token_type": "urn:shopify:params:oauth:token-type:offline-access-token",
        });
        let response = self
            .http
            .post(self.url(shop, "/admin/oauth/access_token"))
            .header(reqwest::header::ACCEPT, "application/json")
            .json(&body)
            .send()
            .await?;
        let status = response.status();
        let text = response.text().await?;
        if status == reqwest::StatusCode::BAD_REQUEST || status == reqwest::StatusCode::UNAUTHORIZED
        {
            #[derive(Deserialize)]
            struct Refusal {
                error: Option<String>,
                error_description: Option<String>,
            }
            let refusal: Option<Refusal> = serde_json::from_str(&text).ok();
            let reason = refusal
                .and_then(|r| r.error_description.or(r.error))
                .unwrap_or_else(|| format!("status {status}"));
            return Err(AdminApiError::Refused(reason));
        }
        if !status.is_success() {
            return Err(status_error(status, &text));
        }
        #[derive(Deserialize)]
        struct Granted {
            access_token: String,
            scope: String,
        }
        let granted: Granted = serde_json::from_str(&text)
            .map_err(|e| AdminApiError::Answer(format!("token exchange: {e}")))?;
        Ok(OfflineToken {
            token: granted.access_token.into(),
            scope: granted.scope,
        })
    }

    /// The page of the shop's products after `after` (from the first with `None`). Throttled
    /// answers are waited out here.
    pub async fn products_page(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        after: Option<&str>,
    ) -> Result<ProductsPage, AdminApiError> {
        let url = self.url(shop, &format!("/admin/api/{API_VERSION}/graphql.json"));
        let mut first = PAGE_SIZE;
        let mut throttled = 0;
        loop {
            let body = json!({
                "query": PRODUCTS_QUERY,
                "variables": { "first": first, "after": after },
            });
            let response = self
                .http
                .post(&url)
                .header("X-Shopify-Access-Token", token.expose_secret())
                .json(&body)
                .send()
                .await?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get(reqwest::header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|s| s.is_finite() && *s >= 0.0);
            let text = response.text().await?;
            if status == reqwest::StatusCode::UNAUTHORIZED
                || status == reqwest::StatusCode::FORBIDDEN
            {
                return Err(AdminApiError::Refused(format!("status {status}")));
            }
            if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
                let wait = Duration::from_secs_f64(retry_after.unwrap_or(1.0).min(3600.0));
                wait_out_throttling(&mut throttled, wait).await?;
                continue;
            }
            if !status.is_success() {
                return Err(status_error(status, &text));
            }
            let answer: GraphqlAnswer = serde_json::from_str(&text)
                .map_err(|e| AdminApiError::Answer(format!("products: {e}")))?;
            let cost = answer.extensions.and_then(|e| e.cost);
            if let Some(errors) = &answer.errors {
                let codes = error_codes(errors);
                if codes.contains(&"THROTTLED") {
                    let wait = cost.map_or(Duration::from_secs(1), |c| c.wait_for_bucket());
                    wait_out_throttling(&mut throttled, wait).await?;
                    continue;
                }
                if codes.contains(&"MAX_COST_EXCEEDED") && first > 1 {
                    first /= 2;
                    continue;
                }
                return Err(AdminApiError::Answer(format!("products: errors {errors}")));
            }
            let data: ProductsData = answer
                .data
                .ok_or_else(|| AdminApiError::Answer("products: no data".into()))
                .and_then(|d| {
                    serde_json::from_value(d)
                        .map_err(|e| AdminApiError::Answer(format!("products: {e}")))
                })?;
            // The next page costs about what this one did: wait until the bucket holds it.
            if let Some(cost) = cost {
                let wait = cost.wait_for_bucket();
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            let connection = data.products;
            let next = connection
                .page_info
                .has_next_page
                .then_some(connection.page_info.end_cursor)
                .flatten();
            return Ok(ProductsPage {
                products: connection.nodes,
                next,
            });
        }
    }
}

/// One more throttled answer for a page: waited out (at least 10 ms, at most a minute), or the
/// attempt ends once a page was throttled `MAX_THROTTLED` times.
async fn wait_out_throttling(throttled: &mut u32, wait: Duration) -> Result<(), AdminApiError> {
    *throttled += 1;
    if *throttled > MAX_THROTTLED {
        return Err(AdminApiError::Throttled);
    }
    metrics::counter!("platform_throttled_total").increment(1);
    tokio::time::sleep(wait.clamp(Duration::from_millis(10), MAX_THROTTLE_WAIT)).await;
    Ok(())
}

fn status_error(status: reqwest::StatusCode, body: &str) -> AdminApiError {
    let body: String = body.chars().take(200).collect();
    AdminApiError::Status {
        status: status.as_u16(),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_throttled_request_waits_until_the_bucket_holds_its_cost() {
        let cost: Cost = serde_json::from_value(json!({
            "requestedQueryCost": 102, "actualQueryCost": null,
            "throttleStatus": {"maximumAvailable": 2000.0, "currentlyAvailable": 2, "restoreRate": 100.0}
        }))
        .unwrap();
        assert_eq!(cost.wait_for_bucket(), Duration::from_secs(1));
        let full: Cost = serde_json::from_value(json!({
            "requestedQueryCost": 102,
            "throttleStatus": {"maximumAvailable": 2000.0, "currentlyAvailable": 1898, "restoreRate": 100.0}
        }))
        .unwrap();
        assert_eq!(full.wait_for_bucket(), Duration::ZERO);
    }

    #[test]
    fn error_codes_are_read_from_each_errors_extensions() {
        let errors = json!([
            {"message": "Throttled", "extensions": {"code": "THROTTLED"}},
            {"message": "no code"}
        ]);
        assert_eq!(error_codes(&errors), vec!["THROTTLED"]);
        assert!(error_codes(&json!("[API] Invalid API key")).is_empty());
    }
}
