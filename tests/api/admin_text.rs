//! Any string in any string field of an admin write, or in a path piece, answers 2xx or 4xx:
//! never a 500 from text Postgres cannot store.

use proptest::prelude::*;
use reqwest::Method;
use serde_json::{json, Value};

use crate::support::*;

const SHOP: &str = "text-shop.myshopify.com";

/// Where an arbitrary string goes: into the JSON body at `pointer`, or, when `pointer` is empty,
/// as the last segment of `path`.
struct Target {
    method: Method,
    path: String,
    body: Value,
    pointer: &'static str,
}

/// Every string an admin write reads, each in an otherwise valid request.
fn targets(video: &str, widget: &str) -> Vec<Target> {
    let product = json!({
        "products": [{
            "id": "1", "title": "Shirt", "handle": "shirt", "image": "https://cdn.example.com/s.jpg",
            "url": "https://example.com/products/shirt", "collectionIds": ["7"],
        }]
    });
    let new_video = json!({
        "title": "Lookbook", "thumbnail": "https://cdn.example.com/l.jpg",
        "videoUrl": "https://cdn.example.com/l.mp4", "miniVersionUrl": "https://cdn.example.com/m.mp4",
        "status": "PUBLISHED", "productIds": ["1"],
    });
    let new_widget = json!({
        "type": "story", "title": "Look", "status": "active", "viewStyle": "large",
        "clickBehavior": "open_product", "modalLayout": "horizontal", "sourceType": "manual",
        "videoIds": [video],
        "rules": { "locations": ["home"], "productIds": ["1"], "collectionIds": ["7"] },
    });
    let body = |method: Method, path: String, body: &Value, pointers: &[&'static str]| {
        pointers
            .iter()
            .map(|&pointer| Target {
                method: method.clone(),
                path: path.clone(),
                body: body.clone(),
                pointer,
            })
            .collect::<Vec<_>>()
    };
    let path_piece = |method: Method, path: &str, body: Value| Target {
        method,
        path: path.to_string(),
        body,
        pointer: "",
    };
    let shop = format!("/shops/{SHOP}");
    let video_fields = [
        "/title",
        "/thumbnail",
        "/videoUrl",
        "/miniVersionUrl",
        "/status",
        "/productIds/0",
    ];
    let widget_fields = [
        "/type",
        "/title",
        "/status",
        "/viewStyle",
        "/clickBehavior",
        "/modalLayout",
        "/sourceType",
        "/videoIds/0",
        "/rules/locations/0",
        "/rules/productIds/0",
        "/rules/collectionIds/0",
    ];
    let shop_settings = json!({ "name": "Shop", "timezone": "UTC", "currency": "EUR" });
    let shop_fields = ["/name", "/timezone", "/currency"];
    let product_fields = [
        "/products/0/id",
        "/products/0/title",
        "/products/0/handle",
        "/products/0/image",
        "/products/0/url",
        "/products/0/collectionIds/0",
    ];
    [
        body(Method::PUT, shop.clone(), &shop_settings, &shop_fields),
        body(
            Method::PUT,
            "/shops/new-text-shop.myshopify.com".into(),
            &shop_settings,
            &shop_fields,
        ),
        body(
            Method::PUT,
            format!("{shop}/products"),
            &product,
            &product_fields,
        ),
        body(
            Method::DELETE,
            format!("{shop}/products"),
            &json!({ "ids": ["1"] }),
            &["/ids/0"],
        ),
        body(
            Method::POST,
            format!("{shop}/videos"),
            &new_video,
            &video_fields,
        ),
        body(
            Method::PATCH,
            format!("{shop}/videos/{video}"),
            &new_video,
            &video_fields,
        ),
        body(
            Method::POST,
            format!("{shop}/widgets"),
            &new_widget,
            &widget_fields,
        ),
        body(
            Method::PATCH,
            format!("{shop}/widgets/{widget}"),
            &new_widget,
            &widget_fields,
        ),
        body(
            Method::POST,
            format!("{shop}/api-keys"),
            &json!({ "name": "Looker" }),
            &["/name"],
        ),
        vec![
            path_piece(Method::PUT, "/shops", shop_settings.clone()),
            path_piece(
                Method::PATCH,
                &format!("{shop}/videos"),
                json!({ "title": "x" }),
            ),
            path_piece(
                Method::PATCH,
                &format!("{shop}/widgets"),
                json!({ "title": "x" }),
            ),
            path_piece(Method::DELETE, &format!("{shop}/api-keys"), Value::Null),
        ],
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// `any::<String>()` draws from `\PC*`, which holds no control character at all; the other two
/// draw every `char`, with the controls Postgres or a parser might trip over made likely.
fn any_text() -> impl Strategy<Value = String> {
    let control = prop_oneof![
        Just('\0'),
        Just('\t'),
        Just('\n'),
        Just('\u{1f}'),
        Just('\u{7f}'),
        Just('\u{85}'),
        Just('\u{9f}'),
    ];
    prop_oneof![
        any::<String>(),
        proptest::collection::vec(any::<char>(), 0..40).prop_map(String::from_iter),
        proptest::collection::vec(prop_oneof![any::<char>(), control], 0..40)
            .prop_map(String::from_iter),
        ("[0-9]{1,4}", any::<char>()).prop_map(|(n, c)| format!("{n}{c}")),
    ]
}

#[test]
fn any_string_in_any_admin_write_gets_only_2xx_or_4xx() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (app, targets) = runtime.block_on(async {
        let app = spawn_app().await;
        let (video, widget) = app
            .create_shop_showing_a_video(SHOP, json!({ "title": "Lookbook" }))
            .await;
        (app, targets(&video, &widget))
    });
    let config = ProptestConfig {
        cases: 256,
        failure_persistence: None,
        ..ProptestConfig::default()
    };
    proptest!(config, |(target in 0..targets.len(), text in any_text())| {
        let Target { method, path, body, pointer } = &targets[target];
        let status = runtime.block_on(async {
            let mut url = reqwest::Url::parse(&app.url(&format!("/admin/v1{path}"))).unwrap();
            let mut body = body.clone();
            if pointer.is_empty() {
                url.path_segments_mut().unwrap().push(&text);
            } else {
                *body.pointer_mut(pointer).unwrap() = Value::String(text.clone());
            }
            let request = app.client.request(method.clone(), url).bearer_auth(ADMIN_TOKEN);
            let request = if body.is_null() { request } else { request.json(&body) };
            request.send().await.unwrap().status()
        });
        prop_assert!(
            status.is_success() || status.is_client_error(),
            "{method} {path} {pointer} = {text:?} -> {status}"
        );
    });
}
