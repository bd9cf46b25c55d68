//! The reports of the shop's customers' data requests (`customers/data_request` webhooks).

use axum::extract::State;
use axum::Json;
use serde::Serialize;
use utoipa::ToSchema;

use super::{AdminErrors, ShopPath};
use crate::app::AppState;
use crate::error::ApiError;
use crate::platform::privacy::{self, PrivacyReport};

#[derive(Serialize, ToSchema)]
pub struct PrivacyReportList {
    reports: Vec<PrivacyReport>,
}

/// List the shop's privacy reports
///
/// One per data request the platform sent for a customer of the shop: every event held for that
/// customer when the request was worked on. Readable after an uninstall, until the shop's
/// redaction; a shop without any reads an empty list.
#[utoipa::path(
    get, path = "/shops/{shop}/privacy-reports", tag = "admin",
    params(ShopPath),
    responses((status = 200, body = PrivacyReportList), AdminErrors)
)]
pub async fn list_privacy_reports(
    State(state): State<AppState>,
    ShopPath { shop }: ShopPath,
) -> Result<Json<PrivacyReportList>, ApiError> {
    let reports = privacy::reports(&state.db, &shop).await?;
    Ok(Json(PrivacyReportList { reports }))
}
