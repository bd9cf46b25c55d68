//! The path parameters of the provisioning routes, parsed before a handler runs: `{shop}` into a
//! [`ShopDomain`], an object's `{id}` into a [`Uuid`]. The same types document the parameters.

use std::marker::PhantomData;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use serde::Deserialize;
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::{ObjectBuilder, Required, Type};
use utoipa::IntoParams;
use uuid::Uuid;

use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::extract::AppPath;

/// The `{shop}` of a provisioning route.
#[derive(IntoParams)]
#[into_params(parameter_in = Path)]
pub struct ShopPath {
    /// Shop domain
    #[param(inline)]
    pub shop: ShopDomain,
}

/// The `{shop}` and `{id}` of a route on one object of kind `K`.
pub struct ObjectPath<K> {
    pub shop: ShopDomain,
    pub id: Uuid,
    kind: PhantomData<K>,
}

/// What a provisioning route can name by id under a shop.
pub trait Object {
    /// How the object is named in its 404 ("video not found") and its id's documentation.
    const NOUN: &'static str;
}

#[derive(Deserialize)]
struct ShopSegment {
    shop: String,
}

impl<S: Send + Sync> FromRequestParts<S> for ShopPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let AppPath(ShopSegment { shop }) = AppPath::from_request_parts(parts, state).await?;
        Ok(ShopPath {
            shop: parse_shop(&shop)?,
        })
    }
}

impl<S: Send + Sync, K: Object> FromRequestParts<S> for ObjectPath<K> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        let AppPath((shop, id)) =
            AppPath::<(String, String)>::from_request_parts(parts, state).await?;
        Ok(ObjectPath {
            shop: parse_shop(&shop)?,
            // Ids are UUIDs we generated; anything else names no object.
            id: Uuid::parse_str(&id).map_err(|_| ApiError::NotFound(K::NOUN))?,
            kind: PhantomData,
        })
    }
}

fn parse_shop(raw: &str) -> Result<ShopDomain, ApiError> {
    ShopDomain::parse(raw).map_err(|e| ApiError::validation("shop", e.0))
}

impl<K: Object> IntoParams for ObjectPath<K> {
    fn into_params(parameter_in_provider: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
        let mut params = ShopPath::into_params(parameter_in_provider);
        params.push(
            ParameterBuilder::new()
                .name("id")
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .description(Some(format!("{} id", capitalised(K::NOUN))))
                .schema(Some(ObjectBuilder::new().schema_type(Type::String)))
                .build(),
        );
        params
    }
}

fn capitalised(noun: &str) -> String {
    let mut chars = noun.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Key;

    impl Object for Key {
        const NOUN: &'static str = "API key";
    }

    #[test]
    fn an_object_path_documents_its_shop_and_its_id_by_the_objects_noun() {
        let documented: Vec<_> = ObjectPath::<Key>::into_params(|| None)
            .into_iter()
            .map(|p| {
                let required = p.required == Required::True;
                (
                    p.name,
                    p.parameter_in == ParameterIn::Path,
                    required,
                    p.description,
                )
            })
            .collect();
        assert_eq!(
            documented,
            [
                (
                    "shop".to_string(),
                    true,
                    true,
                    Some("Shop domain".to_string())
                ),
                ("id".to_string(), true, true, Some("API key id".to_string())),
            ]
        );
    }
}
