//! The platform the app runs on: its webhooks (the catalog kept in step with the store, and the
//! app's uninstall), recorded durably when they arrive and worked on after.

mod topics;
mod webhooks;
pub mod work;

use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::app::AppState;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(webhooks::receive))
}
