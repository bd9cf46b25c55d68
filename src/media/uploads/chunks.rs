//! A chunk of an upload (a `PATCH`, or a creation's first bytes): read as it arrives into a part
//! of its own, judged (its length, its checksum, a first chunk's first bytes) and counted in the
//! upload only when kept; the chunk that completes the upload finishes it.

use axum::body::Body;
use axum::http::StatusCode;
use bytes::Bytes;
use futures::StreamExt;
use sha1::Digest;
use sqlx::PgPool;
use uuid::Uuid;

use super::check::{finish, refuse_upload, sniff, SNIFF_BYTES};
use super::tus::{Checksum, CHECKSUM_MISMATCH};
use super::{refusal, UploadState};
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::media::store::ObjectWriter;
use crate::media::{names, Media, Refusal};

/// What a `PATCH` (or a creation with its first bytes) delivered.
pub struct Appended {
    pub offset: u64,
    pub completed: bool,
}

/// Appends the request's body at `offset`. The body is read and stored by a task of its own,
/// so that what arrived is kept even when the client disconnects midway (its connection, and
/// with it this request's handler, is dropped then).
pub async fn append(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    upload: &UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    body: Body,
) -> Result<Appended, ApiError> {
    if upload.completed_at.is_some() && offset == upload.received as u64 {
        return Ok(Appended {
            offset,
            completed: true,
        });
    }
    if offset != upload.received as u64 {
        return Err(refusal(
            StatusCode::CONFLICT,
            "UPLOAD_OFFSET_MISMATCH",
            format!(
                "Upload-Offset: {offset} is not where the upload stands ({}); ask with HEAD and \
                 resume from there",
                upload.received
            ),
        ));
    }
    let chunk = Chunk {
        media: media.clone(),
        db: db.clone(),
        shop: shop.clone(),
        upload: upload.clone(),
        offset,
        checksum,
    };
    let task = tokio::spawn(chunk.store(body));
    task.await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("storing a chunk: {e}")))?
}

/// A chunk on its way into an upload: where it goes, and the checksum its client sent.
struct Chunk {
    media: Media,
    db: PgPool,
    shop: ShopDomain,
    upload: UploadState,
    offset: u64,
    checksum: Option<Checksum>,
}

impl Chunk {
    async fn store(self, body: Body) -> Result<Appended, ApiError> {
        let remaining = (self.upload.length - self.upload.received) as u64;
        let part = names::upload_part(self.upload.video_id, self.offset, Uuid::new_v4());
        let digest = Digests::for_checksum(self.checksum.as_ref());
        let sniffed = self.offset == 0;
        let writer = self.media.store.writer(&part);
        let received = receive(body, writer, remaining, digest, sniffed).await;
        self.commit(&part, received).await
    }

    /// Keeps a chunk that passes: its part is stored under its name and counted in the upload,
    /// unless another request counted this offset first; the last chunk finishes the upload.
    async fn commit(
        self,
        part: &object_store::path::Path,
        received: anyhow::Result<Received>,
    ) -> Result<Appended, ApiError> {
        let Chunk {
            media,
            db,
            shop,
            upload,
            offset,
            checksum,
        } = self;
        let mut received =
            received.map_err(|e| ApiError::Internal(e.context("receiving a chunk")))?;
        let writer = received.part.take();
        let judged = judge_chunk(&upload, offset, checksum, received);
        let bytes = match judged {
            Ok(Some(bytes)) => bytes,
            // Nothing of a refused chunk stays: its part is dropped before it has a name.
            refused => {
                if let Some(writer) = writer {
                    if let Err(e) = writer.abort().await {
                        tracing::warn!(error = %e, "cannot drop a refused chunk's part");
                    }
                }
                return match refused {
                    Ok(_) => Ok(Appended {
                        offset,
                        completed: false,
                    }),
                    Err(ChunkRefused::File(refused)) => {
                        refuse_upload(&media, &db, upload.video_id, &refused).await?;
                        Err(refused.into())
                    }
                    Err(ChunkRefused::Chunk(e)) => Err(e),
                };
            }
        };
        let writer = writer.ok_or_else(|| ApiError::Internal(anyhow::anyhow!("a chunk's part")))?;
        writer
            .finish()
            .await
            .map_err(|e| ApiError::Internal(anyhow::Error::from(e).context("storing a chunk")))?;
        let now: Option<(i64, i64)> = sqlx::query_as(
            "UPDATE media_uploads SET received = received + $3, parts = array_append(parts, $4) \
             WHERE video_id = $1 AND received = $2 AND completed_at IS NULL \
             RETURNING received, length",
        )
        .bind(upload.video_id)
        .bind(i64::try_from(offset).unwrap_or(i64::MAX))
        .bind(i64::try_from(bytes).unwrap_or(i64::MAX))
        .bind(part.as_ref())
        .fetch_optional(&db)
        .await?;
        let Some((now_received, length)) = now else {
            // Another request stored this offset first: ours is not part of the upload.
            let _ = media.store.objects().delete(part).await;
            return Err(refusal(
                StatusCode::CONFLICT,
                "UPLOAD_OFFSET_MISMATCH",
                "Upload-Offset: another request has just written at this offset; ask with HEAD and \
                 resume from there",
            ));
        };
        metrics::counter!("media_upload_bytes_total").increment(bytes);
        let offset = now_received as u64;
        if now_received < length {
            return Ok(Appended {
                offset,
                completed: false,
            });
        }
        finish(&media, &db, &shop, upload.video_id).await?;
        Ok(Appended {
            offset,
            completed: true,
        })
    }
}

/// What reading a chunk's body gave: its size, its digest (only the one its client asked to be
/// checked), its first bytes, whether the body ended cleanly, and the part its bytes went to,
/// not yet stored under its name (`None` when the first bytes were refused: nothing was kept).
struct Received {
    bytes: u64,
    digest: Digests,
    head: Vec<u8>,
    complete: bool,
    too_long: bool,
    part: Option<ObjectWriter>,
}

/// The running digest of a chunk: hashing costs more than storing, so only when asked.
enum Digests {
    None,
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Digests {
    /// The digest of the algorithm `checksum` names, if the client sent one.
    fn for_checksum(checksum: Option<&Checksum>) -> Digests {
        match checksum {
            None => Digests::None,
            Some(Checksum::Sha1(_)) => Digests::Sha1(sha1::Sha1::new()),
            Some(Checksum::Sha256(_)) => Digests::Sha256(sha2::Sha256::new()),
        }
    }

    fn update(&mut self, bytes: &[u8]) {
        match self {
            Digests::None => {}
            Digests::Sha1(d) => d.update(bytes),
            Digests::Sha256(d) => d.update(bytes),
        }
    }

    fn finalize(self) -> Vec<u8> {
        match self {
            Digests::None => Vec::new(),
            Digests::Sha1(d) => d.finalize().to_vec(),
            Digests::Sha256(d) => d.finalize().to_vec(),
        }
    }
}

/// Reads the body into `part` as it arrives. With `sniffed` (the file's first chunk) the bytes
/// wait in memory until its first `SNIFF_BYTES` are known: an image or a sound is never stored;
/// the rest of its body is read only to answer as for any other chunk.
async fn receive(
    body: Body,
    part: ObjectWriter,
    remaining: u64,
    digest: Digests,
    sniffed: bool,
) -> anyhow::Result<Received> {
    let mut received = Received {
        bytes: 0,
        digest,
        head: Vec::with_capacity(SNIFF_BYTES),
        complete: true,
        too_long: false,
        part: Some(part),
    };
    let mut waiting: Option<Vec<Bytes>> = sniffed.then(Vec::new);
    let mut stream = body.into_data_stream();
    let stored = async {
        while let Some(chunk) = stream.next().await {
            let Ok(mut chunk) = chunk else {
                received.complete = false;
                break;
            };
            let room = usize::try_from(remaining - received.bytes).unwrap_or(usize::MAX);
            if chunk.len() > room {
                received.too_long = true;
                chunk.truncate(room);
            }
            if received.head.len() < SNIFF_BYTES {
                let want = SNIFF_BYTES - received.head.len();
                received
                    .head
                    .extend_from_slice(&chunk[..chunk.len().min(want)]);
            }
            received.digest.update(&chunk);
            received.bytes += chunk.len() as u64;
            match &mut waiting {
                Some(held) if received.head.len() < SNIFF_BYTES => held.push(chunk),
                Some(held) => {
                    held.push(chunk);
                    let held = std::mem::take(held);
                    waiting = None;
                    pass_sniff(&mut received, held).await?;
                }
                None => {
                    if let Some(part) = &mut received.part {
                        part.write(chunk).await?;
                    }
                }
            }
            if received.too_long {
                break;
            }
        }
        // A first chunk shorter than the sniffed bytes.
        if let Some(held) = waiting {
            pass_sniff(&mut received, held).await?;
        }
        Ok::<_, anyhow::Error>(())
    }
    .await;
    if let Err(e) = stored {
        if let Some(part) = received.part {
            let _ = part.abort().await;
        }
        return Err(e);
    }
    Ok(received)
}

/// The first bytes are known: a file that is clearly no video keeps none of them (its part is
/// dropped before anything was written), anything else goes on to be stored.
async fn pass_sniff(received: &mut Received, held: Vec<Bytes>) -> anyhow::Result<()> {
    if sniff(&received.head).is_some() {
        if let Some(part) = received.part.take() {
            part.abort().await?;
        }
        return Ok(());
    }
    if let Some(part) = &mut received.part {
        for bytes in held {
            part.write(bytes).await?;
        }
    }
    Ok(())
}

/// Why a chunk is not kept: the request is refused, or the whole file is (its first bytes are
/// no video's).
enum ChunkRefused {
    Chunk(ApiError),
    File(Refusal),
}

/// Whether a received chunk is kept: its size when it is, `None` when it is empty.
fn judge_chunk(
    upload: &UploadState,
    offset: u64,
    checksum: Option<Checksum>,
    received: Received,
) -> Result<Option<u64>, ChunkRefused> {
    if received.too_long {
        return Err(ChunkRefused::Chunk(refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            "FILE_TOO_LARGE",
            format!(
                "the body goes past Upload-Length ({} bytes); nothing of it was kept",
                upload.length
            ),
        )));
    }
    if let Some(expected) = checksum {
        if !received.complete {
            // A partial chunk cannot be checked against the whole chunk's checksum.
            return Err(ChunkRefused::Chunk(ApiError::RequestTimeout));
        }
        let matches = match expected {
            Checksum::Sha1(digest) | Checksum::Sha256(digest) => {
                received.digest.finalize() == digest
            }
        };
        if !matches {
            return Err(ChunkRefused::Chunk(refusal(
                CHECKSUM_MISMATCH,
                "CHECKSUM_MISMATCH",
                "Upload-Checksum: the chunk's checksum does not match; nothing of it was kept, \
                 send it again",
            )));
        }
    }
    if received.bytes == 0 {
        return Ok(None);
    }
    if offset == 0 {
        if let Some(refused) = sniff(&received.head) {
            return Err(ChunkRefused::File(refused));
        }
    }
    Ok(Some(received.bytes))
}
