//! Which widgets contextual-widgets shows on a page, and which of their videos: status and
//! order, the location, product and collection rules, the widget types bound to pages
//! (productpage, floating), product-sourced widgets, and the widgets a snippet names.

use crate::support::storefront::*;
use crate::support::*;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uuid::Uuid;

/// A query and the widget (or video) ids it should answer, in order.
type Case<'a> = (Params<'a>, Vec<String>);

async fn patch_widget(app: &TestApp, shop: &str, id: &str, body: Value) {
    let response = app
        .send_admin_json(Method::PATCH, &format!("/shops/{shop}/widgets/{id}"), &body)
        .await;
    assert_eq!(response.status(), StatusCode::OK);
}

// ---------------------------------------------------------------- status and order

#[tokio::test]
async fn contextual_widgets_shows_only_active_widgets_and_published_videos_renumbered() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let a = app.create_video(SHOP, json!({ "title": "A" })).await;
    let b = app
        .create_video(SHOP, json!({ "title": "B", "status": "DRAFT" }))
        .await;
    let c = app.create_video(SHOP, json!({ "title": "C" })).await;
    let d = app
        .create_video(SHOP, json!({ "title": "D", "status": "ARCHIVED" }))
        .await;
    let e = app.create_video(SHOP, json!({ "title": "E" })).await;
    let active = app
        .create_widget(SHOP, json!({ "videoIds": [e, b, a, d, c] }))
        .await;
    app.create_widget(SHOP, json!({ "status": "draft", "videoIds": [a] }))
        .await;
    app.create_widget(SHOP, json!({ "status": "archived", "videoIds": [a] }))
        .await;
    app.create_widget(SHOP, json!({ "videoIds": [b, d] })).await;
    app.create_widget(SHOP, json!({})).await;

    // Act
    let body = contextual(&app, &[("location", "home")]).await;

    // Assert
    assert_eq!(ids_of(&body["widgets"]), vec![active]);
    let videos = &body["widgets"][0]["videos"];
    assert_eq!(ids_of(videos), vec![e, a, c]);
    let orders: Vec<&Value> = videos
        .as_array()
        .unwrap()
        .iter()
        .map(|v| &v["order"])
        .collect();
    assert_eq!(orders, vec![&json!(1), &json!(2), &json!(3)]);
}

#[tokio::test]
async fn contextual_widgets_orders_by_priority_then_by_creation_time() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let low = app
        .create_widget(
            SHOP,
            json!({ "title": "low", "priority": 1, "videoIds": [video] }),
        )
        .await;
    let high_old = app
        .create_widget(
            SHOP,
            json!({ "title": "Z", "priority": 5, "videoIds": [video] }),
        )
        .await;
    let high_new = app
        .create_widget(
            SHOP,
            json!({ "title": "A", "priority": 5, "videoIds": [video] }),
        )
        .await;
    let middle = app
        .create_widget(
            SHOP,
            json!({ "title": "mid", "priority": 3, "videoIds": [video] }),
        )
        .await;
    // A later edit must not make the older widget the newer one.
    patch_widget(&app, SHOP, &high_old, json!({ "title": "Z edited" })).await;

    // Act
    let order = shown(&app, &[("location", "home")]).await;

    // Assert
    assert_eq!(order, vec![high_old, high_new, middle, low]);
}

// ---------------------------------------------------------------- rules

#[tokio::test]
async fn contextual_widgets_location_rule_admits_only_the_listed_locations_and_empty_admits_all() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let no_rules = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let empty_list = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": [] } }),
        )
        .await;
    let listed = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product", "collection"] } }),
        )
        .await;

    for location in LOCATIONS {
        // Act
        let ids = shown(&app, &[("location", location)]).await;

        // Assert
        let mut expected = vec![no_rules.clone(), empty_list.clone()];
        if location == "product" || location == "collection" {
            expected.push(listed.clone());
        }
        assert_eq!(ids, expected, "at {location}");
    }
}

#[tokio::test]
async fn contextual_widgets_product_rule_matches_the_pages_product_by_gid_number_or_handle() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    sync_products(
        &app,
        SHOP,
        json!([product(11, "shirt"), product(12, "hat")]),
    )
    .await;
    let for_shirt = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "productIds": [product_gid(11)] } }),
        )
        .await;
    let for_hat = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "productIds": ["12"] } }),
        )
        .await;
    let gid_11 = product_gid(11);
    let cases: Vec<Case> = vec![
        (
            vec![("location", "product"), ("product_id", &gid_11)],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "11")],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "shirt")],
            vec![for_shirt.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "12")],
            vec![for_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "hat")],
            vec![for_hat.clone()],
        ),
        (vec![("location", "product"), ("product_id", "13")], vec![]),
        (
            vec![
                ("location", "product"),
                ("product_handle", "no-such-product"),
            ],
            vec![],
        ),
        (vec![("location", "product")], vec![]),
        (vec![("location", "home")], vec![]),
    ];

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}

#[tokio::test]
async fn contextual_widgets_collection_rule_matches_the_collection_id_as_gid_or_number() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let for_sale = app
        .create_widget(
            SHOP,
            json!({
                "videoIds": [video],
                "rules": { "collectionIds": ["gid://shopify/Collection/22"] },
            }),
        )
        .await;
    let cases: Vec<Case> = vec![
        (
            vec![
                ("location", "collection"),
                ("collection_id", "gid://shopify/Collection/22"),
            ],
            vec![for_sale.clone()],
        ),
        (
            vec![("location", "collection"), ("collection_id", "22")],
            vec![for_sale.clone()],
        ),
        (
            vec![("location", "collection"), ("collection_id", "23")],
            vec![],
        ),
        (vec![("location", "collection")], vec![]),
    ];

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}

// ---------------------------------------------------------------- page-bound types

#[tokio::test]
async fn contextual_widgets_shows_productpage_widgets_only_on_product_pages() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let carousel = app
        .create_widget(SHOP, json!({ "videoIds": [video] }))
        .await;
    let productpage = app
        .create_widget(SHOP, json!({ "type": "productpage", "videoIds": [video] }))
        .await;

    for location in LOCATIONS {
        // Act
        let ids = shown(&app, &[("location", location)]).await;

        // Assert
        let expected = if location == "product" {
            vec![carousel.clone(), productpage.clone()]
        } else {
            vec![carousel.clone()]
        };
        assert_eq!(ids, expected, "at {location}");
    }
}

#[tokio::test]
async fn a_floating_widget_is_shown_on_every_page_its_location_rule_allows() {
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let everywhere = app
        .create_widget(SHOP, json!({ "type": "floating", "videoIds": [video] }))
        .await;
    let on_products = app
        .create_widget(
            SHOP,
            json!({ "type": "floating", "videoIds": [video], "rules": { "locations": ["product"] } }),
        )
        .await;

    for location in LOCATIONS {
        let ids = shown(&app, &[("location", location)]).await;
        let expected = if location == "product" {
            vec![everywhere.clone(), on_products.clone()]
        } else {
            vec![everywhere.clone()]
        };
        assert_eq!(ids, expected, "at {location}");
    }
    let (status, body) = json_of(
        app.storefront("widgets-list", SHOP, &[("type", "floating")])
            .await,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["widgets"].as_array().unwrap().len(), 2, "{body}");
}

// ---------------------------------------------------------------- product-sourced widgets

#[tokio::test]
async fn contextual_widgets_product_sourced_widget_shows_the_current_products_published_videos() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(
        &app,
        SHOP,
        json!([
            product(11, "shirt"),
            product(12, "hat"),
            product(13, "socks")
        ]),
    )
    .await;
    let shirt_only = app
        .create_video(SHOP, json!({ "productIds": [product_gid(11)] }))
        .await;
    let shirt_and_hat = app
        .create_video(SHOP, json!({ "productIds": ["11", "12"] }))
        .await;
    app.create_video(
        SHOP,
        json!({ "status": "DRAFT", "productIds": ["11", "13"] }),
    )
    .await;
    app.create_video(SHOP, json!({ "status": "ARCHIVED", "productIds": ["13"] }))
        .await;
    let hat_only = app
        .create_video(SHOP, json!({ "productIds": ["12"] }))
        .await;
    let widget = app
        .create_widget(SHOP, json!({ "sourceType": "product" }))
        .await;

    let cases: Vec<Case> = vec![
        (
            vec![("location", "product"), ("product_id", "11")],
            vec![shirt_only.clone(), shirt_and_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_handle", "shirt")],
            vec![shirt_only.clone(), shirt_and_hat.clone()],
        ),
        (
            vec![("location", "product"), ("product_id", "12")],
            vec![shirt_and_hat.clone(), hat_only.clone()],
        ),
    ];
    for (params, expected) in cases {
        // Act
        let body = contextual(&app, &params).await;

        // Assert
        assert_eq!(ids_of(&body["widgets"]), vec![widget.clone()], "{params:?}");
        let shown = &body["widgets"][0];
        assert_full_widget_shape(shown);
        assert_eq!(
            sorted(ids_of(&shown["videos"])),
            sorted(expected),
            "{params:?}"
        );
    }

    let nothing_to_show: Vec<Params> = vec![
        // Only unpublished videos are linked to socks.
        vec![("location", "product"), ("product_id", "13")],
        vec![("location", "product"), ("product_id", "14")],
        vec![("location", "product")],
        // Not a product page, whatever product is named.
        vec![("location", "home"), ("product_id", "11")],
        vec![("location", "collection"), ("product_handle", "shirt")],
    ];
    for params in nothing_to_show {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert!(ids.is_empty(), "{params:?}: {ids:?}");
    }
}

// ---------------------------------------------------------------- snippets

#[tokio::test]
async fn contextual_widgets_widget_id_and_widget_ids_restrict_the_answer_skipping_unknown_ids() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let a = app
        .create_widget(SHOP, json!({ "priority": 1, "videoIds": [video] }))
        .await;
    let b = app
        .create_widget(SHOP, json!({ "priority": 2, "videoIds": [video] }))
        .await;
    let c = app
        .create_widget(SHOP, json!({ "priority": 3, "videoIds": [video] }))
        .await;
    let draft = app
        .create_widget(SHOP, json!({ "status": "draft", "videoIds": [video] }))
        .await;
    let product_only = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product"] } }),
        )
        .await;
    app.create_shop(OTHER_SHOP).await;
    let other_video = app.create_video(OTHER_SHOP, json!({})).await;
    let foreign = app
        .create_widget(OTHER_SHOP, json!({ "videoIds": [other_video] }))
        .await;
    let unknown = Uuid::now_v7().to_string();
    let batch = [
        c.as_str(),
        &draft,
        &product_only,
        &foreign,
        &unknown,
        "nope",
    ]
    .join(",");
    let cases: Vec<Case> = vec![
        (
            vec![("location", "home"), ("widget_id", &a)],
            vec![a.clone()],
        ),
        (
            vec![("location", "home"), ("widget_ids", &batch)],
            vec![c.clone()],
        ),
        (
            vec![
                ("location", "home"),
                ("widget_id", &a),
                ("widget_ids", &batch),
            ],
            vec![c.clone(), a.clone()],
        ),
        (
            vec![("location", "product"), ("widget_ids", &batch)],
            vec![c.clone(), product_only.clone()],
        ),
        (vec![("location", "home"), ("widget_id", &unknown)], vec![]),
        (vec![("location", "home"), ("widget_id", "nope")], vec![]),
        (vec![("location", "home"), ("widget_id", &draft)], vec![]),
        (vec![("location", "home"), ("widget_id", &foreign)], vec![]),
    ];
    assert_eq!(
        shown(&app, &[("location", "home")]).await,
        vec![c.clone(), b, a.clone()],
        "without a restriction"
    );

    for (params, expected) in cases {
        // Act
        let ids = shown(&app, &params).await;

        // Assert
        assert_eq!(ids, expected, "{params:?}");
    }
}
