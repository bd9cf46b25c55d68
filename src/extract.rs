//! Extractors that turn request parts into typed values with our error body, instead of axum's
//! plain-text rejections: [`AppJson`] for bodies, [`AppPath`] for path segments and [`AppQuery`]
//! for query strings, the one way any handler reads a query.

mod known;
mod query;

pub use known::KnownParamsLayer;

use std::borrow::Cow;
use std::error::Error;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::rejection::PathRejection;
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::{header, request::Parts};
use bytes::BytesMut;
use futures::StreamExt;
use serde::de::DeserializeOwned;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use utoipa::openapi::path::ParameterIn;
use utoipa::openapi::schema::{KnownFormat, Schema, SchemaFormat};
use utoipa::openapi::RefOr;
use utoipa::IntoParams;

use crate::error::ApiError;
use crate::serve::BodyReadTimedOut;
use query::QueryError;

/// Admin request bodies are small; anything larger is a mistake or an attack.
pub const MAX_ADMIN_BODY_BYTES: usize = 1024 * 1024;

/// JSON body extractor whose errors name the offending field (via `serde_path_to_error`).
pub struct AppJson<T>(pub T);

impl<S, T> FromRequest<S> for AppJson<T>
where
    S: Send + Sync,
    T: DeserializeOwned,
{
    type Rejection = ApiError;

    async fn from_request(req: Request, _state: &S) -> Result<Self, Self::Rejection> {
        let is_json = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .is_some_and(|mime| mime.trim().eq_ignore_ascii_case("application/json"));
        if !is_json {
            return Err(ApiError::UnsupportedMediaType("application/json"));
        }
        let bytes = read_body(req.into_body(), MAX_ADMIN_BODY_BYTES).await?;
        parse_json(&bytes).map(AppJson)
    }
}

/// A request body of at most `limit` bytes. One whose `Content-Length` (the body's exact size
/// hint, as hyper gives it) is above `limit` is refused before a byte is read or waited for; one
/// that arrives too slowly is [`ApiError::RequestTimeout`].
pub async fn read_body(body: Body, limit: usize) -> Result<Bytes, ApiError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(ApiError::PayloadTooLarge(limit));
    }
    axum::body::to_bytes(body, limit)
        .await
        .map_err(|e| read_error(&e, limit))
}

fn read_error(e: &axum::Error, limit: usize) -> ApiError {
    let mut causes = std::iter::successors(Some(e as &dyn Error), |&e| e.source());
    match causes.any(|cause| cause.is::<BodyReadTimedOut>()) {
        true => ApiError::RequestTimeout,
        false => ApiError::PayloadTooLarge(limit),
    }
}

/// How many bytes of request bodies the process holds at once for a kind of request whose
/// sender is known only once its body is read (a webhook's HMAC is of its body): without it,
/// every open connection could hold a whole body in memory. Shared by clones.
#[derive(Clone)]
pub struct BodyBudget {
    kib: Arc<Semaphore>,
}

/// Asked to come back after this long when the budget is spent: bodies are held at most the body
/// read timeout, and most for far less.
const BUDGET_RETRY: Duration = Duration::from_secs(5);

impl BodyBudget {
    /// A budget of `bytes`, counted in whole KiB (a semaphore's permits), at least one.
    pub fn new(bytes: u64) -> BodyBudget {
        let kib = usize::try_from(bytes / 1024)
            .unwrap_or(usize::MAX)
            .clamp(1, Semaphore::MAX_PERMITS);
        BodyBudget {
            kib: Arc::new(Semaphore::new(kib)),
        }
    }

    /// Bytes not held by a body now.
    pub fn available_bytes(&self) -> u64 {
        self.kib.available_permits() as u64 * 1024
    }
}

/// The part of a [`BodyBudget`] one body holds; given back when dropped.
pub struct Reserved {
    budget: Arc<Semaphore>,
    held: Option<OwnedSemaphorePermit>,
}

impl Reserved {
    /// Holds enough of the budget for `bytes` in all, or answers 503 at once: a request never
    /// waits for the budget, which would only keep its connection (and its sender) waiting.
    fn grow_to(&mut self, bytes: usize) -> Result<(), ApiError> {
        let needed = bytes.div_ceil(1024);
        let held = self
            .held
            .as_ref()
            .map_or(0, OwnedSemaphorePermit::num_permits);
        let Some(more) = needed.checked_sub(held).filter(|more| *more > 0) else {
            return Ok(());
        };
        let more = u32::try_from(more).map_err(|_| ApiError::Busy(BUDGET_RETRY))?;
        let permit = self
            .budget
            .clone()
            .try_acquire_many_owned(more)
            .map_err(|_| ApiError::Busy(BUDGET_RETRY))?;
        match &mut self.held {
            Some(held) => held.merge(permit),
            None => self.held = Some(permit),
        }
        Ok(())
    }
}

/// A body read within a [`BodyBudget`], and the budget it holds until it is dropped.
pub struct BudgetedBody {
    pub bytes: Bytes,
    _reserved: Reserved,
}

/// Like [`read_body`], but holding `budget` for the body's bytes while it is read and until the
/// [`BudgetedBody`] is dropped: all of its `Content-Length` before the first byte is read, or, a
/// body sent without one, each chunk's bytes before the chunk is kept. Past the budget the answer
/// is [`ApiError::Busy`] (503), at once.
pub async fn read_body_within(
    body: Body,
    limit: usize,
    budget: &BodyBudget,
) -> Result<BudgetedBody, ApiError> {
    let hint = body.size_hint();
    if hint.lower() > limit as u64 {
        return Err(ApiError::PayloadTooLarge(limit));
    }
    let mut reserved = Reserved {
        budget: budget.kib.clone(),
        held: None,
    };
    let announced = usize::try_from(hint.exact().unwrap_or(0)).unwrap_or(limit);
    reserved.grow_to(announced)?;
    let mut bytes = BytesMut::with_capacity(announced);
    let mut chunks = body.into_data_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|e| read_error(&e, limit))?;
        let total = bytes.len() + chunk.len();
        if total > limit {
            return Err(ApiError::PayloadTooLarge(limit));
        }
        reserved.grow_to(total)?;
        bytes.extend_from_slice(&chunk);
    }
    Ok(BudgetedBody {
        bytes: bytes.freeze(),
        _reserved: reserved,
    })
}

/// Deserializes `bytes`, reporting where in the document a value was wrong.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, ApiError> {
    // Every body the service takes is an object; serde would also read a struct from an array
    // (`[null, null]` as a struct of two optional fields).
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let json = || serde_json::from_slice::<serde::de::IgnoredAny>(bytes).is_ok();
    if first.is_some_and(|b| *b != b'{') && json() {
        return Err(ApiError::validation(
            "body".to_string(),
            "must be a JSON object".to_string(),
        ));
    }
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        if !inner.is_data() {
            // Syntax errors and truncated documents: there is no field to name.
            return ApiError::InvalidBody(format!("invalid JSON body: {inner}"));
        }
        let field = if path == "." {
            "body".to_string()
        } else {
            path
        };
        ApiError::validation(field, strip_position(&inner.to_string()))
    })?;
    de.end()
        .map_err(|e| ApiError::InvalidBody(format!("invalid JSON body: {e}")))?;
    Ok(value)
}

/// serde_json appends " at line 1 column 17"; with the field path in front that is noise.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}

/// Path parameters with our error body: a malformed path is reported like any other bad input.
#[derive(FromRequestParts)]
#[from_request(via(axum::extract::Path), rejection(ApiError))]
pub struct AppPath<T>(pub T);

impl From<PathRejection> for ApiError {
    fn from(rejection: PathRejection) -> Self {
        ApiError::validation("path", rejection.body_text())
    }
}

/// The query string as a typed struct, `T`, whose `IntoParams` derive documents the same
/// parameters in the OpenAPI document.
///
/// The query is decoded as `application/x-www-form-urlencoded`. Values are trimmed, and a value
/// that is then empty counts as absent. A parameter `T` reads that is given more than once is
/// refused (there is no list form by repetition; lists are comma-separated values); parameters
/// the route does not document never get here ([`KnownParamsLayer`] refuses them), and those
/// another extractor of the same handler reads are left to it. Errors name the parameter:
///
/// - a required one that is absent: `MISSING_PARAMETER`;
/// - one given more than once, or whose value does not parse: `INVALID_PARAMETER`;
/// - one documented as a date (`format: date`) whose value is not one: `INVALID_DATE`.
pub struct AppQuery<T>(pub T);

impl<S, T> FromRequestParts<S> for AppQuery<T>
where
    S: Send + Sync,
    T: DeserializeOwned + IntoParams,
{
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        QueryPairs::decode(parts.uri.query().unwrap_or(""))
            .read()
            .map(AppQuery)
    }
}

/// A decoded query parameter, borrowed from the raw query unless decoding changed it.
pub type RawPair<'q> = (Cow<'q, str>, Cow<'q, str>);

/// A query's pairs, as they are (untrimmed, empty values kept), decoded exactly as
/// `form_urlencoded::parse` decodes them but borrowed from the raw query wherever a pair needs no
/// decoding.
///
/// `form_urlencoded` runs every pair through its percent decoder and a lossy UTF-8 pass even when
/// there is nothing to decode, and of an app-proxy query only `path_prefix` is escaped: its pass
/// over the query cost about 5 k instructions, 7.6% of the 66 k an acknowledged event costs under
/// callgrind (BENCHMARKS.md, Decisions).
pub fn decode_pairs(raw_query: &str) -> Vec<RawPair<'_>> {
    raw_query
        .split('&')
        .filter(|piece| !piece.is_empty())
        .map(decode_pair)
        .collect()
}

/// One non-empty piece of a query (no `&` in it), decoded as one pair.
pub(crate) fn decode_pair(piece: &str) -> RawPair<'_> {
    match memchr::memchr2(b'%', b'+', piece.as_bytes()) {
        Some(_) => url::form_urlencoded::parse(piece.as_bytes())
            .next()
            .unwrap_or_default(),
        None => {
            let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
            (Cow::Borrowed(key), Cow::Borrowed(value))
        }
    }
}

/// A query's decoded pairs as [`AppQuery`] reads them (trimmed, the empty ones dropped), for
/// extractors that read more than one struct from one query.
pub struct QueryPairs<'q>(Vec<(Cow<'q, str>, Cow<'q, str>)>);

impl<'q> QueryPairs<'q> {
    pub fn decode(raw_query: &'q str) -> QueryPairs<'q> {
        QueryPairs::from_raw(decode_pairs(raw_query))
    }

    /// From pairs [`decode_pairs`] gave (for a caller that read them as they are first).
    pub fn from_raw(pairs: Vec<RawPair<'q>>) -> QueryPairs<'q> {
        let pairs = pairs
            .into_iter()
            .map(|(key, value)| (key, trimmed(value)))
            .filter(|(_, value)| !value.is_empty())
            .collect();
        QueryPairs(pairs)
    }

    /// The pairs as `T`, or the answer to give when they are not one.
    pub fn read<T: DeserializeOwned + IntoParams>(&self) -> Result<T, ApiError> {
        let pairs = self.0.iter().map(|(key, value)| (&**key, &**value));
        query::deserialize(pairs).map_err(|e| {
            // A bad value's parameter is where it was found; serde names the others itself.
            let at = e.path().to_string();
            match e.into_inner() {
                QueryError::Missing(name) => ApiError::MissingParameter(name.to_string()),
                QueryError::Repeated(name) => ApiError::invalid(name, "given more than once"),
                QueryError::Invalid(_) if documented_as_date::<T>(&at) => ApiError::InvalidDate(at),
                QueryError::Invalid(message) => ApiError::invalid(at, message),
            }
        })
    }
}

fn trimmed(value: Cow<'_, str>) -> Cow<'_, str> {
    match value {
        Cow::Borrowed(text) => Cow::Borrowed(text.trim()),
        Cow::Owned(text) if text.trim().len() == text.len() => Cow::Owned(text),
        Cow::Owned(text) => Cow::Owned(text.trim().to_string()),
    }
}

/// Whether `T` documents parameter `name` as a date. Dates have their own error code, and the
/// documentation is where the struct says what a parameter is. (Only asked on the error path.)
fn documented_as_date<T: IntoParams>(name: &str) -> bool {
    T::into_params(|| Some(ParameterIn::Query))
        .into_iter()
        .filter(|parameter| parameter.name == name)
        .any(|parameter| match parameter.schema {
            Some(RefOr::T(Schema::Object(object))) => {
                object.format == Some(SchemaFormat::KnownFormat(KnownFormat::Date))
            }
            _ => false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Body {
        name: String,
        inner: Inner,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        priority: i32,
    }

    /// A body sent without a length, in `chunks`.
    fn chunked(chunks: &[&'static [u8]]) -> axum::body::Body {
        let chunks: Vec<Result<Bytes, std::io::Error>> =
            chunks.iter().map(|c| Ok(Bytes::from_static(c))).collect();
        axum::body::Body::from_stream(futures::stream::iter(chunks))
    }

    #[tokio::test]
    async fn a_body_holds_its_bytes_of_the_budget_until_it_is_dropped() {
        let budget = BodyBudget::new(4 * 1024);
        // With a length: all of it from the start.
        let first = read_body_within(axum::body::Body::from(vec![b'a'; 3000]), 8192, &budget)
            .await
            .unwrap();
        assert_eq!(first.bytes.len(), 3000);
        assert_eq!(budget.available_bytes(), 1024);
        // Without one: chunk by chunk, refused at the chunk past the budget.
        let refused = read_body_within(chunked(&[&[b'b'; 1000], &[b'b'; 100]]), 8192, &budget)
            .await
            .err()
            .unwrap();
        assert!(matches!(refused, ApiError::Busy(_)), "{refused:?}");
        assert_eq!(
            budget.available_bytes(),
            1024,
            "a refused body holds nothing"
        );
        drop(first);
        let second = read_body_within(chunked(&[&[b'c'; 2000], &[b'c'; 2000]]), 8192, &budget)
            .await
            .unwrap();
        assert_eq!(second.bytes.len(), 4000);
        assert_eq!(budget.available_bytes(), 0);
        drop(second);
        assert_eq!(budget.available_bytes(), 4096);
    }

    #[tokio::test]
    async fn a_body_over_the_limit_is_too_large_before_the_budget_is_asked() {
        let budget = BodyBudget::new(1024);
        let announced =
            read_body_within(axum::body::Body::from(vec![0; 2000]), 1500, &budget).await;
        assert!(matches!(announced, Err(ApiError::PayloadTooLarge(1500))));
        let streamed = read_body_within(chunked(&[&[0; 1000], &[0; 1000]]), 1500, &budget).await;
        assert!(matches!(streamed, Err(ApiError::PayloadTooLarge(1500))));
        assert_eq!(budget.available_bytes(), 1024);
    }

    #[test]
    fn a_wrong_type_names_the_nested_field() {
        let err = parse_json::<Body>(br#"{"name":"x","inner":{"priority":"high"}}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "inner.priority: invalid type: string \"high\", expected i32"
        );
    }

    #[test]
    fn malformed_json_is_an_invalid_body() {
        let err = parse_json::<Body>(b" [null, null]").unwrap_err();
        assert_eq!(
            err.to_string(),
            ApiError::validation("body".to_string(), "must be a JSON object".to_string())
                .to_string()
        );
        let err = parse_json::<Body>(b"{not json").unwrap_err();
        assert!(matches!(err, ApiError::InvalidBody(_)), "{err:?}");
    }

    #[test]
    fn trailing_garbage_is_rejected() {
        let err = parse_json::<Inner>(br#"{"priority":1} x"#).unwrap_err();
        assert!(matches!(err, ApiError::InvalidBody(_)), "{err:?}");
    }

    #[derive(Debug, PartialEq, Eq, Deserialize, utoipa::ToSchema)]
    #[serde(rename_all = "snake_case")]
    enum Colour {
        Red,
        DarkBlue,
    }

    #[derive(Debug, Deserialize, IntoParams)]
    #[into_params(parameter_in = Query)]
    struct Search {
        name: String,
        #[serde(rename = "type")]
        #[param(inline)]
        kind: Option<Colour>,
        page: Option<u32>,
        offset: Option<i64>,
        day: Option<chrono::NaiveDate>,
    }

    proptest::proptest! {
        /// The borrowing decoder gives exactly what `form_urlencoded` gives, for any query.
        #[test]
        fn pairs_decode_as_form_urlencoded_decodes_them(query in "([a-z%+=&é ]|%[0-9A-Fa-f]{2}|\\PC){0,24}") {
            let expected: Vec<RawPair> = url::form_urlencoded::parse(query.as_bytes()).collect();
            proptest::prop_assert_eq!(decode_pairs(&query), expected);
        }
    }

    fn read(query: &str) -> Result<Search, ApiError> {
        QueryPairs::decode(query).read()
    }

    fn message(error: ApiError) -> (&'static str, String) {
        let code = match error {
            ApiError::MissingParameter(_) => "MISSING_PARAMETER",
            ApiError::InvalidParameter { .. } => "INVALID_PARAMETER",
            ApiError::InvalidDate(_) => "INVALID_DATE",
            ref other => panic!("unexpected {other:?}"),
        };
        (code, error.to_string())
    }

    #[test]
    fn a_query_reads_into_typed_fields() {
        let search =
            read("name=%20a+b%20&type=dark_blue&page=3&offset=-2&day=2026-10-22&x=1&x=2").unwrap();
        assert_eq!(search.name, "a b");
        assert_eq!(search.kind, Some(Colour::DarkBlue));
        assert_eq!(search.page, Some(3));
        assert_eq!(search.offset, Some(-2));
        assert_eq!(search.day, chrono::NaiveDate::from_ymd_opt(2026, 10, 22));
    }

    #[test]
    fn empty_and_blank_values_count_as_absent() {
        let search = read("name=n&type=&page=+&offset=%20%20&day").unwrap();
        assert_eq!(search.kind, None);
        assert_eq!(search.page, None);
        assert_eq!(search.offset, None);
        assert_eq!(search.day, None);
        // One empty and one real value: the real one, not a repeat.
        assert_eq!(read("name=&name=n&page=&page=2").unwrap().page, Some(2));
        assert_eq!(
            message(read("name=+&page=1").unwrap_err()),
            (
                "MISSING_PARAMETER",
                "Missing required parameter: name".into()
            )
        );
    }

    #[test]
    fn a_parameter_given_twice_is_refused_by_name() {
        for (query, name) in [
            ("name=a&name=b", "name"),
            ("name=a&type=red&type=red", "type"),
            ("page=1&name=a&page=2", "page"),
        ] {
            assert_eq!(
                message(read(query).unwrap_err()),
                (
                    "INVALID_PARAMETER",
                    format!("Invalid parameter {name}: given more than once")
                ),
                "{query}"
            );
        }
    }

    #[test]
    fn a_value_of_the_wrong_type_is_refused_naming_the_parameter() {
        for (query, expected) in [
            (
                "name=a&page=ten",
                "Invalid parameter page: must be a non-negative integer, got 'ten'",
            ),
            (
                "name=a&offset=1.5",
                "Invalid parameter offset: must be an integer, got '1.5'",
            ),
            (
                "name=a&type=Red",
                "Invalid parameter type: must be one of red, dark_blue, got 'Red'",
            ),
        ] {
            assert_eq!(
                message(read(query).unwrap_err()),
                ("INVALID_PARAMETER", expected.to_string()),
                "{query}"
            );
        }
        // Documented as a date: its own code.
        assert_eq!(
            message(read("name=a&day=22.10.2026").unwrap_err()).0,
            "INVALID_DATE"
        );
    }
}
