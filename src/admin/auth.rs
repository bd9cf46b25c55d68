//! Admin bearer-token check, in constant time.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::OpenApi;

use crate::app::AppState;
use crate::error::ApiError;

/// The configured admin token, kept only as its SHA-256 so comparisons take the same time
/// whatever the length or content of what a caller sends.
#[derive(Clone)]
pub struct AdminToken([u8; 32]);

impl AdminToken {
    pub fn new(token: &str) -> Self {
        AdminToken(Sha256::digest(token.as_bytes()).into())
    }

    fn matches(&self, candidate: &str) -> bool {
        let digest: [u8; 32] = Sha256::digest(candidate.as_bytes()).into();
        digest.ct_eq(&self.0).into()
    }
}

pub async fn require_admin(State(state): State<AppState>, req: Request, next: Next) -> Response {
    match crate::bearer::token(req.headers()) {
        Some(token) if state.admin_token.matches(token) => next.run(req).await,
        _ => ApiError::AdminTokenRequired.into_response(),
    }
}

/// Marks every operation of the provisioning document as taking the admin token, which
/// [`require_admin`] checks on every provisioning route.
pub fn document_token_requirement(openapi: &mut OpenApi) {
    for operation in crate::openapi::operations_mut(openapi) {
        operation.security = Some(vec![SecurityRequirement::new("admin_token", [""; 0])]);
    }
}
