//! The signed query of an app-proxy request, verified and parsed at the edge.

use std::borrow::Cow;
use std::ops::Range;

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

/// The decoded query parameters, owned: one copy of the raw query plus the decoded text of any
/// pair that needed decoding, and each pair as two ranges of that text. Two allocations per
/// request instead of two per parameter (this is on every storefront request).
pub struct QueryParams {
    text: String,
    pairs: Vec<(Range<usize>, Range<usize>)>,
}

impl QueryParams {
    pub fn parse(raw_query: &str) -> QueryParams {
        QueryParams::owned(raw_query, signature::decode_query(raw_query))
    }

    /// `pairs` as `decode_query(raw_query)` returned them: borrowed from `raw_query`, or decoded.
    fn owned(raw_query: &str, pairs: Vec<QueryPair<'_>>) -> QueryParams {
        let mut text = String::with_capacity(raw_query.len() + 64);
        text.push_str(raw_query);
        let raw_start = raw_query.as_ptr() as usize;
        let mut range_of = |part: &Cow<'_, str>| {
            // Where a borrowed part lies in the raw query; anything else (decoded text, or a
            // borrowed `""` that is not a slice of the query) is appended.
            let offset = (part.as_ptr() as usize).wrapping_sub(raw_start);
            match part {
                Cow::Borrowed(_)
                    if part.len() <= raw_query.len() && offset <= raw_query.len() - part.len() =>
                {
                    offset..offset + part.len()
                }
                _ => {
                    let start = text.len();
                    text.push_str(part);
                    start..text.len()
                }
            }
        };
        let pairs = pairs
            .iter()
            .map(|(key, value)| (range_of(key), range_of(value)))
            .collect();
        QueryParams { text, pairs }
    }

    fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        self.pairs
            .iter()
            .map(|(key, value)| (&self.text[key.clone()], &self.text[value.clone()]))
    }

    /// The one value of `name`; an empty value counts as absent, a repeated one is an error.
    pub fn one(&self, name: &'static str) -> Result<Option<&str>, StorefrontError> {
        let mut values = self
            .pairs()
            .filter(|(k, _)| *k == name)
            .map(|(_, v)| v)
            .filter(|v| !v.trim().is_empty());
        let first = values.next();
        if values.next().is_some() {
            return Err(StorefrontError::invalid(name, "given more than once"));
        }
        Ok(first.map(str::trim))
    }

    /// Every value of `name`, each split at commas (`widget_ids=a,b&widget_ids=c`).
    pub fn list<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.pairs()
            .filter(move |(k, _)| *k == name)
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
            match signature::verify(&state.proxy_secret, raw, Utc::now(), max_age) {
                // The check decoded the parameters already: keep them.
                Ok(params) => QueryParams::owned(raw, params),
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn pairs_of(query: &str) -> Vec<(String, String)> {
        let params = QueryParams::parse(query);
        params
            .pairs()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn as_form_urlencoded_decodes(query: &str) -> Vec<(String, String)> {
        url::form_urlencoded::parse(query.as_bytes())
            .map(|(k, v)| (k.into_owned(), v.into_owned()))
            .collect()
    }

    /// Borrowed pairs, decoded ones, empty values, keys without `=` and repeated keys all come
    /// back as `form_urlencoded` decodes them, in order.
    #[test]
    fn the_owned_pairs_are_the_decoded_query() {
        for query in [
            "",
            "shop=a.myshopify.com&path_prefix=%2Fapps%2Fvideoapp_sub&timestamp=1&signature=ab",
            "a=&b&=c&&d=1=2&e=x+y&e=%zz&f=%C3%A9",
            "only",
            "=",
        ] {
            assert_eq!(
                pairs_of(query),
                as_form_urlencoded_decodes(query),
                "{query:?}"
            );
        }
        let params = QueryParams::parse("widget_ids=a,b&widget_ids=%20c&shop=s");
        assert_eq!(
            params.list("widget_ids").collect::<Vec<_>>(),
            ["a", "b", "c"]
        );
        assert_eq!(params.one("shop").unwrap(), Some("s"));
    }

    proptest! {
        #[test]
        fn any_query_decodes_as_form_urlencoded(query in "[a-z=&%+2C3A9é]{0,40}") {
            prop_assert_eq!(pairs_of(&query), as_form_urlencoded_decodes(&query));
        }
    }
}
