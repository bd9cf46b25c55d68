//! What the video and widget endpoints share: the catalog objects they report on, one object's
//! record, and the catalog's ids and errors as the API answers them.

use std::future::Future;

use chrono::{DateTime, Utc};
use serde::Serialize;
use uuid::Uuid;

use super::breakdown::{self, BreakdownQuery, Dimensions, ValueEntry};
use super::params::{CompareQuery, RangeQuery};
use super::window::{optionally, Meta, Window};
use crate::analytics::auth::{postgres_available, Caller};
use crate::analytics::dimensions::Filters;
use crate::analytics::export::CsvRow;
use crate::analytics::list_cache::{ListCache, ListCaches};
use crate::analytics::queries::{self, Series, Subject, Totals};
use crate::app::AppState;
use crate::catalog::CatalogError;
use crate::db;
use crate::error::ApiError;

/// A catalog object the analytics API reports on: a video or a widget.
pub(super) trait Analysed: Clone + Send + Sync + 'static {
    const SUBJECT: Subject;
    /// What its CSV file is called, before the range.
    const LIST_NAME: &'static str;
    type Record: Serialize + CsvRow + Send + 'static;
    /// Id, title and creation time: what listings sort by.
    fn sort_fields(&self) -> (Uuid, &str, DateTime<Utc>);
    fn record(&self, totals: Totals, comparison: Option<Totals>) -> Self::Record;
    /// Where its sorted listings are kept.
    fn lists(caches: &ListCaches) -> &ListCache<Self>;
}

/// What one object's endpoint answers: its record, or with `breakdown` one entry per value.
pub(super) enum OneAnswer<R> {
    Record(R),
    Breakdown(Vec<ValueEntry>),
}

/// What one object's endpoint is asked beyond its id.
pub(super) struct OneQuery {
    pub range: RangeQuery,
    pub compare: CompareQuery,
    pub filters: Filters,
    pub breakdown: BreakdownQuery,
}

/// One of the caller's objects, read by `get` with the id in the path, with its totals in the
/// range (of the events the filters keep, broken down when asked). An id that is not a UUID
/// names no object.
pub(super) async fn one_record<T: Analysed, F>(
    state: &AppState,
    caller: &Caller,
    raw_id: &str,
    query: OneQuery,
    get: impl FnOnce(Uuid) -> F,
) -> Result<(OneAnswer<T::Record>, Meta), ApiError>
where
    F: Future<Output = Result<T, CatalogError>>,
{
    let id = catalog_id(raw_id)?;
    postgres_available(state)?;
    let item = get(id).await.map_err(catalog_error)?;
    let window = Window::resolve(state, caller, &query.range, &query.compare).await?;
    let id = item.sort_fields().0.to_string();
    let dimensions = Dimensions {
        filters: &query.filters,
        breakdown: &query.breakdown,
    };
    let (current, comparison) = if dimensions.are_none() {
        let shop = &caller.shop;
        let totals = |range| queries::totals_of(&state.warehouse, T::SUBJECT, shop, range, &id);
        let (current, comparison) = tokio::join!(
            totals(&window.range),
            optionally(window.comparison_range(), totals)
        );
        (current?, comparison?)
    } else {
        let series = match T::SUBJECT {
            Subject::Video => Series::Video(id),
            Subject::Widget => Series::Widget(id),
        };
        match breakdown::totals(state, &caller.shop, &series, &window, &dimensions).await? {
            Ok(totals) => totals,
            Err(broken) => return Ok((OneAnswer::Breakdown(broken.value_entries()), window.meta)),
        }
    };
    let record = item.record(current, comparison);
    Ok((OneAnswer::Record(record), window.meta))
}

/// A video's or widget's id as the caller wrote it: one that is not a UUID names nothing in the
/// catalog, so it is not found.
pub(super) fn catalog_id(raw: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(raw).map_err(|_| ApiError::NotFound("Resource"))
}

/// The key's shop is gone: its key no longer counts. Anything else missing is not found.
/// Postgres out of reach is 503, like ClickHouse.
pub(super) fn catalog_error(e: CatalogError) -> ApiError {
    match e {
        CatalogError::ShopNotFound => ApiError::InvalidApiKey,
        CatalogError::NotFound(_) => ApiError::NotFound("Resource"),
        CatalogError::Db(e) if db::is_unreachable(&e) => ApiError::Unavailable(e.into()),
        other => ApiError::Internal(other.into()),
    }
}
