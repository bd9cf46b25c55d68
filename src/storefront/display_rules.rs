//! Which widgets a page shows: a widget's display rules against the page the loader is on.

use crate::catalog::domain::{CollectionGid, Location, ProductGid, WidgetType};
use crate::catalog::snapshot::SnapshotWidget;

/// Does the widget's location rule (and its type: productpage widgets belong on product pages)
/// admit this page type?
pub fn location_admits(widget: &SnapshotWidget, location: Location) -> bool {
    let rules = widget.rules();
    (rules.locations.is_empty() || rules.locations.contains(&location))
        && (widget.widget.widget_type != WidgetType::ProductPage || location == Location::Product)
}

/// Does a widget's display rules admit this page? An empty list matches everything; a
/// non-empty product or collection list needs the page to name one of them.
pub fn rules_admit(
    widget: &SnapshotWidget,
    location: Location,
    product: Option<&ProductGid>,
    collection: Option<&CollectionGid>,
) -> bool {
    let rules = widget.rules();
    let product_ok =
        rules.product_ids.is_empty() || product.is_some_and(|p| rules.product_ids.contains(p));
    let collection_ok = rules.collection_ids.is_empty()
        || collection.is_some_and(|c| rules.collection_ids.contains(c));
    location_admits(widget, location) && product_ok && collection_ok
}
