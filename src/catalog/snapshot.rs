//! A shop's catalog as the storefront sees it: active widgets, published videos, products, all in
//! memory. Built from Postgres in one consistent read; rebuilt whenever the catalog version
//! changes. How the storefront shows this data is the storefront's business.

use std::collections::HashMap;

use sqlx::PgPool;
use uuid::Uuid;

use super::domain::{AttributionWindow, HoldoutPercent, ProductGid, ShopDomain, Timezone};
use super::videos::Video;
use super::widgets::{DisplayRules, Widget};
use super::{products, videos, widgets};

/// A product the storefront can show: [`products::Product`] without the collections it is in,
/// which the storefront never reads.
#[derive(Debug, Clone)]
pub struct SnapshotProduct {
    pub id: ProductGid,
    pub title: String,
    pub handle: String,
    pub image: String,
    pub url: String,
}

pub struct SnapshotWidget {
    pub widget: Widget,
    /// Position in the snapshot's widget list.
    index: usize,
    /// The widget's published videos, in its order.
    published_video_ids: Vec<Uuid>,
}

impl SnapshotWidget {
    pub fn id(&self) -> Uuid {
        self.widget.id
    }

    pub fn rules(&self) -> &DisplayRules {
        &self.widget.rules
    }

    /// Position in [`ShopSnapshot::widgets`], so work derived per widget can sit in a list.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Published videos of a `manual` widget, in its order.
    pub fn published_video_ids(&self) -> &[Uuid] {
        &self.published_video_ids
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
    attribution_window: AttributionWindow,
    holdout: HoldoutPercent,
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
    pub attribution_window: AttributionWindow,
    pub holdout: HoldoutPercent,
    /// Events are dated in this zone at ingest.
    pub timezone: Timezone,
    /// Active widgets, highest priority first, ties by creation time.
    widgets: Vec<SnapshotWidget>,
    widget_index: HashMap<Uuid, usize>,
    products: HashMap<ProductGid, SnapshotProduct>,
    handles: HashMap<String, ProductGid>,
    /// Published videos only.
    videos: HashMap<Uuid, Video>,
    /// Published videos linked to each product, oldest first.
    videos_by_product: HashMap<ProductGid, Vec<Uuid>>,
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
        let settings: Option<(i64, bool, i16, i16, String)> = sqlx::query_as(
            "SELECT catalog_version, remove_branding, attribution_window_days, holdout_percent, \
             timezone FROM shops \
             WHERE domain = $1 AND uninstalled_at IS NULL",
        )
        .bind(shop.as_str())
        .fetch_optional(&mut *tx)
        .await?;
        let Some((version, remove_branding, attribution_window, holdout, timezone)) = settings
        else {
            return Ok(None);
        };
        let attribution_window =
            AttributionWindow::from_days(attribution_window.into()).map_err(|e| {
                sqlx::Error::Decode(format!("shops.attribution_window_days: {e}").into())
            })?;
        let holdout = HoldoutPercent::parse(holdout.into())
            .map_err(|e| sqlx::Error::Decode(format!("shops.holdout_percent: {e}").into()))?;
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
            attribution_window,
            holdout,
            timezone,
        };
        Ok(Some(ShopSnapshot::build(
            settings, widgets, videos, products,
        )))
    }

    fn build(
        settings: ShopSettings,
        widgets: Vec<Widget>,
        videos: Vec<Video>,
        products: Vec<products::Product>,
    ) -> ShopSnapshot {
        let mut handles = HashMap::with_capacity(products.len());
        let products: HashMap<ProductGid, SnapshotProduct> = products
            .into_iter()
            .map(|p| {
                handles.insert(p.handle.to_string(), p.id.clone());
                let product = SnapshotProduct {
                    id: p.id.clone(),
                    title: p.title.into(),
                    handle: p.handle.into(),
                    image: p.image.into(),
                    url: p.url.into(),
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
        let videos: HashMap<Uuid, Video> = videos.into_iter().map(|v| (v.id, v)).collect();
        let mut snapshot = ShopSnapshot {
            id: SNAPSHOT_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            shop: settings.shop,
            version: settings.version,
            remove_branding: settings.remove_branding,
            attribution_window: settings.attribution_window,
            holdout: settings.holdout,
            timezone: settings.timezone,
            widgets: Vec::with_capacity(widgets.len()),
            widget_index: HashMap::with_capacity(widgets.len()),
            products,
            handles,
            videos,
            videos_by_product,
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
        snapshot
    }

    /// Active widgets in storefront order.
    pub fn widgets(&self) -> &[SnapshotWidget] {
        &self.widgets
    }

    pub fn widget(&self, id: Uuid) -> Option<&SnapshotWidget> {
        self.widget_index.get(&id).map(|&i| &self.widgets[i])
    }

    pub fn product(&self, id: &ProductGid) -> Option<&SnapshotProduct> {
        self.products.get(id)
    }

    pub fn product_by_handle(&self, handle: &str) -> Option<&SnapshotProduct> {
        self.handles
            .get(handle)
            .and_then(|id| self.products.get(id))
    }

    pub fn video(&self, id: &Uuid) -> Option<&Video> {
        self.videos.get(id)
    }

    /// Published videos linked to `product`, oldest first.
    pub fn videos_of_product(&self, product: &ProductGid) -> &[Uuid] {
        self.videos_by_product
            .get(product)
            .map_or(&[], Vec::as_slice)
    }
}
