//! The OpenAPI 3.1 document. Paths come from the handlers' annotations as the routers are built
//! (utoipa-axum), so the document cannot list a route that does not exist or miss one that does.

use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "videoapp",
        description = "Shoppable video widgets for online stores: storefront proxy, event \
                       ingestion, analytics API and provisioning."
    ),
    modifiers(&SecuritySchemes),
    components(schemas(crate::error::ErrorBody)),
    tags(
        (name = "admin", description = "Provisioning, behind the admin token"),
        (name = "storefront", description = "App-proxy endpoints, signed by the platform"),
        (name = "analytics", description = "Video and widget metrics, behind `vk_` API keys"),
        (name = "operations", description = "Health and readiness"),
    )
)]
pub struct ApiDoc;

struct SecuritySchemes;

impl Modify for SecuritySchemes {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "api_key",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some(
                        "An analytics API key: vk_ followed by 64 hex characters",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "admin_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("The VIDEOAPP_ADMIN_TOKEN of the deployment"))
                    .build(),
            ),
        );
    }
}
