//! The platform's cart API as the loader uses it (`/products/<handle>.js`, `/cart/add.js`), the
//! theme's add-to-cart form, and the checkout that turns a cart into an order.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::{json, Value};
use uuid::Uuid;

use super::{catalog, cookie, price_cents, product_number, DevStore};
use crate::catalog::products::Product;

/// One cart line: a product's only variant, and how many.
#[derive(Clone)]
pub struct Line {
    pub product: Product,
    pub quantity: u64,
}

#[derive(Default, Clone)]
pub struct Cart {
    pub lines: Vec<Line>,
}

impl Cart {
    pub fn total_cents(&self) -> u64 {
        self.lines
            .iter()
            .map(|l| price_cents(&l.product) * l.quantity)
            .sum()
    }

    pub fn count(&self) -> u64 {
        self.lines.iter().map(|l| l.quantity).sum()
    }

    fn add(&mut self, product: Product, quantity: u64) {
        match self.lines.iter_mut().find(|l| l.product.id == product.id) {
            Some(line) => line.quantity += quantity,
            None => self.lines.push(Line { product, quantity }),
        }
    }
}

/// A placed order, kept for its thank-you page.
#[derive(Clone)]
pub struct Order {
    pub id: String,
    pub cart: Cart,
}

/// The variant id of a product's only variant (1001 → 10011).
fn variant_id(product: &Product) -> u64 {
    product_number(product) * 10 + 1
}

/// Products whose handle ends in `-sold-out` cannot be bought (to show the loader's state).
fn available(product: &Product) -> bool {
    !product.handle.ends_with("-sold-out")
}

pub fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

fn cart_id(headers: &HeaderMap) -> Option<String> {
    cookie(headers, "cart").map(str::to_string)
}

/// The shopper's cart (empty when there is none).
pub fn current(store: &DevStore, headers: &HeaderMap) -> Cart {
    cart_id(headers)
        .and_then(|id| store.carts.lock().expect("carts").get(&id).cloned())
        .unwrap_or_default()
}

/// Adds to the shopper's cart; returns the `Set-Cookie` of a new cart.
fn add(store: &DevStore, headers: &HeaderMap, product: Product, quantity: u64) -> Option<String> {
    let (id, new) = match cart_id(headers) {
        Some(id) => (id, false),
        None => (Uuid::new_v4().simple().to_string(), true),
    };
    store
        .carts
        .lock()
        .expect("carts")
        .entry(id.clone())
        .or_default()
        .add(product, quantity);
    new.then(|| format!("cart={id}; Path=/; SameSite=Lax"))
}

fn cart_error(status: StatusCode, message: &str, description: &str) -> Response {
    let body = json!({ "status": status.as_u16(), "message": message, "description": description });
    (status, Json(body)).into_response()
}

fn line_json(line: &Line) -> Value {
    let p = &line.product;
    json!({
        "id": variant_id(p), "variant_id": variant_id(p), "product_id": product_number(p),
        "handle": p.handle, "title": p.title, "quantity": line.quantity,
        "price": price_cents(p), "line_price": price_cents(p) * line.quantity,
        "image": p.image, "url": format!("/products/{}", p.handle),
    })
}

/// `GET /products/<handle>.js`.
pub fn product_js(products: &[Product], handle: &str) -> Response {
    let Some(p) = products.iter().find(|p| p.handle.as_str() == handle) else {
        return cart_error(StatusCode::NOT_FOUND, "Not Found", "No such product");
    };
    Json(json!({
        "id": product_number(p), "title": p.title, "handle": p.handle,
        "price": price_cents(p), "available": available(p),
        "featured_image": p.image, "url": format!("/products/{}", p.handle),
        "variants": [{
            "id": variant_id(p), "title": "Default Title", "price": price_cents(p),
            "available": available(p),
        }],
    }))
    .into_response()
}

#[derive(Deserialize)]
pub struct AddItem {
    id: u64,
    #[serde(default = "one")]
    quantity: u64,
}

fn one() -> u64 {
    1
}

/// `POST /cart/add.js`: `{"items":[{"id":…,"quantity":…}]}` or one `{"id":…,"quantity":…}`.
#[derive(Deserialize)]
#[serde(untagged)]
pub enum AddRequest {
    Items { items: Vec<AddItem> },
    One(AddItem),
}

pub async fn add_js(
    State(store): State<DevStore>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let Ok(request) = serde_json::from_slice::<AddRequest>(&body) else {
        return cart_error(
            StatusCode::BAD_REQUEST,
            "Bad Request",
            "expected {\"items\":[{\"id\":…,\"quantity\":…}]}",
        );
    };
    let (items, single) = match request {
        AddRequest::Items { items } => (items, false),
        AddRequest::One(item) => (vec![item], true),
    };
    let (_, products) = match catalog(&store).await {
        Ok(catalog) => catalog,
        Err(response) => return response,
    };
    let mut added = Vec::new();
    let mut set_cookie = None;
    let mut request_headers = headers.clone();
    for item in items {
        let Some(product) = products.iter().find(|p| variant_id(p) == item.id) else {
            return cart_error(
                StatusCode::NOT_FOUND,
                "Cannot find variant",
                "Cannot find variant",
            );
        };
        if !available(product) || item.quantity == 0 {
            return cart_error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Cart Error",
                &format!("{} is sold out.", product.title),
            );
        }
        if let Some(cookie) = add(&store, &request_headers, product.clone(), item.quantity) {
            // Later items of this request go to the cart just made.
            let value = cookie.split(';').next().unwrap_or_default().to_string();
            request_headers.insert(header::COOKIE, value.parse().expect("a cookie is ASCII"));
            set_cookie = Some(cookie);
        }
        added.push(line_json(&Line {
            product: product.clone(),
            quantity: item.quantity,
        }));
    }
    let body = if single {
        added.pop().unwrap_or(Value::Null)
    } else {
        json!({ "items": added })
    };
    let mut response = Json(body).into_response();
    if let Some(cookie) = set_cookie {
        response.headers_mut().insert(
            header::SET_COOKIE,
            cookie.parse().expect("a cookie is ASCII"),
        );
    }
    response
}

#[derive(Deserialize)]
pub struct AddForm {
    id: u64,
}

/// The product page's add-to-cart form (no script needed).
pub async fn add_form(
    State(store): State<DevStore>,
    headers: HeaderMap,
    Form(form): Form<AddForm>,
) -> Response {
    let (_, products) = match catalog(&store).await {
        Ok(catalog) => catalog,
        Err(response) => return response,
    };
    let Some(product) = products.iter().find(|p| variant_id(p) == form.id) else {
        return cart_error(
            StatusCode::NOT_FOUND,
            "Cannot find variant",
            "Cannot find variant",
        );
    };
    let cookie = add(&store, &headers, product.clone(), 1);
    let mut response = Redirect::to("/cart").into_response();
    if let Some(cookie) = cookie {
        response.headers_mut().insert(
            header::SET_COOKIE,
            cookie.parse().expect("a cookie is ASCII"),
        );
    }
    response
}

/// `GET /cart.js`.
pub async fn cart_js(State(store): State<DevStore>, headers: HeaderMap) -> Response {
    let cart = current(&store, &headers);
    Json(json!({
        "item_count": cart.count(), "total_price": cart.total_cents(),
        "items": cart.lines.iter().map(line_json).collect::<Vec<_>>(),
    }))
    .into_response()
}

pub async fn clear(State(store): State<DevStore>, headers: HeaderMap) -> Response {
    if let Some(id) = cart_id(&headers) {
        store.carts.lock().expect("carts").remove(&id);
    }
    Redirect::to("/cart").into_response()
}

/// `POST /checkout`: pays for the cart; the thank-you page then runs the checkout pixel.
pub async fn place_order(State(store): State<DevStore>, headers: HeaderMap) -> Response {
    let cart = current(&store, &headers);
    if cart.lines.is_empty() {
        return Redirect::to("/cart").into_response();
    }
    // Unique across runs too: the service counts an order id once, for good.
    let id = format!("{}", chrono::Utc::now().timestamp_micros());
    if let Some(cart_id) = cart_id(&headers) {
        store.carts.lock().expect("carts").remove(&cart_id);
    }
    store.orders.lock().expect("orders").insert(
        id.clone(),
        Order {
            id: id.clone(),
            cart,
        },
    );
    Redirect::to(&format!("/checkout/thank-you/{id}")).into_response()
}

pub fn order(store: &DevStore, Path(id): Path<String>) -> Option<Order> {
    store.orders.lock().expect("orders").get(&id).cloned()
}
