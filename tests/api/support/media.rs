//! Uploads by tus, the media store's objects, and a media worker a test drives itself.

use super::*;

use base64::Engine;
use reqwest::{Method, StatusCode};

pub fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// A tus client's requests, by hand, so each header can be got wrong on purpose.
pub struct Tus<'a, A: Service> {
    pub app: &'a A,
    pub shop: &'a str,
}

impl<A: Service> Tus<'_, A> {
    pub fn uploads_path(&self) -> String {
        format!("/admin/v1/shops/{}/uploads", self.shop)
    }

    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.app
            .client
            .request(method, self.app.url(path))
            .bearer_auth(ADMIN_TOKEN)
            .header("Tus-Resumable", "1.0.0")
    }

    /// Creates an upload of `length` bytes titled `title`; returns its path (the `Location`).
    pub async fn create(&self, length: u64, title: &str) -> String {
        let response = self
            .request(Method::POST, &self.uploads_path())
            .header("Upload-Length", length.to_string())
            .header(
                "Upload-Metadata",
                format!("title {},filename {}", b64(title), b64("clip.mp4")),
            )
            .send()
            .await
            .unwrap();
        assert_eq!(
            response.status(),
            StatusCode::CREATED,
            "{:?}",
            response.text().await
        );
        assert_eq!(response.headers()["tus-resumable"], "1.0.0");
        response.headers()["location"].to_str().unwrap().to_string()
    }

    pub async fn patch(&self, location: &str, offset: u64, bytes: Vec<u8>) -> reqwest::Response {
        self.request(Method::PATCH, location)
            .header("Upload-Offset", offset.to_string())
            .header("Content-Type", "application/offset+octet-stream")
            .body(bytes)
            .send()
            .await
            .unwrap()
    }

    pub async fn offset(&self, location: &str) -> (StatusCode, Option<u64>) {
        let response = self.request(Method::HEAD, location).send().await.unwrap();
        let offset = response
            .headers()
            .get("upload-offset")
            .map(|v| v.to_str().unwrap().parse().unwrap());
        (response.status(), offset)
    }

    /// Uploads all of `file` in chunks of `chunk` bytes; returns the last answer.
    pub async fn upload(&self, location: &str, file: &[u8], chunk: usize) -> reqwest::Response {
        let mut offset = 0;
        loop {
            let end = (offset + chunk).min(file.len());
            let response = self
                .patch(location, offset as u64, file[offset..end].to_vec())
                .await;
            if response.status() != StatusCode::NO_CONTENT || end == file.len() {
                return response;
            }
            offset = end;
        }
    }
}

pub fn video_id_of(location: &str) -> &str {
    location.rsplit('/').next().unwrap()
}

/// The objects of the media directory whose names contain `needle`.
pub fn stored_objects(dir: &std::path::Path, needle: &str) -> Vec<String> {
    pub fn walk(dir: &std::path::Path, found: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let path = entry.path();
            if path.is_dir() {
                walk(&path, found);
            } else {
                found.push(path.display().to_string());
            }
        }
    }
    let mut found = Vec::new();
    walk(dir, &mut found);
    found.retain(|p| p.contains(needle));
    found
}

/// A worker on the app's database and media directory (whose objects the app serves), for tests
/// that drive its steps.
pub async fn media_worker(app: &TestApp, dir: &std::path::Path) -> videoapp::media::worker::Worker {
    let mut settings = videoapp::config::Settings::default().media;
    settings.media_dir = dir.to_path_buf();
    settings.media_public_url = Some(format!("{}/media", app.address).parse().unwrap());
    let config = settings.media_config().unwrap();
    let media = videoapp::media::Media::open(&config, "127.0.0.1:1".parse().unwrap()).unwrap();
    videoapp::media::worker::Worker {
        db: app.db.clone(),
        media,
    }
}
