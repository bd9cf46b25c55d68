//! The bench shop, seeded through the admin API with a fixed random seed: 500 products, 500
//! published videos and 50 active widgets of mixed kinds, of which 20 render on the home page.

use std::collections::BTreeSet;

use futures::stream::{self, StreamExt};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use reqwest::Method;
use serde_json::{json, Value};
use uuid::Uuid;

use super::helpers::ADMIN_TOKEN;
use super::{fail, SHOP};

const PRODUCTS: usize = 500;
const VIDEOS: usize = 500;
const WIDGETS: usize = 50;
const MANUAL_VIDEOS: usize = 10;
/// How many of the 50 widgets a `location=home` page renders (see [`widget`]).
pub const WIDGETS_AT_HOME: usize = 20;

/// The bench shop's admin API: `…/admin/v1/shops/{SHOP}`.
pub struct Admin(String);

impl Admin {
    pub fn new(base_url: &str) -> Admin {
        Admin(format!("{base_url}/admin/v1/shops/{SHOP}"))
    }

    pub async fn send(&self, method: reqwest::Method, path: &str, body: Value) -> Value {
        let url = format!("{}{path}", self.0);
        let request = reqwest::Client::new().request(method.clone(), &url);
        let sent = request.bearer_auth(ADMIN_TOKEN).json(&body).send().await;
        let response = sent.unwrap_or_else(|e| fail(format!("{method} {url}: {e}")));
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            fail(format!("{method} {url} answered {status}: {text}"));
        }
        serde_json::from_str(&text).unwrap_or(Value::Null)
    }

    /// POSTs each body to `path`, a few at a time; returns what was created, in order.
    pub async fn create_all(&self, path: &str, bodies: Vec<Value>) -> Vec<Value> {
        let post = |body| self.send(Method::POST, path, body);
        let created = bodies.into_iter().map(post);
        stream::iter(created).buffered(8).collect().await
    }
}

const ADJECTIVES: &str = "Organic,Relaxed,Vintage,Everyday,Lightweight,Oversized,Recycled,\
    Classic,Cropped,Tailored,Ribbed,Washed";
const MATERIALS: &str = "Cotton,Linen,Merino Wool,Denim,Cashmere,Silk,Corduroy,Hemp";
const GARMENTS: &str = "Crew Neck T-Shirt,Button-Down Shirt,Wide-Leg Trousers,Midi Skirt,Hoodie,\
    Bomber Jacket,Cardigan,Chino Shorts,Wrap Dress,Tote Bag";
const COLOURS: &str = "Heather Grey,Sage,Navy,Off White,Black,Terracotta,Sand,Olive,Dusty Rose";
const HOOKS: &str = "Styling the,3 ways to wear the,Unboxing our,Behind the seams:,Try-on haul:,\
    Why customers love the,Care guide for the,Outfit of the day with the";

/// One comma-separated word of each list, in order.
fn pick<const N: usize>(rng: &mut StdRng, lists: [&'static str; N]) -> [&'static str; N] {
    lists.map(|list| {
        let words: Vec<&'static str> = list.split(',').collect();
        *words.choose(rng).expect("a word")
    })
}

fn slug(text: &str) -> String {
    let words = text.split(|c: char| !c.is_ascii_alphanumeric());
    let words: Vec<&str> = words.filter(|w| !w.is_empty()).collect();
    words.join("-").to_ascii_lowercase()
}

fn product_gid(i: usize) -> String {
    format!("gid://shopify/Product/{}", 8_091_234_560_000 + i as u64)
}

fn product(rng: &mut StdRng, i: usize) -> Value {
    let [adjective, material, garment, colour] =
        pick(rng, [ADJECTIVES, MATERIALS, GARMENTS, COLOURS]);
    let title = format!("{adjective} {material} {garment} – {colour}");
    let handle = format!("{}-{i}", slug(&title));
    let collections: BTreeSet<String> = (0..rng.gen_range(1..=3))
        .map(|_| 4_123_456_000u64 + rng.gen_range(0..40u64))
        .map(|id| format!("gid://shopify/Collection/{id}"))
        .collect();
    let version = rng.gen_range(0..100_000_000u32);
    let image = "https://cdn.shopify.com/s/files/1/0612/3456/7890/files";
    json!({
        "id": product_gid(i),
        "title": title,
        "handle": handle,
        "image": format!("{image}/{handle}_1024x1024.jpg?v=17{version:08}"),
        "url": format!("https://{SHOP}/products/{handle}"),
        "collectionIds": collections,
    })
}

fn video(rng: &mut StdRng, i: usize) -> Value {
    let [hook, adjective, material, garment] = pick(rng, [HOOKS, ADJECTIVES, MATERIALS, GARMENTS]);
    let rest = format!("{adjective} {material} {garment}").to_lowercase();
    let title = format!("{hook} {rest}");
    let file = format!("{}-{i:04}", slug(&title));
    let id = Uuid::from_u128(rng.gen()).simple();
    let media = format!("https://cdn.videoapp.example/media/{id}");
    let linked = rng.gen_range(1..=3);
    let products = rand::seq::index::sample(rng, PRODUCTS, linked);
    let products = products.into_iter().map(product_gid);
    json!({
        "title": title,
        "thumbnail": format!("{media}/thumbnails/{file}-poster.jpg"),
        "videoUrl": format!("{media}/{file}-1080p.mp4"),
        "miniVersionUrl": format!("{media}/{file}-preview-360p.mp4"),
        "duration": (rng.gen_range(8.0..95.0f64) * 1000.0).round() / 1000.0,
        "status": "PUBLISHED",
        "productIds": products.collect::<Vec<_>>(),
    })
}

/// The 50 widgets, all `active`; the home page renders the first [`WIDGETS_AT_HOME`]. The others:
/// `productpage` widgets, carousels for product or collection pages, product-sourced carousels
/// (nothing without a current product), and stories limited to some products.
fn widget(rng: &mut StdRng, i: usize, video_ids: &[String]) -> Value {
    let (kind, source, label) = match i {
        0..20 => (["carousel", "story"][i % 2], "manual", "Homepage"),
        20..30 => ("productpage", ["manual", "product"][i % 2], "Product page"),
        30..40 => ("carousel", "manual", "Collection"),
        40..45 => ("carousel", "product", "Shop the look"),
        _ => ("story", "manual", "Featured"),
    };
    let home: [&[&str]; 3] = [&[], &["home"], &["home", "collection", "page"]];
    let rules = match i {
        0..20 => json!({ "locations": home[i % 3] }),
        30..40 => json!({ "locations": [(["product", "collection"][i % 2])] }),
        45.. => {
            let products = (0..5).map(|_| product_gid(rng.gen_range(0..PRODUCTS)));
            json!({ "productIds": products.collect::<BTreeSet<_>>() })
        }
        _ => json!({}),
    };
    let videos: Vec<&String> = match source {
        "manual" => video_ids.choose_multiple(rng, MANUAL_VIDEOS).collect(),
        _ => Vec::new(),
    };
    json!({
        "type": kind,
        "title": format!("{label} {kind} #{:02} – new season picks", i + 1),
        "status": "active",
        "priority": rng.gen_range(0..10),
        "viewStyle": (["default", "compact", "large"][i % 3]),
        "clickBehavior": (["open_modal", "open_product", "none"][i % 3]),
        "modalLayout": (["vertical", "horizontal"][i % 2]),
        "sourceType": source,
        "videoIds": videos,
        "rules": rules,
    })
}

/// The bench shop itself (no catalog), through the admin API.
pub async fn seed_shop(admin: &Admin) {
    let shop = json!({ "name": "Bench Store", "currency": "EUR", "timezone": "Europe/Paris" });
    admin.send(Method::PUT, "", shop).await;
}

/// The shop, its products, videos and widgets, through the admin API. Deterministic.
pub async fn seed(admin: &Admin) {
    let mut rng = StdRng::seed_from_u64(0x5eed);
    seed_shop(admin).await;
    let products: Vec<Value> = (0..PRODUCTS).map(|i| product(&mut rng, i)).collect();
    let products = json!({ "products": products });
    admin.send(Method::PUT, "/products", products).await;
    let videos: Vec<Value> = (0..VIDEOS).map(|i| video(&mut rng, i)).collect();
    let created = admin.create_all("/videos", videos).await;
    let id = |v: &Value| v["id"].as_str().unwrap_or_default().to_string();
    let video_ids: Vec<String> = created.iter().map(id).collect();
    let make = |i| widget(&mut rng, i, &video_ids);
    let widgets = (0..WIDGETS).map(make).collect();
    admin.create_all("/widgets", widgets).await;
}
