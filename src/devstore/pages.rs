//! The demo store's pages: a plain theme with the app's blocks where a merchant would place them.
//!
//! Every page with the app carries, like a theme with the app installed:
//! - a "Video widgets" app block (a contextual slot), or, with `?widget=<id>`, a "Video widget"
//!   app block for that one widget (snippet mode) instead;
//! - the app embed block's output in the `<head>`: the loader's `<script>` with the page's
//!   context, byte for byte what `extensions/videoapp-theme/blocks/videoapp-embed.liquid`
//!   renders; before it, while the shop's holdout (the app's metafield on the platform) is on,
//!   the holdout's inline decision (`snippets/videoapp-holdout.liquid`, which the web build makes).
//!
//! `?videoapp=off` serves the same page without either. Checkout pages carry no theme blocks;
//! the thank-you page runs the checkout pixel.

use std::collections::HashMap;
use std::fmt::Write;

use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Form;
use serde::Deserialize;
use uuid::Uuid;

use super::cart::{self, money, priced, Cart};
use super::{catalog, cookie, numeric_tail, price_cents, product_number, DevStore};
use crate::catalog::products::Product;
use crate::catalog::shops::Shop;
use crate::platform::admin_api::HOLDOUT_METAFIELD;

/// The section id of the theme's cart icon bubble, which bundled section rendering answers for.
pub const CART_BUBBLE_SECTION: &str = "cart-icon-bubble";

/// What the header's `#cart-icon-bubble` holds: the cart link's text and the item count.
fn cart_bubble(count: u64) -> String {
    let items = if count == 1 { "item" } else { "items" };
    format!(
        r#"Cart <span class="cart-count-bubble" data-demo-cart-count aria-label="{count} {items}">({count})</span>"#
    )
}

/// The cart icon bubble as the platform renders a section: its content in the section's
/// wrapper, whose inner HTML a theme swaps into its `#cart-icon-bubble`.
pub fn cart_bubble_section(count: u64) -> String {
    format!(
        r#"<div id="shopify-section-{CART_BUBBLE_SECTION}" class="shopify-section">{}</div>"#,
        cart_bubble(count)
    )
}

/// The app blocks' reserved height (their default setting).
const SLOT_HEIGHT_PX: u32 = 360;

/// How a page was asked for: with the app or without, and which app block.
struct Request {
    app: bool,
    /// The theme's app embed is on: the loader is on the page.
    embed: bool,
    /// Snippet mode: the "Video widget" block for this widget instead of "Video widgets".
    widget: Option<Uuid>,
    customer: Option<String>,
    cart: Cart,
    consent_denied: bool,
    /// The storefront's country, as the platform gives it to the page (`Shopify.country`).
    country: String,
    /// The holdout's snippet as the app embed renders it, while the shop has a holdout.
    holdout: Option<String>,
}

/// The storefront's country when the shopper chose none: the demo shop sells from the US.
const DEFAULT_COUNTRY: &str = "US";

/// The shopper's country as the platform keeps it (the `localization` cookie its country
/// selector sets), when it is a country code; else the shop's.
fn country(headers: &HeaderMap) -> String {
    cookie(headers, "localization")
        .filter(|c| c.len() == 2 && c.bytes().all(|b| b.is_ascii_uppercase()))
        .unwrap_or(DEFAULT_COUNTRY)
        .to_string()
}

impl Request {
    fn new(
        store: &DevStore,
        query: &HashMap<String, String>,
        headers: &HeaderMap,
        holdout: Option<String>,
    ) -> Request {
        Request {
            app: query.get("videoapp").map(String::as_str) != Some("off"),
            embed: store.app_embed.load(std::sync::atomic::Ordering::Relaxed),
            widget: query.get("widget").and_then(|w| Uuid::parse_str(w).ok()),
            customer: cookie(headers, "customer")
                .filter(|c| !c.is_empty())
                .map(str::to_string),
            cart: cart::current(store, headers),
            consent_denied: cookie(headers, "demo_consent") == Some("denied"),
            country: country(headers),
            holdout,
        }
    }
}

/// The app embed's holdout snippet as the theme renders it for the shop's holdout: the app's
/// metafield on the platform the store stands in for; none while it is 0 or not set.
async fn holdout_snippet(store: &DevStore) -> Option<String> {
    let (namespace, key) = HOLDOUT_METAFIELD;
    let platform = store.platform.as_ref()?;
    let value = platform.app_metafield(store.shop.as_str(), namespace, key)?;
    let percent: u32 = value.parse().ok().filter(|p| *p > 0)?;
    let path = store
        .extensions_dir
        .join("videoapp-theme/snippets/videoapp-holdout.liquid");
    match tokio::fs::read_to_string(&path).await {
        Ok(liquid) => Some(render_holdout_snippet(&liquid, percent)),
        Err(e) => {
            tracing::warn!(path = %path.display(), error = %e, "the holdout snippet is not built (npm run build in web/)");
            None
        }
    }
}

/// The snippet's Liquid with its one expression, the shop's holdout, filled in.
fn render_holdout_snippet(liquid: &str, percent: u32) -> String {
    liquid
        .trim_end()
        .replace("{{ percent | plus: 0 }}", &percent.to_string())
}

/// What every page needs: the shop, its products, and how the page was asked for.
pub struct Visit {
    shop: Shop,
    pub products: Vec<Product>,
    /// The titles of the collections the platform has, by number, where they were imported.
    collection_titles: HashMap<u64, String>,
    request: Request,
}

impl FromRequestParts<DevStore> for Visit {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, store: &DevStore) -> Result<Visit, Response> {
        let Query(query) = Query::<HashMap<String, String>>::from_request_parts(parts, store)
            .await
            .map_err(IntoResponse::into_response)?;
        let (shop, products) = catalog(store).await?;
        // Only names: a page without them shows the collections' numbers.
        let collections = crate::catalog::collections::list(&store.db, &store.shop).await;
        let collection_titles = collections
            .unwrap_or_default()
            .into_iter()
            .map(|c| (numeric_tail(c.id.as_str()), c.title.as_str().to_string()))
            .collect();
        Ok(Visit {
            shop,
            products,
            collection_titles,
            request: Request::new(store, &query, &parts.headers, holdout_snippet(store).await),
        })
    }
}

/// The page context the app embed block reads from Liquid.
#[derive(Default)]
struct PageContext<'a> {
    page_type: &'a str,
    product: Option<&'a Product>,
    collection: Option<u64>,
}

pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The app embed block's output (`videoapp-embed.liquid`) for this page: the holdout's snippet
/// while the shop has one, then the loader's tag.
fn embed(context: &PageContext, holdout: Option<&str>) -> String {
    let product_id = context
        .product
        .map(|p| product_number(p).to_string())
        .unwrap_or_default();
    let handle = context.product.map(|p| esc(&p.handle)).unwrap_or_default();
    let collection = context
        .collection
        .map(|c| c.to_string())
        .unwrap_or_default();
    format!(
        r#"{}<script src="/cdn/videoapp-loader.js" defer data-videoapp-loader data-page-type="{}" data-product-id="{product_id}" data-product-handle="{handle}" data-collection-id="{collection}" data-proxy="/apps/videoapp_sub"></script>"#,
        holdout.unwrap_or_default(),
        esc(context.page_type)
    )
}

/// The app block the merchant placed on this page.
fn slot(request: &Request) -> String {
    if !request.app {
        return String::new();
    }
    match request.widget {
        Some(id) => format!(
            r#"<div class="videoapp-slot" data-videoapp-slot data-videoapp-widget-id="{id}" style="min-height: {SLOT_HEIGHT_PX}px"></div>"#
        ),
        None => format!(
            r#"<div class="videoapp-slot" data-videoapp-slot style="min-height: {SLOT_HEIGHT_PX}px"></div>"#
        ),
    }
}

const STYLE: &str = "
*{box-sizing:border-box}body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1f2937;background:#fafaf9}
a{color:inherit}header,footer,main,.bar{max-width:1100px;margin:0 auto;padding:12px 20px}
header{display:flex;flex-wrap:wrap;gap:16px;align-items:center;justify-content:space-between}
header nav{display:flex;flex-wrap:wrap;gap:14px}.brand{font-weight:700;font-size:20px;text-decoration:none}
.bar{display:flex;flex-wrap:wrap;gap:12px;align-items:center;font-size:14px;color:#4b5563;border-top:1px solid #e7e5e4;border-bottom:1px solid #e7e5e4}
.bar form{display:inline}button,.button{font:inherit;cursor:pointer;padding:8px 14px;border-radius:8px;border:1px solid #1f2937;background:#1f2937;color:#fff;text-decoration:none;display:inline-block}
.bar button{padding:3px 10px;background:#fff;color:#1f2937}button.secondary{background:#fff;color:#1f2937}.hero{padding:28px 0}.hero h1{margin:0 0 6px;font-size:32px}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(200px,1fr));gap:18px;padding:0;list-style:none}
.grid img,.product img{width:100%;height:auto;aspect-ratio:1;border-radius:10px;background:#e7e5e4}
.product{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:28px}@media(max-width:700px){.product{grid-template-columns:1fr}}
.price{font-size:20px;font-weight:600}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:8px;border-bottom:1px solid #e7e5e4}
footer{color:#6b7280;font-size:14px;padding:40px 20px}
.checkout{position:fixed;right:16px;bottom:16px;z-index:10}.checkout button{padding:14px 22px;box-shadow:0 2px 8px #0004}";

/// Emulates the platform's `Shopify.customerPrivacy`: the consent is a cookie the switch sets;
/// changing it fires `visitorConsentCollected`, as the platform does.
const CONSENT_SCRIPT: &str = r#"<script>
(function () {
  function value() { var m = document.cookie.match(/(?:^|; )demo_consent=(\w+)/); return m ? m[1] : "granted"; }
  window.Shopify = window.Shopify || {};
  window.Shopify.customerPrivacy = {
    analyticsProcessingAllowed: function () { return value() !== "denied"; },
    setTrackingConsent: function (consent, callback) {
      var allowed = !(consent && consent.analytics === false);
      document.cookie = "demo_consent=" + (allowed ? "granted" : "denied") + "; path=/; SameSite=Lax";
      document.dispatchEvent(new CustomEvent("visitorConsentCollected", { detail: { analyticsAllowed: allowed } }));
      var state = document.querySelector("[data-demo-consent-state]");
      if (state) state.textContent = allowed ? "allowed" : "declined";
      if (callback) callback();
    }
  };
  document.addEventListener("click", function (e) {
    var button = e.target.closest && e.target.closest("[data-demo-consent]");
    if (button) window.Shopify.customerPrivacy.setTrackingConsent({ analytics: button.getAttribute("data-demo-consent") === "allow" });
  });
})();
</script>"#;

impl Visit {
    /// The page for this visit: the store's layout around `main`, with the app's embed where
    /// the app is installed and the page has a context.
    fn page(&self, title: &str, main: &str, context: Option<&PageContext>) -> Response {
        layout(
            &self.shop,
            &self.collection_links(),
            &self.request,
            title,
            main,
            context,
        )
        .into_response()
    }
}

fn layout(
    shop: &Shop,
    collections: &str,
    request: &Request,
    title: &str,
    main: &str,
    context: Option<&PageContext>,
) -> Html<String> {
    let account = match &request.customer {
        Some(id) => format!(
            r#"Logged in as customer {} <form method="post" action="/account/logout"><button>Log out</button></form>"#,
            esc(id)
        ),
        None => r#"Guest <form method="post" action="/account/login"><input type="hidden" name="customer" value="7001"><button>Log in as customer 7001</button></form>"#.to_string(),
    };
    let consent = if request.consent_denied {
        "declined"
    } else {
        "allowed"
    };
    let embed = match (request.app && request.embed, context) {
        (true, Some(context)) => embed(context, request.holdout.as_deref()),
        _ => String::new(),
    };
    Html(format!(
        r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"><title>{title} – {shop_name}</title><meta name="description" content="{shop_name}, a demo store with shoppable videos.">
<style>{STYLE}</style>
{CONSENT_SCRIPT}
<script>window.Shopify.currency = {{ active: "{currency}", rate: "1.0" }}; window.Shopify.country = "{country}"; window.Shopify.routes = {{ root: "/" }}; window.Shopify.locale = "en";</script>
{embed}</head><body>
<header><a class="brand" href="/">{shop_name}</a><nav><a href="/">Home</a>{collections}<a href="/cart" id="cart-icon-bubble">{bubble}</a></nav></header>
<div class="bar"><span>Analytics cookies: <b data-demo-consent-state>{consent}</b></span>
<button type="button" data-demo-consent="allow">Allow</button><button type="button" data-demo-consent="decline">Decline</button>
<span>·</span><span>{account}</span></div>
<main>{main}</main>
<footer>{shop_name} is a demo store: the platform emulated for videoapp. Nothing here is for sale.</footer>
</body></html>"#,
        title = esc(title),
        shop_name = esc(&shop.name_or_domain()),
        bubble = cart_bubble(request.cart.count()),
        currency = shop.currency.code(),
        country = request.country,
    ))
}

trait DisplayName {
    fn name_or_domain(&self) -> String;
}

impl DisplayName for Shop {
    fn name_or_domain(&self) -> String {
        if self.name.trim().is_empty() {
            self.domain.to_string()
        } else {
            self.name.clone()
        }
    }
}

/// Collections are not in the catalog as such: each collection id a product names is one.
fn collections_of(products: &[Product]) -> Vec<u64> {
    let mut ids: Vec<u64> = products
        .iter()
        .flat_map(|p| p.collection_ids.iter())
        .map(|c| numeric_tail(c.as_str()))
        .filter(|n| *n > 0)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

fn product_grid(products: &[&Product], currency: &str) -> String {
    let mut html = String::from(r#"<ul class="grid">"#);
    for p in products {
        let _ = write!(
            html,
            r#"<li><a href="/products/{handle}"><img src="{image}" alt="" width="400" height="400" loading="lazy"><div>{title}</div><div>{price}</div></a></li>"#,
            handle = esc(&p.handle),
            image = esc(&p.image),
            title = esc(&p.title),
            price = priced(price_cents(p), currency),
        );
    }
    html.push_str("</ul>");
    html
}

impl Visit {
    /// A collection's title, or its number where it was not imported.
    fn collection_title(&self, number: u64) -> String {
        self.collection_titles
            .get(&number)
            .cloned()
            .unwrap_or_else(|| format!("Collection {number}"))
    }

    fn collection_links(&self) -> String {
        collections_of(&self.products)
            .iter()
            .map(|c| {
                let title = esc(&self.collection_title(*c));
                format!(r#"<a href="/collections/{c}">{title}</a>"#)
            })
            .collect()
    }
}

pub async fn home(visit: Visit) -> Response {
    let all: Vec<&Product> = visit.products.iter().collect();
    let main = format!(
        r#"<section class="hero"><h1>New season, on video</h1><p>Watch how our pieces wear, then add them to your cart without leaving the video.</p></section>
{slot}<h2>All products</h2>{grid}"#,
        slot = slot(&visit.request),
        grid = product_grid(&all, visit.shop.currency.code()),
    );
    let context = PageContext {
        page_type: "index",
        ..PageContext::default()
    };
    visit.page("Home", &main, Some(&context))
}

pub fn product(visit: Visit, handle: &str) -> Response {
    let Some(product) = visit.products.iter().find(|p| p.handle.as_str() == handle) else {
        return (StatusCode::NOT_FOUND, Html(not_found_html())).into_response();
    };
    let others: Vec<&Product> = visit
        .products
        .iter()
        .filter(|p| p.id != product.id)
        .collect();
    let main = format!(
        r#"<div class="product"><img src="{image}" alt="{title}" width="400" height="400">
<div><h1>{title}</h1><p class="price">{price}</p>
<form method="post" action="/cart/add">{variant}<button>Add to cart</button></form>
<p>A demo product. Its videos show below.</p></div></div>
{slot}<h2>You may also like</h2>{grid}"#,
        image = esc(&product.image),
        title = esc(&product.title),
        price = priced(price_cents(product), visit.shop.currency.code()),
        variant = variant_field(product),
        slot = slot(&visit.request),
        grid = product_grid(&others, visit.shop.currency.code()),
    );
    let context = PageContext {
        page_type: "product",
        product: Some(product),
        collection: None,
    };
    visit.page(&product.title, &main, Some(&context))
}

/// The product form's variant: a hidden field for a product's only variant, else a choice
/// (sold-out variants shown, not choosable), the first available one chosen.
fn variant_field(product: &Product) -> String {
    let variants = cart::variants(product);
    if let [only] = variants.as_slice() {
        return format!(r#"<input type="hidden" name="id" value="{}">"#, only.id);
    }
    let first_available = variants.iter().find(|v| v.available).map(|v| v.id);
    let mut html = format!(
        r#"<p><label>{} <select name="id">"#,
        esc(cart::option_of(product).0)
    );
    for v in &variants {
        let _ = write!(
            html,
            r#"<option value="{id}"{selected}{disabled}>{title}{sold_out}</option>"#,
            id = v.id,
            selected = if Some(v.id) == first_available {
                " selected"
            } else {
                ""
            },
            disabled = if v.available { "" } else { " disabled" },
            title = esc(v.title),
            sold_out = if v.available { "" } else { " (sold out)" },
        );
    }
    html.push_str("</select></label></p>");
    html
}

pub async fn collection(Path(handle): Path<String>, visit: Visit) -> Response {
    let number: u64 = handle.parse().unwrap_or(0);
    if !collections_of(&visit.products).contains(&number) {
        return (StatusCode::NOT_FOUND, Html(not_found_html())).into_response();
    }
    let members: Vec<&Product> = visit
        .products
        .iter()
        .filter(|p| {
            p.collection_ids
                .iter()
                .any(|c| numeric_tail(c.as_str()) == number)
        })
        .collect();
    let title = visit.collection_title(number);
    let main = format!(
        r#"<section class="hero"><h1>{title}</h1></section>{slot}{grid}"#,
        slot = slot(&visit.request),
        grid = product_grid(&members, visit.shop.currency.code()),
    );
    let context = PageContext {
        page_type: "collection",
        product: None,
        collection: Some(number),
    };
    visit.page(&title, &main, Some(&context))
}

fn lines_table(cart: &Cart, currency: &str) -> String {
    let mut html = String::from(
        "<table><thead><tr><th>Product</th><th>Quantity</th><th>Price</th></tr></thead><tbody>",
    );
    for line in &cart.lines {
        let _ = write!(
            html,
            r#"<tr data-demo-line="{id}" data-demo-variant="{variant}"><td>{title}</td><td>{quantity}</td><td>{price}</td></tr>"#,
            id = esc(line.product.id.as_str()),
            variant = line.variant.id,
            title = esc(&line.title()),
            quantity = line.quantity,
            price = priced(line.price_cents(), currency),
        );
    }
    let _ = write!(
        html,
        r#"</tbody><tfoot><tr><th colspan="2">Total</th><th data-demo-total>{}</th></tr></tfoot></table>"#,
        priced(cart.total_cents(), currency)
    );
    html
}

pub async fn cart(visit: Visit) -> Response {
    let main = if visit.request.cart.lines.is_empty() {
        r#"<h1>Your cart</h1><p>Your cart is empty. <a href="/">Continue shopping</a></p>"#
            .to_string()
    } else {
        format!(
            r#"<h1>Your cart</h1>{table}<form class="checkout" action="/checkout"><button name="checkout">Check out</button></form>
<form method="post" action="/cart/clear"><button class="secondary">Empty the cart</button></form>"#,
            table = lines_table(&visit.request.cart, visit.shop.currency.code())
        )
    };
    let context = PageContext {
        page_type: "cart",
        ..PageContext::default()
    };
    visit.page("Cart", &main, Some(&context))
}

/// The checkout: no theme, no app blocks (the platform runs checkout itself).
pub async fn checkout(visit: Visit) -> Response {
    if visit.request.cart.lines.is_empty() {
        return Redirect::to("/cart").into_response();
    }
    let main = format!(
        r#"<h1>Checkout</h1>{table}<form method="post" action="/checkout"><p>Payment is emulated: nothing is charged.</p><button data-demo-pay>Pay now</button></form>"#,
        table = lines_table(&visit.request.cart, visit.shop.currency.code())
    );
    visit.page("Checkout", &main, None)
}

/// The order's thank-you page, where the platform runs web pixels: the checkout pixel gets
/// `checkout_completed` with this order, under an emulation of the web-pixel API.
pub async fn thank_you(
    State(store): State<DevStore>,
    order_id: Path<String>,
    visit: Visit,
) -> Response {
    let Some(order) = cart::order(&store, order_id) else {
        return (StatusCode::NOT_FOUND, Html(not_found_html())).into_response();
    };
    let currency = visit.shop.currency.code();
    let line_items: Vec<serde_json::Value> = order
        .cart
        .lines
        .iter()
        .map(|l| {
            serde_json::json!({
                "quantity": l.quantity,
                "title": l.product.title,
                "variant": { "id": format!("gid://shopify/ProductVariant/{}", l.variant.id),
                             "price": { "amount": l.variant.price_cents as f64 / 100.0, "currencyCode": currency },
                             "product": { "id": l.product.id.as_str(), "title": l.product.title } },
            })
        })
        .collect();
    // The amount is a JSON number with two decimals, as the platform sends money.
    let total = money(order.cart.total_cents());
    let checkout = format!(
        r#"{{"order":{{"id":"gid://shopify/Order/{id}"}},"token":"{id}","currencyCode":"{currency}","totalPrice":{{"amount":{total},"currencyCode":"{currency}"}},"lineItems":{items}}}"#,
        id = order.id,
        items = serde_json::to_string(&line_items).expect("JSON"),
    );
    let pixel = if visit.request.app {
        format!(
            r#"<script>
(function () {{
  var subscribers = {{}};
  var wrap = function (s) {{ return {{ getItem: async function (k) {{ return s.getItem(k); }}, setItem: async function (k, v) {{ s.setItem(k, v); }} }}; }};
  var privacy = window.Shopify.customerPrivacy;
  var consentSubscribers = [];
  document.addEventListener("visitorConsentCollected", function () {{
    consentSubscribers.forEach(function (cb) {{ cb({{ customerPrivacy: {{ analyticsProcessingAllowed: privacy.analyticsProcessingAllowed() }} }}); }});
  }});
  window.videoappPixelEmulation = {{
    publish: function (name, data) {{
      var event = {{ name: name, timestamp: new Date().toISOString(), data: data }};
      return Promise.all((subscribers[name] || []).map(function (cb) {{ return cb(event); }}));
    }}
  }};
  window.shopify = {{
    extend: function (point, pixel) {{
      if (point !== "WebPixel::Render") return;
      pixel({{
        settings: {{}},
        analytics: {{ subscribe: function (name, cb) {{ (subscribers[name] = subscribers[name] || []).push(cb); return function () {{ return true; }}; }} }},
        browser: {{ localStorage: wrap(localStorage), sessionStorage: wrap(sessionStorage),
                   sendBeacon: async function (url, body) {{ return navigator.sendBeacon(url, body); }} }},
        init: {{ context: {{ document: {{ location: {{ origin: location.origin }} }} }},
                customerPrivacy: {{ analyticsProcessingAllowed: privacy.analyticsProcessingAllowed() }} }},
        customerPrivacy: {{ subscribe: function (name, cb) {{ if (name === "visitorConsentCollected") consentSubscribers.push(cb); return function () {{ return true; }}; }} }}
      }});
    }}
  }};
}})();
</script>
<script src="/cdn/videoapp-pixel.js"></script>
<script>
window.videoappPixelDone = window.videoappPixelEmulation
  ? window.videoappPixelEmulation.publish("checkout_completed", {{ checkout: {checkout} }})
  : Promise.resolve();
</script>"#
        )
    } else {
        String::new()
    };
    let main = format!(
        r#"<h1>Thank you!</h1><p>Order <b data-demo-order>{id}</b> is confirmed.</p>{table}<p><a href="/">Continue shopping</a></p>{pixel}"#,
        id = esc(&order.id),
        table = lines_table(&order.cart, currency),
    );
    visit.page("Thank you", &main, None)
}

#[derive(Deserialize)]
pub struct LogIn {
    customer: String,
}

/// Logs in as a customer: the app proxy then sends `logged_in_customer_id`.
pub async fn log_in(Form(form): Form<LogIn>) -> Response {
    let customer: String = form
        .customer
        .chars()
        .filter(char::is_ascii_digit)
        .take(20)
        .collect();
    let mut response = Redirect::to("/").into_response();
    let cookie = format!("customer={customer}; Path=/; SameSite=Lax");
    response.headers_mut().insert(
        header::SET_COOKIE,
        cookie.parse().expect("a cookie is ASCII"),
    );
    response
}

pub async fn log_out() -> Response {
    let mut response = Redirect::to("/").into_response();
    response.headers_mut().insert(
        header::SET_COOKIE,
        "customer=; Path=/; Max-Age=0; SameSite=Lax"
            .parse()
            .expect("a cookie is ASCII"),
    );
    response
}

pub fn not_found_html() -> String {
    r#"<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Not found</title></head><body><h1>Not found</h1><p><a href="/">Home</a></p></body></html>"#.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::domain::{ProductGid, TextLine};

    /// The app embed block's Liquid, with each of its expressions replaced by the value the
    /// platform would give it on this page: what the theme would render.
    fn rendered_embed_block(
        page_type: &str,
        product: Option<&Product>,
        collection: &str,
    ) -> String {
        let liquid = include_str!("../../extensions/videoapp-theme/blocks/videoapp-embed.liquid");
        let tag = liquid
            .lines()
            .find(|line| line.starts_with("<script"))
            .expect("the embed block renders a script tag");
        let product_id = product.map(|p| product_number(p).to_string());
        let values = [
            (
                "{{ 'videoapp-loader.js' | asset_url }}",
                "/cdn/videoapp-loader.js",
            ),
            ("{{ request.page_type | escape }}", page_type),
            ("{{ product.id }}", product_id.as_deref().unwrap_or("")),
            (
                "{{ product.handle | escape }}",
                product.map(|p| p.handle.as_str()).unwrap_or(""),
            ),
            ("{{ collection.id }}", collection),
            (
                "{{ block.settings.proxy_path | default: '/apps/videoapp_sub' | escape }}",
                "/apps/videoapp_sub",
            ),
        ];
        let mut html = tag.to_string();
        for (expression, value) in values {
            html = html.replace(expression, value);
        }
        assert!(
            !html.contains("{{"),
            "an expression the test does not know: {html}"
        );
        html
    }

    #[test]
    fn the_country_is_the_shoppers_choice_else_the_shops() {
        let with = |cookie: &str| {
            let mut headers = HeaderMap::new();
            headers.insert(header::COOKIE, cookie.parse().unwrap());
            country(&headers)
        };
        assert_eq!(country(&HeaderMap::new()), "US");
        assert_eq!(with("cart=1; localization=DE"), "DE");
        for refused in [
            "localization=de",
            "localization=DEU",
            "localization=",
            "localization=D\"",
        ] {
            assert_eq!(with(refused), "US", "{refused}");
        }
    }

    #[test]
    fn the_embed_is_what_the_app_embed_block_renders() {
        let product = Product {
            id: ProductGid::parse("1001").unwrap(),
            title: TextLine::parse("Linen Shirt").unwrap(),
            handle: TextLine::parse("linen-shirt").unwrap(),
            image: TextLine::default(),
            url: TextLine::default(),
            collection_ids: Vec::new(),
        };
        let home = PageContext {
            page_type: "index",
            ..PageContext::default()
        };
        assert_eq!(embed(&home, None), rendered_embed_block("index", None, ""));
        let product_page = PageContext {
            page_type: "product",
            product: Some(&product),
            collection: None,
        };
        assert_eq!(
            embed(&product_page, None),
            rendered_embed_block("product", Some(&product), "")
        );
        let collection = PageContext {
            page_type: "collection",
            product: None,
            collection: Some(501),
        };
        assert_eq!(
            embed(&collection, None),
            rendered_embed_block("collection", None, "501")
        );
    }

    #[test]
    fn under_a_holdout_the_embed_is_the_holdout_snippet_then_the_loader() {
        // The block renders the snippet with the app's metafield, outside the theme editor.
        let liquid = include_str!("../../extensions/videoapp-theme/blocks/videoapp-embed.liquid");
        let (namespace, key) = HOLDOUT_METAFIELD;
        let assign = format!(
            "{{%- assign holdout = app.metafields.{namespace}.{key}.value | default: 0 -%}}"
        );
        let render = "{%- if holdout > 0 and request.design_mode != true -%}{% render 'videoapp-holdout', percent: holdout %}{%- endif -%}";
        let lines: Vec<&str> = liquid.lines().collect();
        let tag = lines.iter().position(|l| l.starts_with("<script")).unwrap();
        assert_eq!(lines[tag - 2..tag], [assign.as_str(), render]);
        assert!(liquid.contains(r#""target": "head""#), "{liquid}");

        let snippet =
            "<script data-videoapp-holdout=\"{{ percent | plus: 0 }}\">decide()</script>\n";
        let rendered = render_holdout_snippet(snippet, 10);
        assert_eq!(
            rendered,
            "<script data-videoapp-holdout=\"10\">decide()</script>"
        );
        let home = PageContext {
            page_type: "index",
            ..PageContext::default()
        };
        assert_eq!(
            embed(&home, Some(&rendered)),
            rendered + &rendered_embed_block("index", None, "")
        );
    }
}
