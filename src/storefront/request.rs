//! The signed query of an app-proxy request, verified and parsed at the edge.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use chrono::Utc;

use super::error::StorefrontError;
use super::signature::{self, QueryPair};
use crate::app::AppState;
use crate::catalog::domain::ShopDomain;

/// A storefront request whose signature checked out; `shop` is the signed `shop` parameter.
pub struct Signed {
    pub shop: ShopDomain,
    pub params: QueryParams,
}

pub struct QueryParams(Vec<(String, String)>);

impl QueryParams {
    pub fn parse(raw_query: &str) -> QueryParams {
        QueryParams::owned(signature::decode_query(raw_query))
    }

    fn owned(pairs: Vec<QueryPair<'_>>) -> QueryParams {
        QueryParams(
            pairs
                .into_iter()
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        )
    }

    /// The one value of `name`; an empty value counts as absent, a repeated one is an error.
    pub fn one(&self, name: &'static str) -> Result<Option<&str>, StorefrontError> {
        let mut values = self
            .0
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .filter(|v| !v.trim().is_empty());
        let first = values.next();
        if values.next().is_some() {
            return Err(StorefrontError::invalid(name, "given more than once"));
        }
        Ok(first.map(str::trim))
    }

    /// Every value of `name`, each split at commas (`widget_ids=a,b&widget_ids=c`).
    pub fn list<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == name)
            .flat_map(|(_, v)| v.split(','))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    }

    /// A required value parsed with `parse`.
    pub fn required<T, E: std::fmt::Display>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<T, StorefrontError> {
        let raw = self
            .one(name)?
            .ok_or(StorefrontError::MissingParameter(name))?;
        parse(raw).map_err(|e| StorefrontError::invalid(name, e.to_string()))
    }

    /// An optional value parsed with `parse`.
    pub fn optional<T, E: std::fmt::Display>(
        &self,
        name: &'static str,
        parse: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Option<T>, StorefrontError> {
        self.one(name)?
            .map(|raw| parse(raw).map_err(|e| StorefrontError::invalid(name, e.to_string())))
            .transpose()
    }
}

impl FromRequestParts<AppState> for Signed {
    type Rejection = StorefrontError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let raw = parts.uri.query().unwrap_or("");
        let config = &state.config;
        let params = if config.insecure_skip_signature {
            QueryParams::parse(raw)
        } else {
            let max_age = config.signature_max_age.as_secs() as i64;
            match signature::verify(&config.proxy_secret, raw, Utc::now(), max_age) {
                // The check decoded the parameters already: keep them.
                Ok(params) => QueryParams::owned(params),
                Err(e) => {
                    metrics::counter!("storefront_signature_failures_total", "reason" => e.metric_label())
                        .increment(1);
                    return Err(StorefrontError::InvalidSignature(e));
                }
            }
        };
        let shop = params.required("shop", ShopDomain::parse)?;
        Ok(Signed { shop, params })
    }
}
