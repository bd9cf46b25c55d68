//! The names of media objects. Every name of a shop's video starts with `videos/{shop}/{video}/`,
//! and an upload's parts with `uploads/{video}/`, so a video's objects are deleted by prefix.

use object_store::path::Path;
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;

/// Every object of a shop's videos.
pub fn shop_prefix(shop: &ShopDomain) -> Path {
    Path::from(format!("videos/{shop}"))
}

/// Every output of every processing run of one video.
pub fn video_prefix(shop: &ShopDomain, video: Uuid) -> Path {
    Path::from(format!("videos/{shop}/{video}"))
}

/// The outputs of one processing run: never written again once published.
pub fn run_prefix(shop: &ShopDomain, video: Uuid, run: Uuid) -> Path {
    Path::from(format!("videos/{shop}/{video}/{run}"))
}

/// An output of a run; `name` is relative (`poster-480.jpg`, `hls/master.m3u8`).
pub fn output(run: &Path, name: &str) -> Path {
    Path::from(format!("{run}/{name}"))
}

/// The prefix of one caption file of a video, named by its language and content so that a name
/// is never written twice: like a run's prefix, the fourth segment, so deletion and the sweep
/// treat it as they treat a run.
pub fn caption_prefix(shop: &ShopDomain, video: Uuid, language: &str, digest: &str) -> Path {
    Path::from(format!(
        "videos/{shop}/{video}/captions-{language}-{digest}"
    ))
}

/// The caption file under its prefix.
pub fn caption(prefix: &Path, language: &str) -> Path {
    Path::from(format!("{prefix}/{language}.vtt"))
}

/// The received bytes of an upload (its source once complete).
pub fn upload_prefix(video: Uuid) -> Path {
    Path::from(format!("uploads/{video}"))
}

/// A part of an upload that begins at `offset`, written by one request (`attempt`): a name no
/// other request writes. Zero-padded so names sort by offset.
pub fn upload_part(video: Uuid, offset: u64, attempt: Uuid) -> Path {
    Path::from(format!("uploads/{video}/{offset:020}-{attempt}"))
}

/// Where the part named `name` (by `upload_part`) begins in its upload.
pub fn upload_part_offset(name: &Path) -> Option<u64> {
    let (offset, _attempt) = name.filename()?.split_once('-')?;
    offset.parse().ok()
}
