//! The storefront widget endpoints' tests: the shop they arrange, its products, the requests
//! they make and what they assert of an answer.

use chrono::DateTime;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

use super::*;

pub const SHOP: &str = "storefront-shop.myshopify.com";
pub const OTHER_SHOP: &str = "other-storefront-shop.myshopify.com";

pub const LOCATIONS: [&str; 5] = ["home", "product", "collection", "page", "other"];

/// A storefront query, as `(name, value)` pairs.
pub type Params<'a> = Vec<(&'a str, &'a str)>;

/// The global id of product `n`.
pub fn product_gid(n: u64) -> String {
    format!("gid://shopify/Product/{n}")
}

/// A product as the platform syncs it, every field set.
pub fn product(n: u64, handle: &str) -> Value {
    json!({
        "id": product_gid(n),
        "title": format!("The {handle}"),
        "handle": handle,
        "image": format!("https://cdn.example.com/{handle}.jpg"),
        "url": format!("https://{SHOP}/products/{handle}"),
    })
}

pub async fn sync_products(app: &TestApp, shop: &str, products: Value) {
    let path = format!("/shops/{shop}/products");
    let body = json!({ "products": products });
    app.admin_expecting(Method::PUT, &path, &body, StatusCode::OK)
        .await;
}

/// A shop with one published video; returns the video's id.
pub async fn shop_with_a_video(app: &TestApp) -> String {
    app.create_shop(SHOP).await;
    app.create_video(SHOP, json!({})).await
}

/// contextual-widgets for `SHOP`; asserts a 200 and returns the body.
pub async fn contextual(app: &TestApp, params: &[(&str, &str)]) -> Value {
    let response = app.storefront("contextual-widgets", SHOP, params).await;
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{params:?}: {body}");
    body
}

/// The ids of the widgets contextual-widgets shows for `params`, in order.
pub async fn shown(app: &TestApp, params: &[(&str, &str)]) -> Vec<String> {
    ids_of(&contextual(app, params).await["widgets"])
}

pub fn sorted(mut ids: Vec<String>) -> Vec<String> {
    ids.sort();
    ids
}

pub fn assert_keys(value: &Value, expected: &[&str]) {
    let mut actual: Vec<&str> = value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .map(String::as_str)
        .collect();
    actual.sort_unstable();
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    assert_eq!(actual, expected, "{value}");
}

pub fn assert_timestamp(value: &Value) {
    let text = value
        .as_str()
        .unwrap_or_else(|| panic!("not a string: {value}"));
    DateTime::parse_from_rfc3339(text).unwrap_or_else(|e| panic!("{text:?} is not ISO 8601: {e}"));
}

/// The widget as the storefront receives it: exactly these keys, of these types, at every level.
pub fn assert_full_widget_shape(widget: &Value) {
    assert_keys(
        widget,
        &[
            "id",
            "type",
            "title",
            "status",
            "priority",
            "viewStyle",
            "clickBehavior",
            "modalLayout",
            "videos",
        ],
    );
    for key in [
        "id",
        "type",
        "title",
        "status",
        "viewStyle",
        "clickBehavior",
        "modalLayout",
    ] {
        assert!(widget[key].is_string(), "{key} of {widget}");
    }
    assert!(widget["priority"].is_i64(), "priority of {widget}");
    let videos = widget["videos"].as_array().expect("a videos array");
    for (i, video) in videos.iter().enumerate() {
        assert_keys(
            video,
            &[
                "id",
                "title",
                "thumbnail",
                "videoUrl",
                "miniVersionUrl",
                "duration",
                "order",
                "viewCount",
                "products",
                "hasProducts",
            ],
        );
        for key in ["id", "title", "thumbnail", "videoUrl", "miniVersionUrl"] {
            assert!(video[key].is_string(), "{key} of {video}");
        }
        assert!(video["duration"].is_number(), "duration of {video}");
        assert_eq!(video["order"], json!(i + 1), "order of {video}");
        let views = video["viewCount"].as_str().expect("viewCount is a string");
        assert!(
            !views.is_empty() && views.bytes().all(|b| b.is_ascii_digit()),
            "viewCount {views:?} is not a decimal integer"
        );
        let products = video["products"].as_array().expect("a products array");
        assert_eq!(
            video["hasProducts"],
            json!(!products.is_empty()),
            "hasProducts of {video}"
        );
        for product in products {
            assert_keys(product, &["id", "title", "handle", "image", "url"]);
            for key in ["id", "title", "handle", "image", "url"] {
                assert!(product[key].is_string(), "{key} of {product}");
            }
        }
    }
}
