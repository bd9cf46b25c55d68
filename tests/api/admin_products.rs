//! `PUT` / `GET` / `DELETE /admin/v1/shops/{shop}/products`: the product sync.

use crate::support::*;
use reqwest::{Method, Response, StatusCode};
use serde_json::{json, Value};

const SHOP: &str = "products-shop.myshopify.com";
const OTHER_SHOP: &str = "other-products-shop.myshopify.com";

async fn put_products(app: &TestApp, shop: &str, products: Value) -> Response {
    app.send_admin_json(
        Method::PUT,
        &format!("/shops/{shop}/products"),
        &json!({ "products": products }),
    )
    .await
}

async fn delete_products(app: &TestApp, shop: &str, ids: Value) -> Response {
    app.send_admin_json(
        Method::DELETE,
        &format!("/shops/{shop}/products"),
        &json!({ "ids": ids }),
    )
    .await
}

async fn list_products(app: &TestApp, shop: &str) -> Vec<Value> {
    app.admin_list(&format!("/shops/{shop}/products"), "products")
        .await
}

/// A valid product with only the required fields.
fn product(id: &str, title: &str) -> Value {
    json!({ "id": id, "title": title, "handle": format!("handle-{title}") })
}

/// A product with `field` set to `value`, otherwise valid.
fn product_with(id: &str, field: &str, value: Value) -> Value {
    let mut p = product(id, "Shirt");
    merge(&mut p, json!({ field: value }));
    p
}

async fn upserted_version(response: Response) -> i64 {
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["catalogVersion"].as_i64().expect("catalogVersion")
}

#[tokio::test]
async fn upserting_products_normalises_bare_numbers_to_global_ids() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = put_products(
        &app,
        SHOP,
        json!([{
            "id": "123",
            "title": "Blue shirt",
            "handle": "blue-shirt",
            "image": "https://cdn.example.com/blue.png",
            "url": "https://shop.example.com/products/blue-shirt",
            "collectionIds": ["7", "gid://shopify/Collection/8"],
        }]),
    )
    .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["upserted"], json!(1));
    assert_eq!(
        list_products(&app, SHOP).await,
        vec![json!({
            "id": "gid://shopify/Product/123",
            "title": "Blue shirt",
            "handle": "blue-shirt",
            "image": "https://cdn.example.com/blue.png",
            "url": "https://shop.example.com/products/blue-shirt",
            "collectionIds": ["gid://shopify/Collection/7", "gid://shopify/Collection/8"],
        })]
    );
}

#[tokio::test]
async fn upserting_an_existing_product_replaces_its_fields() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let first = put_products(
        &app,
        SHOP,
        json!([
            {
                "id": "gid://shopify/Product/5",
                "title": "Old title",
                "handle": "old-handle",
                "image": "https://cdn.example.com/old.png",
                "url": "https://shop.example.com/products/old",
                "collectionIds": ["1", "2"],
            },
            product("6", "Untouched"),
        ]),
    )
    .await;
    upserted_version(first).await;

    // Act: the same product, named by its bare number this time
    let response = put_products(
        &app,
        SHOP,
        json!([{
            "id": "5",
            "title": "New title",
            "handle": "new-handle",
            "url": "https://shop.example.com/products/new",
            "collectionIds": ["3"],
        }]),
    )
    .await;

    // Assert
    upserted_version(response).await;
    assert_eq!(
        list_products(&app, SHOP).await,
        vec![
            json!({
                "id": "gid://shopify/Product/5",
                "title": "New title",
                "handle": "new-handle",
                "image": "",
                "url": "https://shop.example.com/products/new",
                "collectionIds": ["gid://shopify/Collection/3"],
            }),
            json!({
                "id": "gid://shopify/Product/6",
                "title": "Untouched",
                "handle": "handle-Untouched",
                "image": "",
                "url": "",
                "collectionIds": [],
            }),
        ]
    );
}

#[tokio::test]
async fn a_product_listed_twice_in_one_request_is_rejected_naming_the_second() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act: the same product once as a global id, once as its bare number
    let response = put_products(
        &app,
        SHOP,
        json!([product("gid://shopify/Product/9", "A"), product("9", "B")]),
    )
    .await;

    // Assert
    assert_validation_error(response, "products[1].id:").await;
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_product_id_that_is_neither_a_global_id_nor_a_number_is_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    for bad in [
        "abc",
        "12a",
        "-3",
        "0",
        "",
        "gid://shopify/Collection/5",
        "gid://shopify/Product/",
        "1\u{0}",
        "gid://shopify/Product/\u{0}5",
    ] {
        // Act
        let response = put_products(
            &app,
            SHOP,
            json!([product("1", "Good"), product(bad, "Bad")]),
        )
        .await;

        // Assert
        assert_validation_error(response, "products[1].id:").await;
    }
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_bad_collection_id_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    for bad in ["x7", "gid://shopify/Product/7", "0", "\u{0}"] {
        // Act
        let response = put_products(
            &app,
            SHOP,
            json!([product_with("1", "collectionIds", json!(["7", bad]))]),
        )
        .await;

        // Assert
        assert_validation_error(response, "products[0].collectionIds[1]:").await;
    }
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn an_empty_title_or_handle_is_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let cases = [
        ("title", json!(""), "products[1].title:"),
        ("title", json!("   "), "products[1].title:"),
        ("handle", json!(""), "products[1].handle:"),
        ("handle", json!("two words"), "products[1].handle:"),
    ];

    for (field, value, needle) in cases {
        // Act
        let response = put_products(
            &app,
            SHOP,
            json!([product("1", "Good"), product_with("2", field, value)]),
        )
        .await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_missing_title_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = put_products(&app, SHOP, json!([{ "id": "1", "handle": "shirt" }])).await;

    // Assert
    assert_validation_error(response, "products[0]: missing field `title`").await;
}

#[tokio::test]
async fn an_image_or_url_that_is_not_an_http_url_is_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let cases = [
        ("image", "ftp://cdn.example.com/a.png", "products[0].image:"),
        ("image", "javascript:alert(1)", "products[0].image:"),
        ("image", "/relative/a.png", "products[0].image:"),
        ("url", "not a url", "products[0].url:"),
        ("url", "mailto:shop@example.com", "products[0].url:"),
    ];

    for (field, value, needle) in cases {
        // Act
        let response =
            put_products(&app, SHOP, json!([product_with("1", field, json!(value))])).await;

        // Assert
        assert_validation_error(response, needle).await;
    }
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn a_control_character_in_a_text_field_is_rejected_naming_the_field() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let fields = [
        ("title", "Linen shirt"),
        ("handle", "linen-shirt"),
        ("image", "https://cdn.example.com/shirt.jpg"),
        ("url", "https://example.com/products/shirt"),
    ];

    for (field, good) in fields {
        for bad in with_control_characters(good) {
            // Act
            let response = put_products(
                &app,
                SHOP,
                json!([product("1", "Shirt"), product_with("2", field, json!(bad))]),
            )
            .await;

            // Assert
            assert_control_character_refused(response, &format!("products[1].{field}")).await;
        }
    }
    assert!(list_products(&app, SHOP).await.is_empty());
}

#[tokio::test]
async fn an_unknown_product_field_is_rejected_naming_it() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = put_products(
        &app,
        SHOP,
        json!([product_with("1", "price", json!("9.99"))]),
    )
    .await;

    // Assert
    assert_validation_error(response, "products[0].price: unknown field").await;
}

#[tokio::test]
async fn a_malformed_products_body_is_an_invalid_body() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;

    // Act
    let response = app
        .admin(Method::PUT, &format!("/shops/{SHOP}/products"))
        .header("content-type", "application/json")
        .body(r#"{"products": [{"id": "1""#)
        .send()
        .await
        .unwrap();

    // Assert
    assert_error(response, StatusCode::BAD_REQUEST, "INVALID_BODY", "").await;
}

#[tokio::test]
async fn more_than_1000_products_in_one_request_are_rejected() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let batch = |n: usize| -> Value {
        (1..=n)
            .map(|i| product(&i.to_string(), &format!("P{i}")))
            .collect()
    };

    // Act
    let too_many = put_products(&app, SHOP, batch(1001)).await;
    let just_enough = put_products(&app, SHOP, batch(1000)).await;

    // Assert
    assert_validation_error(too_many, "products:").await;
    let (status, body) = json_of(just_enough).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["upserted"], json!(1000));
    assert_eq!(list_products(&app, SHOP).await.len(), 1000);
}

#[tokio::test]
async fn products_of_an_unknown_shop_are_not_found() {
    // Arrange
    let app = spawn_app().await;
    let unknown = "no-such-shop.myshopify.com";

    // Act
    let put = put_products(&app, unknown, json!([product("1", "Shirt")])).await;
    let get = app
        .send_admin(Method::GET, &format!("/shops/{unknown}/products"))
        .await;
    let delete = delete_products(&app, unknown, json!(["1"])).await;

    // Assert
    for response in [put, get, delete] {
        assert_error(response, StatusCode::NOT_FOUND, "NOT_FOUND", "shop").await;
    }
}

#[tokio::test]
async fn deleting_products_removes_the_listed_ids_and_ignores_unknown_ones() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let put = put_products(
        &app,
        SHOP,
        json!([
            product("1", "One"),
            product("2", "Two"),
            product("3", "Three")
        ]),
    )
    .await;
    upserted_version(put).await;

    // Act
    let response =
        delete_products(&app, SHOP, json!(["1", "gid://shopify/Product/3", "999"])).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["deleted"], json!(2));
    let remaining: Vec<Value> = list_products(&app, SHOP)
        .await
        .into_iter()
        .map(|p| p["id"].clone())
        .collect();
    assert_eq!(remaining, vec![json!("gid://shopify/Product/2")]);
}

#[tokio::test]
async fn deleting_products_that_are_already_gone_deletes_nothing() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    upserted_version(put_products(&app, SHOP, json!([product("1", "One")])).await).await;
    let first = delete_products(&app, SHOP, json!(["1"])).await;
    assert_eq!(json_of(first).await.1["deleted"], json!(1));

    // Act
    let again = delete_products(&app, SHOP, json!(["1"])).await;

    // Assert
    let (status, body) = json_of(again).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["deleted"], json!(0));
}

#[tokio::test]
async fn a_product_id_to_delete_must_be_a_global_id_or_a_number() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    upserted_version(put_products(&app, SHOP, json!([product("1", "One")])).await).await;

    for bad in ["shirt", "1\u{0}"] {
        // Act
        let response = delete_products(&app, SHOP, json!(["1", bad])).await;

        // Assert
        assert_validation_error(response, "ids[1]:").await;
    }
    assert_eq!(list_products(&app, SHOP).await.len(), 1);
}

#[tokio::test]
async fn products_of_one_shop_are_invisible_to_another() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    app.create_shop(OTHER_SHOP).await;
    upserted_version(put_products(&app, OTHER_SHOP, json!([product("1", "Theirs")])).await).await;

    // Act: the same id in our shop, then deleted from our shop
    upserted_version(put_products(&app, SHOP, json!([product("1", "Ours")])).await).await;
    let deleted = delete_products(&app, SHOP, json!(["1"])).await;

    // Assert
    assert_eq!(json_of(deleted).await.1["deleted"], json!(1));
    assert!(list_products(&app, SHOP).await.is_empty());
    let theirs = list_products(&app, OTHER_SHOP).await;
    assert_eq!(theirs.len(), 1);
    assert_eq!(theirs[0]["title"], json!("Theirs"));
}

#[tokio::test]
async fn every_product_write_bumps_the_catalog_version() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let initial = app.catalog_version(SHOP).await;

    // Act
    let after_insert =
        upserted_version(put_products(&app, SHOP, json!([product("1", "A")])).await).await;
    let after_update =
        upserted_version(put_products(&app, SHOP, json!([product("1", "B")])).await).await;
    let delete = delete_products(&app, SHOP, json!(["1"])).await;
    let (status, body) = json_of(delete).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let after_delete = body["catalogVersion"].as_i64().expect("catalogVersion");

    // Assert
    assert!(after_insert > initial, "{after_insert} after {initial}");
    assert!(
        after_update > after_insert,
        "{after_update} after {after_insert}"
    );
    assert!(
        after_delete > after_update,
        "{after_delete} after {after_update}"
    );
    assert_eq!(app.catalog_version(SHOP).await, after_delete);
}

#[tokio::test]
async fn a_rejected_product_write_leaves_the_catalog_version_unchanged() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let before = upserted_version(put_products(&app, SHOP, json!([product("1", "A")])).await).await;
    let too_many_ids: Vec<String> = (1..=1001).map(|i| i.to_string()).collect();

    // Act
    let rejected = [
        put_products(&app, SHOP, json!([product("1", "A"), product("1", "B")])).await,
        put_products(
            &app,
            SHOP,
            json!([product_with("2", "image", json!("ftp://x"))]),
        )
        .await,
        delete_products(&app, SHOP, json!(too_many_ids)).await,
        delete_products(&app, SHOP, json!(["nope"])).await,
    ];

    // Assert
    for response in rejected {
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    }
    assert_eq!(app.catalog_version(SHOP).await, before);
    let products = list_products(&app, SHOP).await;
    assert_eq!(products.len(), 1);
    assert_eq!(products[0]["title"], json!("A"));
}

#[tokio::test]
async fn a_query_lists_the_products_whose_title_or_handle_contains_it() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let products = json!([
        { "id": "1", "title": "Linen Shirt", "handle": "linen-shirt" },
        { "id": "2", "title": "Summer Dress", "handle": "summer-dress" },
        { "id": "3", "title": "Canvas Tote", "handle": "tote_100%" },
    ]);
    upserted_version(put_products(&app, SHOP, products).await).await;
    let ids = |query: &'static str| {
        let app = &app;
        async move {
            app.admin_list(&format!("/shops/{SHOP}/products?query={query}"), "products")
                .await
                .iter()
                .map(|p| p["id"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        }
    };

    // Act
    let by_title = ids("DRESS").await;
    let by_handle = ids("linen-sh").await;
    let literally = ids("_100%25").await;
    let wildcard = ids("%25").await;
    let none = ids("boots").await;
    let every = ids("").await;

    // Assert
    let gid = |n: &str| format!("gid://shopify/Product/{n}");
    assert_eq!(by_title, [gid("2")], "the title, ignoring case");
    assert_eq!(by_handle, [gid("1")], "the handle");
    assert_eq!(
        literally,
        [gid("3")],
        "the words as they are, `_` and `%` included"
    );
    assert_eq!(wildcard, [gid("3")], "`%` is no wildcard");
    assert!(none.is_empty(), "{none:?}");
    assert_eq!(
        every,
        [gid("1"), gid("2"), gid("3")],
        "an empty query lists every product"
    );
}
