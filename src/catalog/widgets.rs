//! Widgets: an ordered group of videos of one type, with display rules.

use std::collections::HashSet;

use chrono::{DateTime, Utc};
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use sqlx::{PgPool, Postgres, Transaction};
use utoipa::openapi::schema::{ArrayBuilder, SchemaType, Type};
use utoipa::ToSchema;
use uuid::Uuid;

use super::domain::{
    hyphenated_uuid, json_i32, text_schema, ClickBehavior, CollectionGid, Location, ModalLayout,
    ProductGid, ShopDomain, SourceType, TextLine, ViewStyle, WidgetStatus, WidgetType,
};
use super::{begin_write, check_text, check_unique, CatalogError, NAME_CHARS};

const MAX_VIDEOS_PER_WIDGET: usize = 200;
const MAX_RULE_ENTRIES: usize = 500;

/// Where a widget may show. An absent or empty list matches everything.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DisplayRules {
    #[serde(default)]
    #[schema(max_items = 500)]
    pub locations: Vec<Location>,
    #[serde(default)]
    #[schema(max_items = 500)]
    pub product_ids: Vec<ProductGid>,
    #[serde(default)]
    #[schema(max_items = 500)]
    pub collection_ids: Vec<CollectionGid>,
}

#[derive(Debug, Clone, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Widget {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    pub title: String,
    pub status: WidgetStatus,
    /// Higher first; ties by creation time.
    pub priority: i32,
    pub view_style: ViewStyle,
    pub click_behavior: ClickBehavior,
    pub modal_layout: ModalLayout,
    pub source_type: SourceType,
    /// The widget's videos in display order.
    pub video_ids: Vec<Uuid>,
    pub rules: DisplayRules,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NewWidget {
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    #[serde(default)]
    #[schema(schema_with = text_schema::line::<NAME_CHARS>)]
    pub title: TextLine,
    /// Default `draft`.
    #[serde(default = "draft")]
    pub status: WidgetStatus,
    /// An integer; `92.0` is taken as 92.
    #[serde(default, deserialize_with = "json_i32")]
    #[schema(minimum = -2147483648, maximum = 2147483647)]
    pub priority: i32,
    #[serde(default)]
    pub view_style: ViewStyle,
    #[serde(default)]
    pub click_behavior: ClickBehavior,
    #[serde(default)]
    pub modal_layout: ModalLayout,
    #[serde(default)]
    pub source_type: SourceType,
    /// Videos of this shop, in display order, each at most once.
    #[serde(default, deserialize_with = "hyphenated_uuid::list")]
    #[schema(schema_with = video_ids)]
    pub video_ids: Vec<Uuid>,
    #[serde(default)]
    pub rules: DisplayRules,
}

fn draft() -> WidgetStatus {
    WidgetStatus::Draft
}

fn video_ids() -> ArrayBuilder {
    hyphenated_uuid::distinct(MAX_VIDEOS_PER_WIDGET)
}

fn video_ids_or_null() -> ArrayBuilder {
    video_ids().schema_type(SchemaType::from_iter([Type::Array, Type::Null]))
}

fn priority_or_null<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i32>, D::Error> {
    match Option::<serde_json::Value>::deserialize(d)? {
        None => Ok(None),
        Some(value) => json_i32(value).map(Some).map_err(D::Error::custom),
    }
}

/// `PATCH`: only the fields present change; `videoIds` and `rules` replace the whole value.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WidgetPatch {
    #[serde(rename = "type")]
    pub widget_type: Option<WidgetType>,
    #[schema(schema_with = text_schema::line_or_null::<NAME_CHARS>)]
    pub title: Option<TextLine>,
    pub status: Option<WidgetStatus>,
    #[serde(default, deserialize_with = "priority_or_null")]
    #[schema(minimum = -2147483648, maximum = 2147483647)]
    pub priority: Option<i32>,
    pub view_style: Option<ViewStyle>,
    pub click_behavior: Option<ClickBehavior>,
    pub modal_layout: Option<ModalLayout>,
    pub source_type: Option<SourceType>,
    #[serde(default, deserialize_with = "hyphenated_uuid::option_list")]
    #[schema(schema_with = video_ids_or_null)]
    pub video_ids: Option<Vec<Uuid>>,
    pub rules: Option<DisplayRules>,
}

#[derive(sqlx::FromRow)]
struct WidgetRow {
    id: Uuid,
    #[sqlx(rename = "type")]
    widget_type: WidgetType,
    title: String,
    status: WidgetStatus,
    priority: i32,
    view_style: ViewStyle,
    click_behavior: ClickBehavior,
    modal_layout: ModalLayout,
    source_type: SourceType,
    video_ids: Vec<Uuid>,
    rule_locations: Vec<Location>,
    rule_product_ids: Vec<ProductGid>,
    rule_collection_ids: Vec<CollectionGid>,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<WidgetRow> for Widget {
    fn from(r: WidgetRow) -> Self {
        Widget {
            id: r.id,
            widget_type: r.widget_type,
            title: r.title,
            status: r.status,
            priority: r.priority,
            view_style: r.view_style,
            click_behavior: r.click_behavior,
            modal_layout: r.modal_layout,
            source_type: r.source_type,
            video_ids: r.video_ids,
            rules: DisplayRules {
                locations: r.rule_locations,
                product_ids: r.rule_product_ids,
                collection_ids: r.rule_collection_ids,
            },
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const WIDGET_SELECT: &str = "SELECT w.id, w.type, w.title, w.status, w.priority, w.view_style, \
    w.click_behavior, w.modal_layout, w.source_type, \
    ARRAY(SELECT wv.video_id FROM widget_videos wv WHERE wv.widget_id = w.id \
          ORDER BY wv.position) AS video_ids, \
    w.rule_locations, w.rule_product_ids, w.rule_collection_ids, w.created_at, w.updated_at \
    FROM widgets w";

fn validate(w: &NewWidget) -> Result<(), CatalogError> {
    check_text("title", &w.title, NAME_CHARS)?;
    if w.video_ids.len() > MAX_VIDEOS_PER_WIDGET {
        return Err(CatalogError::invalid(
            "videoIds",
            format!("at most {MAX_VIDEOS_PER_WIDGET} videos per widget"),
        ));
    }
    check_unique("videoIds", &w.video_ids, |id| format!("video {id}"))?;
    let rules = &w.rules;
    for (field, len) in [
        ("rules.locations", rules.locations.len()),
        ("rules.productIds", rules.product_ids.len()),
        ("rules.collectionIds", rules.collection_ids.len()),
    ] {
        if len > MAX_RULE_ENTRIES {
            return Err(CatalogError::invalid(
                field,
                format!("at most {MAX_RULE_ENTRIES} entries"),
            ));
        }
    }
    Ok(())
}

/// Every listed video must belong to this shop; a foreign or unknown id is the caller's error.
async fn check_videos_belong(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    ids: &[Uuid],
) -> Result<(), CatalogError> {
    if ids.is_empty() {
        return Ok(());
    }
    let found: Vec<Uuid> =
        sqlx::query_scalar("SELECT id FROM videos WHERE shop_domain = $1 AND id = ANY($2)")
            .bind(shop.as_str())
            .bind(ids)
            .fetch_all(&mut **tx)
            .await?;
    let found: HashSet<Uuid> = found.into_iter().collect();
    match ids.iter().find(|id| !found.contains(id)) {
        Some(missing) => Err(CatalogError::invalid(
            "videoIds",
            format!("video {missing} does not exist in this shop"),
        )),
        None => Ok(()),
    }
}

async fn replace_videos(
    tx: &mut Transaction<'static, Postgres>,
    widget: Uuid,
    ids: &[Uuid],
) -> Result<(), sqlx::Error> {
    sqlx::query("DELETE FROM widget_videos WHERE widget_id = $1")
        .bind(widget)
        .execute(&mut **tx)
        .await?;
    sqlx::query(
        "INSERT INTO widget_videos (widget_id, video_id, position) \
         SELECT $1, v.id, v.position FROM UNNEST($2::uuid[]) WITH ORDINALITY AS v(id, position)",
    )
    .bind(widget)
    .bind(ids)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

async fn fetch_one(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    id: Uuid,
) -> Result<Option<Widget>, sqlx::Error> {
    let row: Option<WidgetRow> = sqlx::query_as(&format!(
        "{WIDGET_SELECT} WHERE w.shop_domain = $1 AND w.id = $2"
    ))
    .bind(shop.as_str())
    .bind(id)
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(Widget::from))
}

pub async fn create(
    pool: &PgPool,
    shop: &ShopDomain,
    new: NewWidget,
) -> Result<Widget, CatalogError> {
    validate(&new)?;
    let (mut tx, _) = begin_write(pool, shop).await?;
    check_videos_belong(&mut tx, shop, &new.video_ids).await?;
    let id = Uuid::now_v7();
    write_row(&mut tx, shop, id, &new, true).await?;
    replace_videos(&mut tx, id, &new.video_ids).await?;
    let widget = fetch_one(&mut tx, shop, id).await?;
    tx.commit().await?;
    widget.ok_or(CatalogError::NotFound("widget"))
}

async fn write_row(
    tx: &mut Transaction<'static, Postgres>,
    shop: &ShopDomain,
    id: Uuid,
    w: &NewWidget,
    insert: bool,
) -> Result<(), sqlx::Error> {
    let sql = if insert {
        "INSERT INTO widgets (shop_domain, id, type, title, status, priority, view_style, \
         click_behavior, modal_layout, source_type, rule_locations, rule_product_ids, \
         rule_collection_ids) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)"
    } else {
        "UPDATE widgets SET type = $3, title = $4, status = $5, priority = $6, view_style = $7, \
         click_behavior = $8, modal_layout = $9, source_type = $10, rule_locations = $11, \
         rule_product_ids = $12, rule_collection_ids = $13, updated_at = now() \
         WHERE shop_domain = $1 AND id = $2"
    };
    sqlx::query(sql)
        .bind(shop.as_str())
        .bind(id)
        .bind(w.widget_type)
        .bind(&w.title)
        .bind(w.status)
        .bind(w.priority)
        .bind(w.view_style)
        .bind(w.click_behavior)
        .bind(w.modal_layout)
        .bind(w.source_type)
        .bind(&w.rules.locations)
        .bind(&w.rules.product_ids)
        .bind(&w.rules.collection_ids)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// Whether an active widget of the shop shows a published video.
pub async fn any_showing(pool: &PgPool, shop: &ShopDomain) -> Result<bool, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM widgets w \
         JOIN widget_videos wv ON wv.widget_id = w.id \
         JOIN videos v ON v.id = wv.video_id AND v.status = 'PUBLISHED' \
         WHERE w.shop_domain = $1 AND w.status = 'active')",
    )
    .bind(shop.as_str())
    .fetch_one(pool)
    .await
}

pub async fn list(pool: &PgPool, shop: &ShopDomain) -> Result<Vec<Widget>, CatalogError> {
    super::require_shop(pool, shop).await?;
    let rows: Vec<WidgetRow> = sqlx::query_as(&format!(
        "{WIDGET_SELECT} WHERE w.shop_domain = $1 ORDER BY w.created_at, w.id"
    ))
    .bind(shop.as_str())
    .fetch_all(pool)
    .await?;
    Ok(rows.into_iter().map(Widget::from).collect())
}

/// The shop's active widgets in storefront order: priority (higher first), then creation time.
pub(crate) async fn list_active(
    conn: &mut sqlx::PgConnection,
    shop: &ShopDomain,
) -> Result<Vec<Widget>, sqlx::Error> {
    let rows: Vec<WidgetRow> = sqlx::query_as(&format!(
        "{WIDGET_SELECT} WHERE w.shop_domain = $1 AND w.status = 'active' \
         ORDER BY w.priority DESC, w.created_at, w.id"
    ))
    .bind(shop.as_str())
    .fetch_all(conn)
    .await?;
    Ok(rows.into_iter().map(Widget::from).collect())
}

pub async fn get(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<Widget, CatalogError> {
    super::require_shop(pool, shop).await?;
    let mut tx = pool.begin().await?;
    let widget = fetch_one(&mut tx, shop, id).await?;
    tx.commit().await?;
    widget.ok_or(CatalogError::NotFound("widget"))
}

pub async fn update(
    pool: &PgPool,
    shop: &ShopDomain,
    id: Uuid,
    patch: WidgetPatch,
) -> Result<Widget, CatalogError> {
    let (mut tx, _) = begin_write(pool, shop).await?;
    let current = fetch_one(&mut tx, shop, id)
        .await?
        .ok_or(CatalogError::NotFound("widget"))?;
    let videos_changed = patch.video_ids.is_some();
    let merged = NewWidget {
        widget_type: patch.widget_type.unwrap_or(current.widget_type),
        title: TextLine::or_stored(patch.title, current.title),
        status: patch.status.unwrap_or(current.status),
        priority: patch.priority.unwrap_or(current.priority),
        view_style: patch.view_style.unwrap_or(current.view_style),
        click_behavior: patch.click_behavior.unwrap_or(current.click_behavior),
        modal_layout: patch.modal_layout.unwrap_or(current.modal_layout),
        source_type: patch.source_type.unwrap_or(current.source_type),
        video_ids: patch.video_ids.unwrap_or(current.video_ids),
        rules: patch.rules.unwrap_or(current.rules),
    };
    validate(&merged)?;
    write_row(&mut tx, shop, id, &merged, false).await?;
    if videos_changed {
        check_videos_belong(&mut tx, shop, &merged.video_ids).await?;
        replace_videos(&mut tx, id, &merged.video_ids).await?;
    }
    let widget = fetch_one(&mut tx, shop, id).await?;
    tx.commit().await?;
    widget.ok_or(CatalogError::NotFound("widget"))
}

pub async fn delete(pool: &PgPool, shop: &ShopDomain, id: Uuid) -> Result<(), CatalogError> {
    let sql = "DELETE FROM widgets WHERE shop_domain = $1 AND id = $2";
    super::delete_one(pool, shop, id, sql, "widget").await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_priority_is_an_integer_also_written_with_a_fraction() {
        let priority = |value: &str| {
            serde_json::from_str::<NewWidget>(&format!(r#"{{"type":"story","priority":{value}}}"#))
                .map(|w| w.priority)
                .map_err(|e| e.to_string())
        };
        assert_eq!(priority("92.0"), Ok(92));
        assert_eq!(priority("-2147483648.0"), Ok(i32::MIN));
        assert_eq!(priority("2147483647"), Ok(i32::MAX));
        for refused in [
            "92.5",
            "2147483648",
            "2147483648.0",
            "-2147483649",
            "1e300",
            "\"7\"",
        ] {
            assert!(priority(refused).is_err(), "{refused}");
        }
        let patch = |body: &str| serde_json::from_str::<WidgetPatch>(body).map(|p| p.priority);
        assert_eq!(patch(r#"{"priority":7.0}"#).unwrap(), Some(7));
        assert_eq!(patch(r#"{"priority":null}"#).unwrap(), None);
        assert_eq!(patch("{}").unwrap(), None);
        assert!(patch(r#"{"priority":0.5}"#).is_err());
    }
}
