//! The ranges an answer reports on, resolved in the shop's timezone, and the `meta` that
//! reports them.

use std::future::Future;

use chrono::{NaiveDate, Utc};
use chrono_tz::Tz;
use serde::Serialize;
use utoipa::ToSchema;

use super::params::{CompareQuery, RangeQuery};
use crate::analytics::auth::Caller;
use crate::analytics::dates::{iso_millis, DateRange};
use crate::analytics::periods::{Compare, Interval};
use crate::app::AppState;
use crate::error::ApiError;

/// The ranges an answer reports on, resolved in the shop's timezone.
pub(super) struct Window {
    /// In the shop's timezone.
    pub today: NaiveDate,
    pub range: DateRange,
    /// The comparison range and how it was derived, when asked for.
    pub comparison: Option<(Compare, DateRange)>,
    pub meta: Meta,
}

impl Window {
    /// `query` and `compare` in the shop's timezone, and the `meta` that reports them.
    pub async fn resolve(
        state: &AppState,
        caller: &Caller,
        query: &RangeQuery,
        compare: &CompareQuery,
    ) -> Result<Window, ApiError> {
        // The shop's timezone from the cached catalog snapshot: no query on the hot path.
        let snapshot = state.catalog.get(&caller.shop).await?;
        let tz = snapshot.ok_or(ApiError::InvalidApiKey)?.timezone.tz();
        let today = Utc::now().with_timezone(&tz).date_naive();
        let range = DateRange::new(query.start_date, query.end_date, today)?;
        let comparison = compare.compare.map(|c| (c, c.range(&range)));
        let meta = Meta {
            comparison: comparison.map(|(_, r)| MetaRange::of(&r, tz)),
            interval: None,
            range: MetaRange::of(&range, tz),
        };
        Ok(Window {
            today,
            range,
            comparison,
            meta,
        })
    }

    pub fn comparison_range(&self) -> Option<&DateRange> {
        self.comparison.as_ref().map(|(_, range)| range)
    }
}

/// The effective range, in UTC with milliseconds.
#[derive(Serialize, ToSchema)]
pub struct Meta {
    #[serde(flatten)]
    range: MetaRange,
    /// The time series' interval.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(super) interval: Option<Interval>,
    /// The comparison range, with `compare`.
    #[serde(skip_serializing_if = "Option::is_none")]
    comparison: Option<MetaRange>,
}

/// A range's first instant and last millisecond in UTC.
#[derive(Serialize, ToSchema)]
pub struct MetaRange {
    #[schema(example = "2026-10-22T00:00:00.000Z")]
    start_date: String,
    #[schema(example = "2026-11-21T23:59:59.999Z")]
    end_date: String,
}

impl MetaRange {
    fn of(range: &DateRange, tz: Tz) -> MetaRange {
        MetaRange {
            start_date: iso_millis(range.start_instant(tz)),
            end_date: iso_millis(range.end_instant(tz)),
        }
    }
}

/// `query` over `range` when there is one.
pub(super) async fn optionally<'r, R, T, F>(
    range: Option<&'r R>,
    query: impl FnOnce(&'r R) -> F,
) -> Result<Option<T>, ApiError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    match range {
        Some(range) => query(range).await.map(Some),
        None => Ok(None),
    }
}
