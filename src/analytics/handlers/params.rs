//! The query parameters of the analytics endpoints and how they are read: the range, the
//! comparison, the page and sort of a list, the widget filter.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use serde::{Deserialize, Deserializer};
use utoipa::{IntoParams, ToSchema};

use crate::analytics::dates::strict_date;
use crate::analytics::dimensions::Filters;
use crate::analytics::export::FormatQuery;
use crate::analytics::periods::Compare;
use crate::catalog::domain::WidgetType;
use crate::error::ApiError;
use crate::extract::AppQuery;

/// The range every endpoint reports on.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RangeQuery {
    /// First day, `YYYY-MM-DD`, in the shop's timezone. Default: 30 days before `end_date`.
    #[serde(default, deserialize_with = "strict_date")]
    pub(super) start_date: Option<NaiveDate>,
    /// Last day (inclusive), `YYYY-MM-DD`. Default: today in the shop's timezone.
    #[serde(default, deserialize_with = "strict_date")]
    pub(super) end_date: Option<NaiveDate>,
}

/// The range to compare with, if any.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct CompareQuery {
    /// Also report each record over `previous_period` (as many days just before) or
    /// `previous_year` (the same dates a year earlier; 29 February becomes the 28th), as
    /// `comparison`. Sorting and paging follow the requested range.
    #[param(inline)]
    pub(super) compare: Option<Compare>,
}

impl CompareQuery {
    /// No comparison: for an answer that has none.
    pub(super) fn none() -> CompareQuery {
        CompareQuery { compare: None }
    }
}

/// How a list is ordered and cut into pages.
#[derive(Deserialize, IntoParams)]
#[serde(default)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// 1-based page. Default 1.
    #[serde(deserialize_with = "page_number")]
    #[param(format = Int64, minimum = 1, maximum = 4_294_967_295_f64)]
    pub(super) page: u32,
    /// Items per page, 1 to 100. Default 10.
    #[serde(deserialize_with = "page_size")]
    #[param(minimum = 1, maximum = 100)]
    pub(super) limit: u32,
    /// The metric or field to sort by. Default views.
    #[param(inline)]
    pub(super) sort_by: SortKey,
    /// Default desc. Ties are broken by id, ascending.
    #[param(inline)]
    pub(super) sort_order: SortOrder,
}

impl Default for ListQuery {
    fn default() -> Self {
        ListQuery {
            page: 1,
            limit: 10,
            sort_by: SortKey::Views,
            sort_order: SortOrder::Desc,
        }
    }
}

fn page_number<'de, D: Deserializer<'de>>(value: D) -> Result<u32, D::Error> {
    integer_in(value, 1, u32::MAX)
}

fn page_size<'de, D: Deserializer<'de>>(value: D) -> Result<u32, D::Error> {
    integer_in(value, 1, 100)
}

/// An integer from `min` to `max`, with a message that states the bounds.
fn integer_in<'de, D: Deserializer<'de>>(value: D, min: u32, max: u32) -> Result<u32, D::Error> {
    let raw = String::deserialize(value)?;
    match raw.parse::<u32>() {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ if max == u32::MAX => Err(serde::de::Error::custom(format!(
            "must be an integer ≥ {min}, got '{raw}'"
        ))),
        _ => Err(serde::de::Error::custom(format!(
            "must be an integer from {min} to {max}, got '{raw}'"
        ))),
    }
}

/// Only widgets of one type.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct WidgetFilter {
    /// Only widgets of this type.
    #[param(inline)]
    pub(super) widget_type: Option<WidgetType>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(in crate::analytics) enum SortKey {
    Views,
    Clicks,
    Impressions,
    AddToCart,
    Orders,
    Revenue,
    Title,
    CreatedAt,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub(in crate::analytics) enum SortOrder {
    Desc,
    Asc,
}

/// What a list endpoint is asked: the page, the range, the comparison, the filters and the
/// format.
pub struct ListRequest {
    pub(super) listing: ListQuery,
    pub(super) range: RangeQuery,
    pub(super) compare: CompareQuery,
    pub(super) filters: Filters,
    pub(super) format: FormatQuery,
    pub(super) headers: HeaderMap,
}

impl<S: Send + Sync> FromRequestParts<S> for ListRequest {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        Ok(ListRequest {
            listing: AppQuery::from_request_parts(parts, state).await?.0,
            range: AppQuery::from_request_parts(parts, state).await?.0,
            compare: AppQuery::from_request_parts(parts, state).await?.0,
            filters: AppQuery::from_request_parts(parts, state).await?.0,
            format: AppQuery::from_request_parts(parts, state).await?.0,
            headers: parts.headers.clone(),
        })
    }
}
