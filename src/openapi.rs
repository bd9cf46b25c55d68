//! The OpenAPI 3.1 document. Paths come from the handlers' annotations as the routers are built
//! (utoipa-axum), so the document cannot list a route that does not exist or miss one that does.

use utoipa::openapi::path::{Operation, ParameterIn};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{Content, OpenApi as Document, Ref, RefOr, Required, ResponseBuilder};
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
        (name = "dashboard", description = "The merchant's dashboard: the admin and analytics handlers for the session token's shop"),
        (name = "platform", description = "The platform's webhooks, and the app's install from its admin"),
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
        components.add_security_scheme(
            "session_token",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "The platform's session token of the embedded app (HS256 under the app's secret)",
                    ))
                    .build(),
            ),
        );
    }
}

/// What the HTTP edge adds to every operation, written into the document once the routers have
/// added their paths:
///
/// - an optional query parameter may be sent empty (`allowEmptyValue`): an empty or blank value
///   counts as absent (`extract::QueryPairs`);
/// - the answers the edge can give whatever the handler: 400 for a query parameter the operation
///   does not take (`UNKNOWN_PARAMETER`) or a malformed one, 414 and 431 for an oversized head
///   (`serve`), and, where there is a request body, 408, 413 and 415; added to each operation that
///   does not document its own.
pub fn document_the_edge(document: &mut Document) {
    let error = |description: &str| {
        let body = Content::new(Some(Ref::from_schema_name("ErrorBody")));
        ResponseBuilder::new()
            .description(description)
            .content("application/json", body)
            .build()
    };
    for operation in operations_mut(document) {
        let parameters = operation.parameters.iter_mut().flatten();
        for parameter in parameters.filter(|p| p.parameter_in == ParameterIn::Query) {
            if parameter.required != Required::True {
                // utoipa models no `allowEmptyValue` (OpenAPI 3.1 keeps it, deprecated).
                let extensions = parameter.extensions.get_or_insert_with(Default::default);
                extensions.insert("allowEmptyValue".to_string(), true.into());
            }
        }
        let mut edge = vec![
            (
                "400",
                "UNKNOWN_PARAMETER, or a malformed parameter; the message names it",
            ),
            ("414", "URI_TOO_LONG: the request target is over 8 KiB"),
            (
                "431",
                "HEADERS_TOO_LARGE: over 64 header fields or 32 KiB of them",
            ),
        ];
        if operation.request_body.is_some() {
            edge.push(("408", "REQUEST_TIMEOUT: the body took longer than allowed"));
            edge.push(("413", "PAYLOAD_TOO_LARGE"));
            edge.push(("415", "UNSUPPORTED_MEDIA_TYPE"));
        }
        for (status, description) in edge {
            let responses = &mut operation.responses.responses;
            if !responses.contains_key(status) {
                responses.insert(status.to_string(), RefOr::T(error(description)));
            }
        }
    }
}

/// Every operation of `document`, whatever its method.
pub fn operations_mut(document: &mut Document) -> impl Iterator<Item = &mut Operation> {
    document.paths.paths.values_mut().flat_map(|item| {
        let methods = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
        ];
        methods.into_iter().flatten()
    })
}

#[cfg(test)]
mod tests {
    use axum::body::{to_bytes, Body};
    use axum::http::{Request, StatusCode};
    use sqlx::{Connection, Executor, PgConnection};
    use tower::ServiceExt;

    use crate::app::Application;
    use crate::config::{MediaSettings, Settings};

    /// The document as the service serves it at `/openapi.json`: a service on a fresh database
    /// of the test Postgres (`VIDEOAPP_TEST_DATABASE_URL`) and ClickHouse
    /// (`VIDEOAPP_TEST_CLICKHOUSE_URL`), asked once, in process.
    async fn served_document() -> serde_json::Value {
        let admin_url = std::env::var("VIDEOAPP_TEST_DATABASE_URL").unwrap_or_else(|_| {
            "postgres://videoapp:videoapp@127.0.0.1:54329/postgres".to_string()
        });
        let clickhouse_url = std::env::var("VIDEOAPP_TEST_CLICKHOUSE_URL")
            .unwrap_or_else(|_| "http://127.0.0.1:18123".to_string());
        let name = format!("test_{}", uuid::Uuid::new_v4().simple());
        let mut admin = PgConnection::connect(&admin_url)
            .await
            .expect("Postgres is not running: start it with scripts/test (or scripts/up)");
        admin
            .execute(format!(r#"CREATE DATABASE "{name}""#).as_str())
            .await
            .expect("create test database");
        let mut database_url = url::Url::parse(&admin_url).expect("a Postgres URL");
        database_url.set_path(&name);
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let defaults = Settings::default();
        let settings = Settings {
            database_url: Some(database_url.to_string().into()),
            clickhouse_url: Some(clickhouse_url.parse().expect("a ClickHouse URL")),
            clickhouse_database: name,
            listen: Some(([127, 0, 0, 1], 0).into()),
            metrics_listen: ([127, 0, 0, 1], 0).into(),
            proxy_secret: Some("a-proxy-secret-for-the-document".into()),
            admin_token: Some("an-admin-token-for-the-document".into()),
            spool_dir: scratch.path().join("spool"),
            media: MediaSettings {
                media_dir: scratch.path().join("media"),
                media_workers: 0,
                ..defaults.media.clone()
            },
            ..defaults
        };
        let config = settings.server_config().expect("settings are valid");
        let app = Application::build(config).await.expect("service builds");
        let request = Request::get("/openapi.json").body(Body::empty()).unwrap();
        let response = app.router().oneshot(request).await.expect("an answer");
        assert_eq!(response.status(), StatusCode::OK);
        let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        serde_json::from_slice(&body).expect("the document is JSON")
    }

    /// The dashboard's API types are generated from its copy of the document
    /// (web/dashboard/openapi.json): a change of the API that the copy does not follow would go
    /// unseen by the dashboard's type check.
    #[tokio::test]
    async fn dashboard_openapi_copy_is_the_document_served() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/web/dashboard/openapi.json");
        let document = served_document().await;
        let now = serde_json::to_string_pretty(&document).unwrap() + "\n";
        if std::env::var_os("VIDEOAPP_WRITE_REFERENCE").is_some() {
            std::fs::write(path, &now).expect("web/dashboard/openapi.json written");
        }
        let written = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            written == now,
            "web/dashboard/openapi.json is not the document the service serves: run \
             `VIDEOAPP_WRITE_REFERENCE=1 cargo test --lib dashboard_openapi_copy`"
        );
    }
}
