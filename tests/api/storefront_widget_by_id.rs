//! widget-by-id: one active widget in full, or an empty 400, 404 or 204 when there is nothing to
//! show.

use crate::support::storefront::*;
use crate::support::*;
use reqwest::{Response, StatusCode};
use serde_json::json;
use uuid::Uuid;

async fn assert_empty(response: Response, status: StatusCode) {
    let actual = response.status();
    let text = response.text().await.unwrap();
    assert_eq!(actual, status, "{text}");
    assert!(text.is_empty(), "expected no body, got {text:?}");
}

async fn widget_by_id(app: &TestApp, shop: &str, params: &[(&str, &str)]) -> Response {
    app.storefront("widget-by-id", shop, params).await
}

#[tokio::test]
async fn widget_by_id_returns_the_active_widget_in_full() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    sync_products(&app, SHOP, json!([product(11, "shirt")])).await;
    let published = app
        .create_video(
            SHOP,
            json!({ "title": "P", "duration": 30, "productIds": ["11"] }),
        )
        .await;
    let draft = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    let other = app.create_video(SHOP, json!({ "title": "Q" })).await;
    let widget = app
        .create_widget(
            SHOP,
            json!({
                "type": "productpage",
                "title": "Shop the look",
                "priority": 7,
                "viewStyle": "large",
                "clickBehavior": "none",
                "modalLayout": "horizontal",
                "videoIds": [draft, published, other],
            }),
        )
        .await;

    // Act
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_keys(
        &body,
        &[
            "success",
            "widget",
            "attributionWindowDays",
            "holdoutPercent",
        ],
    );
    assert_eq!(body["success"], json!(true));
    assert_eq!(body["attributionWindowDays"], json!(7));
    let shown = &body["widget"];
    assert_full_widget_shape(shown);
    assert_eq!(shown["id"], json!(widget));
    assert_eq!(shown["type"], json!("productpage"));
    assert_eq!(shown["title"], json!("Shop the look"));
    assert_eq!(shown["status"], json!("active"));
    assert_eq!(shown["priority"], json!(7));
    assert_eq!(shown["viewStyle"], json!("large"));
    assert_eq!(shown["clickBehavior"], json!("none"));
    assert_eq!(shown["modalLayout"], json!("horizontal"));
    assert_eq!(ids_of(&shown["videos"]), vec![published, other]);
    assert_eq!(shown["videos"][0]["title"], json!("P"));
    assert_eq!(shown["videos"][0]["duration"].as_f64(), Some(30.0));
    assert_eq!(
        shown["videos"][0]["products"],
        json!([product(11, "shirt")])
    );
}

#[tokio::test]
async fn widget_by_id_answers_400_with_an_empty_body_when_id_is_missing() {
    // Arrange
    let app = spawn_app().await;
    shop_with_a_video(&app).await;

    for params in [vec![], vec![("location", "home")], vec![("id", "")]] {
        // Act
        let response = widget_by_id(&app, SHOP, &params).await;

        // Assert
        assert_empty(response, StatusCode::BAD_REQUEST).await;
    }
}

#[tokio::test]
async fn widget_by_id_answers_404_with_an_empty_body_when_the_shop_has_no_such_active_widget() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let draft = app
        .create_widget(SHOP, json!({ "status": "draft", "videoIds": [video] }))
        .await;
    let archived = app
        .create_widget(SHOP, json!({ "status": "archived", "videoIds": [video] }))
        .await;
    app.create_shop(OTHER_SHOP).await;
    let other_video = app.create_video(OTHER_SHOP, json!({})).await;
    let foreign = app
        .create_widget(OTHER_SHOP, json!({ "videoIds": [other_video] }))
        .await;
    let unknown = Uuid::now_v7().to_string();

    for id in [
        unknown.as_str(),
        "not-a-widget-id",
        &draft,
        &archived,
        &foreign,
    ] {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", id)]).await;

        // Assert
        assert_empty(response, StatusCode::NOT_FOUND).await;
    }
}

#[tokio::test]
async fn widget_by_id_returns_204_when_rules_exclude_location() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let widget = app
        .create_widget(
            SHOP,
            json!({ "videoIds": [video], "rules": { "locations": ["product", "page"] } }),
        )
        .await;

    for location in LOCATIONS {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", &widget), ("location", location)]).await;

        // Assert
        if location == "product" || location == "page" {
            let (status, body) = json_of(response).await;
            assert_eq!(status, StatusCode::OK, "at {location}: {body}");
            assert_eq!(body["widget"]["id"], json!(widget));
        } else {
            assert_empty(response, StatusCode::NO_CONTENT).await;
        }
    }
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;
    assert_eq!(response.status(), StatusCode::OK, "without a location");
}

#[tokio::test]
async fn widget_by_id_returns_204_for_a_productpage_widget_off_product_pages() {
    // Arrange
    let app = spawn_app().await;
    let video = shop_with_a_video(&app).await;
    let widget = app
        .create_widget(SHOP, json!({ "type": "productpage", "videoIds": [video] }))
        .await;

    for location in LOCATIONS {
        // Act
        let response = widget_by_id(&app, SHOP, &[("id", &widget), ("location", location)]).await;

        // Assert
        if location == "product" {
            assert_eq!(response.status(), StatusCode::OK);
        } else {
            assert_empty(response, StatusCode::NO_CONTENT).await;
        }
    }
    let response = widget_by_id(&app, SHOP, &[("id", &widget)]).await;
    assert_eq!(response.status(), StatusCode::OK, "without a location");
}
