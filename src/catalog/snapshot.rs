//! A shop's catalog as the storefront sees it: active widgets, published videos, products, all in
//! memory, with each manual widget's JSON rendered once per snapshot and set of view counts.
//! Built from Postgres in one consistent read; rebuilt whenever the catalog version changes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use serde::Serialize;
use serde_json::value::RawValue;
use sqlx::PgPool;
use utoipa::ToSchema;
use uuid::Uuid;

use super::domain::{
    ClickBehavior, ModalLayout, ProductGid, ShopDomain, SourceType, Timezone, ViewStyle,
    WidgetStatus, WidgetType,
};
use super::widgets::{DisplayRules, Widget};
use super::{products, videos, widgets};

/// A product as the storefront shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StorefrontProduct {
    #[schema(value_type = String)]
    pub id: ProductGid,
    pub title: String,
    pub handle: String,
    pub image: String,
    pub url: String,
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
    /// Seconds.
    pub duration: f64,
    /// 1-based position within the widget.
    pub order: usize,
    /// Lifetime views as a decimal integer string.
    pub view_count: String,
    pub products: Vec<&'a StorefrontProduct>,
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

struct SnapshotVideo {
    id: Uuid,
    title: String,
    thumbnail: String,
    video_url: String,
    mini_version_url: String,
    duration: f64,
    product_ids: Vec<ProductGid>,
}

pub struct SnapshotWidget {
    pub widget: Widget,
    /// Position in the snapshot's widget list (and in a [`Rendered`] set).
    index: usize,
    /// The widget's published videos, in its order.
    published_video_ids: Vec<Uuid>,
}

/// Lifetime view counts per video of one shop, as last read from ClickHouse.
#[derive(Debug, Default)]
pub struct ViewCountSet {
    pub counts: HashMap<Uuid, u64>,
    /// Changes whenever the counts do; part of the storefront's ETag.
    pub tag: u64,
}

/// The JSON of every `manual` widget for one set of view counts, rendered once and shared by
/// all requests until the counts change. `product` widgets depend on the page: `None` here.
pub struct Rendered {
    counts: Arc<ViewCountSet>,
    widgets: Vec<Option<Box<RawValue>>>,
}

impl Rendered {
    pub fn counts_tag(&self) -> u64 {
        self.counts.tag
    }
}

impl SnapshotWidget {
    pub fn id(&self) -> Uuid {
        self.widget.id
    }

    pub fn rules(&self) -> &DisplayRules {
        &self.widget.rules
    }

    /// Published videos of a `manual` widget (what widgets-list counts).
    pub fn video_count(&self) -> usize {
        self.published_video_ids.len()
    }
}

/// The shop's own settings, read first.
struct ShopSettings {
    shop: ShopDomain,
    version: i64,
    remove_branding: bool,
    timezone: Timezone,
}

/// Numbers every snapshot ever built, so work derived from one can never be mistaken for
/// another's, even at the same catalog version.
static SNAPSHOT_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// What the storefront needs of one shop.
pub struct ShopSnapshot {
    /// Unique to this snapshot (see [`SNAPSHOT_IDS`]).
    pub id: u64,
    pub shop: ShopDomain,
    pub version: i64,
    pub remove_branding: bool,
    /// Events are dated in this zone at ingest.
    pub timezone: Timezone,
    /// Active widgets, highest priority first, ties by creation time.
    widgets: Vec<SnapshotWidget>,
    widget_index: HashMap<Uuid, usize>,
    products: HashMap<ProductGid, StorefrontProduct>,
    handles: HashMap<String, ProductGid>,
    videos: HashMap<Uuid, SnapshotVideo>,
    /// Published videos linked to each product, oldest first.
    videos_by_product: HashMap<ProductGid, Vec<Uuid>>,
    rendered: RwLock<Arc<Rendered>>,
}

impl ShopSnapshot {
    /// Reads the shop's catalog in one repeatable-read transaction, so the snapshot is one
    /// consistent version. `None` when the shop is not installed.
    pub async fn load(
        pool: &PgPool,
        shop: &ShopDomain,
    ) -> Result<Option<ShopSnapshot>, sqlx::Error> {
        let mut tx = pool.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            .execute(&mut *tx)
            .await?;
        let settings: Option<(i64, bool, String)> = sqlx::query_as(
            "SELECT catalog_version, remove_branding, timezone FROM shops \
             WHERE domain = $1 AND uninstalled_at IS NULL",
        )
        .bind(shop.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let Some((version, remove_branding, timezone)) = settings else {
            return Ok(None);
        };
        let timezone = Timezone::parse(&timezone)
            .map_err(|e| sqlx::Error::Decode(format!("shops.timezone: {e}").into()))?;
        let widgets = widgets::list_active(&mut tx, shop).await?;
        let videos = videos::list_published(&mut tx, shop).await?;
        let products = products::list_all(&mut tx, shop).await?;
        tx.commit().await?;
        let settings = ShopSettings {
            shop: shop.clone(),
            version,
            remove_branding,
            timezone,
        };
        Ok(Some(ShopSnapshot::build(
            settings, widgets, videos, products,
        )))
    }

    fn build(
        settings: ShopSettings,
        widgets: Vec<Widget>,
        videos: Vec<videos::Video>,
        products: Vec<products::Product>,
    ) -> ShopSnapshot {
        let mut handles = HashMap::with_capacity(products.len());
        let products: HashMap<ProductGid, StorefrontProduct> = products
            .into_iter()
            .map(|p| {
                handles.insert(p.handle.clone(), p.id.clone());
                let product = StorefrontProduct {
                    id: p.id.clone(),
                    title: p.title,
                    handle: p.handle,
                    image: p.image,
                    url: p.url,
                };
                (p.id, product)
            })
            .collect();
        let mut videos_by_product: HashMap<ProductGid, Vec<Uuid>> = HashMap::new();
        for video in &videos {
            for product in &video.product_ids {
                videos_by_product
                    .entry(product.clone())
                    .or_default()
                    .push(video.id);
            }
        }
        let videos: HashMap<Uuid, SnapshotVideo> = videos
            .into_iter()
            .map(|v| {
                let video = SnapshotVideo {
                    id: v.id,
                    title: v.title,
                    thumbnail: v.thumbnail,
                    video_url: v.video_url,
                    mini_version_url: v.mini_version_url,
                    duration: v.duration,
                    product_ids: v.product_ids,
                };
                (v.id, video)
            })
            .collect();
        let mut snapshot = ShopSnapshot {
            id: SNAPSHOT_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            shop: settings.shop,
            version: settings.version,
            remove_branding: settings.remove_branding,
            timezone: settings.timezone,
            widgets: Vec::with_capacity(widgets.len()),
            widget_index: HashMap::with_capacity(widgets.len()),
            products,
            handles,
            videos,
            videos_by_product,
            rendered: RwLock::new(Arc::new(Rendered {
                counts: Arc::default(),
                widgets: Vec::new(),
            })),
        };
        for widget in widgets {
            let published_video_ids: Vec<Uuid> = widget
                .video_ids
                .iter()
                .copied()
                .filter(|id| snapshot.videos.contains_key(id))
                .collect();
            let index = snapshot.widgets.len();
            snapshot.widget_index.insert(widget.id, index);
            snapshot.widgets.push(SnapshotWidget {
                widget,
                index,
                published_video_ids,
            });
        }
        let initial = snapshot.render_all(Arc::default());
        snapshot.rendered = RwLock::new(Arc::new(initial));
        snapshot
    }

    fn render_all(&self, counts: Arc<ViewCountSet>) -> Rendered {
        let widgets = self
            .widgets
            .iter()
            .map(|w| {
                (w.widget.source_type == SourceType::Manual)
                    .then(|| self.render(&w.widget, &w.published_video_ids, &counts))
            })
            .collect();
        Rendered { counts, widgets }
    }

    /// The rendered widgets for `counts`: the shared set when it was made for these counts,
    /// otherwise a new one (made once, then shared by every request until the counts change).
    pub fn rendered(&self, counts: &Arc<ViewCountSet>) -> Arc<Rendered> {
        let current = self
            .rendered
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if Arc::ptr_eq(&current.counts, counts) {
            return current;
        }
        let fresh = Arc::new(self.render_all(counts.clone()));
        *self.rendered.write().unwrap_or_else(|e| e.into_inner()) = fresh.clone();
        fresh
    }

    /// Active widgets in storefront order.
    pub fn widgets(&self) -> &[SnapshotWidget] {
        &self.widgets
    }

    pub fn widget(&self, id: Uuid) -> Option<&SnapshotWidget> {
        self.widget_index.get(&id).map(|&i| &self.widgets[i])
    }

    pub fn product(&self, id: &ProductGid) -> Option<&StorefrontProduct> {
        self.products.get(id)
    }

    pub fn product_by_handle(&self, handle: &str) -> Option<&StorefrontProduct> {
        self.handles
            .get(handle)
            .and_then(|id| self.products.get(id))
    }

    /// The widget's JSON for a page showing `product` (or none). `None` when the widget has no
    /// video to show there.
    pub fn widget_json<'a>(
        &'a self,
        rendered: &'a Rendered,
        widget: &'a SnapshotWidget,
        product: Option<&ProductGid>,
    ) -> Option<WidgetJson<'a>> {
        match widget.widget.source_type {
            SourceType::Manual => {
                if widget.published_video_ids.is_empty() {
                    return None;
                }
                Some(self.widget_json_any(rendered, widget))
            }
            SourceType::Product => {
                let ids = self.videos_by_product.get(product?)?;
                let json = self.render(&widget.widget, ids, &rendered.counts);
                Some(WidgetJson::Owned(json))
            }
        }
    }

    /// The widget's JSON whatever the page: a product-sourced widget has no videos here.
    pub fn widget_json_any<'a>(
        &'a self,
        rendered: &'a Rendered,
        widget: &'a SnapshotWidget,
    ) -> WidgetJson<'a> {
        match rendered
            .widgets
            .get(widget.index)
            .and_then(Option::as_deref)
        {
            Some(raw) => WidgetJson::Shared(raw),
            None => WidgetJson::Owned(self.render(&widget.widget, &[], &rendered.counts)),
        }
    }

    fn render(&self, widget: &Widget, video_ids: &[Uuid], counts: &ViewCountSet) -> Box<RawValue> {
        let videos = video_ids
            .iter()
            .filter_map(|id| self.videos.get(id))
            .enumerate()
            .map(|(i, v)| {
                let products: Vec<&StorefrontProduct> = v
                    .product_ids
                    .iter()
                    .filter_map(|id| self.products.get(id))
                    .collect();
                StorefrontVideo {
                    id: v.id,
                    title: &v.title,
                    thumbnail: &v.thumbnail,
                    video_url: &v.video_url,
                    mini_version_url: &v.mini_version_url,
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
}

/// A rendered widget: shared from the snapshot, or made for this page.
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
