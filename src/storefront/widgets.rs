//! contextual-widgets, widget-by-id and widgets-list, all served from the shop's cached catalog
//! snapshot.

use std::collections::HashSet;
use std::hash::Hash;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use chrono::{DateTime, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

use super::caching::{NotModified, Validator};
use super::display_rules::{location_admits, rules_admit};
use super::presentation::{StorefrontWidget, WidgetJson};
use super::request::{ProxyParams, Signed};
use super::{CatalogUnavailable, StorefrontErrors};
use crate::app::AppState;
use crate::catalog::domain::{
    AttributionWindow, CollectionGid, HoldoutPercent, Location, ProductGid, SourceType,
    WidgetStatus, WidgetType,
};
use crate::catalog::snapshot::ShopSnapshot;
use crate::error::{ApiError, ErrorBody};

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ContextualQuery {
    /// Page type.
    #[param(inline)]
    location: Location,
    /// Product global id or bare number (product pages). Wins over `product_handle`.
    #[param(inline)]
    product_id: Option<ProductGid>,
    /// Product handle, an alternative to `product_id`.
    product_handle: Option<String>,
    /// Collection global id or bare number.
    #[param(inline)]
    collection_id: Option<CollectionGid>,
    /// Load one widget (snippet mode).
    #[serde(default, deserialize_with = "widget_id_list")]
    #[param(value_type = Option<String>)]
    widget_id: Option<Vec<Uuid>>,
    /// Comma-separated widget ids (snippet mode, batch). Unknown ids are skipped.
    #[serde(default, deserialize_with = "widget_id_list")]
    #[param(value_type = Option<String>)]
    widget_ids: Option<Vec<Uuid>>,
    /// The catalog version the loader expects; when current, the answer may be cached a day.
    v: Option<String>,
}

/// Comma-separated widget ids. An id that is not a UUID names no widget and is skipped; a value
/// of commas only is no list at all (while a list of unknown ids restricts the answer to none).
fn widget_id_list<'de, D: Deserializer<'de>>(value: D) -> Result<Option<Vec<Uuid>>, D::Error> {
    let text = String::deserialize(value)?;
    let mut ids = text
        .split(',')
        .map(str::trim)
        .filter(|id| !id.is_empty())
        .peekable();
    Ok(ids
        .peek()
        .is_some()
        .then(|| ids.filter_map(|id| Uuid::parse_str(id).ok()).collect()))
}

#[derive(Serialize, ToSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub struct PageContext {
    /// The resolved product global id, or null.
    #[schema(value_type = Option<String>)]
    product_id: Option<ProductGid>,
    #[schema(value_type = Option<String>)]
    collection_id: Option<CollectionGid>,
    /// The product handle when one is known, or null.
    page_handle: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextualWidgets<'a> {
    location: Location,
    context: PageContext,
    /// The shop's catalog version.
    version: String,
    /// When this answer was rendered; every request for the same page shares it for a while.
    timestamp: String,
    remove_branding: bool,
    /// The shop's attribution window: how long the loader keeps what credits an order to a video.
    attribution_window_days: AttributionWindow,
    /// The percent of browsers the loader keeps from every widget, to measure what they sell.
    holdout_percent: HoldoutPercent,
    #[schema(value_type = Vec<StorefrontWidget>)]
    widgets: Vec<WidgetJson<'a>>,
}

fn now_iso() -> String {
    Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)
}

async fn snapshot(
    state: &AppState,
    proxy: &ProxyParams,
) -> Result<std::sync::Arc<ShopSnapshot>, ApiError> {
    let snapshot = state
        .catalog
        .get(&proxy.shop)
        .await?
        .ok_or(ApiError::ShopNotFound)?;
    state
        .storefront_seen
        .note(&state.db, &proxy.shop, snapshot.version);
    Ok(snapshot)
}

/// The validator of an answer that depends on the catalog version and on `inputs`. `v` is the
/// catalog version the loader expects; when current, the answer may be cached longer.
fn validator(snapshot: &ShopSnapshot, v: Option<&str>, inputs: impl Hash) -> Validator {
    let pinned = v == Some(snapshot.version.to_string().as_str());
    Validator::new(snapshot.version, inputs, pinned)
}

/// 304 where the request's `If-None-Match` matches the validator, else the page, from the cache
/// or from `render` (run only on a miss).
async fn answer(
    state: &AppState,
    headers: &HeaderMap,
    snapshot: &ShopSnapshot,
    validator: Validator,
    render: impl FnOnce() -> Vec<u8>,
) -> Response {
    if validator.is_fresh(headers) {
        return validator.not_modified();
    }
    let page = state
        .rendered_pages
        .get_or_render(snapshot.id, &validator, render)
        .await;
    validator.ok(headers, &page).await
}

/// Widgets to render on a storefront page
#[utoipa::path(
    get, path = "/apps/videoapp_sub/contextual-widgets", tag = "storefront",
    params(ContextualQuery, ProxyParams),
    responses(
        (status = 200, body = ContextualWidgets, headers(("ETag" = String), ("Cache-Control" = String))),
        (status = 400, description = "MISSING_PARAMETER or INVALID_PARAMETER", body = ErrorBody),
        NotModified, StorefrontErrors, CatalogUnavailable,
    )
)]
pub async fn contextual_widgets(
    State(state): State<AppState>,
    headers: HeaderMap,
    Signed { proxy, query }: Signed<ContextualQuery>,
) -> Result<Response, ApiError> {
    let location = query.location;
    // Snippet mode: only these widgets.
    let only: Option<HashSet<Uuid>> = match (&query.widget_id, &query.widget_ids) {
        (None, None) => None,
        (one, batch) => Some(one.iter().chain(batch).flatten().copied().collect()),
    };
    let snapshot = snapshot(&state, &proxy).await?;

    let (product, page_handle) = match (query.product_id, query.product_handle) {
        (Some(id), handle) => {
            let known = snapshot.product(&id).map(|p| p.handle.clone());
            (Some(id), known.or(handle))
        }
        (None, Some(handle)) => (
            snapshot.product_by_handle(&handle).map(|p| p.id.clone()),
            Some(handle),
        ),
        (None, None) => (None, None),
    };
    let context = PageContext {
        product_id: product,
        collection_id: query.collection_id,
        page_handle,
    };
    let mut only_sorted: Option<Vec<&Uuid>> = only.as_ref().map(|ids| ids.iter().collect());
    if let Some(ids) = &mut only_sorted {
        ids.sort();
    }
    let counts = state.view_counts.current(&proxy.shop).await;
    let validator = validator(
        &snapshot,
        query.v.as_deref(),
        (location, &context, &only_sorted, counts.tag),
    );
    let answer = answer(&state, &headers, &snapshot, validator, || {
        let rendered = state.rendered_pages.widgets(&snapshot, &counts);
        // Product-sourced widgets show the current product's videos, on product pages only.
        let page_product = (location == Location::Product)
            .then_some(context.product_id.as_ref())
            .flatten();
        let widgets: Vec<WidgetJson> = snapshot
            .widgets()
            .iter()
            .filter(|w| only.as_ref().is_none_or(|ids| ids.contains(&w.id())))
            .filter(|w| {
                rules_admit(
                    w,
                    location,
                    context.product_id.as_ref(),
                    context.collection_id.as_ref(),
                )
            })
            .filter_map(|w| rendered.widget(&snapshot, w, page_product))
            .collect();
        let size = widgets.iter().map(WidgetJson::len).sum::<usize>() + 512;
        let answer = ContextualWidgets {
            location,
            version: snapshot.version.to_string(),
            // When the page was rendered: every request for it shares one body.
            timestamp: now_iso(),
            remove_branding: snapshot.remove_branding,
            attribution_window_days: snapshot.attribution_window,
            holdout_percent: snapshot.holdout,
            widgets,
            context,
        };
        let mut json = Vec::with_capacity(size);
        serde_json::to_writer(&mut json, &answer).expect("storefront JSON always serializes");
        json
    })
    .await;
    Ok(answer)
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WidgetByIdQuery {
    /// The widget's id.
    // Required, but its absence is answered with a bare 400 (and an id that is not a UUID with a
    // bare 404, like an unknown one), as the loader expects.
    #[param(required = true, min_length = 1, pattern = r"\S")]
    id: Option<String>,
    /// Page type, checked against the widget's location rule.
    #[param(inline)]
    location: Option<Location>,
    /// The catalog version the loader expects; when current, the answer may be cached a day.
    v: Option<String>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetById<'a> {
    success: bool,
    #[schema(value_type = StorefrontWidget)]
    widget: WidgetJson<'a>,
    /// The shop's attribution window: how long the loader keeps what credits an order to a video.
    attribution_window_days: AttributionWindow,
    /// The percent of browsers the loader keeps from every widget, to measure what they sell.
    holdout_percent: HoldoutPercent,
}

/// One widget by id
#[utoipa::path(
    get, path = "/apps/videoapp_sub/widget-by-id", tag = "storefront",
    params(WidgetByIdQuery, ProxyParams),
    responses(
        (status = 200, body = WidgetById, headers(("ETag" = String), ("Cache-Control" = String))),
        (status = 204, description = "The widget's display rules exclude `location` (no body)"),
        NotModified,
        (status = 400, description = "`id` is missing (no body); or INVALID_PARAMETER", body = ErrorBody),
        (status = 401, description = "INVALID_SIGNATURE", body = ErrorBody),
        (status = 404, description = "No such active widget in this shop (no body); or SHOP_NOT_FOUND", body = ErrorBody),
        CatalogUnavailable,
    )
)]
pub async fn widget_by_id(
    State(state): State<AppState>,
    headers: HeaderMap,
    Signed { proxy, query }: Signed<WidgetByIdQuery>,
) -> Result<Response, ApiError> {
    let id = query.id.ok_or(ApiError::NoBody(StatusCode::BAD_REQUEST))?;
    let location = query.location;
    let snapshot = snapshot(&state, &proxy).await?;
    let widget = Uuid::parse_str(&id)
        .ok()
        .and_then(|id| snapshot.widget(id))
        .ok_or(ApiError::NoBody(StatusCode::NOT_FOUND))?;
    if location.is_some_and(|l| !location_admits(widget, l)) {
        return Err(ApiError::NoBody(StatusCode::NO_CONTENT));
    }
    let counts = state.view_counts.current(&proxy.shop).await;
    let validator = validator(
        &snapshot,
        query.v.as_deref(),
        ("widget-by-id", widget.id(), location, counts.tag),
    );
    let answer = answer(&state, &headers, &snapshot, validator, || {
        let rendered = state.rendered_pages.widgets(&snapshot, &counts);
        json_bytes(&WidgetById {
            success: true,
            widget: rendered.widget_any(&snapshot, widget),
            attribution_window_days: snapshot.attribution_window,
            holdout_percent: snapshot.holdout,
        })
    })
    .await;
    Ok(answer)
}

fn json_bytes(answer: &impl Serialize) -> Vec<u8> {
    serde_json::to_vec(answer).expect("storefront JSON always serializes")
}

#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WidgetsListQuery {
    /// The widgets' type.
    #[serde(rename = "type")]
    #[param(inline)]
    widget_type: WidgetType,
    /// The catalog version the loader expects; when current, the answer may be cached a day.
    v: Option<String>,
}

/// A widget in brief: what a theme editor lists to pick one.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetSummary {
    id: Uuid,
    title: String,
    #[serde(rename = "type")]
    widget_type: WidgetType,
    status: WidgetStatus,
    source_type: SourceType,
    /// Published videos in the widget's own list.
    video_count: usize,
    created_at: DateTime<Utc>,
}

#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct WidgetsList {
    success: bool,
    widgets: Vec<WidgetSummary>,
    count: usize,
    /// The shop's attribution window: how long the loader keeps what credits an order to a video.
    attribution_window_days: AttributionWindow,
    /// The percent of browsers the loader keeps from every widget, to measure what they sell.
    holdout_percent: HoldoutPercent,
}

/// Active widgets of one type
#[utoipa::path(
    get, path = "/apps/videoapp_sub/widgets-list", tag = "storefront",
    params(WidgetsListQuery, ProxyParams),
    responses(
        (status = 200, body = WidgetsList, headers(("ETag" = String), ("Cache-Control" = String))),
        (status = 400, description = "MISSING_PARAMETER or INVALID_PARAMETER (`type`)", body = ErrorBody),
        NotModified, StorefrontErrors, CatalogUnavailable,
    )
)]
pub async fn widgets_list(
    State(state): State<AppState>,
    headers: HeaderMap,
    Signed { proxy, query }: Signed<WidgetsListQuery>,
) -> Result<Response, ApiError> {
    let widget_type = query.widget_type;
    let snapshot = snapshot(&state, &proxy).await?;
    let validator = validator(&snapshot, query.v.as_deref(), ("widgets-list", widget_type));
    let answer = answer(&state, &headers, &snapshot, validator, || {
        let widgets: Vec<WidgetSummary> = snapshot
            .widgets()
            .iter()
            .filter(|w| w.widget.widget_type == widget_type)
            .map(|w| WidgetSummary {
                id: w.id(),
                title: w.widget.title.clone(),
                widget_type: w.widget.widget_type,
                status: w.widget.status,
                source_type: w.widget.source_type,
                video_count: w.video_count(),
                created_at: w.widget.created_at,
            })
            .collect();
        json_bytes(&WidgetsList {
            success: true,
            count: widgets.len(),
            widgets,
            attribution_window_days: snapshot.attribution_window,
            holdout_percent: snapshot.holdout,
        })
    })
    .await;
    Ok(answer)
}
