//! The analytics endpoints: metrics of the shop's videos and widgets, its totals and time
//! series, and what its holdout shows, over a range of whole days in the shop's timezone,
//! optionally beside a comparison range.

mod breakdown;
mod lift;
mod listing;
mod params;
mod record;
mod summary;
mod timeseries;
mod videos;
mod widgets;
mod window;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub(super) use params::{SortKey, SortOrder};

/// Every analytics operation, without the layer that names the caller.
pub(super) fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(videos::list_videos))
        .routes(routes!(videos::one_video))
        .routes(routes!(summary::summary))
        .routes(routes!(widgets::list_widgets))
        .routes(routes!(widgets::one_widget))
        .routes(routes!(timeseries::timeseries))
        .routes(routes!(lift::lift))
}
