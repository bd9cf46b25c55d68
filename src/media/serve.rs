//! `/media/…`: the directory store's objects, served with `HEAD`, single `Range` requests,
//! `ETag`, year-long immutable caching, our own content types, `nosniff` and CORS.

use axum::Router;

use crate::app::AppState;

pub fn router() -> Router<AppState> {
    Router::new()
}
