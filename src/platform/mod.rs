//! The platform the app runs on: its webhooks (the catalog kept in step with the store, the app's
//! uninstall, and the mandatory privacy requests), recorded durably when they arrive and worked
//! on after.

pub mod privacy;
mod topics;
mod webhooks;
pub mod work;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(webhooks::receive))
}
