//! Object storage for media: one interface (the `object_store` crate) over a directory, the
//! embedded default served at `/media`, or an S3-compatible bucket behind a CDN.
//!
//! Names carry a content version (`videos/{shop}/{video}/{run}/…`): an object, once written, is
//! never changed, so browsers and CDNs may keep it for a year.

use std::path::Path as FilePath;
use std::sync::Arc;

use anyhow::Context;
use bytes::Bytes;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    Attribute, AttributeValue, Attributes, ObjectStore, PutMultipartOptions, PutOptions,
    PutPayload, WriteMultipart,
};
use secrecy::ExposeSecret;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;

use crate::config::MediaStorage;

/// How browsers and CDNs may keep an object: for a year, since a name is never written twice.
pub const IMMUTABLE_CACHE_CONTROL: &str = "public, max-age=31536000, immutable";

/// The content type of an object we write, by its name's extension; anything else is bytes.
pub fn content_type(name: &str) -> &'static str {
    match name.rsplit_once('.').map(|(_, ext)| ext) {
        Some("m3u8") => "application/vnd.apple.mpegurl",
        Some("m4s") => "video/iso.segment",
        Some("mp4") => "video/mp4",
        Some("jpg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("vtt") => "text/vtt; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// Files larger than this are written in parts of this size (S3's multipart upload).
const PART_BYTES: usize = 8 * 1024 * 1024;
/// The parts of an object written to the directory store as it arrives.
const LOCAL_PART_BYTES: usize = 1024 * 1024;
/// The extension of a list of files that ffmpeg reads as one (`MediaStore::readable_in_place`).
pub const PARTS_LIST_EXTENSION: &str = "parts";
/// The most files of the directory store ffmpeg reads in place as one: it holds them all open.
/// More (an upload of thousands of small chunks) are copied into one file.
const MAX_PARTS_IN_PLACE: usize = 600;

#[derive(Clone)]
pub struct MediaStore {
    objects: Arc<dyn ObjectStore>,
    /// The directory store itself, whose objects `/media` reads as files.
    local: Option<Arc<LocalFileSystem>>,
    /// Ends with `/`; an object's public URL is this with its name appended.
    public_base: Url,
    /// Whether this service serves the objects itself (`/media`): the directory store.
    served_here: bool,
}

impl std::fmt::Debug for MediaStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MediaStore")
            .field("objects", &self.objects.to_string())
            .field("public_base", &self.public_base.as_str())
            .finish()
    }
}

impl MediaStore {
    /// Opens the configured store; objects are read by browsers at `public_base`.
    pub fn open(storage: &MediaStorage, public_base: &Url) -> anyhow::Result<MediaStore> {
        let (objects, local): (Arc<dyn ObjectStore>, Option<Arc<LocalFileSystem>>) = match storage {
            MediaStorage::Directory(dir) => {
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("cannot create {}", dir.display()))?;
                let store = LocalFileSystem::new_with_prefix(dir)
                    .with_context(|| format!("cannot open {}", dir.display()))?
                    // A deleted object's empty directories go with it.
                    .with_automatic_cleanup(true);
                let store = Arc::new(store);
                (store.clone(), Some(store))
            }
            MediaStorage::S3(s3) => {
                let mut builder = AmazonS3Builder::new()
                    .with_bucket_name(&s3.bucket)
                    .with_region(&s3.region);
                if let Some(endpoint) = &s3.endpoint {
                    let endpoint = endpoint.as_str().trim_end_matches('/');
                    builder = builder
                        .with_endpoint(endpoint)
                        .with_allow_http(endpoint.starts_with("http:"))
                        // Self-hosted servers name buckets in the path, not the host.
                        .with_virtual_hosted_style_request(false);
                }
                if let Some(id) = &s3.access_key_id {
                    builder = builder.with_access_key_id(id);
                }
                if let Some(secret) = &s3.secret_access_key {
                    builder = builder.with_secret_access_key(secret.expose_secret());
                }
                let store = builder.build().context("the S3 settings")?;
                (Arc::new(store), None)
            }
        };
        let mut public_base = public_base.clone();
        if !public_base.path().ends_with('/') {
            public_base.set_path(&format!("{}/", public_base.path()));
        }
        Ok(MediaStore {
            served_here: local.is_some(),
            objects,
            local,
            public_base,
        })
    }

    pub fn objects(&self) -> &Arc<dyn ObjectStore> {
        &self.objects
    }

    /// Whether `/media` serves this store's objects (the directory store).
    pub fn served_here(&self) -> bool {
        self.served_here
    }

    /// The file that holds `name` in the directory store; `None` for a bucket.
    pub fn local_file(&self, name: &Path) -> Option<std::path::PathBuf> {
        self.local.as_ref()?.path_to_filesystem(name).ok()
    }

    /// The URL browsers read `name` at.
    pub fn public_url(&self, name: &Path) -> String {
        format!("{}{}", self.public_base, name)
    }

    pub async fn put(&self, name: &Path, bytes: Bytes) -> object_store::Result<()> {
        let options = PutOptions {
            attributes: self.attributes(name),
            ..PutOptions::default()
        };
        self.objects
            .put_opts(name, PutPayload::from(bytes), options)
            .await?;
        Ok(())
    }

    /// What a bucket serves an object with: our content type, and a year of caching (names are
    /// never reused). The directory store keeps none; `/media` adds them as it serves.
    fn attributes(&self, name: &Path) -> Attributes {
        if self.served_here {
            return Attributes::new();
        }
        Attributes::from_iter([
            (
                Attribute::ContentType,
                AttributeValue::from(content_type(name.as_ref())),
            ),
            (
                Attribute::CacheControl,
                AttributeValue::from(IMMUTABLE_CACHE_CONTROL),
            ),
        ])
    }

    /// Writes the file at `file` as `name`, in parts when it is large; returns its size.
    pub async fn put_file(&self, name: &Path, file: &FilePath) -> anyhow::Result<u64> {
        let mut source = tokio::fs::File::open(file)
            .await
            .with_context(|| format!("cannot open {}", file.display()))?;
        let size = source.metadata().await?.len();
        if size <= PART_BYTES as u64 {
            let mut bytes = Vec::with_capacity(size as usize);
            source.read_to_end(&mut bytes).await?;
            self.put(name, bytes.into()).await?;
            return Ok(size);
        }
        let options = PutMultipartOptions {
            attributes: self.attributes(name),
            ..PutMultipartOptions::default()
        };
        let upload = self.objects.put_multipart_opts(name, options).await?;
        let mut writer = WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
        let mut buffer = vec![0u8; 1024 * 1024];
        loop {
            let read = source.read(&mut buffer).await?;
            if read == 0 {
                break;
            }
            writer.wait_for_capacity(2).await?;
            writer.write(&buffer[..read]);
        }
        writer.finish().await?;
        Ok(size)
    }

    /// Writes the objects `names`, in that order, one after another into `file`; returns the
    /// bytes written.
    pub async fn concatenate(&self, names: &[Path], file: &FilePath) -> anyhow::Result<u64> {
        let mut out = tokio::fs::File::create(file)
            .await
            .with_context(|| format!("cannot create {}", file.display()))?;
        let mut written = 0;
        for name in names {
            let mut stream = self.objects.get(name).await?.into_stream();
            while let Some(chunk) = stream.next().await {
                let chunk = chunk?;
                out.write_all(&chunk).await?;
                written += chunk.len() as u64;
            }
        }
        // A working copy for ffprobe and ffmpeg: the stored objects are the durable one, so no
        // fsync, which would only hold up the answer to an upload's last chunk.
        out.flush().await?;
        Ok(written)
    }

    /// Makes the objects `names`, one after another, readable by ffmpeg as one file, using `dir`
    /// (private, this run's own); returns the path to give ffmpeg. In the directory store the
    /// objects are files, read where they are through a list of them (`PARTS_LIST_EXTENSION`);
    /// from a bucket they are fetched into one file.
    pub async fn readable_in_place(
        &self,
        names: &[Path],
        dir: &FilePath,
    ) -> anyhow::Result<std::path::PathBuf> {
        if let Some(list) = self.parts_list(names) {
            let path = dir.join(format!("source.{PARTS_LIST_EXTENSION}"));
            tokio::fs::write(&path, list)
                .await
                .with_context(|| format!("cannot write {}", path.display()))?;
            metrics::counter!("media_sources_read_total", "how" => "in_place").increment(1);
            return Ok(path);
        }
        let path = dir.join("source");
        self.concatenate(names, &path).await?;
        metrics::counter!("media_sources_read_total", "how" => "copied").increment(1);
        Ok(path)
    }

    /// ffmpeg's `concatf` list of the files of `names` (one `file:` URL a line), when they are
    /// files of the directory store that such a list can name and that one ffmpeg can hold open
    /// together.
    fn parts_list(&self, names: &[Path]) -> Option<String> {
        if names.len() > MAX_PARTS_IN_PLACE {
            return None;
        }
        let mut list = String::new();
        for name in names {
            let file = self.local_file(name)?;
            let file = file.to_str()?;
            // ffmpeg reads each line as a token: quotes and backslashes would be taken as its
            // escapes.
            if !file.starts_with('/') || file.contains(['\'', '"', '\\', '\n', '\r']) {
                return None;
            }
            list.push_str("file:");
            list.push_str(file);
            list.push('\n');
        }
        Some(list)
    }

    /// Starts writing `name` from bytes as they come (`ObjectWriter`).
    pub fn writer(&self, name: &Path) -> ObjectWriter {
        ObjectWriter {
            store: self.clone(),
            name: name.clone(),
            // A bucket's parts have a smallest size (5 MiB on S3); a directory's none, and
            // smaller ones hold less in memory.
            part_bytes: if self.served_here {
                LOCAL_PART_BYTES
            } else {
                PART_BYTES
            },
            held: Vec::new(),
            held_bytes: 0,
            multipart: None,
            written: 0,
        }
    }

    /// Deletes every object under `prefix`; returns how many there were.
    pub async fn delete_prefix(&self, prefix: &Path) -> object_store::Result<usize> {
        let names = self
            .objects
            .list(Some(prefix))
            .map_ok(|meta| meta.location)
            .boxed();
        let deleted: Vec<Path> = self.objects.delete_stream(names).try_collect().await?;
        // A directory may also hold the unfinished file of a part whose writer never ended (the
        // process died mid-chunk), which no listing shows.
        if let Some(dir) = self.local_file(prefix).filter(|dir| dir.is_dir()) {
            match tokio::fs::remove_dir_all(&dir).await {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(object_store::Error::Generic {
                        store: "directory",
                        source: Box::new(e),
                    })
                }
                _ => {}
            }
        }
        Ok(deleted.len())
    }
}

/// An object written from bytes as they arrive, without a file in between: held in memory up to
/// one part and then written in one request, or beyond that written in parts as they fill
/// (a multipart upload). Nothing is under its name until `finish`; `abort` leaves nothing.
pub struct ObjectWriter {
    store: MediaStore,
    name: Path,
    part_bytes: usize,
    held: Vec<Bytes>,
    held_bytes: usize,
    multipart: Option<WriteMultipart>,
    written: u64,
}

impl ObjectWriter {
    pub async fn write(&mut self, bytes: Bytes) -> object_store::Result<()> {
        self.written += bytes.len() as u64;
        if let Some(multipart) = &mut self.multipart {
            // At most two parts on their way: memory stays bounded when storage is slower than
            // the client.
            multipart.wait_for_capacity(2).await?;
            multipart.put(bytes);
            return Ok(());
        }
        self.held_bytes += bytes.len();
        self.held.push(bytes);
        if self.held_bytes > self.part_bytes {
            let options = PutMultipartOptions {
                attributes: self.store.attributes(&self.name),
                ..PutMultipartOptions::default()
            };
            let upload = self
                .store
                .objects
                .put_multipart_opts(&self.name, options)
                .await?;
            let mut multipart = WriteMultipart::new_with_chunk_size(upload, self.part_bytes);
            for held in self.held.drain(..) {
                multipart.put(held);
            }
            self.held_bytes = 0;
            self.multipart = Some(multipart);
        }
        Ok(())
    }

    /// Stores what was written under the object's name; returns its size.
    pub async fn finish(self) -> object_store::Result<u64> {
        match self.multipart {
            Some(multipart) => {
                multipart.finish().await?;
            }
            None => {
                let options = PutOptions {
                    attributes: self.store.attributes(&self.name),
                    ..PutOptions::default()
                };
                let payload = PutPayload::from_iter(self.held);
                self.store
                    .objects
                    .put_opts(&self.name, payload, options)
                    .await?;
            }
        }
        Ok(self.written)
    }

    /// Drops what was written: nothing of it stays in the store.
    pub async fn abort(self) -> object_store::Result<()> {
        match self.multipart {
            Some(multipart) => multipart.abort().await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::MediaStorage;

    fn directory_store(dir: &FilePath) -> MediaStore {
        let base = Url::parse("http://127.0.0.1/media/").unwrap();
        MediaStore::open(&MediaStorage::Directory(dir.to_path_buf()), &base).unwrap()
    }

    async fn put_parts(store: &MediaStore, count: usize) -> (Vec<Path>, Vec<u8>) {
        let (mut names, mut whole) = (Vec::new(), Vec::new());
        for i in 0..count {
            let name = Path::from(format!("uploads/v/{i:020}-part"));
            let bytes = format!("part {i};").into_bytes();
            store.put(&name, Bytes::from(bytes.clone())).await.unwrap();
            names.push(name);
            whole.extend(bytes);
        }
        (names, whole)
    }

    #[tokio::test]
    async fn a_directorys_parts_are_listed_for_ffmpeg_to_read_in_place_not_copied() {
        let (root, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = directory_store(root.path());
        let (names, _) = put_parts(&store, 3).await;

        let source = store.readable_in_place(&names, work.path()).await.unwrap();

        assert_eq!(source, work.path().join("source.parts"));
        let expected: String = names
            .iter()
            .map(|name| format!("file:{}\n", store.local_file(name).unwrap().display()))
            .collect();
        assert_eq!(std::fs::read_to_string(&source).unwrap(), expected);
        // The list is all there is: no copy of the bytes.
        assert_eq!(std::fs::read_dir(work.path()).unwrap().count(), 1);
    }

    #[tokio::test]
    async fn more_parts_than_one_ffmpeg_holds_open_are_copied_into_one_file() {
        let (root, work) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let store = directory_store(root.path());
        let (names, whole) = put_parts(&store, MAX_PARTS_IN_PLACE + 1).await;

        let source = store.readable_in_place(&names, work.path()).await.unwrap();

        assert_eq!(source, work.path().join("source"));
        assert_eq!(std::fs::read(&source).unwrap(), whole);
    }

    #[tokio::test]
    async fn a_written_object_appears_whole_at_its_finish_and_an_aborted_one_never() {
        let root = tempfile::tempdir().unwrap();
        let store = directory_store(root.path());
        let files = |root: &FilePath| {
            let mut found = Vec::new();
            let mut dirs = vec![root.to_path_buf()];
            while let Some(dir) = dirs.pop() {
                for entry in std::fs::read_dir(dir).unwrap() {
                    let path = entry.unwrap().path();
                    match path.is_dir() {
                        true => dirs.push(path),
                        false => found.push(path),
                    }
                }
            }
            found
        };
        let content: Vec<u8> = (0..3 * LOCAL_PART_BYTES + 77).map(|i| i as u8).collect();
        for (name, kept) in [("kept", true), ("dropped", false)] {
            let name = Path::from(format!("uploads/v/{name}"));
            let mut writer = store.writer(&name);
            for piece in content.chunks(100_000) {
                writer.write(Bytes::copy_from_slice(piece)).await.unwrap();
            }
            let listed: Vec<_> = store.objects.list(None).try_collect().await.unwrap();
            assert_eq!(
                listed.len(),
                usize::from(!kept),
                "nothing is named before the end"
            );
            match kept {
                true => assert_eq!(writer.finish().await.unwrap(), content.len() as u64),
                false => writer.abort().await.unwrap(),
            }
        }
        let stored = files(root.path());
        assert_eq!(
            stored,
            vec![root.path().join("uploads/v/kept")],
            "{stored:?}"
        );
        assert_eq!(std::fs::read(&stored[0]).unwrap(), content);

        // What a writer that never ended left (the process died) goes with its prefix.
        std::fs::write(root.path().join("uploads/v/other#1"), b"half").unwrap();
        store.delete_prefix(&Path::from("uploads/v")).await.unwrap();
        assert_eq!(files(root.path()), Vec::<std::path::PathBuf>::new());
    }
}
