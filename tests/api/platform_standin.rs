//! A local stand-in of the platform's per-shop endpoints the service calls, speaking their
//! documented requests and answers: the token exchange (`POST /admin/oauth/access_token`) and the
//! Admin GraphQL API's `products` connection, with its cost-based throttling.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::{Json, Router};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{json, Value};
use uuid::Uuid;

/// What a product of the stand-in's shop is, as the Admin API gives it.
#[derive(Clone)]
pub struct StandInProduct {
    pub id: u64,
    pub title: String,
    pub active: bool,
    pub updated_at: String,
}

#[derive(Default)]
pub struct Seen {
    /// Each token exchange's JSON body.
    pub exchanges: Vec<Value>,
    /// Each products request's `after` variable (`None` for the first page).
    pub pages_asked: Vec<Option<String>>,
    /// Answers of `THROTTLED`.
    pub throttled: usize,
}

#[derive(Default)]
struct Shop {
    products: Vec<StandInProduct>,
}

/// How the stand-in misbehaves, to prove the service copes.
#[derive(Default, Clone)]
pub struct Behaviour {
    /// Every n-th GraphQL request is answered `THROTTLED`.
    pub throttle_every: Option<usize>,
    /// The GraphQL requests (counted from 1) answered 500 once.
    pub fail_requests: Vec<usize>,
    /// Every token exchange is refused as the platform refuses an invalid subject token.
    pub refuse_exchange: bool,
}

struct Inner {
    client_id: String,
    secret: String,
    shops: HashMap<String, Shop>,
    /// Access token → its shop.
    tokens: HashMap<String, String>,
    behaviour: Behaviour,
    requests: usize,
    seen: Seen,
}

#[derive(Clone)]
pub struct StandIn {
    pub origin: String,
    inner: Arc<Mutex<Inner>>,
}

const PAGE_COST_PER_PRODUCT: f64 = 1.0;

impl StandIn {
    pub async fn start(client_id: &str, secret: &str, behaviour: Behaviour) -> StandIn {
        let inner = Arc::new(Mutex::new(Inner {
            client_id: client_id.to_string(),
            secret: secret.to_string(),
            shops: HashMap::new(),
            tokens: HashMap::new(),
            behaviour,
            requests: 0,
            seen: Seen::default(),
        }));
        let router = Router::new()
            .route("/admin/oauth/access_token", post(exchange))
            .route("/admin/api/{version}/graphql.json", post(graphql))
            .with_state(inner.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let origin = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, router).await });
        StandIn { origin, inner }
    }

    pub fn set_products(&self, shop: &str, products: Vec<StandInProduct>) {
        let mut inner = self.inner.lock().unwrap();
        inner.shops.entry(shop.to_string()).or_default().products = products;
    }

    pub fn seen<T>(&self, read: impl FnOnce(&Seen) -> T) -> T {
        read(&self.inner.lock().unwrap().seen)
    }

    /// The access tokens the stand-in granted.
    pub fn granted_tokens(&self) -> Vec<String> {
        self.inner.lock().unwrap().tokens.keys().cloned().collect()
    }
}

type Shared = Arc<Mutex<Inner>>;

fn refusal(description: &str) -> Response {
    let body = json!({ "error": "invalid_subject_token", "error_description": description });
    (StatusCode::BAD_REQUEST, Json(body)).into_response()
}

/// `POST /admin/oauth/access_token` with the token exchange grant.
async fn exchange(State(inner): State<Shared>, Json(body): Json<Value>) -> Response {
    let mut inner = inner.lock().unwrap();
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
    Json(json!({ "access_token": access_token, "scope": "read_products" })).into_response()
}

/// `POST /admin/api/{version}/graphql.json`: the `products` connection.
async fn graphql(
    State(inner): State<Shared>,
    headers: HeaderMap,
    Json(body): Json<Value>,
) -> Response {
    let mut inner = inner.lock().unwrap();
    let token = headers
        .get("x-shopify-access-token")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let Some(shop) = inner.tokens.get(token).cloned() else {
        let body = json!({ "errors": "[API] Invalid API key or access token (unrecognized login or wrong password)" });
        return (StatusCode::UNAUTHORIZED, Json(body)).into_response();
    };
    inner.requests += 1;
    let request = inner.requests;
    if inner.behaviour.fail_requests.contains(&request) {
        return (StatusCode::INTERNAL_SERVER_ERROR, "Internal Server Error").into_response();
    }
    let first = body["variables"]["first"].as_u64().unwrap_or(0) as usize;
    let after = body["variables"]["after"].as_str().map(str::to_string);
    let requested = 2.0 + first as f64 * PAGE_COST_PER_PRODUCT;
    let cost = |available: f64, actual: Option<f64>| {
        json!({ "cost": {
            "requestedQueryCost": requested,
            "actualQueryCost": actual,
            "throttleStatus": { "maximumAvailable": 2000.0, "currentlyAvailable": available, "restoreRate": 1000.0 }
        }})
    };
    if inner
        .behaviour
        .throttle_every
        .is_some_and(|n| request % n == 0)
    {
        inner.seen.throttled += 1;
        let body = json!({
            "errors": [{ "message": "Throttled", "extensions": {
                "code": "THROTTLED", "documentation": "https://shopify.dev/api/usage/rate-limits" } }],
            "extensions": cost(0.0, None),
        });
        return Json(body).into_response();
    }
    if !body["query"]
        .as_str()
        .unwrap_or_default()
        .contains("products(")
        || first == 0
    {
        let body =
            json!({ "errors": [{ "message": "the stand-in answers the products query only" }] });
        return Json(body).into_response();
    }
    inner.seen.pages_asked.push(after.clone());
    let start = after
        .as_deref()
        .and_then(|c| c.strip_prefix("cursor-"))
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(0);
    let products = &inner.shops.entry(shop.clone()).or_default().products;
    let page: Vec<Value> = products
        .iter()
        .skip(start)
        .take(first)
        .map(|p| {
            json!({
                "id": format!("gid://shopify/Product/{}", p.id),
                "title": p.title,
                "handle": format!("product-{}", p.id),
                "status": if p.active { "ACTIVE" } else { "DRAFT" },
                "updatedAt": p.updated_at,
                "featuredMedia": { "preview": { "image": { "url": format!("https://cdn.example/{}.jpg", p.id) } } },
            })
        })
        .collect();
    let end = start + page.len();
    let body = json!({
        "data": { "products": {
            "pageInfo": { "hasNextPage": end < products.len(), "endCursor": format!("cursor-{end}") },
            "nodes": page,
        }},
        "extensions": cost(2000.0 - requested, Some(requested)),
    });
    Json(body).into_response()
}
