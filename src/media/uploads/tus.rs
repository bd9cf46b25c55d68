//! The tus 1.0 protocol's side of an upload: the headers it speaks (`Tus-Resumable`,
//! `Upload-Length`, `Upload-Offset`, `Upload-Metadata`, `Upload-Checksum`, `Upload-Expires`),
//! read into what the upload needs and refused with the code a client can act on.

use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use base64::Engine;
use chrono::{DateTime, Utc};

use super::refusal;
use crate::catalog::TITLE_CHARS;
use crate::error::ApiError;

pub const TUS_VERSION: &str = "1.0.0";
pub const TUS_EXTENSIONS: &str = "creation,creation-with-upload,expiration,termination,checksum";
pub const TUS_CHECKSUMS: &str = "sha1,sha256";
pub const OFFSET_OCTET_STREAM: &str = "application/offset+octet-stream";

pub static TUS_RESUMABLE: HeaderName = HeaderName::from_static("tus-resumable");
pub static UPLOAD_LENGTH: HeaderName = HeaderName::from_static("upload-length");
pub static UPLOAD_OFFSET: HeaderName = HeaderName::from_static("upload-offset");
pub static UPLOAD_METADATA: HeaderName = HeaderName::from_static("upload-metadata");
pub static UPLOAD_EXPIRES: HeaderName = HeaderName::from_static("upload-expires");
pub static UPLOAD_CHECKSUM: HeaderName = HeaderName::from_static("upload-checksum");
pub static UPLOAD_DEFER_LENGTH: HeaderName = HeaderName::from_static("upload-defer-length");

/// 460, the tus checksum extension's answer to a chunk whose checksum does not match.
pub const CHECKSUM_MISMATCH: StatusCode = match StatusCode::from_u16(460) {
    Ok(status) => status,
    Err(_) => StatusCode::BAD_REQUEST,
};

/// What `Upload-Metadata` carries that we use.
#[derive(Debug, Default, PartialEq)]
pub struct Metadata {
    pub title: Option<String>,
    pub filename: Option<String>,
}

/// Refuses a request that does not speak tus 1.0.0: another version is answered 412 with the
/// version we speak (as tus says), a missing or empty header 400.
pub fn require_tus(headers: &HeaderMap) -> Result<(), ApiError> {
    match headers.get(&TUS_RESUMABLE).map(HeaderValue::as_bytes) {
        Some(b"1.0.0") => Ok(()),
        Some(version) if !version.trim_ascii().is_empty() => Err(refusal(
            StatusCode::PRECONDITION_FAILED,
            "TUS_VERSION_UNSUPPORTED",
            "Tus-Resumable: only version 1.0.0 is supported",
        )),
        _ => Err(bad_header(
            "INVALID_HEADER",
            "Tus-Resumable: required, with the value 1.0.0",
        )),
    }
}

/// The value of `Tus-Resumable`, for the document.
#[derive(utoipa::ToSchema)]
pub enum TusResumable {
    #[schema(rename = "1.0.0")]
    V1,
}

fn bad_header(code: &'static str, message: impl Into<String>) -> ApiError {
    refusal(StatusCode::BAD_REQUEST, code, message)
}

/// A non-negative integer header (`Upload-Length`, `Upload-Offset`).
pub fn integer_header(headers: &HeaderMap, name: &HeaderName) -> Result<Option<u64>, ApiError> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    let parsed = value
        .to_str()
        .ok()
        .filter(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit()))
        .and_then(|v| v.parse::<u64>().ok())
        .filter(|v| i64::try_from(*v).is_ok());
    match parsed {
        Some(n) => Ok(Some(n)),
        None => Err(bad_header(
            "INVALID_HEADER",
            format!("{}: must be a whole number of bytes", display_name(name)),
        )),
    }
}

/// A tus header's name as the protocol writes it (`HeaderName`s are lowercase).
fn display_name(name: &HeaderName) -> String {
    name.as_str()
        .split('-')
        .map(|word| {
            let mut chars = word.chars();
            chars
                .next()
                .map(|first| first.to_uppercase().chain(chars).collect())
                .unwrap_or_default()
        })
        .collect::<Vec<String>>()
        .join("-")
}

/// `Upload-Metadata`: comma-separated `key base64-value` pairs (a key alone has no value).
pub fn parse_metadata(raw: &str) -> Result<Metadata, ApiError> {
    let invalid = |why: String| bad_header("INVALID_HEADER", format!("Upload-Metadata: {why}"));
    let mut metadata = Metadata::default();
    let mut seen = std::collections::HashSet::new();
    for pair in raw.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let mut parts = pair.split(' ');
        let key = parts.next().unwrap_or_default();
        let value = parts.next();
        if parts.next().is_some() {
            return Err(invalid(format!("'{key}' has more than one value")));
        }
        if !seen.insert(key.to_string()) {
            return Err(invalid(format!("'{key}' is given twice")));
        }
        let decoded = match value {
            None => String::new(),
            Some(v) => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(v)
                    .map_err(|_| invalid(format!("the value of '{key}' is not base64")))?;
                String::from_utf8(bytes)
                    .map_err(|_| invalid(format!("the value of '{key}' is not UTF-8 text")))?
            }
        };
        match key {
            "title" | "name" if metadata.title.is_none() || key == "title" => {
                metadata.title = Some(decoded)
            }
            "filename" => metadata.filename = Some(decoded),
            // Other keys (a client's `filetype`, …) are the client's own.
            _ => {}
        }
    }
    Ok(metadata)
}

/// The video's title: the metadata's `title`, or the file's name without its extension.
pub(super) fn title_of(metadata: &Metadata) -> Result<String, ApiError> {
    let from_file = metadata.filename.as_deref().map(|name| {
        let name = name.rsplit(['/', '\\']).next().unwrap_or(name);
        name.rsplit_once('.')
            .map_or(name, |(stem, _)| stem)
            .to_string()
    });
    let title = metadata
        .title
        .clone()
        .or(from_file)
        .map(|t| {
            t.trim()
                .chars()
                .filter(|c| !c.is_control())
                .collect::<String>()
        })
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| "Untitled video".to_string());
    if title.chars().count() > TITLE_CHARS {
        return Err(ApiError::validation(
            "title",
            format!("at most {TITLE_CHARS} characters"),
        ));
    }
    Ok(title)
}

/// A checksum the client sent with a chunk (`Upload-Checksum: sha1 <base64>`).
pub enum Checksum {
    Sha1(Vec<u8>),
    Sha256(Vec<u8>),
}

pub fn parse_checksum(headers: &HeaderMap) -> Result<Option<Checksum>, ApiError> {
    let Some(value) = headers.get(&UPLOAD_CHECKSUM) else {
        return Ok(None);
    };
    let invalid = |why: &str| bad_header("INVALID_HEADER", format!("Upload-Checksum: {why}"));
    let value = value.to_str().map_err(|_| invalid("not text"))?;
    let (algorithm, digest) = value
        .trim()
        .split_once(' ')
        .ok_or_else(|| invalid("use '<algorithm> <base64 digest>'"))?;
    let digest = base64::engine::general_purpose::STANDARD
        .decode(digest.trim())
        .map_err(|_| invalid("the digest is not base64"))?;
    match algorithm {
        "sha1" => Ok(Some(Checksum::Sha1(digest))),
        "sha256" => Ok(Some(Checksum::Sha256(digest))),
        other => Err(bad_header(
            "CHECKSUM_ALGORITHM_UNSUPPORTED",
            format!("Upload-Checksum: '{other}' is not one of {TUS_CHECKSUMS}"),
        )),
    }
}

/// The answer's `Upload-Expires`, in the HTTP date format tus asks for.
pub fn http_date(at: DateTime<Utc>) -> String {
    at.format("%a, %d %b %Y %H:%M:%S GMT").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b64(s: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(s)
    }

    #[test]
    fn metadata_gives_the_title_and_the_file_name() {
        let raw = format!(
            "filename {},title {},filetype {}",
            b64("clip.mov"),
            b64("Red dress"),
            b64("video/quicktime")
        );
        let metadata = parse_metadata(&raw).unwrap();
        assert_eq!(metadata.title.as_deref(), Some("Red dress"));
        assert_eq!(metadata.filename.as_deref(), Some("clip.mov"));
        assert_eq!(title_of(&metadata).unwrap(), "Red dress");
        let only_file =
            parse_metadata(&format!("filename {}", b64("summer/IMG_0042.MOV"))).unwrap();
        assert_eq!(title_of(&only_file).unwrap(), "IMG_0042");
        assert_eq!(title_of(&Metadata::default()).unwrap(), "Untitled video");
    }

    #[test]
    fn malformed_metadata_is_refused_naming_the_key() {
        for (raw, says) in [
            ("title !!!", "'title' is not base64"),
            ("title a b", "more than one value"),
            ("title YQ==,title YQ==", "given twice"),
        ] {
            let message = parse_metadata(raw).unwrap_err().to_string();
            assert!(message.contains(says), "{raw}: {message}");
        }
    }

    #[test]
    fn offsets_and_lengths_are_whole_numbers() {
        let mut headers = HeaderMap::new();
        headers.insert(&UPLOAD_OFFSET, HeaderValue::from_static("12"));
        assert_eq!(integer_header(&headers, &UPLOAD_OFFSET).unwrap(), Some(12));
        for bad in ["-1", "1.5", "", "99999999999999999999", " 3"] {
            headers.insert(&UPLOAD_OFFSET, HeaderValue::from_str(bad).unwrap());
            assert!(integer_header(&headers, &UPLOAD_OFFSET).is_err(), "{bad}");
        }
    }
}
