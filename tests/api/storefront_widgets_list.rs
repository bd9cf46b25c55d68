//! widgets-list: the active widgets of one type, in brief.

use crate::support::storefront::*;
use crate::support::*;
use chrono::{DateTime, Utc};
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn widgets_list_answers_the_active_widgets_of_the_type_in_brief() {
    // Arrange
    let app = spawn_app().await;
    app.create_shop(SHOP).await;
    let published = app.create_video(SHOP, json!({})).await;
    let also_published = app.create_video(SHOP, json!({})).await;
    let draft_video = app.create_video(SHOP, json!({ "status": "DRAFT" })).await;
    let manual = app
        .create_widget(
            SHOP,
            json!({
                "title": "Manual",
                "videoIds": [published, draft_video, also_published],
            }),
        )
        .await;
    let by_product = app
        .create_widget(
            SHOP,
            json!({ "title": "By product", "sourceType": "product", "videoIds": [published] }),
        )
        .await;
    app.create_widget(SHOP, json!({ "status": "draft", "videoIds": [published] }))
        .await;
    app.create_widget(
        SHOP,
        json!({ "status": "archived", "videoIds": [published] }),
    )
    .await;
    let story = app
        .create_widget(SHOP, json!({ "type": "story", "videoIds": [published] }))
        .await;

    // Act
    let response = app
        .storefront("widgets-list", SHOP, &[("type", "carousel")])
        .await;

    // Assert
    let (status, body) = json_of(response).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_keys(
        &body,
        &[
            "success",
            "widgets",
            "count",
            "attributionWindowDays",
            "holdoutPercent",
        ],
    );
    assert_eq!(body["success"], json!(true));
    assert_eq!(body["attributionWindowDays"], json!(7));
    assert_eq!(
        sorted(ids_of(&body["widgets"])),
        sorted(vec![manual.clone(), by_product.clone()])
    );
    assert_eq!(body["count"], json!(2));
    for summary in body["widgets"].as_array().unwrap() {
        assert_keys(
            summary,
            &[
                "id",
                "title",
                "type",
                "status",
                "sourceType",
                "videoCount",
                "createdAt",
            ],
        );
        assert_eq!(summary["type"], json!("carousel"));
        assert_eq!(summary["status"], json!("active"));
        assert_timestamp(&summary["createdAt"]);
        let created: DateTime<Utc> = summary["createdAt"].as_str().unwrap().parse().unwrap();
        let admin = app
            .send_admin(
                Method::GET,
                &format!("/shops/{SHOP}/widgets/{}", summary["id"].as_str().unwrap()),
            )
            .await;
        let (_, admin) = json_of(admin).await;
        let admin_created: DateTime<Utc> = admin["createdAt"].as_str().unwrap().parse().unwrap();
        assert_eq!(created, admin_created, "{summary}");
        if summary["id"] == json!(manual) {
            assert_eq!(summary["title"], json!("Manual"));
            assert_eq!(summary["sourceType"], json!("manual"));
            assert_eq!(summary["videoCount"], json!(2));
        } else {
            assert_eq!(summary["title"], json!("By product"));
            assert_eq!(summary["sourceType"], json!("product"));
            assert_eq!(summary["videoCount"], json!(1));
        }
    }

    let response = app
        .storefront("widgets-list", SHOP, &[("type", "story")])
        .await;
    let (_, body) = json_of(response).await;
    assert_eq!(ids_of(&body["widgets"]), vec![story]);
    assert_eq!(body["count"], json!(1));
    let response = app
        .storefront("widgets-list", SHOP, &[("type", "productpage")])
        .await;
    let (_, body) = json_of(response).await;
    assert_eq!(body["widgets"], json!([]));
    assert_eq!(body["count"], json!(0));
}
