//! The storefront's JSON for a widget: its videos, in order, each with its products and view
//! count. A `manual` widget's JSON depends only on the catalog snapshot and the view counts, so
//! it is rendered once per pair and shared by every request ([`RenderedWidgets`]); a `product`
//! widget's depends on the page.

use std::sync::Arc;

use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;
use uuid::Uuid;

use super::view_counts::ViewCountSet;
use crate::catalog::domain::{
    ClickBehavior, ModalLayout, ProductGid, SourceType, ViewStyle, WidgetStatus, WidgetType,
};
use crate::catalog::snapshot::{ShopSnapshot, SnapshotProduct, SnapshotWidget};
use crate::catalog::videos::Caption;
use crate::catalog::widgets::Widget;

/// A product as the storefront shows it.
#[derive(Debug, Serialize, ToSchema)]
pub struct StorefrontProduct<'a> {
    #[schema(value_type = String)]
    pub id: &'a ProductGid,
    pub title: &'a str,
    pub handle: &'a str,
    pub image: &'a str,
    pub url: &'a str,
}

impl<'a> From<&'a SnapshotProduct> for StorefrontProduct<'a> {
    fn from(p: &'a SnapshotProduct) -> Self {
        StorefrontProduct {
            id: &p.id,
            title: &p.title,
            handle: &p.handle,
            image: &p.image,
            url: &p.url,
        }
    }
}

/// A video inside a widget.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StorefrontVideo<'a> {
    pub id: Uuid,
    pub title: &'a str,
    pub thumbnail: &'a str,
    pub video_url: &'a str,
    pub mini_version_url: &'a str,
    /// The HLS master playlist, for a video made from a file (absent otherwise): players that
    /// play HLS natively start with it; others play `videoUrl`, a progressive MP4.
    #[serde(skip_serializing_if = "str::is_empty")]
    #[schema(required = false)]
    pub hls_url: &'a str,
    /// The poster, for a video made from a file (absent otherwise).
    #[serde(skip_serializing_if = "str::is_empty")]
    #[schema(required = false)]
    pub poster_url: &'a str,
    /// WebVTT captions, one per language (absent when none): the player shows them, on by
    /// default while muted.
    #[serde(skip_serializing_if = "<[_]>::is_empty")]
    #[schema(required = false)]
    pub captions: &'a [Caption],
    /// Seconds.
    pub duration: f64,
    /// 1-based position within the widget.
    pub order: usize,
    /// Lifetime views as a decimal integer string.
    pub view_count: String,
    pub products: Vec<StorefrontProduct<'a>>,
    pub has_products: bool,
}

/// A widget in full.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StorefrontWidget<'a> {
    pub id: Uuid,
    #[serde(rename = "type")]
    pub widget_type: WidgetType,
    pub title: &'a str,
    pub status: WidgetStatus,
    pub priority: i32,
    pub view_style: ViewStyle,
    pub click_behavior: ClickBehavior,
    pub modal_layout: ModalLayout,
    pub videos: Vec<StorefrontVideo<'a>>,
}

/// The JSON of every `manual` widget of one snapshot for one set of view counts, rendered once
/// and shared by all requests until either changes. `product` widgets depend on the page: `None`
/// here.
pub struct RenderedWidgets {
    snapshot_id: u64,
    counts: Arc<ViewCountSet>,
    /// By [`SnapshotWidget::index`].
    widgets: Vec<Option<Box<RawValue>>>,
}

impl RenderedWidgets {
    pub fn render(snapshot: &ShopSnapshot, counts: Arc<ViewCountSet>) -> RenderedWidgets {
        let widgets = snapshot
            .widgets()
            .iter()
            .map(|w| {
                (w.widget.source_type == SourceType::Manual)
                    .then(|| render(snapshot, &w.widget, w.published_video_ids(), &counts))
            })
            .collect();
        RenderedWidgets {
            snapshot_id: snapshot.id,
            counts,
            widgets,
        }
    }

    /// Were these rendered from `snapshot` with `counts`?
    pub fn is_for(&self, snapshot: &ShopSnapshot, counts: &ViewCountSet) -> bool {
        self.snapshot_id == snapshot.id && self.counts.tag == counts.tag
    }

    /// The widget's JSON for a page showing `product` (or none). `None` when the widget has no
    /// video to show there.
    pub fn widget<'a>(
        &'a self,
        snapshot: &ShopSnapshot,
        widget: &SnapshotWidget,
        product: Option<&ProductGid>,
    ) -> Option<WidgetJson<'a>> {
        match widget.widget.source_type {
            SourceType::Manual => {
                if widget.published_video_ids().is_empty() {
                    return None;
                }
                Some(self.widget_any(snapshot, widget))
            }
            SourceType::Product => {
                let ids = snapshot.videos_of_product(product?);
                if ids.is_empty() {
                    return None;
                }
                let json = render(snapshot, &widget.widget, ids, &self.counts);
                Some(WidgetJson::Owned(json))
            }
        }
    }

    /// The widget's JSON whatever the page: a product-sourced widget has no videos here.
    pub fn widget_any<'a>(
        &'a self,
        snapshot: &ShopSnapshot,
        widget: &SnapshotWidget,
    ) -> WidgetJson<'a> {
        debug_assert_eq!(
            self.snapshot_id, snapshot.id,
            "rendered from another snapshot"
        );
        match self.widgets.get(widget.index()).and_then(Option::as_deref) {
            Some(raw) => WidgetJson::Shared(raw),
            None => WidgetJson::Owned(render(snapshot, &widget.widget, &[], &self.counts)),
        }
    }
}

fn render(
    snapshot: &ShopSnapshot,
    widget: &Widget,
    video_ids: &[Uuid],
    counts: &ViewCountSet,
) -> Box<RawValue> {
    let videos = video_ids
        .iter()
        .filter_map(|id| snapshot.video(id))
        .enumerate()
        .map(|(i, v)| {
            let products: Vec<StorefrontProduct> = v
                .product_ids
                .iter()
                .filter_map(|id| snapshot.product(id))
                .map(StorefrontProduct::from)
                .collect();
            StorefrontVideo {
                id: v.id,
                title: &v.title,
                thumbnail: &v.thumbnail,
                video_url: &v.video_url,
                mini_version_url: &v.mini_version_url,
                hls_url: &v.hls_url,
                poster_url: &v.poster_url,
                captions: &v.captions,
                duration: v.duration,
                order: i + 1,
                view_count: counts.counts.get(&v.id).copied().unwrap_or(0).to_string(),
                has_products: !products.is_empty(),
                products,
            }
        })
        .collect();
    let json = StorefrontWidget {
        id: widget.id,
        widget_type: widget.widget_type,
        title: &widget.title,
        status: widget.status,
        priority: widget.priority,
        view_style: widget.view_style,
        click_behavior: widget.click_behavior,
        modal_layout: widget.modal_layout,
        videos,
    };
    serde_json::value::to_raw_value(&json).expect("storefront JSON always serializes")
}

/// A rendered widget: shared from a [`RenderedWidgets`], or made for this page.
pub enum WidgetJson<'a> {
    Shared(&'a RawValue),
    Owned(Box<RawValue>),
}

impl WidgetJson<'_> {
    /// Length of the JSON text.
    pub fn len(&self) -> usize {
        match self {
            WidgetJson::Shared(raw) => raw.get().len(),
            WidgetJson::Owned(raw) => raw.get().len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Serialize for WidgetJson<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            WidgetJson::Shared(raw) => raw.serialize(s),
            WidgetJson::Owned(raw) => raw.serialize(s),
        }
    }
}
