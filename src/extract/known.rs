//! Unknown query parameters are refused, on every route: a route takes exactly the query
//! parameters its operation in the OpenAPI document lists, so the document and the wire cannot
//! drift apart. A storefront route lists its own parameters and the ones the platform's app proxy
//! adds (`shop`, `logged_in_customer_id`, `path_prefix`, `timestamp`, `signature`).
//!
//! Besides catching typos (`start-date` for `start_date`), this closes an ambiguity of the app
//! proxy's signature scheme, which joins the sorted `key=value` pieces without a separator: the
//! pieces `r=1shop=B…shopz=` and `shop=A…` of one signed query join to the same text as `r=1`,
//! `shop=B…` and `shopz=shop=A…`, so a signature made for shop A would hold for shop B if `r` and
//! `shopz` were ignored.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::MatchedPath;
use axum::http::{Method, Request};
use axum::response::{IntoResponse, Response};
use futures::future::Either;
use tower::{Layer, Service};
use utoipa::openapi::path::{HttpMethod, ParameterIn};
use utoipa::openapi::OpenApi;

use super::decode_pair;
use crate::error::ApiError;

/// The query parameters each documented operation takes, by route template and method.
#[derive(Clone, Debug, Default)]
pub struct KnownParamsLayer {
    routes: Arc<HashMap<String, Vec<Operation>>>,
}

/// One operation's method and the names of its query parameters.
type Operation = (Method, Vec<String>);

impl KnownParamsLayer {
    /// The parameters `document` lists for each operation. A route it does not list takes none.
    pub fn from_document(document: &OpenApi) -> KnownParamsLayer {
        let routes = document.paths.paths.iter().map(|(path, item)| {
            let operations = item.get.iter().map(|op| (HttpMethod::Get, op));
            let operations = operations
                .chain(item.put.iter().map(|op| (HttpMethod::Put, op)))
                .chain(item.post.iter().map(|op| (HttpMethod::Post, op)))
                .chain(item.delete.iter().map(|op| (HttpMethod::Delete, op)))
                .chain(item.patch.iter().map(|op| (HttpMethod::Patch, op)));
            let methods = operations.map(|(method, operation)| {
                let parameters = operation.parameters.iter().flatten();
                let query = parameters.filter(|p| p.parameter_in == ParameterIn::Query);
                (http_method(method), query.map(|p| p.name.clone()).collect())
            });
            (path.clone(), methods.collect())
        });
        KnownParamsLayer {
            routes: Arc::new(routes.collect()),
        }
    }

    /// The parameters of `query` that the operation at `route` and `method` does not take, each
    /// once, in the order given. A method the route has no operation for is left to the router,
    /// which answers 405.
    fn unknown(&self, route: &str, method: &Method, query: &str) -> Vec<String> {
        // HEAD is answered by the GET handler.
        let method = if method == Method::HEAD {
            &Method::GET
        } else {
            method
        };
        let known = match self.routes.get(route) {
            Some(operations) => match operations.iter().find(|(m, _)| m == method) {
                Some((_, names)) => names.as_slice(),
                None => return Vec::new(),
            },
            None => &[],
        };
        let mut unknown: Vec<String> = Vec::new();
        for key in keys(query) {
            if !known.iter().any(|name| *name == key) && !unknown.iter().any(|u| *u == key) {
                unknown.push(key.into_owned());
            }
        }
        unknown
    }
}

/// The query's keys, decoded as [`super::decode_pairs`] decodes them, without the values: this
/// check runs before the extractor that decodes the whole query, and decoding it twice (values
/// included, `path_prefix` always escaped) cost about 3 k of the 5 k instructions it added to an
/// acknowledged event under callgrind (BENCHMARKS.md, Decisions).
fn keys(query: &str) -> impl Iterator<Item = Cow<'_, str>> {
    let pieces = query.split('&').filter(|piece| !piece.is_empty());
    // The key alone, as a piece of its own: its decoding is the pair's.
    pieces.map(|piece| decode_pair(piece.split_once('=').map_or(piece, |(key, _)| key)).0)
}

fn http_method(method: HttpMethod) -> Method {
    match method {
        HttpMethod::Get => Method::GET,
        HttpMethod::Post => Method::POST,
        HttpMethod::Put => Method::PUT,
        HttpMethod::Delete => Method::DELETE,
        HttpMethod::Options => Method::OPTIONS,
        HttpMethod::Head => Method::HEAD,
        HttpMethod::Patch => Method::PATCH,
        HttpMethod::Trace => Method::TRACE,
    }
}

impl<S> Layer<S> for KnownParamsLayer {
    type Service = KnownParams<S>;

    fn layer(&self, inner: S) -> KnownParams<S> {
        KnownParams {
            inner,
            known: self.clone(),
        }
    }
}

/// A route's service behind the check: a request with a parameter the route does not take is
/// answered `UNKNOWN_PARAMETER` before any extractor reads it.
#[derive(Clone)]
pub struct KnownParams<S> {
    inner: S,
    known: KnownParamsLayer,
}

impl<S, B> Service<Request<B>> for KnownParams<S>
where
    S: Service<Request<B>, Response = Response>,
{
    type Response = Response;
    type Error = S::Error;
    type Future = Either<std::future::Ready<Result<Response, S::Error>>, S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let query = request.uri().query().filter(|q| !q.is_empty());
        let route = request.extensions().get::<MatchedPath>();
        if let (Some(query), Some(route)) = (query, route) {
            let unknown = self.known.unknown(route.as_str(), request.method(), query);
            if !unknown.is_empty() {
                let refused = ApiError::UnknownParameters(unknown).into_response();
                return Either::Left(std::future::ready(Ok(refused)));
            }
        }
        Either::Right(self.inner.call(request))
    }
}

#[cfg(test)]
mod tests {
    use utoipa::openapi::path::{OperationBuilder, ParameterBuilder, PathItem};
    use utoipa::openapi::{OpenApiBuilder, PathsBuilder};

    use super::*;

    fn layer() -> KnownParamsLayer {
        let operation = OperationBuilder::new()
            .parameter(
                ParameterBuilder::new()
                    .name("page")
                    .parameter_in(ParameterIn::Query),
            )
            .parameter(
                ParameterBuilder::new()
                    .name("id")
                    .parameter_in(ParameterIn::Path),
            )
            .build();
        let paths =
            PathsBuilder::new().path("/items/{id}", PathItem::new(HttpMethod::Get, operation));
        KnownParamsLayer::from_document(&OpenApiBuilder::new().paths(paths).build())
    }

    #[test]
    fn only_the_documented_query_parameters_of_the_operation_are_known() {
        let layer = layer();
        let get = |query| layer.unknown("/items/{id}", &Method::GET, query);
        assert!(get("page=2").is_empty());
        assert!(layer
            .unknown("/items/{id}", &Method::HEAD, "page=2")
            .is_empty());
        // A path parameter is not a query parameter; repeats are named once; keys are decoded.
        assert_eq!(
            get("page=1&id=3&x=1&x=2&p%61ge=3&%70age2"),
            ["id", "x", "page2"]
        );
        // No POST operation: the router's 405, not this check, answers it.
        assert!(layer
            .unknown("/items/{id}", &Method::POST, "page=1")
            .is_empty());
        assert_eq!(layer.unknown("/openapi.json", &Method::GET, "a=1"), ["a"]);
    }
}
