//! The platform's cart API as the loader uses it (`/products/<handle>.js`, `/cart/add.js` with
//! bundled section rendering, `/cart.js`), the theme's add-to-cart form, and the checkout that
//! turns a cart into an order.

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::{Form, Json};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use uuid::Uuid;

use super::{catalog, cookie, price_cents, product_number, DevStore};
use crate::catalog::products::Product;

/// One variant of a product, as the store sells it.
#[derive(Clone, Debug, PartialEq)]
pub struct Variant {
    pub id: u64,
    /// The option value ("M"), or "Default Title" for a product without options.
    pub title: &'static str,
    pub price_cents: u64,
    pub available: bool,
}

/// The option a product's variants differ by, and its values in order.
pub fn option_of(product: &Product) -> (&'static str, &'static [&'static str]) {
    // The catalog knows no variants: shirts come in three sizes, everything else in one.
    if product.handle.ends_with("shirt") {
        ("Size", &["S", "M", "L"])
    } else {
        ("Title", &["Default Title"])
    }
}

/// A product's variants: ids are the product's number × 10 + 1, 2, 3 (1001 → 10011, 10012, …).
/// A shirt's largest size is sold out, and so is every variant of a product whose handle ends in
/// `-sold-out`, so that shoppers meet both cases.
pub fn variants(product: &Product) -> Vec<Variant> {
    let (_, values) = option_of(product);
    let all_sold_out = product.handle.ends_with("-sold-out");
    let last = values.len() - 1;
    values
        .iter()
        .enumerate()
        .map(|(i, title)| {
            let largest_sold_out = last > 0 && i == last;
            Variant {
                id: product_number(product) * 10 + i as u64 + 1,
                title,
                price_cents: price_cents(product),
                available: !(all_sold_out || largest_sold_out),
            }
        })
        .collect()
}

/// The product and variant a variant id names.
fn find_variant(products: &[Product], id: u64) -> Option<(Product, Variant)> {
    products.iter().find_map(|p| {
        variants(p)
            .into_iter()
            .find(|v| v.id == id)
            .map(|v| (p.clone(), v))
    })
}

/// One cart line: a product's variant, and how many.
#[derive(Clone)]
pub struct Line {
    pub product: Product,
    pub variant: Variant,
    pub quantity: u64,
}

impl Line {
    pub fn price_cents(&self) -> u64 {
        self.variant.price_cents * self.quantity
    }

    /// The line's name as the cart shows it: "Linen Shirt - M", or the product's title alone.
    pub fn title(&self) -> String {
        match option_of(&self.product).1.len() {
            1 => self.product.title.to_string(),
            _ => format!("{} - {}", self.product.title, self.variant.title),
        }
    }
}

#[derive(Default, Clone)]
pub struct Cart {
    pub lines: Vec<Line>,
}

impl Cart {
    pub fn total_cents(&self) -> u64 {
        self.lines.iter().map(Line::price_cents).sum()
    }

    pub fn count(&self) -> u64 {
        self.lines.iter().map(|l| l.quantity).sum()
    }

    fn add(&mut self, product: Product, variant: Variant, quantity: u64) {
        match self.lines.iter_mut().find(|l| l.variant.id == variant.id) {
            Some(line) => line.quantity += quantity,
            None => self.lines.push(Line {
                product,
                variant,
                quantity,
            }),
        }
    }
}

/// A placed order, kept for its thank-you page.
#[derive(Clone)]
pub struct Order {
    pub id: String,
    pub cart: Cart,
}

/// An amount with two decimals, as the platform writes money: `11.90`.
pub fn money(cents: u64) -> String {
    format!("{}.{:02}", cents / 100, cents % 100)
}

/// An amount as the store's pages show it: `11.90 USD`.
pub fn priced(cents: u64, currency: &str) -> String {
    format!("{} {currency}", money(cents))
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
fn add(
    store: &DevStore,
    headers: &HeaderMap,
    (product, variant): (Product, Variant),
    quantity: u64,
) -> Option<String> {
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
        .add(product, variant, quantity);
    new.then(|| format!("cart={id}; Path=/; SameSite=Lax"))
}

fn cart_error(status: StatusCode, message: &str, description: &str) -> Response {
    let body = json!({ "status": status.as_u16(), "message": message, "description": description });
    (status, Json(body)).into_response()
}

fn line_json(line: &Line) -> Value {
    let (p, v) = (&line.product, &line.variant);
    json!({
        "id": v.id, "variant_id": v.id, "product_id": product_number(p),
        "handle": p.handle, "title": line.title(), "product_title": p.title,
        "variant_title": (option_of(p).1.len() > 1).then_some(v.title),
        "quantity": line.quantity, "price": v.price_cents, "line_price": line.price_cents(),
        "image": p.image, "url": format!("/products/{}?variant={}", p.handle, v.id),
    })
}

/// `GET /products/<handle>.js`: prices in the currency's smallest unit, as the platform gives them.
pub fn product_js(products: &[Product], handle: &str) -> Response {
    let Some(p) = products.iter().find(|p| p.handle.as_str() == handle) else {
        return cart_error(StatusCode::NOT_FOUND, "Not Found", "No such product");
    };
    let variants = variants(p);
    let (option, values) = option_of(p);
    Json(json!({
        "id": product_number(p), "title": p.title, "handle": p.handle,
        "price": variants.iter().map(|v| v.price_cents).min(),
        "available": variants.iter().any(|v| v.available),
        "featured_image": p.image, "url": format!("/products/{}", p.handle),
        "options": [{ "name": option, "position": 1, "values": values }],
        "variants": variants.iter().map(|v| json!({
            "id": v.id, "title": v.title, "option1": v.title, "price": v.price_cents,
            "available": v.available, "name": format!("{} - {}", p.title, v.title),
        })).collect::<Vec<_>>(),
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

/// The section ids of bundled section rendering: `"a,b"` or `["a","b"]`.
#[derive(Deserialize)]
#[serde(untagged)]
enum SectionIds {
    Text(String),
    List(Vec<String>),
}

impl SectionIds {
    fn ids(&self) -> Vec<&str> {
        let ids: Vec<&str> = match self {
            SectionIds::Text(text) => text.split(',').map(str::trim).collect(),
            SectionIds::List(list) => list.iter().map(|s| s.trim()).collect(),
        };
        ids.into_iter().filter(|id| !id.is_empty()).collect()
    }
}

/// `POST /cart/add.js`: `{"items":[{"id":…,"quantity":…}]}` or one `{"id":…,"quantity":…}`,
/// with `sections` naming the sections to render once the items are in the cart.
#[derive(Deserialize)]
pub struct AddRequest {
    items: Option<Vec<AddItem>>,
    #[serde(flatten)]
    one: Option<AddItem>,
    sections: Option<SectionIds>,
}

/// The platform renders at most five sections per request.
const MAX_SECTIONS: usize = 5;

/// The `sections` of an answer: each id with its rendered HTML, `null` for a section the theme
/// does not have. The demo theme has one, the cart icon bubble.
fn rendered_sections(ids: &[&str], cart: &Cart) -> Map<String, Value> {
    ids.iter()
        .take(MAX_SECTIONS)
        .map(|id| {
            let html = match *id {
                super::pages::CART_BUBBLE_SECTION => {
                    Value::String(super::pages::cart_bubble_section(cart.count()))
                }
                _ => Value::Null,
            };
            (id.to_string(), html)
        })
        .collect()
}

pub async fn add_js(
    State(store): State<DevStore>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let request = serde_json::from_slice::<AddRequest>(&body)
        .ok()
        .and_then(|r| match (r.items, r.one) {
            (Some(items), _) => Some((items, false, r.sections)),
            (None, Some(one)) => Some((vec![one], true, r.sections)),
            (None, None) => None,
        });
    let Some((items, single, sections)) = request else {
        return cart_error(
            StatusCode::BAD_REQUEST,
            "Bad Request",
            "expected {\"items\":[{\"id\":…,\"quantity\":…}]}",
        );
    };
    let (_, products) = match catalog(&store).await {
        Ok(catalog) => catalog,
        Err(response) => return response,
    };
    let mut added = Vec::new();
    let mut set_cookie = None;
    let mut request_headers = headers.clone();
    for item in items {
        let Some((product, variant)) = find_variant(&products, item.id) else {
            return cart_error(
                StatusCode::NOT_FOUND,
                "Cannot find variant",
                "Cannot find variant",
            );
        };
        let line = Line {
            product,
            variant,
            quantity: item.quantity,
        };
        if !line.variant.available || item.quantity == 0 {
            return cart_error(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Cart Error",
                &format!("The product '{}' is already sold out.", line.title()),
            );
        }
        let chosen = (line.product.clone(), line.variant.clone());
        if let Some(cookie) = add(&store, &request_headers, chosen, item.quantity) {
            // Later items of this request go to the cart just made.
            let value = cookie.split(';').next().unwrap_or_default().to_string();
            request_headers.insert(header::COOKIE, value.parse().expect("a cookie is ASCII"));
            set_cookie = Some(cookie);
        }
        added.push(line_json(&line));
    }
    let mut body = if single {
        added.pop().unwrap_or(Value::Null)
    } else {
        json!({ "items": added })
    };
    if let (Some(ids), Value::Object(fields)) = (sections, &mut body) {
        let cart = current(&store, &request_headers);
        fields.insert(
            "sections".into(),
            Value::Object(rendered_sections(&ids.ids(), &cart)),
        );
    }
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
    let Some(chosen) = find_variant(&products, form.id) else {
        return cart_error(
            StatusCode::NOT_FOUND,
            "Cannot find variant",
            "Cannot find variant",
        );
    };
    if !chosen.1.available {
        return cart_error(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Cart Error",
            "This variant is sold out.",
        );
    }
    let cookie = add(&store, &headers, chosen, 1);
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
    let (shop, _) = match catalog(&store).await {
        Ok(catalog) => catalog,
        Err(response) => return response,
    };
    let cart = current(&store, &headers);
    Json(json!({
        "item_count": cart.count(), "total_price": cart.total_cents(),
        "currency": shop.currency.code(),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::domain::{ProductGid, TextLine};

    fn product(number: u64, handle: &str) -> Product {
        Product {
            id: ProductGid::parse(&number.to_string()).unwrap(),
            title: TextLine::parse("A product").unwrap(),
            handle: TextLine::parse(handle).unwrap(),
            image: TextLine::default(),
            url: TextLine::default(),
            collection_ids: Vec::new(),
        }
    }

    #[test]
    fn a_shirt_comes_in_three_sizes_the_largest_sold_out() {
        let sizes: Vec<_> = variants(&product(1001, "linen-shirt"))
            .into_iter()
            .map(|v| (v.id, v.title, v.available))
            .collect();
        assert_eq!(
            sizes,
            [(10011, "S", true), (10012, "M", true), (10013, "L", false)]
        );
        let tote = variants(&product(1003, "canvas-tote"));
        assert_eq!(
            tote.iter()
                .map(|v| (v.id, v.title, v.available))
                .collect::<Vec<_>>(),
            [(10031, "Default Title", true)]
        );
        assert!(!variants(&product(1004, "scarf-sold-out"))[0].available);
    }

    #[test]
    fn add_js_reads_one_item_or_many_and_the_sections_to_render() {
        let read = |body: &str| serde_json::from_str::<AddRequest>(body).unwrap();
        let many =
            read(r#"{"items":[{"id":10012,"quantity":1}],"sections":"cart-icon-bubble, other"}"#);
        assert_eq!(many.items.map(|i| i.len()), Some(1));
        assert_eq!(many.sections.unwrap().ids(), ["cart-icon-bubble", "other"]);
        let one = read(r#"{"id":10012,"sections":["cart-icon-bubble"]}"#);
        assert!(one.items.is_none());
        assert_eq!(one.one.map(|i| (i.id, i.quantity)), Some((10012, 1)));
        assert_eq!(one.sections.unwrap().ids(), ["cart-icon-bubble"]);
        assert!(read(r#"{"items":[]}"#).sections.is_none());
    }

    #[test]
    fn the_cart_bubble_is_rendered_as_a_section_with_the_count_and_unknown_sections_are_null() {
        let shirt = product(1001, "linen-shirt");
        let mut cart = Cart::default();
        let medium = variants(&shirt)[1].clone();
        cart.add(shirt.clone(), medium.clone(), 1);
        cart.add(shirt, medium, 1);
        assert_eq!(cart.lines.len(), 1, "the same variant twice is one line");
        let sections = rendered_sections(&["cart-icon-bubble", "footer"], &cart);
        let bubble = sections["cart-icon-bubble"].as_str().unwrap();
        assert!(
            bubble.starts_with(
                r#"<div id="shopify-section-cart-icon-bubble" class="shopify-section">"#
            ),
            "{bubble}"
        );
        assert!(bubble.contains("(2)</span>"), "{bubble}");
        assert_eq!(sections["footer"], Value::Null);
    }
}
