use std::collections::{BTreeMap, BTreeSet};

use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use videoapp::storefront::signature::CustomerId;

use crate::support::*;

#[tokio::test]
async fn healthz_answers_ok() {
    let app = spawn_app().await;
    let (status, body) = json_of(app.get("/healthz").await).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body, json!({ "status": "ok" }));
}

#[tokio::test]
async fn readyz_is_ready_when_both_servers_answer() {
    let app = spawn_app().await;
    let (status, body) = json_of(app.get("/readyz").await).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["status"], "ready");
    assert_eq!(
        body["checks"],
        json!({ "postgres": "ok", "clickhouse": "ok" })
    );
}

#[tokio::test]
async fn readyz_names_clickhouse_when_it_is_unreachable() {
    // Port 1 refuses connections: ClickHouse is "down" from the start. The service still starts
    // (the catalog and storefront do not need ClickHouse) and says what is missing.
    let app =
        spawn_app_with(|s| s.clickhouse_url = Some("http://127.0.0.1:1".parse().unwrap())).await;
    let (status, body) = json_of(app.get("/readyz").await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["unavailable"], json!(["clickhouse"]));
    assert_eq!(body["checks"]["postgres"], "ok");
    // Liveness is not readiness.
    assert_eq!(app.get("/healthz").await.status(), StatusCode::OK);
}

#[tokio::test]
async fn readyz_names_postgres_when_its_database_is_gone() {
    let app = spawn_app().await;
    app.db.close().await;
    let name = app.database_url.rsplit('/').next().unwrap().to_string();
    let mut admin = PgConnection::connect(&postgres_admin_url()).await.unwrap();
    admin
        .execute(format!(r#"DROP DATABASE "{name}" WITH (FORCE)"#).as_str())
        .await
        .unwrap();

    let (status, body) = json_of(app.get("/readyz").await).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
    assert_eq!(body["unavailable"], json!(["postgres"]));
    assert_eq!(body["checks"]["clickhouse"], "ok");
}

#[tokio::test]
async fn metrics_are_served_on_their_own_listener_by_route_template() {
    // A process of its own: every request it counts is one this test made.
    let app = spawn_process_app(&[]).await;
    app.create_shop("m.myshopify.com").await;
    app.send_admin(Method::GET, "/shops/nobody.myshopify.com")
        .await;
    app.get("/no/such/path/123").await;

    let metrics = app.metrics().await;
    let shops = "/admin/v1/shops/{shop}";
    let labels = |method, route, status| [("method", method), ("route", route), ("status", status)];
    for (name, sample) in [
        ("http_requests_total", labels("PUT", shops, "201")),
        ("http_requests_total", labels("GET", shops, "404")),
        ("http_requests_total", labels("GET", "unmatched", "404")),
        (
            "http_request_duration_seconds_count",
            labels("PUT", shops, "201"),
        ),
    ] {
        assert_eq!(
            metric_value(&metrics, name, &sample),
            Some(1.0),
            "{name}{sample:?} in\n{metrics}"
        );
    }
    let requests: f64 = metrics
        .lines()
        .filter(|line| line.starts_with("http_requests_total{"))
        .map(|line| line.rsplit(' ').next().unwrap().parse::<f64>().unwrap())
        .sum();
    assert_eq!(requests, 3.0, "only the three requests made:\n{metrics}");
    assert!(
        !metrics.contains("m.myshopify.com"),
        "raw paths must not become labels"
    );
    assert!(
        !metrics.contains("/no/such/path"),
        "raw paths must not become labels"
    );
    // Not exposed with the public API: there it is one more unmatched path.
    assert_eq!(app.get("/metrics").await.status(), StatusCode::NOT_FOUND);
    assert_eq!(
        metric_value(
            &app.metrics().await,
            "http_requests_total",
            &labels("GET", "unmatched", "404")
        ),
        Some(2.0)
    );
}

#[tokio::test]
async fn every_request_gets_a_request_id_and_a_given_one_is_echoed() {
    let app = spawn_app().await;
    let response = app.get("/healthz").await;
    let id = response
        .headers()
        .get("x-request-id")
        .expect("x-request-id set")
        .to_str()
        .unwrap();
    assert!(uuid::Uuid::parse_str(id).is_ok(), "{id}");

    let response = app
        .client
        .get(app.url("/healthz"))
        .header("x-request-id", "abc-123")
        .send()
        .await
        .unwrap();
    assert_eq!(response.headers().get("x-request-id").unwrap(), "abc-123");

    // Answers no route gives (the 404 fallback, a 405) carry one too.
    for response in [
        app.get("/no/such/path").await,
        app.client.delete(app.url("/healthz")).send().await.unwrap(),
    ] {
        assert!(response.status().is_client_error());
        let id = response
            .headers()
            .get("x-request-id")
            .expect("x-request-id");
        assert!(uuid::Uuid::parse_str(id.to_str().unwrap()).is_ok());
    }
}

#[tokio::test]
async fn the_openapi_document_is_3_1_and_lists_every_route() {
    let app = spawn_app().await;
    let (status, doc) = json_of(app.get("/openapi.json").await).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        doc["openapi"].as_str().unwrap().starts_with("3.1"),
        "{}",
        doc["openapi"]
    );

    let mut documented = BTreeSet::new();
    // OpenAPI asks each operation's id to be unique in the document (code generators key on it).
    let mut operation_ids = BTreeMap::<String, String>::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            let route = format!("{} {path}", method.to_uppercase());
            if let Some(id) = operation["operationId"].as_str() {
                if let Some(other) = operation_ids.insert(id.to_string(), route.clone()) {
                    panic!("operationId {id} is both {other} and {route}");
                }
            }
            documented.insert(route);
        }
    }
    let expected: BTreeSet<String> = [
        "GET /healthz",
        "GET /readyz",
        "GET /apps/videoapp_sub/contextual-widgets",
        "GET /apps/videoapp_sub/widget-by-id",
        "GET /apps/videoapp_sub/widgets-list",
        "POST /apps/videoapp_sub/analytics",
        "GET /api/v1/analytics/videos",
        "GET /api/v1/analytics/video/{videoId}",
        "GET /api/v1/analytics/summary",
        "GET /api/v1/analytics/widgets",
        "GET /api/v1/analytics/widget/{widgetId}",
        "GET /api/v1/analytics/timeseries",
        "GET /api/v1/analytics/lift",
        "PUT /admin/v1/shops/{shop}",
        "GET /admin/v1/shops/{shop}",
        "DELETE /admin/v1/shops/{shop}",
        "PUT /admin/v1/shops/{shop}/products",
        "GET /admin/v1/shops/{shop}/products",
        "GET /admin/v1/shops/{shop}/collections",
        "DELETE /admin/v1/shops/{shop}/products",
        "POST /admin/v1/shops/{shop}/videos",
        "GET /admin/v1/shops/{shop}/videos",
        "GET /admin/v1/shops/{shop}/videos/{id}",
        "PATCH /admin/v1/shops/{shop}/videos/{id}",
        "DELETE /admin/v1/shops/{shop}/videos/{id}",
        // Videos from a file: tus uploads, imports, retries, posters and captions.
        "OPTIONS /admin/v1/shops/{shop}/uploads",
        "POST /admin/v1/shops/{shop}/uploads",
        "HEAD /admin/v1/shops/{shop}/uploads/{id}",
        "PATCH /admin/v1/shops/{shop}/uploads/{id}",
        "DELETE /admin/v1/shops/{shop}/uploads/{id}",
        "POST /admin/v1/shops/{shop}/videos/import",
        "POST /admin/v1/shops/{shop}/videos/{id}/retry",
        "POST /admin/v1/shops/{shop}/videos/{id}/poster",
        "PUT /admin/v1/shops/{shop}/videos/{id}/captions/{language}",
        "DELETE /admin/v1/shops/{shop}/videos/{id}/captions/{language}",
        "POST /admin/v1/shops/{shop}/widgets",
        "GET /admin/v1/shops/{shop}/widgets",
        "GET /admin/v1/shops/{shop}/widgets/{id}",
        "PATCH /admin/v1/shops/{shop}/widgets/{id}",
        "DELETE /admin/v1/shops/{shop}/widgets/{id}",
        "POST /admin/v1/shops/{shop}/api-keys",
        "GET /admin/v1/shops/{shop}/api-keys",
        "DELETE /admin/v1/shops/{shop}/api-keys/{id}",
        "GET /admin/v1/shops/{shop}/privacy-reports",
        "POST /webhooks/shopify",
        "POST /app/api/install",
        // The dashboard: the same handlers behind the session token.
        "GET /app/api/shops/{shop}",
        "GET /app/api/shops/{shop}/products",
        "GET /app/api/shops/{shop}/collections",
        "POST /app/api/shops/{shop}/videos",
        "GET /app/api/shops/{shop}/videos",
        "GET /app/api/shops/{shop}/videos/{id}",
        "PATCH /app/api/shops/{shop}/videos/{id}",
        "DELETE /app/api/shops/{shop}/videos/{id}",
        "OPTIONS /app/api/shops/{shop}/uploads",
        "POST /app/api/shops/{shop}/uploads",
        "HEAD /app/api/shops/{shop}/uploads/{id}",
        "PATCH /app/api/shops/{shop}",
        "PATCH /app/api/shops/{shop}/uploads/{id}",
        "DELETE /app/api/shops/{shop}/uploads/{id}",
        "POST /app/api/shops/{shop}/videos/import",
        "POST /app/api/shops/{shop}/videos/{id}/retry",
        "POST /app/api/shops/{shop}/videos/{id}/poster",
        "PUT /app/api/shops/{shop}/videos/{id}/captions/{language}",
        "DELETE /app/api/shops/{shop}/videos/{id}/captions/{language}",
        "POST /app/api/shops/{shop}/widgets",
        "GET /app/api/shops/{shop}/widgets",
        "GET /app/api/shops/{shop}/widgets/{id}",
        "GET /app/api/shops/{shop}/onboarding",
        "PATCH /app/api/shops/{shop}/widgets/{id}",
        "DELETE /app/api/shops/{shop}/widgets/{id}",
        "POST /app/api/shops/{shop}/api-keys",
        "GET /app/api/shops/{shop}/api-keys",
        "DELETE /app/api/shops/{shop}/api-keys/{id}",
        "GET /app/api/shops/{shop}/privacy-reports",
        "GET /app/api/analytics/videos",
        "GET /app/api/analytics/video/{videoId}",
        "GET /app/api/analytics/summary",
        "GET /app/api/analytics/widgets",
        "GET /app/api/analytics/widget/{widgetId}",
        "GET /app/api/analytics/timeseries",
        "GET /app/api/analytics/lift",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    assert_eq!(documented, expected);

    // The admin calls declare the bearer scheme, and every schema they reference exists.
    assert_eq!(
        doc["components"]["securitySchemes"]["admin_token"]["scheme"],
        json!("bearer")
    );
    let text = doc.to_string();
    for reference in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = reference.split('"').next().unwrap();
        assert!(
            doc["components"]["schemas"]
                .get(name)
                .is_some_and(|s: &Value| !s.is_null()),
            "dangling schema reference {name}"
        );
    }
}

/// The query parameters an operation documents, by name, with their schemas.
fn query_parameters(doc: &Value, method: &str, path: &str) -> BTreeMap<String, Value> {
    doc["paths"][path][method]["parameters"]
        .as_array()
        .unwrap_or_else(|| panic!("{method} {path} documents no parameters"))
        .iter()
        .filter(|p| p["in"] == "query")
        .map(|p| (p["name"].as_str().unwrap().to_string(), p.clone()))
        .collect()
}

/// A query parameter as documented: its name, whether it is required, and (part of) its schema.
type Documented = (&'static str, bool, Value);

#[tokio::test]
async fn the_openapi_document_types_the_query_parameters_each_endpoint_reads() {
    let app = spawn_app().await;
    let (_, doc) = json_of(app.get("/openapi.json").await).await;
    let sort_keys = json!(SORT_KEYS);
    let widget_types = json!(["carousel", "story", "productpage", "floating"]);
    let locations = json!(["home", "product", "collection", "page", "other"]);
    let date = json!({ "type": "string", "format": "date" });
    let limit: Documented = (
        "limit",
        false,
        json!({ "type": "integer", "minimum": 1, "maximum": 100 }),
    );
    let sort_by: Documented = (
        "sort_by",
        false,
        json!({ "type": "string", "enum": sort_keys }),
    );
    let dates: [Documented; 2] = [
        ("start_date", false, date.clone()),
        ("end_date", false, date.clone()),
    ];
    let compare: Documented = (
        "compare",
        false,
        json!({ "type": "string", "enum": ["previous_period", "previous_year"] }),
    );
    let format: Documented = (
        "format",
        false,
        json!({ "type": "string", "enum": ["json", "csv"] }),
    );
    let one_record: [Documented; 3] = [dates[0].clone(), dates[1].clone(), compare.clone()];

    let expected: &[(&str, &str, &[Documented])] = &[
        (
            "get",
            "/api/v1/analytics/videos",
            &[
                (
                    "page",
                    false,
                    json!({ "type": "integer", "format": "int64", "minimum": 1, "maximum": 4294967295u64 }),
                ),
                limit.clone(),
                sort_by.clone(),
                (
                    "sort_order",
                    false,
                    json!({ "type": "string", "enum": ["desc", "asc"] }),
                ),
                ("start_date", false, date.clone()),
                ("end_date", false, date.clone()),
                compare.clone(),
                format.clone(),
            ],
        ),
        (
            "get",
            "/api/v1/analytics/widgets",
            &[
                limit.clone(),
                sort_by.clone(),
                (
                    "widget_type",
                    false,
                    json!({ "type": "string", "enum": widget_types }),
                ),
                ("start_date", false, date.clone()),
                compare.clone(),
                format.clone(),
            ],
        ),
        (
            "get",
            "/admin/v1/shops/{shop}/products",
            &[("query", false, json!({ "type": "string" }))],
        ),
        (
            "get",
            "/app/api/shops/{shop}/products",
            &[("query", false, json!({ "type": "string" }))],
        ),
        ("get", "/api/v1/analytics/summary", &one_record),
        ("get", "/api/v1/analytics/video/{videoId}", &one_record),
        ("get", "/api/v1/analytics/widget/{widgetId}", &one_record),
        (
            "get",
            "/api/v1/analytics/timeseries",
            &[
                (
                    "interval",
                    false,
                    json!({ "type": "string", "enum": ["day", "week", "month"] }),
                ),
                ("video_id", false, json!({ "type": "string" })),
                ("widget_id", false, json!({ "type": "string" })),
                ("start_date", false, date.clone()),
                ("end_date", false, date.clone()),
                compare.clone(),
                format.clone(),
            ],
        ),
        (
            "get",
            "/apps/videoapp_sub/contextual-widgets",
            &[
                (
                    "location",
                    true,
                    json!({ "type": "string", "enum": locations }),
                ),
                ("product_id", false, json!({ "type": "string" })),
                ("widget_ids", false, json!({ "type": "string" })),
                ("shop", true, json!({ "type": "string" })),
                ("timestamp", true, json!({ "type": "integer" })),
                ("signature", true, json!({ "type": "string" })),
            ],
        ),
        (
            "get",
            "/apps/videoapp_sub/widget-by-id",
            &[
                ("id", true, json!({ "type": "string" })),
                (
                    "location",
                    false,
                    json!({ "type": "string", "enum": locations }),
                ),
                ("shop", true, json!({ "type": "string" })),
            ],
        ),
        (
            "get",
            "/apps/videoapp_sub/widgets-list",
            &[
                (
                    "type",
                    true,
                    json!({ "type": "string", "enum": widget_types }),
                ),
                ("shop", true, json!({ "type": "string" })),
            ],
        ),
        (
            "post",
            "/apps/videoapp_sub/analytics",
            &[
                ("shop", true, json!({ "type": "string" })),
                (
                    "logged_in_customer_id",
                    false,
                    json!({ "type": "string", "pattern": CustomerId::PATTERN, "maxLength": CustomerId::MAX_DIGITS }),
                ),
            ],
        ),
    ];
    for (method, path, parameters) in expected {
        let documented = query_parameters(&doc, method, path);
        for (name, required, schema) in *parameters {
            let parameter = documented
                .get(*name)
                .unwrap_or_else(|| panic!("{method} {path} does not document {name}"));
            assert_eq!(parameter["required"], json!(required), "{path} {name}");
            // Every key given is in the documented schema, with that value.
            for (key, value) in schema.as_object().unwrap() {
                assert_eq!(
                    &parameter["schema"][key], value,
                    "{path} {name}: {key} in {}",
                    parameter["schema"]
                );
            }
        }
    }
}

/// The answers the HTTP edge gives whatever the handler are on every operation, an optional query
/// parameter may be sent empty, each schema name means one thing, and the catalog's identifiers
/// carry what their parsers take.
#[tokio::test]
async fn the_openapi_document_states_what_the_edge_takes_and_answers() {
    let app = spawn_app().await;
    let (_, doc) = json_of(app.get("/openapi.json").await).await;
    let mut operations = 0;
    for (path, item) in doc["paths"].as_object().unwrap() {
        for (method, operation) in item.as_object().unwrap() {
            operations += 1;
            let responses = &operation["responses"];
            for status in ["400", "414", "431"] {
                assert!(
                    responses[status].is_object(),
                    "{method} {path}: no {status}"
                );
            }
            if operation["requestBody"].is_object() {
                for status in ["408", "413", "415"] {
                    assert!(
                        responses[status].is_object(),
                        "{method} {path}: no {status}"
                    );
                }
            }
            for parameter in operation["parameters"].as_array().into_iter().flatten() {
                let optional_query = parameter["in"] == "query" && parameter["required"] != true;
                assert_eq!(
                    parameter.get("allowEmptyValue") == Some(&json!(true)),
                    optional_query,
                    "{method} {path} {}",
                    parameter["name"]
                );
            }
        }
    }
    assert!(operations >= 30, "{operations} operations");

    let ok_schema = |method: &str, path: &str| {
        doc["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
            ["$ref"]
            .clone()
    };
    assert_ne!(
        ok_schema("get", "/admin/v1/shops/{shop}/videos"),
        ok_schema("get", "/api/v1/analytics/videos")
    );
    assert_ne!(
        ok_schema("get", "/admin/v1/shops/{shop}/widgets"),
        ok_schema("get", "/api/v1/analytics/widgets")
    );

    let shop = &doc["paths"]["/admin/v1/shops/{shop}"]["put"]["parameters"][0]["schema"];
    let pattern = shop["pattern"].as_str().expect("the shop's pattern");
    assert!(
        pattern.contains("[Mm][Yy][Ss][Hh][Oo][Pp][Ii][Ff][Yy]"),
        "{pattern}"
    );
    let schemas = &doc["components"]["schemas"];
    let enum_of = |name: &str| {
        schemas[name]["enum"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert!(enum_of("Currency").contains(&json!("EUR")));
    assert!(enum_of("Timezone").contains(&json!("Europe/Paris")));
    // An event's attribution type, and the split of metrics by it: two schemas, two names.
    assert_eq!(
        enum_of("Attribution"),
        [json!("direct"), json!("influenced")]
    );
    let split = &schemas["AttributionSplit"]["properties"];
    assert!(
        split["direct"].is_object() && split["influenced"].is_object(),
        "{split}"
    );
    assert_eq!(
        schemas["ProductGid"]["pattern"],
        json!("^(gid://shopify/Product/)?0*[1-9][0-9]{0,18}$")
    );
}

/// The bounds the admin API and the event endpoint enforce, as the document states them; the
/// patterns themselves are held against the code's rules by the unit tests beside them.
#[tokio::test]
async fn the_openapi_document_states_the_bounds_of_every_admin_and_event_field() {
    let app = spawn_app().await;
    let (_, doc) = json_of(app.get("/openapi.json").await).await;
    let schemas = &doc["components"]["schemas"];
    let field = |schema: &str, path: &str| {
        path.split('.')
            .fold(&schemas[schema]["properties"], |value, key| &value[key])
            .clone()
    };
    let bounds = |value: &Value| {
        [
            "minLength",
            "maxLength",
            "minItems",
            "maxItems",
            "uniqueItems",
        ]
        .iter()
        .filter(|key| value.get(**key).is_some())
        .map(|key| format!("{key}={}", value[*key]))
        .collect::<Vec<_>>()
        .join(" ")
    };
    for (schema, path, expected) in [
        ("ShopSettings", "name", "maxLength=256"),
        ("NewApiKey", "name", "minLength=1 maxLength=256"),
        ("Product", "title", "minLength=1 maxLength=512"),
        ("Product", "handle", "minLength=1 maxLength=255"),
        ("Product", "image", "maxLength=2048"),
        ("Product", "url", "maxLength=2048"),
        ("Product", "collectionIds", "maxItems=250"),
        ("ProductUpsert", "products", "maxItems=1000"),
        ("ProductDelete", "ids", "maxItems=1000"),
        ("NewVideo", "title", "minLength=1 maxLength=512"),
        ("NewVideo", "videoUrl", "minLength=1 maxLength=2048"),
        ("NewVideo", "thumbnail", "maxLength=2048"),
        ("NewVideo", "miniVersionUrl", "maxLength=2048"),
        ("NewVideo", "productIds", "maxItems=250 uniqueItems=true"),
        ("VideoPatch", "title", "minLength=1 maxLength=512"),
        ("VideoPatch", "videoUrl", "minLength=1 maxLength=2048"),
        ("VideoPatch", "productIds", "maxItems=250 uniqueItems=true"),
        ("NewWidget", "title", "maxLength=256"),
        ("NewWidget", "videoIds", "maxItems=200 uniqueItems=true"),
        ("WidgetPatch", "title", "maxLength=256"),
        ("WidgetPatch", "videoIds", "maxItems=200 uniqueItems=true"),
        ("DisplayRules", "locations", "maxItems=500"),
        ("DisplayRules", "productIds", "maxItems=500"),
        ("DisplayRules", "collectionIds", "maxItems=500"),
        ("IncomingEvent", "productIds", "maxItems=250"),
        ("EventBatch", "events", "minItems=1 maxItems=100"),
    ] {
        assert_eq!(bounds(&field(schema, path)), expected, "{schema}.{path}");
    }

    // Every stored text refuses control characters; a required one is not only whitespace, a
    // handle has none, a link is an absolute http(s) URL (or empty where it is optional).
    let pattern =
        |schema: &str, path: &str| field(schema, path)["pattern"].as_str().unwrap().to_string();
    let control = r"[^\u0000-\u001F\u007F-\u009F]";
    assert_eq!(pattern("ShopSettings", "name"), format!("^{control}*$"));
    assert!(pattern("NewApiKey", "name").starts_with(&format!("^{control}*[^")));
    assert!(pattern("Product", "handle").ends_with(r"\u3000]+$"));
    let link = pattern("NewVideo", "videoUrl");
    assert!(link.starts_with("^[Hh][Tt][Tt][Pp][Ss]?://"), "{link}");
    assert_eq!(pattern("NewVideo", "thumbnail"), format!("^$|{link}"));
    assert_eq!(
        field("VideoPatch", "title")["type"],
        json!(["string", "null"])
    );

    for (schema, path) in [("NewWidget", "priority"), ("WidgetPatch", "priority")] {
        let priority = field(schema, path);
        assert_eq!(priority["minimum"], json!(i32::MIN), "{schema}");
        assert_eq!(priority["maximum"], json!(i32::MAX), "{schema}");
    }
    let duration = field("NewVideo", "duration");
    assert_eq!(
        (&duration["minimum"], &duration["maximum"]),
        (&json!(0), &json!(86400))
    );

    let uuid = "^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$";
    assert_eq!(
        field("NewWidget", "videoIds")["items"]["pattern"],
        json!(uuid)
    );
    let event_id = field("IncomingEvent", "eventId");
    assert_eq!(event_id["pattern"], json!(uuid));
    assert_eq!(event_id["format"], json!("uuid"));

    let timestamp = field("IncomingEvent", "timestamp");
    assert_eq!(timestamp["type"], json!(["string", "null"]));
    assert_eq!(timestamp["format"], json!("date-time"));
    assert!(timestamp["pattern"].as_str().unwrap().contains("[Tt]"));
    assert!(timestamp["description"]
        .as_str()
        .unwrap()
        .contains("replaced"));

    let revenue = &schemas["Revenue"]["oneOf"];
    assert_eq!(
        revenue[0],
        json!({ "type": "number", "minimum": 0, "maximum": 1_000_000_000_000_i64, "multipleOf": 0.0001 })
    );
    assert_eq!(revenue[1]["type"], "string");
    assert!(revenue[1]["pattern"]
        .as_str()
        .unwrap()
        .contains("[0-9]{1,4}"));

    let text = &schemas["Text"]["oneOf"];
    assert_eq!(text[0]["maxLength"], json!(256));
    assert_eq!(text[0]["pattern"], json!(format!("^{control}*$")));
    assert_eq!(
        (&text[1]["type"], &text[1]["minimum"], &text[1]["maximum"]),
        (&json!("integer"), &json!(i64::MIN), &json!(u64::MAX))
    );
}
