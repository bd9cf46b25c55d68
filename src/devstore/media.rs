//! The demo shop's media, served by the demo store so the demo plays with no network: three
//! short videos with their muted previews (VP9 WebM, made with ffmpeg's test sources and kept
//! in the repository, 160 KB in all), posters for them, and product images.
//!
//! `/media/demo-N.webm`, `/media/demo-N-mini.webm`, `/media/demo-N.svg` (N = 1..3) and
//! `/media/product-<number>.svg` for any product number.

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};

const VIDEOS: [(&str, &[u8]); 6] = [
    ("demo-1.webm", include_bytes!("media/demo-1.webm")),
    ("demo-2.webm", include_bytes!("media/demo-2.webm")),
    ("demo-3.webm", include_bytes!("media/demo-3.webm")),
    ("demo-1-mini.webm", include_bytes!("media/demo-1-mini.webm")),
    ("demo-2-mini.webm", include_bytes!("media/demo-2-mini.webm")),
    ("demo-3-mini.webm", include_bytes!("media/demo-3-mini.webm")),
];

/// The colours of each demo video, for its poster.
const POSTER_COLOURS: [(&str, &str); 3] = [
    ("#d6246e", "#1e3a8a"),
    ("#0f766e", "#7c3aed"),
    ("#334155", "#94a3b8"),
];

const PRODUCT_COLOURS: [&str; 5] = ["#b45309", "#15803d", "#1d4ed8", "#9d174d", "#4d7c0f"];

pub async fn file(Path(file): Path<String>) -> Response {
    if let Some((_, bytes)) = VIDEOS.iter().find(|(name, _)| *name == file) {
        return (
            [
                (header::CONTENT_TYPE, "video/webm"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            *bytes,
        )
            .into_response();
    }
    let svg = file.strip_suffix(".svg").and_then(|name| {
        if let Some(n) = name.strip_prefix("demo-") {
            let index: usize = n.parse().ok()?;
            let (from, to) = *POSTER_COLOURS.get(index.checked_sub(1)?)?;
            Some(poster(from, to, index))
        } else {
            let number: u64 = name.strip_prefix("product-")?.parse().ok()?;
            Some(product_image(number))
        }
    });
    match svg {
        Some(svg) => (
            [
                (header::CONTENT_TYPE, "image/svg+xml"),
                (header::CACHE_CONTROL, "public, max-age=3600"),
            ],
            svg,
        )
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

fn poster(from: &str, to: &str, index: usize) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="360" height="640" viewBox="0 0 360 640"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="{from}"/><stop offset="1" stop-color="{to}"/></linearGradient></defs><rect width="360" height="640" fill="url(#g)"/><circle cx="180" cy="320" r="56" fill="#fff" fill-opacity=".85"/><path d="M162 288v64l52-32z" fill="{to}"/><text x="180" y="600" font-family="sans-serif" font-size="28" fill="#fff" text-anchor="middle">Demo video {index}</text></svg>"##
    )
}

fn product_image(number: u64) -> String {
    let colour = PRODUCT_COLOURS[(number % PRODUCT_COLOURS.len() as u64) as usize];
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="400" height="400" viewBox="0 0 400 400"><rect width="400" height="400" fill="{colour}"/><rect x="120" y="110" width="160" height="190" rx="18" fill="#fff" fill-opacity=".9"/><text x="200" y="360" font-family="sans-serif" font-size="30" fill="#fff" text-anchor="middle">#{number}</text></svg>"##
    )
}
