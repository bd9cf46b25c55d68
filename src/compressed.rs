//! Answers compressed once and served many times: a [`Page`] holds a rendered body and makes its
//! br and gzip forms the first time a request accepts them; each request gets the best coding
//! its `Accept-Encoding` allows. The storefront's widget answers and the dashboard's bundles are
//! served this way.

use std::io::Write;

use axum::body::Body;
use axum::http::header::{ACCEPT_ENCODING, CONTENT_ENCODING, CONTENT_TYPE, VARY};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::Response;
use bytes::Bytes;
use tokio::sync::OnceCell;

/// A content coding of an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    Brotli,
    Gzip,
    Identity,
}

impl Encoding {
    /// The best coding `Accept-Encoding` allows (RFC 9110 §12.5.3): br, then gzip, else none.
    /// A coding is acceptable when it, or `*`, is listed with a q-value above zero.
    pub fn negotiate(request_headers: &HeaderMap) -> Encoding {
        let mut brotli = None;
        let mut gzip = None;
        let mut any = None;
        let listed = request_headers
            .get_all(ACCEPT_ENCODING)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .flat_map(|v| v.split(','));
        for item in listed {
            let mut parts = item.split(';');
            let coding = parts.next().unwrap_or("").trim();
            let q = parts
                .filter_map(|p| p.trim().strip_prefix("q="))
                .map(|q| q.trim().parse::<f32>().unwrap_or(0.0))
                .next()
                .unwrap_or(1.0);
            let acceptable = q > 0.0;
            if coding.eq_ignore_ascii_case("br") {
                brotli = Some(acceptable);
            } else if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip") {
                gzip = Some(acceptable);
            } else if coding == "*" {
                any = Some(acceptable);
            }
        }
        if brotli.or(any) == Some(true) {
            Encoding::Brotli
        } else if gzip.or(any) == Some(true) {
            Encoding::Gzip
        } else {
            Encoding::Identity
        }
    }

    fn header(self) -> Option<&'static str> {
        match self {
            Encoding::Brotli => Some("br"),
            Encoding::Gzip => Some("gzip"),
            Encoding::Identity => None,
        }
    }
}

/// Answers smaller than this are sent as they are: compressing them saves less than it costs.
const MIN_COMPRESSED_BYTES: usize = 1024;
/// Each page is compressed once, so the strong settings pay: a 20-widget page of 276 KB
/// compresses in milliseconds (BENCHMARKS.md, Storefront).
const GZIP_LEVEL: u32 = 6;
const BROTLI_QUALITY: u32 = 5;
const BROTLI_WINDOW_BITS: u32 = 22;

/// One rendered answer, and its compressed forms, each made when first asked for.
pub struct Page {
    identity: Bytes,
    gzip: OnceCell<Bytes>,
    brotli: OnceCell<Bytes>,
}

impl Page {
    pub fn new(identity: Bytes) -> Page {
        Page {
            identity,
            gzip: OnceCell::new(),
            brotli: OnceCell::new(),
        }
    }

    /// The uncompressed body's length in bytes.
    pub fn len(&self) -> usize {
        self.identity.len()
    }

    pub fn is_empty(&self) -> bool {
        self.identity.is_empty()
    }

    /// 200 with the body of `content_type` in the best coding `request_headers` accept, named
    /// by `Content-Encoding`, and `Vary: accept-encoding` so that shared caches keep the codings
    /// apart.
    pub async fn response(
        &self,
        request_headers: &HeaderMap,
        content_type: &'static str,
    ) -> Response {
        let (body, encoding) = self.encoded(Encoding::negotiate(request_headers)).await;
        let mut response = Response::new(Body::from(body));
        let headers = response.headers_mut();
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
        if let Some(coding) = encoding.header() {
            headers.insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
        }
        response
    }

    /// The body in `wanted`, or as it is when it is too small to compress.
    pub async fn encoded(&self, wanted: Encoding) -> (Bytes, Encoding) {
        if self.identity.len() < MIN_COMPRESSED_BYTES {
            return (self.identity.clone(), Encoding::Identity);
        }
        let cell = match wanted {
            Encoding::Identity => return (self.identity.clone(), Encoding::Identity),
            Encoding::Gzip => &self.gzip,
            Encoding::Brotli => &self.brotli,
        };
        let body = cell
            .get_or_init(|| async { compress(&self.identity, wanted) })
            .await;
        (body.clone(), wanted)
    }
}

fn compress(data: &[u8], encoding: Encoding) -> Bytes {
    let mut out = Vec::with_capacity(data.len() / 4);
    let written = match encoding {
        Encoding::Identity => return Bytes::copy_from_slice(data),
        Encoding::Gzip => {
            let mut encoder =
                flate2::write::GzEncoder::new(&mut out, flate2::Compression::new(GZIP_LEVEL));
            encoder
                .write_all(data)
                .and_then(|()| encoder.finish().map(drop))
        }
        Encoding::Brotli => {
            let mut encoder = brotli::CompressorWriter::new(
                &mut out,
                64 * 1024,
                BROTLI_QUALITY,
                BROTLI_WINDOW_BITS,
            );
            encoder.write_all(data).and_then(|()| encoder.flush())
        }
    };
    // Writing into memory does not fail.
    written.expect("compressing into a Vec");
    Bytes::from(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A page is compressed once per coding; every later request shares those bytes.
    #[tokio::test]
    async fn a_page_is_compressed_once_per_coding() {
        let json = format!("[{}]", vec!["{\"title\":\"a video\"}"; 200].join(","));
        let page = Page::new(Bytes::from(json.clone()));
        for wanted in [Encoding::Gzip, Encoding::Brotli] {
            let (first, coding) = page.encoded(wanted).await;
            let (again, _) = page.encoded(wanted).await;
            assert_eq!(coding, wanted);
            assert_eq!(
                first.as_ptr(),
                again.as_ptr(),
                "{wanted:?} compressed twice"
            );
            assert!(
                first.len() * 10 < json.len(),
                "{wanted:?}: {} bytes",
                first.len()
            );
        }
        let (plain, coding) = page.encoded(Encoding::Identity).await;
        assert_eq!((&plain[..], coding), (json.as_bytes(), Encoding::Identity));

        let small = Page::new(Bytes::from_static(b"{\"widgets\":[]}"));
        assert_eq!(small.encoded(Encoding::Brotli).await.1, Encoding::Identity);
    }
}
