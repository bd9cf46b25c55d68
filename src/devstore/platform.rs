//! The platform's per-shop endpoints the service calls, as the platform documents their requests
//! and answers: the token exchange (`POST /admin/oauth/access_token`) and the Admin GraphQL API
//! (`POST /admin/api/{version}/graphql.json`): the `products` and `collections` connections, the
//! app's `webPixel`, `webPixelCreate` and `webPixelUpdate`, `currentAppInstallation` and
//! `metafieldsSet` on it (the app-data metafields a theme app extension reads), with cost-based
//! throttling.
//!
//! The demo store serves it for its demo shop and catalog, so an install runs end to end on one
//! machine; the API tests start one of their own and make it misbehave (throttle, fail, refuse).
//! It keeps everything in memory.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};
use uuid::Uuid;

/// The settings the app's pixel extension declares: a pixel is created or updated only with
/// these fields, as the platform validates them against the extension's definition.
const PIXEL_EXTENSION: &str =
    include_str!("../../extensions/videoapp-pixel/shopify.extension.toml");

/// A product of a shop, as the Admin API gives it.
#[derive(Clone, Debug)]
pub struct StandInProduct {
    pub id: u64,
    pub title: String,
    pub handle: String,
    pub active: bool,
    pub updated_at: String,
    pub image: Option<String>,
    /// The ids of the collections it is in.
    pub collections: Vec<u64>,
}

/// A collection of a shop, as the Admin API gives it.
#[derive(Clone, Debug)]
pub struct StandInCollection {
    pub id: u64,
    pub title: String,
    pub handle: String,
    pub image: Option<String>,
}

/// The Admin GraphQL operations the stand-in answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operation {
    Products,
    /// A product's collections after those its products query read.
    ProductCollections,
    Collections,
    WebPixel,
    WebPixelCreate,
    WebPixelUpdate,
    AppInstallation,
    MetafieldsSet,
}

/// What the stand-in was asked.
#[derive(Default, Clone)]
pub struct Seen {
    /// Each token exchange's JSON body.
    pub exchanges: Vec<Value>,
    /// Each products request's `after` variable (`None` for the first page).
    pub pages_asked: Vec<Option<String>>,
    /// Each collections request's `after` variable.
    pub collection_pages_asked: Vec<Option<String>>,
    /// The settings of each web pixel created, per shop, in order.
    pub pixels_created: Vec<(String, Value)>,
    /// The settings of each web pixel update, per shop, in order.
    pub pixels_updated: Vec<(String, Value)>,
    /// Each app-data metafield set, per shop, in order: (shop, namespace, key, value).
    pub metafields_set: Vec<(String, String, String, String)>,
    /// Answers of `THROTTLED`.
    pub throttled: usize,
}

/// How the stand-in misbehaves, to prove the service copes.
#[derive(Default, Clone)]
pub struct Behaviour {
    /// Every n-th GraphQL request is answered `THROTTLED`.
    pub throttle_every: Option<usize>,
    /// The requests of an operation (counted from 1 per operation) answered 500 once.
    pub fail: Vec<(Operation, usize)>,
    /// Every token exchange is refused as the platform refuses an invalid subject token.
    pub refuse_exchange: bool,
}

#[derive(Default)]
struct Shop {
    products: Vec<StandInProduct>,
    collections: Vec<StandInCollection>,
    /// The app's web pixel: its id and settings.
    pixel: Option<(String, Value)>,
    /// The app's own metafields on its installation: (namespace, key) → value.
    app_metafields: HashMap<(String, String), String>,
}

struct Inner {
    client_id: String,
    secret: String,
    shops: HashMap<String, Shop>,
    /// Access token → its shop.
    tokens: HashMap<String, String>,
    behaviour: Behaviour,
    requests: usize,
    requests_of: HashMap<Operation, usize>,
    seen: Seen,
}

/// The stand-in; clones share its state.
#[derive(Clone)]
pub struct PlatformStandIn {
    inner: Arc<Mutex<Inner>>,
}

const MUTATION_COST: f64 = 10.0;
/// The most a single query may cost, as the platform limits it.
const MAX_QUERY_COST: f64 = 1000.0;

impl PlatformStandIn {
    /// The stand-in for the app of `client_id`, whose client secret is `secret`.
    pub fn new(client_id: &str, secret: &str, behaviour: Behaviour) -> PlatformStandIn {
        let inner = Inner {
            client_id: client_id.to_string(),
            secret: secret.to_string(),
            shops: HashMap::new(),
            tokens: HashMap::new(),
            behaviour,
            requests: 0,
            requests_of: HashMap::new(),
            seen: Seen::default(),
        };
        PlatformStandIn {
            inner: Arc::new(Mutex::new(inner)),
        }
    }

    /// Its endpoints, at the paths the platform serves them on a shop's domain.
    pub fn router<S>(&self) -> Router<S> {
        Router::new()
            .route("/admin/oauth/access_token", post(exchange))
            .route("/admin/api/{version}/graphql.json", post(graphql))
            .route("/admin/stand-in/calls", get(calls))
            .with_state(self.inner.clone())
    }

    /// Serves it alone on a free loopback port; its origin (`http://127.0.0.1:port`).
    pub async fn serve_on_loopback(&self) -> std::io::Result<String> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let origin = format!("http://{}", listener.local_addr()?);
        let router: Router = self.router();
        tokio::spawn(async move { axum::serve(listener, router).await });
        Ok(origin)
    }

    pub fn set_products(&self, shop: &str, products: Vec<StandInProduct>) {
        self.with_shop(shop, |s| s.products = products);
    }

    pub fn set_collections(&self, shop: &str, collections: Vec<StandInCollection>) {
        self.with_shop(shop, |s| s.collections = collections);
    }

    /// The shop's products, as its admin lists them.
    pub fn products(&self, shop: &str) -> Vec<StandInProduct> {
        self.with_shop(shop, |s| s.products.clone())
    }

    /// Changes a product as its admin does, which dates it now; the product as changed.
    pub fn change_product(
        &self,
        shop: &str,
        id: u64,
        change: impl FnOnce(&mut StandInProduct),
    ) -> Option<StandInProduct> {
        self.with_shop(shop, |s| {
            let product = s.products.iter_mut().find(|p| p.id == id)?;
            change(product);
            product.updated_at = chrono::Utc::now().to_rfc3339();
            Some(product.clone())
        })
    }

    /// Deletes a product; whether the shop had it.
    pub fn remove_product(&self, shop: &str, id: u64) -> bool {
        self.with_shop(shop, |s| {
            let before = s.products.len();
            s.products.retain(|p| p.id != id);
            s.products.len() < before
        })
    }

    /// The app is uninstalled from the shop: its access tokens stop working and its web pixel
    /// goes, as the platform removes an app's pixel with it.
    pub fn uninstall(&self, shop: &str) {
        let mut inner = self
            .inner
            .lock()
            .expect("the stand-in's lock is never poisoned");
        inner.tokens.retain(|_, of| of != shop);
        if let Some(state) = inner.shops.get_mut(shop) {
            state.pixel = None;
            state.app_metafields.clear();
        }
    }

    /// The value of the app's own metafield `namespace.key` on the shop, as a theme app
    /// extension reads it (`app.metafields.namespace.key`); `None` while it is not set.
    pub fn app_metafield(&self, shop: &str, namespace: &str, key: &str) -> Option<String> {
        let inner = self
            .inner
            .lock()
            .expect("the stand-in's lock is never poisoned");
        let state = inner.shops.get(shop)?;
        let field = (namespace.to_string(), key.to_string());
        state.app_metafields.get(&field).cloned()
    }

    fn with_shop<T>(&self, shop: &str, change: impl FnOnce(&mut Shop) -> T) -> T {
        let mut inner = self
            .inner
            .lock()
            .expect("the stand-in's lock is never poisoned");
        change(inner.shops.entry(shop.to_string()).or_default())
    }

    pub fn seen(&self) -> Seen {
        self.inner
            .lock()
            .expect("the stand-in's lock is never poisoned")
            .seen
            .clone()
    }

    /// The access tokens granted.
    pub fn granted_tokens(&self) -> Vec<String> {
        let inner = self
            .inner
            .lock()
            .expect("the stand-in's lock is never poisoned");
        inner.tokens.keys().cloned().collect()
    }
}

/// The demo catalog the demo store's platform holds for its shop: three products and two
/// collections, their images served by the demo store at `store_origin`.
pub fn demo_catalog(store_origin: &str) -> (Vec<StandInProduct>, Vec<StandInCollection>) {
    let product = |id: u64, title: &str, handle: &str, collections: &[u64]| StandInProduct {
        id,
        title: title.into(),
        handle: handle.into(),
        active: true,
        updated_at: "2026-11-20T10:00:00Z".into(),
        image: Some(format!("{store_origin}/media/product-{id}.svg")),
        collections: collections.to_vec(),
    };
    let collection = |id: u64, title: &str, handle: &str, image: u64| StandInCollection {
        id,
        title: title.into(),
        handle: handle.into(),
        image: Some(format!("{store_origin}/media/product-{image}.svg")),
    };
    (
        vec![
            product(1001, "Linen Shirt", "linen-shirt", &[501]),
            product(1002, "Summer Dress", "summer-dress", &[501]),
            product(1003, "Canvas Tote", "canvas-tote", &[502]),
        ],
        vec![
            collection(501, "Summer", "summer", 1002),
            collection(502, "Accessories", "accessories", 1003),
        ],
    )
}

type Shared = Arc<Mutex<Inner>>;

fn refusal(description: &str) -> Response {
    let body = json!({ "error": "invalid_subject_token", "error_description": description });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// `POST /admin/oauth/access_token` with the token exchange grant.
async fn exchange(State(inner): State<Shared>, Json(body): Json<Value>) -> Response {
    let mut inner = inner.lock().expect("the stand-in's lock is never poisoned");
    inner.seen.exchanges.push(body.clone());
    let field = |name: &str| body[name].as_str().unwrap_or_default().to_string();
    let expected = [
        ("client_id", inner.client_id.as_str()),
        ("client_secret", inner.secret.as_str()),
        (
            "grant_type",
            "urn:ietf:params:oauth:grant-type:token-exchange",
        ),
        (
            "subject_token_type",
            "urn:ietf:params:oauth:token-type:id_token",
        ),
        (
            "requested_token_type",
            "urn:shopify:params:oauth:token-type:offline-access-token",
        ),
    ];
    for (name, value) in expected {
        if field(name) != value {
            let body = json!({ "error": "invalid_request", "error_description": format!("{name} is wrong") });
            return (StatusCode::BAD_REQUEST, Json(body)).into_response();
        }
    }
    if inner.behaviour.refuse_exchange {
        return refusal("The subject token is not valid for this shop");
    }
    let mut validation = Validation::new(Algorithm::HS256);
    validation.set_audience(&[inner.client_id.as_str()]);
    let key = DecodingKey::from_secret(inner.secret.as_bytes());
    let Ok(token) = jsonwebtoken::decode::<Value>(&field("subject_token"), &key, &validation)
    else {
        return refusal("The subject token could not be verified");
    };
    let shop = token.claims["dest"]
        .as_str()
        .unwrap_or_default()
        .trim_start_matches("https://")
        .to_string();
    let access_token = format!("shpat_{}", Uuid::new_v4().simple());
    inner.tokens.insert(access_token.clone(), shop);
    Json(json!({ "access_token": access_token, "scope": "read_products,write_pixels,read_customer_events" }))
        .into_response()
}

/// `GET /admin/stand-in/calls`: what the stand-in was asked, for a look from outside (the
/// browser tests, a developer): not an endpoint of the platform.
async fn calls(State(inner): State<Shared>) -> Response {
    let inner = inner.lock().expect("the stand-in's lock is never poisoned");
    let seen = &inner.seen;
    let settings = |calls: &[(String, Value)]| -> Vec<Value> {
        calls
            .iter()
            .map(|(shop, settings)| json!({ "shop": shop, "settings": settings }))
            .collect()
    };
    Json(json!({
        "tokenExchanges": seen.exchanges.len(),
        "productPages": seen.pages_asked.len(),
        "collectionPages": seen.collection_pages_asked.len(),
        "webPixelCreate": settings(&seen.pixels_created),
        "webPixelUpdate": settings(&seen.pixels_updated),
        "metafieldsSet": seen.metafields_set.len(),
    }))
    .into_response()
}

/// Which operation a query asks for. The stand-in reads the operation's root field, as far as
/// the service's own queries need: mutations first, as their text names `webPixel` too.
fn operation_of(query: &str) -> Option<Operation> {
    if query.contains("metafieldsSet(") {
        Some(Operation::MetafieldsSet)
    } else if query.contains("currentAppInstallation") {
        Some(Operation::AppInstallation)
    } else if query.contains("webPixelCreate(") {
        Some(Operation::WebPixelCreate)
    } else if query.contains("webPixelUpdate(") {
        Some(Operation::WebPixelUpdate)
    } else if query.contains("product(") {
        Some(Operation::ProductCollections)
    } else if query.contains("products(") {
        Some(Operation::Products)
    } else if query.contains("collections(") {
        Some(Operation::Collections)
    } else if query.contains("webPixel") {
        Some(Operation::WebPixel)
    } else {
        None
    }
}

/// The cost answer of a request: what it asked, what it took, and the bucket.
fn cost(requested: f64, available: f64, actual: Option<f64>) -> Value {
    json!({ "cost": {
        "requestedQueryCost": requested,
        "actualQueryCost": actual,
        "throttleStatus": { "maximumAvailable": 2000.0, "currentlyAvailable": available, "restoreRate": 1000.0 }
    }})
}

/// `POST /admin/api/{version}/graphql.json`.
async fn graphql(
    State(inner): State<Shared>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut inner = inner.lock().expect("the stand-in's lock is never poisoned");
    let token = headers
        .get("x-shopify-access-token")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(shop) = inner.tokens.get(token).cloned() else {
        let body = json!({ "errors": "[API] Invalid API key or access token (unrecognized login or wrong password)" });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    };
    let Some(operation) = operation_of(body["query"].as_str().unwrap_or_default()) else {
        let body = json!({ "errors": [{ "message": "the stand-in does not answer this query" }] });
        return Json(body).into_response();
    };
    inner.requests += 1;
    let request = inner.requests;
    let of_operation = {
        let count = inner.requests_of.entry(operation).or_default();
        *count += 1;
        *count
    };
    if inner.behaviour.fail.contains(&(operation, of_operation)) {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response();
    }
    let variables = &body["variables"];
    let first = variables["first"].as_u64().unwrap_or(0) as usize;
    let query = body["query"].as_str().unwrap_or_default();
    // The first page of each product's collections, where the products query asks for them.
    let nested_first = first_of("collections", query);
    // As the platform reckons it: a connection costs 2 plus `first` times its node, an object 1.
    let requested = match operation {
        Operation::Products => {
            let collections = nested_first.map_or(0, |n| 2 + n);
            2.0 + (first * (4 + collections)) as f64
        }
        Operation::Collections => 2.0 + (first * 2) as f64,
        Operation::ProductCollections => 3.0 + first as f64,
        Operation::WebPixel | Operation::AppInstallation => 1.0,
        Operation::WebPixelCreate | Operation::WebPixelUpdate | Operation::MetafieldsSet => {
            MUTATION_COST
        }
    };
    if requested > MAX_QUERY_COST {
        let body = json!({ "errors": [{
            "message": format!("Query cost is {requested}, which exceeds the single query max cost limit ({MAX_QUERY_COST})."),
            "extensions": { "code": "MAX_COST_EXCEEDED", "cost": requested, "maxCost": MAX_QUERY_COST },
        }]});
        return Json(body).into_response();
    }
    if inner
        .behaviour
        .throttle_every
        .is_some_and(|n| request % n == 0)
    {
        inner.seen.throttled += 1;
        let body = json!({
            "errors": [{ "message": "Throttled", "extensions": {
                "code": "THROTTLED", "documentation": "https://shopify.dev/api/usage/rate-limits" } }],
            "extensions": cost(requested, 0.0, None),
        });
        return Json(body).into_response();
    }
    let extensions = cost(requested, 2000.0 - requested, Some(requested));
    let inner = &mut *inner;
    let state = inner.shops.entry(shop.clone()).or_default();
    let answer = match operation {
        Operation::Products | Operation::Collections | Operation::ProductCollections
            if first == 0 =>
        {
            json!({ "errors": [{ "message": "you must provide one of first or last" }] })
        }
        Operation::Products => {
            let after = variables["after"].as_str().map(str::to_string);
            inner.seen.pages_asked.push(after.clone());
            let nodes = state.products.iter().map(|p| {
                json!({
                    "id": format!("gid://shopify/Product/{}", p.id),
                    "title": p.title,
                    "handle": p.handle,
                    "status": if p.active { "ACTIVE" } else { "DRAFT" },
                    "updatedAt": p.updated_at,
                    "featuredMedia": p.image.as_ref().map(|url| json!({ "preview": { "image": { "url": url } } })),
                    "collections": nested_first.map(|n| page(collection_ids(p), None, n)),
                })
            });
            json!({ "data": { "products": page(nodes, after.as_deref(), first) } })
        }
        Operation::ProductCollections => {
            let after = variables["after"].as_str();
            let asked = variables["id"].as_str().unwrap_or_default();
            let product = state
                .products
                .iter()
                .find(|p| format!("gid://shopify/Product/{}", p.id) == asked);
            let product =
                product.map(|p| json!({ "collections": page(collection_ids(p), after, first) }));
            json!({ "data": { "product": product } })
        }
        Operation::Collections => {
            let after = variables["after"].as_str().map(str::to_string);
            inner.seen.collection_pages_asked.push(after.clone());
            let nodes = state.collections.iter().map(|c| {
                json!({
                    "id": format!("gid://shopify/Collection/{}", c.id),
                    "title": c.title,
                    "handle": c.handle,
                    "image": c.image.as_ref().map(|url| json!({ "url": url })),
                })
            });
            json!({ "data": { "collections": page(nodes, after.as_deref(), first) } })
        }
        Operation::WebPixel => match &state.pixel {
            Some((id, settings)) => {
                json!({ "data": { "webPixel": { "id": id, "settings": settings.to_string() } } })
            }
            None => json!({
                "data": { "webPixel": null },
                "errors": [{ "message": "No web pixel was found for this app.", "path": ["webPixel"] }],
            }),
        },
        Operation::WebPixelCreate => {
            let settings = pixel_settings(&variables["webPixel"]["settings"]);
            let outcome = match (&state.pixel, settings) {
                (Some(_), _) => Err(("TAKEN", "Web pixel is taken.".to_string())),
                (None, Err(problem)) => Err(("INVALID_SETTINGS", problem)),
                (None, Ok(settings)) => {
                    let id = format!(
                        "gid://shopify/WebPixel/{}",
                        1000 + inner.seen.pixels_created.len()
                    );
                    inner
                        .seen
                        .pixels_created
                        .push((shop.clone(), settings.clone()));
                    state.pixel = Some((id.clone(), settings.clone()));
                    Ok((id, settings))
                }
            };
            json!({ "data": { "webPixelCreate": pixel_payload(outcome) } })
        }
        Operation::WebPixelUpdate => {
            let settings = pixel_settings(&variables["webPixel"]["settings"]);
            let asked = variables["id"].as_str().unwrap_or_default();
            let outcome = match (&mut state.pixel, settings) {
                (Some((id, held)), Ok(settings)) if id.as_str() == asked => {
                    inner
                        .seen
                        .pixels_updated
                        .push((shop.clone(), settings.clone()));
                    *held = settings.clone();
                    Ok((id.clone(), settings))
                }
                (_, Err(problem)) => Err(("INVALID_SETTINGS", problem)),
                _ => Err(("NOT_FOUND", "Web pixel not found.".to_string())),
            };
            json!({ "data": { "webPixelUpdate": pixel_payload(outcome) } })
        }
        Operation::AppInstallation => {
            json!({ "data": { "currentAppInstallation": { "id": app_installation(&shop) } } })
        }
        Operation::MetafieldsSet => {
            let installation = app_installation(&shop);
            let inputs = variables["metafields"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let problems: Vec<Value> = inputs
                .iter()
                .enumerate()
                .filter_map(|(i, input)| {
                    app_metafield_problem(input, &installation).map(|(field, code, message)| {
                        json!({ "field": ["metafields", i.to_string(), field], "code": code, "message": message })
                    })
                })
                .collect();
            // The platform sets all of them or none.
            let set: Vec<Value> = if problems.is_empty() {
                inputs
                    .iter()
                    .map(|input| {
                        let text =
                            |field: &str| input[field].as_str().unwrap_or_default().to_string();
                        let (namespace, key, value) =
                            (text("namespace"), text("key"), text("value"));
                        inner.seen.metafields_set.push((
                            shop.clone(),
                            namespace.clone(),
                            key.clone(),
                            value.clone(),
                        ));
                        state
                            .app_metafields
                            .insert((namespace.clone(), key.clone()), value.clone());
                        json!({ "namespace": namespace, "key": key, "value": value })
                    })
                    .collect()
            } else {
                Vec::new()
            };
            json!({ "data": { "metafieldsSet": { "metafields": set, "userErrors": problems } } })
        }
    };
    let mut answer = answer;
    answer["extensions"] = extensions;
    Json(answer).into_response()
}

/// The id of the app's installation on the shop (one per shop: the stand-in serves one app).
fn app_installation(shop: &str) -> String {
    let number: u64 = shop
        .bytes()
        .fold(7, |n, b| n.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("gid://shopify/AppInstallation/{}", number % 1_000_000_000)
}

/// What the platform would refuse in one `MetafieldsSetInput` the stand-in takes (an app-data
/// metafield of an integer): the field, the error code and the message.
fn app_metafield_problem(
    input: &Value,
    installation: &str,
) -> Option<(&'static str, &'static str, String)> {
    if input["ownerId"].as_str() != Some(installation) {
        return Some((
            "ownerId",
            "INVALID",
            format!(
                "Owner {} does not exist or is not the app's installation.",
                input["ownerId"]
            ),
        ));
    }
    for field in ["namespace", "key"] {
        let text = input[field].as_str().unwrap_or_default();
        if text.len() < 2 {
            return Some((
                field,
                "TOO_SHORT",
                format!("{field} is too short (minimum is 2 characters)"),
            ));
        }
    }
    if input["type"].as_str() != Some("number_integer") {
        return Some((
            "type",
            "INVALID_TYPE",
            format!(
                "the stand-in takes only number_integer, not {}",
                input["type"]
            ),
        ));
    }
    match input["value"].as_str().map(str::parse::<i64>) {
        Some(Ok(_)) => None,
        _ => Some((
            "value",
            "INVALID_VALUE",
            format!("Value must be an integer, not {}", input["value"]),
        )),
    }
}

/// The `first` argument a query gives `field`'s connection (`field(first: 25`), if it asks for it.
fn first_of(field: &str, query: &str) -> Option<usize> {
    let (_, rest) = query.split_once(&format!("{field}(first: "))?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

/// A product's collections as the nodes of its `collections` connection.
fn collection_ids(product: &StandInProduct) -> impl Iterator<Item = Value> + '_ {
    product
        .collections
        .iter()
        .map(|id| json!({ "id": format!("gid://shopify/Collection/{id}") }))
}

/// One page of a connection: `first` nodes after the cursor `after` (`cursor-<n>`).
fn page(nodes: impl Iterator<Item = Value>, after: Option<&str>, first: usize) -> Value {
    let nodes: Vec<Value> = nodes.collect();
    let start = after
        .and_then(|c| c.strip_prefix("cursor-"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let taken: Vec<Value> = nodes.iter().skip(start).take(first).cloned().collect();
    let end = start + taken.len();
    json!({
        "pageInfo": { "hasNextPage": end < nodes.len(), "endCursor": format!("cursor-{end}") },
        "nodes": taken,
    })
}

/// The payload of a web pixel mutation.
fn pixel_payload(outcome: Result<(String, Value), (&str, String)>) -> Value {
    match outcome {
        Ok((id, settings)) => json!({
            "userErrors": [],
            "webPixel": { "id": id, "settings": settings.to_string() },
        }),
        Err((code, message)) => json!({
            "userErrors": [{ "code": code, "field": ["webPixel", "settings"], "message": message }],
            "webPixel": null,
        }),
    }
}

/// A pixel's `settings` input (JSON, given as an object or as its text), checked against the
/// fields the extension declares: every field declared, each a string, nothing else.
fn pixel_settings(input: &Value) -> Result<Value, String> {
    let settings = match input {
        Value::String(text) => serde_json::from_str(text).map_err(|e| format!("settings: {e}"))?,
        other => other.clone(),
    };
    let Value::Object(fields) = &settings else {
        return Err("settings must be an object".into());
    };
    let declared = declared_pixel_settings();
    for (name, value) in fields {
        if !declared.contains(&name.as_str()) {
            return Err(format!("{name} is not a setting of the extension"));
        }
        if !value.is_string() {
            return Err(format!("{name} must be a string"));
        }
    }
    if let Some(missing) = declared.iter().find(|d| !fields.contains_key(**d)) {
        return Err(format!("{missing} is missing"));
    }
    Ok(settings)
}

/// The names of the settings the pixel extension declares (its `[settings.fields.<name>]`).
pub fn declared_pixel_settings() -> Vec<&'static str> {
    PIXEL_EXTENSION
        .lines()
        .filter_map(|line| {
            line.trim()
                .strip_prefix("[settings.fields.")?
                .strip_suffix(']')
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pixel_settings_are_those_the_extension_declares() {
        assert_eq!(declared_pixel_settings(), vec!["proxyPath"]);
        let good = json!({ "proxyPath": "/apps/videoapp_sub" });
        assert_eq!(pixel_settings(&json!(good.to_string())).unwrap(), good);
        assert!(pixel_settings(&json!({ "accountID": "1" })).is_err());
        assert!(pixel_settings(&json!({})).is_err());
    }
}
