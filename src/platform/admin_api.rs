//! The platform's per-shop endpoints the service calls: the token exchange (a session token for
//! an offline access token) and the Admin GraphQL API (the shop's products and collections, page
//! by page, and the app's web pixel).
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

use crate::catalog::domain::{HoldoutPercent, ShopDomain};

/// The Admin API version the service speaks.
pub const API_VERSION: &str = "2025-10";
/// Collections asked per page: the query's cost stays well under the platform's per-query limit.
pub const PAGE_SIZE: u32 = 100;
/// Products asked per page, each with its first 25 collections (a product in more has the rest
/// read on its own): about 30 × 31 points, under the platform's limit of 1,000 for one query.
pub const PRODUCT_PAGE_SIZE: u32 = 30;
/// The most collections a product keeps in the catalog (as the admin API takes them).
const MAX_COLLECTIONS_PER_PRODUCT: usize = 250;
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
      collections(first: 25) { pageInfo { hasNextPage endCursor } nodes { id } }
    }
  }
}";

/// The collections of one product after the first page its products query read.
const PRODUCT_COLLECTIONS_QUERY: &str =
    "query ProductCollections($id: ID!, $first: Int!, $after: String) {
  product(id: $id) {
    collections(first: $first, after: $after) { pageInfo { hasNextPage endCursor } nodes { id } }
  }
}";

const COLLECTIONS_QUERY: &str = "query Collections($first: Int!, $after: String) {
  collections(first: $first, after: $after, sortKey: ID) {
    pageInfo { hasNextPage endCursor }
    nodes { id title handle image { url } }
  }
}";

/// The app's own web pixel (the platform answers for the calling app).
const WEB_PIXEL_QUERY: &str = "query WebPixel { webPixel { id settings } }";

const WEB_PIXEL_CREATE: &str = "mutation WebPixelCreate($webPixel: WebPixelInput!) {
  webPixelCreate(webPixel: $webPixel) {
    userErrors { code field message }
    webPixel { id settings }
  }
}";

const WEB_PIXEL_UPDATE: &str = "mutation WebPixelUpdate($id: ID!, $webPixel: WebPixelInput!) {
  webPixelUpdate(id: $id, webPixel: $webPixel) {
    userErrors { code field message }
    webPixel { id settings }
  }
}";

/// The app's installation on the shop: the owner of the app's own (app-data) metafields.
const APP_INSTALLATION_QUERY: &str = "query AppInstallation { currentAppInstallation { id } }";

const METAFIELDS_SET: &str = "mutation MetafieldsSet($metafields: [MetafieldsSetInput!]!) {
  metafieldsSet(metafields: $metafields) {
    userErrors { code field message }
    metafields { namespace key value }
  }
}";

/// The app-data metafield that holds the shop's holdout (percent), as the app embed block reads
/// it: `app.metafields.videoapp.holdout_percent`.
pub const HOLDOUT_METAFIELD: (&str, &str) = ("videoapp", "holdout_percent");

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
    /// The platform refused a mutation's input (its `userErrors`).
    #[error("the platform refused the change: {0}")]
    UserErrors(String),
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
    /// The collections the product is in: the first page as read with the product; the
    /// client reads the rest before it hands the product over.
    #[serde(default)]
    collections: Option<Connection<IdNode>>,
}

#[derive(Debug, Deserialize)]
struct IdNode {
    id: String,
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

    /// The global ids of the collections the product is in (all of them, up to the catalog's
    /// limit, once [`AdminApi::products_page`] handed it over).
    pub fn collection_ids(&self) -> impl Iterator<Item = &str> {
        self.collections
            .iter()
            .flat_map(|c| c.nodes.iter().map(|n| n.id.as_str()))
    }
}

/// One collection as the Admin API gives it.
#[derive(Debug, Deserialize)]
pub struct CollectionNode {
    pub id: String,
    pub title: Option<String>,
    pub handle: Option<String>,
    image: Option<ImageNode>,
}

impl CollectionNode {
    pub fn image_url(&self) -> Option<&str> {
        self.image.as_ref()?.url.as_deref()
    }
}

/// A page of a connection's nodes, and the cursor after it when there are more.
pub struct Page<T> {
    pub nodes: Vec<T>,
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

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Connection<T> {
    page_info: PageInfo,
    nodes: Vec<T>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageInfo {
    has_next_page: bool,
    end_cursor: Option<String>,
}

/// A query of one connection's pages: it takes `$first` and `$after` besides `variables`, and
/// the connection is at `path` in its data.
struct PageQuery<'q> {
    query: &'q str,
    path: &'q [&'q str],
    first: u32,
    variables: serde_json::Value,
}

impl<'q> PageQuery<'q> {
    fn of(query: &'q str, path: &'q [&'q str], first: u32) -> PageQuery<'q> {
        PageQuery {
            query,
            path,
            first,
            variables: json!({}),
        }
    }
}

/// The pages of a product's collections after those its products query read.
fn product_collections(id: &str) -> PageQuery<'static> {
    PageQuery {
        variables: json!({ "id": id }),
        ..PageQuery::of(
            PRODUCT_COLLECTIONS_QUERY,
            &["product", "collections"],
            MAX_COLLECTIONS_PER_PRODUCT as u32,
        )
    }
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

    /// The page of the shop's products after `after` (from the first with `None`), each with
    /// every collection it is in. Throttled answers are waited out here.
    pub async fn products_page(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        after: Option<&str>,
    ) -> Result<Page<ProductNode>, AdminApiError> {
        let mut page: Page<ProductNode> = self
            .page(
                shop,
                token,
                PageQuery::of(PRODUCTS_QUERY, &["products"], PRODUCT_PAGE_SIZE),
                after,
            )
            .await?;
        for product in &mut page.nodes {
            self.read_all_collections(shop, token, product).await?;
        }
        Ok(page)
    }

    /// Reads the collections of a product in more than its products query read, page by page,
    /// up to the catalog's limit.
    async fn read_all_collections(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        product: &mut ProductNode,
    ) -> Result<(), AdminApiError> {
        let Some(collections) = &mut product.collections else {
            return Ok(());
        };
        while collections.page_info.has_next_page
            && collections.nodes.len() < MAX_COLLECTIONS_PER_PRODUCT
        {
            let after = collections.page_info.end_cursor.take();
            let more: Page<IdNode> = self
                .page(
                    shop,
                    token,
                    product_collections(&product.id),
                    after.as_deref(),
                )
                .await?;
            collections.nodes.extend(more.nodes);
            collections.page_info.has_next_page = more.next.is_some();
            collections.page_info.end_cursor = more.next;
        }
        collections.nodes.truncate(MAX_COLLECTIONS_PER_PRODUCT);
        Ok(())
    }

    /// The page of the shop's collections after `after` (from the first with `None`).
    pub async fn collections_page(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        after: Option<&str>,
    ) -> Result<Page<CollectionNode>, AdminApiError> {
        let asked = PageQuery::of(COLLECTIONS_QUERY, &["collections"], PAGE_SIZE);
        self.page(shop, token, asked, after).await
    }

    /// The app's web pixel on the shop (its id), if the app has one.
    pub async fn web_pixel(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
    ) -> Result<Option<String>, AdminApiError> {
        let answer = self
            .request(shop, token, WEB_PIXEL_QUERY, json!({}))
            .await?;
        // Without a pixel the platform answers `webPixel: null` (or no data), with an error
        // saying so.
        let none_found = answer.errors.as_ref().is_some_and(|errors| {
            errors.to_string().contains("No web pixel was found")
                || error_codes(errors).contains(&"NOT_FOUND")
        });
        match answer.data.as_ref().map(|d| &d["webPixel"]) {
            Some(serde_json::Value::Null) => Ok(None),
            None if none_found => Ok(None),
            Some(pixel) => match pixel["id"].as_str() {
                Some(id) => Ok(Some(id.to_string())),
                None => Err(AdminApiError::Answer(format!("webPixel: no id in {pixel}"))),
            },
            None => Err(AdminApiError::Answer(format!(
                "webPixel: errors {}",
                answer.errors.unwrap_or_default()
            ))),
        }
    }

    /// Activates the app's web pixel with `settings` (checked by the platform against the pixel
    /// extension's declared settings): created when `existing` is `None`, else updated. Its id.
    pub async fn activate_web_pixel(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        existing: Option<&str>,
        settings: &serde_json::Value,
    ) -> Result<String, AdminApiError> {
        // The platform documents the settings as JSON given as a string.
        let input = json!({ "settings": settings.to_string() });
        let (query, variables, field) = match existing {
            None => (
                WEB_PIXEL_CREATE,
                json!({ "webPixel": input }),
                "webPixelCreate",
            ),
            Some(id) => (
                WEB_PIXEL_UPDATE,
                json!({ "id": id, "webPixel": input }),
                "webPixelUpdate",
            ),
        };
        let answer = self.request(shop, token, query, variables).await?;
        let payload = mutation_payload(answer, field)?;
        payload["webPixel"]["id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| AdminApiError::Answer(format!("{field}: no web pixel in {payload}")))
    }

    /// Sets the shop's holdout (`percent`, 0 for none) in the app-data metafield the app embed
    /// block reads ([`HOLDOUT_METAFIELD`]), so that the theme renders it into every page.
    pub async fn publish_holdout(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        percent: HoldoutPercent,
    ) -> Result<(), AdminApiError> {
        let answer = self
            .request(shop, token, APP_INSTALLATION_QUERY, json!({}))
            .await?;
        let installation = answer
            .data
            .as_ref()
            .and_then(|d| d["currentAppInstallation"]["id"].as_str())
            .ok_or_else(|| {
                AdminApiError::Answer(format!(
                    "currentAppInstallation: no id (errors {})",
                    answer.errors.clone().unwrap_or_default()
                ))
            })?;
        let (namespace, key) = HOLDOUT_METAFIELD;
        let metafields = json!([{
            "ownerId": installation,
            "namespace": namespace,
            "key": key,
            "type": "number_integer",
            "value": percent.percent().to_string(),
        }]);
        let variables = json!({ "metafields": metafields });
        let answer = self.request(shop, token, METAFIELDS_SET, variables).await?;
        mutation_payload(answer, "metafieldsSet").map(drop)
    }

    /// One page of a connection after `after`. A query the platform finds too costly is asked
    /// again for half as many nodes; after the page, the client waits until the bucket holds
    /// what it cost.
    async fn page<T: serde::de::DeserializeOwned>(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        asked: PageQuery<'_>,
        after: Option<&str>,
    ) -> Result<Page<T>, AdminApiError> {
        let PageQuery {
            query,
            path,
            mut first,
            mut variables,
        } = asked;
        let root = path.join(".");
        loop {
            variables["first"] = first.into();
            variables["after"] = after.into();
            let answer = self.request(shop, token, query, variables.clone()).await?;
            if let Some(errors) = &answer.errors {
                if error_codes(errors).contains(&"MAX_COST_EXCEEDED") && first > 1 {
                    first /= 2;
                    continue;
                }
                return Err(AdminApiError::Answer(format!("{root}: errors {errors}")));
            }
            let connection: Connection<T> = answer
                .data
                .and_then(|mut d| {
                    let mut at = &mut d;
                    for field in path {
                        at = at.get_mut(*field)?;
                    }
                    Some(at.take())
                })
                .ok_or_else(|| AdminApiError::Answer(format!("{root}: no data")))
                .and_then(|d| {
                    serde_json::from_value(d)
                        .map_err(|e| AdminApiError::Answer(format!("{root}: {e}")))
                })?;
            // The next page costs about what this one did: wait until the bucket holds it.
            if let Some(cost) = answer.cost {
                let wait = cost.wait_for_bucket();
                if !wait.is_zero() {
                    tokio::time::sleep(wait).await;
                }
            }
            let next = connection
                .page_info
                .has_next_page
                .then_some(connection.page_info.end_cursor)
                .flatten();
            return Ok(Page {
                nodes: connection.nodes,
                next,
            });
        }
    }

    /// One GraphQL request: throttled answers are waited out; the answer's data and errors are
    /// the caller's to read.
    async fn request(
        &self,
        shop: &ShopDomain,
        token: &SecretString,
        query: &str,
        variables: serde_json::Value,
    ) -> Result<Answered, AdminApiError> {
        let url = self.url(shop, &format!("/admin/api/{API_VERSION}/graphql.json"));
        let body = json!({ "query": query, "variables": variables });
        let mut throttled = 0;
        loop {
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
                .map_err(|e| AdminApiError::Answer(format!("not GraphQL's JSON: {e}")))?;
            let cost = answer.extensions.and_then(|e| e.cost);
            if let Some(errors) = &answer.errors {
                if error_codes(errors).contains(&"THROTTLED") {
                    let wait = cost.map_or(Duration::from_secs(1), |c| c.wait_for_bucket());
                    wait_out_throttling(&mut throttled, wait).await?;
                    continue;
                }
            }
            return Ok(Answered {
                data: answer.data,
                errors: answer.errors,
                cost,
            });
        }
    }
}

/// A mutation's payload (its root `field`), unless the answer has errors or the platform refused
/// the input (`userErrors`).
fn mutation_payload(answer: Answered, field: &str) -> Result<serde_json::Value, AdminApiError> {
    if let Some(errors) = answer.errors {
        return Err(AdminApiError::Answer(format!("{field}: errors {errors}")));
    }
    let payload = answer.data.map(|mut d| d[field].take()).unwrap_or_default();
    match payload["userErrors"].as_array() {
        Some(errors) if !errors.is_empty() => Err(AdminApiError::UserErrors(format!(
            "{field}: {}",
            serde_json::Value::from(errors.clone())
        ))),
        _ => Ok(payload),
    }
}

/// A GraphQL answer that was not throttled.
struct Answered {
    data: Option<serde_json::Value>,
    errors: Option<serde_json::Value>,
    cost: Option<Cost>,
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
