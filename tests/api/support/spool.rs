//! The ingest spool on disk, and waiting until it has shipped.

use super::*;

/// Segment files that hold records: sealed ones, and open ones past their first header (the
/// spool keeps a pre-allocated, all-zero segment ready, which holds nothing).
pub fn spooled_segments(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|path| {
            path.is_file() && path.extension().is_some_and(|x| x == "open" || x == "log")
        })
        .filter(|path| {
            let mut header = [0u8; 4];
            let written = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut header))
                .is_ok();
            written && header != [0; 4]
        })
        .count()
}

/// Waits until the app's spool holds nothing: every acknowledged event was inserted, and the
/// insert returned, so the materialized views have it too. (Rows show in `events` a moment
/// before the same insert has written the views.)
pub async fn wait_until_shipped(app: &impl Service, within: std::time::Duration) {
    wait_until_spool_empty(&app.spool_dir, within).await;
}

/// Waits until the spool directory `dir` holds no records (see [`wait_until_shipped`]).
pub async fn wait_until_spool_empty(dir: &std::path::Path, within: std::time::Duration) {
    eventually("the spool drained", within, || async {
        let segments = spooled_segments(dir);
        (segments == 0).then_some(()).ok_or(segments)
    })
    .await;
}
