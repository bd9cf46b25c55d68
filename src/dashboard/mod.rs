//! The merchant's dashboard, embedded in the platform's admin: its API under `/app/api`, where
//! every call carries the platform's session token. The API is the admin API's and the analytics
//! API's own handlers, nested a second time behind the session check instead of the admin token
//! or an API key, so the dashboard and the APIs share every line of domain code. `pages` serves
//! the dashboard itself.

mod onboarding;
pub(crate) mod pages;

pub use pages::routes as pages;

use axum::extract::{FromRequestParts, RawPathParams, Request, State};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use utoipa::openapi::security::SecurityRequirement;
use utoipa_axum::router::OpenApiRouter;

use crate::app::AppState;
use crate::catalog::domain::ShopDomain;
use crate::error::ApiError;
use crate::platform::session_token::SessionToken;
use crate::{admin, analytics};

pub fn router(state: AppState) -> OpenApiRouter<AppState> {
    let mut api = admin::dashboard_routes(state.clone())
        .merge(analytics::dashboard_routes())
        .routes(utoipa_axum::routes!(onboarding::onboarding));
    for operation in crate::openapi::operations_mut(api.get_openapi_mut()) {
        // The same handlers are documented at their first place; ids must stay unique.
        operation.operation_id = operation.operation_id.take().map(|id| format!("app_{id}"));
        operation.tags = Some(vec!["dashboard".to_string()]);
        operation.security = Some(vec![SecurityRequirement::new("session_token", [""; 0])]);
    }
    let api = api.route_layer(middleware::from_fn_with_state(state, require_session));
    OpenApiRouter::new().nest("/app/api", api)
}

/// Lets a call through only with a valid session token, and only to the token's own shop when
/// its path names one; the checked token is left in the request for the handlers' layers.
async fn require_session(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let (mut parts, body) = req.into_parts();
    let session = match SessionToken::from_request_parts(&mut parts, &state).await {
        Ok(session) => session,
        Err(refused) => return refused.into_response(),
    };
    if let Ok(params) = RawPathParams::from_request_parts(&mut parts, &state).await {
        if let Some((_, named)) = params.iter().find(|(name, _)| *name == "shop") {
            if ShopDomain::parse(named).ok().as_ref() != Some(&session.shop) {
                let message = format!("it is for {}, not the shop in the path", session.shop);
                return ApiError::InvalidSessionToken(message).into_response();
            }
        }
    }
    parts.extensions.insert(session);
    next.run(Request::from_parts(parts, body)).await
}
