//! Captions: WebVTT files a merchant attaches to a video, one per language, stored beside its
//! other objects under a name of their content and served with them.
//!
//! Most shoppable video plays muted, so captions carry the words. The browser's own WebVTT
//! parser reads the file; the service checks only what makes a file useless or not WebVTT at
//! all (its signature, its timings, UTF-8, its size), and says on which line, so a merchant
//! learns of a broken export when attaching it, not from a silent player. No well-kept crate
//! parses WebVTT; the check is the few rules below.

use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

use super::{jobs, names, Media, Refusal};
use crate::catalog::domain::ShopDomain;
use crate::catalog::videos::{self, StoredCaption, Video};
use crate::error::ApiError;

/// The largest caption file: ten minutes of dense subtitles is under 100 KB.
pub const MAX_CAPTION_BYTES: usize = 512 * 1024;
/// Languages a video may carry captions in.
pub const MAX_CAPTIONS_PER_VIDEO: usize = 20;

/// The language tags `parse_language` takes (any case), as the OpenAPI document states them.
pub const LANGUAGE_PATTERN: &str = "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8}){0,3}$";

/// A BCP 47 language tag as the player's `<track srclang>` takes it: a primary language of 2–3
/// letters, then up to three subtags (`pt-BR`, `zh-Hant-TW`, `es-419`), written in their usual
/// case (language lower, region upper, script title).
pub fn parse_language(raw: &str) -> Result<String, ApiError> {
    let invalid = || {
        ApiError::validation(
            "language",
            format!("{raw:?} is not a language tag: use a code such as en, fr or pt-BR (BCP 47)"),
        )
    };
    let mut parts = raw.split('-');
    let primary = parts.next().unwrap_or_default();
    if !(2..=3).contains(&primary.len()) || !primary.bytes().all(|b| b.is_ascii_alphabetic()) {
        return Err(invalid());
    }
    let mut tag = primary.to_ascii_lowercase();
    for (i, sub) in parts.enumerate() {
        let fits = (2..=8).contains(&sub.len()) && sub.bytes().all(|b| b.is_ascii_alphanumeric());
        if i >= 3 || !fits {
            return Err(invalid());
        }
        tag.push('-');
        match sub.len() {
            2 => tag.push_str(&sub.to_ascii_uppercase()),
            4 => {
                tag.push_str(&sub[..1].to_ascii_uppercase());
                tag.push_str(&sub[1..].to_ascii_lowercase());
            }
            _ => tag.push_str(&sub.to_ascii_lowercase()),
        }
    }
    Ok(tag)
}

/// Checks that `bytes` is a WebVTT file a player can show: UTF-8, the `WEBVTT` signature, and
/// cues whose timings read `start --> end` with the end after the start.
pub fn check_webvtt(bytes: &[u8]) -> Result<(), ApiError> {
    let refuse = |message: String| Err(Refusal::unprocessable("INVALID_CAPTIONS", message).into());
    let Ok(text) = std::str::from_utf8(bytes) else {
        return refuse("the file is not UTF-8 text: save it as UTF-8 WebVTT".into());
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let first = lines.next().unwrap_or_default();
    let signed = first == "WEBVTT" || first.starts_with("WEBVTT ") || first.starts_with("WEBVTT\t");
    if !signed {
        return refuse(
            "the file does not start with WEBVTT: it is not a WebVTT file (an SRT file must be \
             converted first)"
                .into(),
        );
    }
    let mut cues = 0;
    for (i, line) in lines.enumerate() {
        let Some((start, rest)) = line.split_once("-->") else {
            continue;
        };
        let number = i + 2;
        let end = rest.split_whitespace().next().unwrap_or_default();
        match (timestamp(start.trim()), timestamp(end)) {
            (Some(start), Some(end)) if end > start => cues += 1,
            (Some(_), Some(_)) => {
                return refuse(format!(
                    "line {number}: the cue ends before it starts: {line}"
                ))
            }
            _ => {
                return refuse(format!(
                    "line {number}: timings must read like 00:00:01.000 --> 00:00:04.000: {line}"
                ))
            }
        }
    }
    if cues == 0 {
        return refuse("the file has no cues: nothing would be shown".into());
    }
    Ok(())
}

/// `hh:mm:ss.ttt` or `mm:ss.ttt` in milliseconds.
fn timestamp(text: &str) -> Option<u64> {
    let (clock, millis) = text.split_once('.')?;
    let fields: Vec<&str> = clock.split(':').collect();
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    let (hours, minutes, seconds) = match fields.as_slice() {
        [h, m, s] if h.len() >= 2 && h.bytes().all(|b| b.is_ascii_digit()) => (*h, *m, *s),
        [m, s] => ("0", *m, *s),
        _ => return None,
    };
    if !digits(minutes, 2) || !digits(seconds, 2) || !digits(millis, 3) {
        return None;
    }
    let (m, s): (u64, u64) = (minutes.parse().ok()?, seconds.parse().ok()?);
    if m > 59 || s > 59 {
        return None;
    }
    let h: u64 = hours.parse().ok()?;
    Some(((h * 60 + m) * 60 + s) * 1000 + millis.parse::<u64>().ok()?)
}

/// Stores `file` as the video's captions in `language`, replacing any it had in that language.
pub async fn attach(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
    language: &str,
    file: bytes::Bytes,
) -> Result<Video, ApiError> {
    // The video first: nothing is stored for one that does not exist.
    videos::get(db, shop, video).await?;
    let digest = hex::encode(&Sha256::digest(&file)[..8]);
    let prefix = names::caption_prefix(shop, video, language, &digest);
    let name = names::caption(&prefix, language);
    media
        .store
        .put(&name, file)
        .await
        .map_err(|e| ApiError::Internal(e.into()))?;
    let url = media.store.public_url(&name);
    let stored = StoredCaption {
        language: language.to_string(),
        url,
        prefix: prefix.to_string(),
    };
    // If the video went meanwhile, the object is no video's and the sweep removes it.
    change(media, db, shop, video, |captions| {
        let replaced = captions.iter().position(|c| c.language == language);
        let old = replaced.map(|i| captions.remove(i));
        if captions.len() >= MAX_CAPTIONS_PER_VIDEO {
            return Err(ApiError::validation(
                "language",
                format!("a video carries captions in at most {MAX_CAPTIONS_PER_VIDEO} languages"),
            ));
        }
        captions.push(stored);
        captions.sort_by(|a, b| a.language.cmp(&b.language));
        Ok(old.filter(|old| old.prefix != prefix.as_ref()))
    })
    .await
}

/// Removes the video's captions in `language`.
pub async fn detach(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
    language: &str,
) -> Result<Video, ApiError> {
    change(media, db, shop, video, |captions| {
        let i = captions
            .iter()
            .position(|c| c.language == language)
            .ok_or(ApiError::NotFound("caption"))?;
        Ok(Some(captions.remove(i)))
    })
    .await
}

/// Changes a video's captions under its row lock; the caption `edit` drops has its object
/// queued for deletion in the same transaction, and deleted at once where it can be.
async fn change(
    media: &Media,
    db: &PgPool,
    shop: &ShopDomain,
    video: Uuid,
    edit: impl FnOnce(&mut Vec<StoredCaption>) -> Result<Option<StoredCaption>, ApiError>,
) -> Result<Video, ApiError> {
    let (mut tx, _) = crate::catalog::begin_write(db, shop).await?;
    let current: Option<sqlx::types::Json<Vec<StoredCaption>>> = sqlx::query_scalar(
        "SELECT captions FROM videos WHERE shop_domain = $1 AND id = $2 FOR UPDATE",
    )
    .bind(shop.as_str())
    .bind(video)
    .fetch_optional(&mut *tx)
    .await?;
    let mut captions = current.ok_or(ApiError::NotFound("video"))?.0;
    let dropped = edit(&mut captions)?;
    crate::catalog::video_media::set_captions(&mut *tx, shop, video, &captions).await?;
    if let Some(dropped) = &dropped {
        jobs::delete_later(&mut tx, &dropped.prefix).await?;
    }
    let video = videos::get_in(&mut tx, video).await?;
    tx.commit().await?;
    if let Some(dropped) = dropped {
        let prefix = object_store::path::Path::from(dropped.prefix);
        media.delete_now(db, &prefix).await;
    }
    Ok(video)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn language_tags_are_read_in_their_usual_case_and_anything_else_is_refused() {
        let pattern = regex::Regex::new(LANGUAGE_PATTERN).unwrap();
        for (raw, tag) in [
            ("en", "en"),
            ("EN", "en"),
            ("pt-br", "pt-BR"),
            ("zh-hant-tw", "zh-Hant-TW"),
            ("es-419", "es-419"),
        ] {
            assert_eq!(parse_language(raw).unwrap(), tag, "{raw}");
            assert!(
                pattern.is_match(raw),
                "the documented pattern refuses {raw}"
            );
        }
        for raw in [
            "",
            "0",
            "e",
            "english-us",
            "en_US",
            "en-",
            "../x",
            "en-US-x-a-b",
            "fr-é",
        ] {
            assert!(parse_language(raw).is_err(), "{raw}");
            assert!(!pattern.is_match(raw), "the documented pattern takes {raw}");
        }
    }

    fn refusal(bytes: &[u8]) -> String {
        match check_webvtt(bytes) {
            Err(ApiError::Media {
                code: "INVALID_CAPTIONS",
                message,
                ..
            }) => message,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_webvtt_file_is_taken_and_a_broken_one_is_refused_naming_its_line() {
        let good = "\u{feff}WEBVTT - made by hand\r\n\r\nNOTE a note\r\n\r\n1\r\n00:01.000 --> 00:04.000 align:start\r\nHello\r\n\r\n01:00:00.000 --> 01:00:02.500\r\nLater\r\n";
        check_webvtt(good.as_bytes()).unwrap();

        assert!(refusal(b"1\n00:00:01,000 --> 00:00:02,000\nHi\n").contains("WEBVTT"));
        assert!(refusal(b"WEBVTT\n\n00:00:01,000 --> 00:00:02,000\nHi\n").contains("line 3"));
        assert!(refusal(b"WEBVTT\n\n00:00:05.000 --> 00:00:02.000\nHi\n").contains("ends before"));
        assert!(refusal(b"WEBVTT\n\n00:61.000 --> 00:62.000\nHi\n").contains("line 3"));
        assert!(refusal(b"WEBVTT\n\njust text\n").contains("no cues"));
        assert!(refusal(b"WEBVTT\n\n\xff\xfe\n").contains("UTF-8"));
        assert!(refusal(b"WEBVTTX\n\n00:01.000 --> 00:02.000\nHi\n").contains("WEBVTT"));
    }
}
