//! The webhook topics the service takes, and the work each delivery's body asks for, parsed when
//! the delivery arrives (a body that cannot be worked on is refused then, not retried later).
//!
//! Every topic's body is the JSON object the platform documents for it, and a body that names its
//! shop must name the shop of the delivery's `X-Shopify-Shop-Domain`. The HMAC proves only that
//! the app's secret signed the body, and that secret also signs the session tokens a merchant
//! holds for their own shop: a token's signature is a valid HMAC of its `header.payload`, which
//! is not JSON. So a body that is not the topic's JSON object is refused whatever its HMAC, and a
//! genuine body of one shop cannot act on another.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::admin_api::ProductNode;
use crate::catalog::domain::{CollectionGid, ProductGid, ShopDomain, TextLine};
use crate::catalog::products::{PlatformChange, Product};
use crate::warehouse::privacy::Customer;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    AppUninstalled,
    ProductsCreate,
    ProductsUpdate,
    ProductsDelete,
    CustomersDataRequest,
    CustomersRedact,
    ShopRedact,
}

impl Topic {
    pub const ALL: [Topic; 7] = [
        Topic::AppUninstalled,
        Topic::ProductsCreate,
        Topic::ProductsUpdate,
        Topic::ProductsDelete,
        Topic::CustomersDataRequest,
        Topic::CustomersRedact,
        Topic::ShopRedact,
    ];

    /// As the platform names it in `X-Shopify-Topic`; also the metrics' `topic` label.
    pub fn as_str(self) -> &'static str {
        match self {
            Topic::AppUninstalled => "app/uninstalled",
            Topic::ProductsCreate => "products/create",
            Topic::ProductsUpdate => "products/update",
            Topic::ProductsDelete => "products/delete",
            Topic::CustomersDataRequest => "customers/data_request",
            Topic::CustomersRedact => "customers/redact",
            Topic::ShopRedact => "shop/redact",
        }
    }

    pub fn parse(raw: &str) -> Option<Topic> {
        Topic::ALL.into_iter().find(|t| t.as_str() == raw)
    }
}

/// What a delivery asks the service to do, as it is recorded (JSON) until it is done.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Work {
    /// The merchant removed the app: the shop is uninstalled (its data stays until `shop/redact`).
    Uninstall,
    /// The product's state as of `change`'s time.
    Product { change: PlatformChange },
    /// A customer's data request: a report of every event held for them.
    CustomerReport {
        customer: Customer,
        data_request_id: String,
        requested_at: DateTime<Utc>,
    },
    /// The customer's raw events are deleted.
    CustomerRedact { customer: Customer },
    /// Everything of the shop is deleted.
    ShopRedact,
    /// The shop's products are imported from the Admin API, from the page after `after` (the
    /// import's progress, saved after each page).
    ImportProducts { after: Option<String> },
    /// The app's checkout pixel is activated on the shop: created, or updated when it exists.
    ActivatePixel,
    /// The shop's collections are imported from the Admin API, from the page after `after`;
    /// those the import did not see are forgotten at its end.
    ImportCollections { after: Option<String> },
    /// The shop's holdout, as it is when the work runs, is published to its theme (an app-data
    /// metafield the app embed reads), so that a page decides a browser's group before it renders.
    PublishHoldout,
}

/// The topic of a product import's row: not a webhook's, but worked on, retried and counted
/// like one.
pub const IMPORT_TOPIC: &str = "products/import";
/// The topic of the pixel's activation at install.
pub const PIXEL_TOPIC: &str = "web_pixel/activate";
/// The topic of a collection import at install.
pub const COLLECTIONS_TOPIC: &str = "collections/import";
/// The topics of the work an install records, in the order it is done.
pub const INSTALL_TOPICS: [&str; 3] = [PIXEL_TOPIC, COLLECTIONS_TOPIC, IMPORT_TOPIC];
/// The topic of publishing the shop's holdout after a change of it.
pub const HOLDOUT_TOPIC: &str = "holdout/publish";

/// Why a body cannot be worked on; the message names the field.
#[derive(Debug)]
pub struct InvalidPayload(pub String);

/// The body of a product webhook: the fields the catalog keeps, of the many the platform sends.
#[derive(Deserialize)]
struct ProductPayload {
    id: serde_json::Value,
    title: Option<String>,
    handle: Option<String>,
    /// `active`, `draft`, `archived`; only an active product is shown.
    status: Option<String>,
    updated_at: Option<DateTime<Utc>>,
    image: Option<ImagePayload>,
    images: Option<Vec<ImagePayload>>,
}

#[derive(Deserialize)]
struct ImagePayload {
    src: Option<String>,
}

/// The body of `app/uninstalled`: the platform's shop resource, of whose many fields these say
/// which shop it is. (`domain` is the shop's primary domain, which may be a domain of its own.)
#[derive(Deserialize)]
struct ShopPayload {
    id: serde_json::Value,
    myshopify_domain: String,
}

/// The body of `shop/redact`.
#[derive(Deserialize)]
struct ShopRedactPayload {
    shop_id: serde_json::Value,
    shop_domain: String,
}

/// The body of `customers/data_request` and `customers/redact`.
#[derive(Deserialize)]
struct CustomerPayload {
    shop_id: serde_json::Value,
    shop_domain: String,
    customer: IdPayload,
    #[serde(default)]
    orders_requested: Vec<serde_json::Value>,
    #[serde(default)]
    orders_to_redact: Vec<serde_json::Value>,
    data_request: Option<IdPayload>,
}

#[derive(Deserialize)]
struct IdPayload {
    id: serde_json::Value,
}

/// A platform id's number: a JSON number, or digits, or a global id of `kind`.
fn platform_number(raw: &serde_json::Value, kind: &str) -> Option<u64> {
    let text = match raw {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.trim().to_string(),
        _ => return None,
    };
    let prefix = format!("gid://shopify/{kind}/");
    let digits = text.strip_prefix(prefix.as_str()).unwrap_or(&text);
    digits.parse().ok().filter(|n| *n > 0)
}

/// The forms an id takes in events: the number, and the global id.
fn id_forms(n: u64, kind: &str) -> [String; 2] {
    [n.to_string(), format!("gid://shopify/{kind}/{n}")]
}

fn customer(
    payload: &CustomerPayload,
    (field, orders): (&str, &[serde_json::Value]),
) -> Result<Customer, InvalidPayload> {
    let id = platform_number(&payload.customer.id, "Customer")
        .ok_or_else(|| InvalidPayload("customer.id: not a customer id".into()))?;
    let mut order_ids = Vec::new();
    for (i, order) in orders.iter().enumerate() {
        let n = platform_number(order, "Order")
            .ok_or_else(|| InvalidPayload(format!("{field}[{i}]: not an order id")))?;
        order_ids.extend(id_forms(n, "Order"));
    }
    Ok(Customer {
        ids: id_forms(id, "Customer").to_vec(),
        order_ids,
    })
}

/// `products/delete` carries the id only.
#[derive(Deserialize)]
struct DeletedPayload {
    id: serde_json::Value,
}

/// The body as `T`, if it is a JSON object; a wrong or missing field is named by its path.
fn object<T: DeserializeOwned>(body: &[u8]) -> Result<T, InvalidPayload> {
    let value: serde_json::Value = serde_json::from_slice(body)
        .map_err(|e| InvalidPayload(format!("body: not JSON ({e})")))?;
    if !value.is_object() {
        return Err(InvalidPayload(
            "body: not a JSON object (every topic's payload is one)".into(),
        ));
    }
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "body".into() } else { path };
        InvalidPayload(format!("{field}: {}", e.into_inner()))
    })
}

/// Longer than any shop domain: not repeated in a message.
const MAX_SHOWN_DOMAIN: usize = 255;

/// That the body's `field`, `named`, is the delivery's shop.
fn same_shop(field: &str, named: &str, shop: &ShopDomain) -> Result<(), InvalidPayload> {
    if ShopDomain::parse(named).is_ok_and(|named| &named == shop) {
        return Ok(());
    }
    let named = match named.chars().count() <= MAX_SHOWN_DOMAIN {
        true => format!("'{named}'"),
        false => "a long value".into(),
    };
    Err(InvalidPayload(format!(
        "{field}: {named} is not the shop of X-Shopify-Shop-Domain ({shop})"
    )))
}

fn shop_id(raw: &serde_json::Value, field: &str) -> Result<(), InvalidPayload> {
    platform_number(raw, "Shop")
        .map(|_| ())
        .ok_or_else(|| InvalidPayload(format!("{field}: not a shop id")))
}

/// The work of a delivery of `topic` for `shop`, sent at `triggered_at`, from its `body`.
pub fn parse(
    topic: Topic,
    shop: &ShopDomain,
    body: &[u8],
    triggered_at: DateTime<Utc>,
) -> Result<Work, InvalidPayload> {
    match topic {
        Topic::AppUninstalled => {
            let payload: ShopPayload = object(body)?;
            shop_id(&payload.id, "id")?;
            same_shop("myshopify_domain", &payload.myshopify_domain, shop)?;
            Ok(Work::Uninstall)
        }
        Topic::ShopRedact => {
            let payload: ShopRedactPayload = object(body)?;
            shop_id(&payload.shop_id, "shop_id")?;
            same_shop("shop_domain", &payload.shop_domain, shop)?;
            Ok(Work::ShopRedact)
        }
        Topic::CustomersRedact => {
            let payload: CustomerPayload = customer_payload(body, shop)?;
            let orders = ("orders_to_redact", payload.orders_to_redact.as_slice());
            let customer = customer(&payload, orders)?;
            Ok(Work::CustomerRedact { customer })
        }
        Topic::CustomersDataRequest => {
            let payload: CustomerPayload = customer_payload(body, shop)?;
            let orders = ("orders_requested", payload.orders_requested.as_slice());
            let customer = customer(&payload, orders)?;
            let data_request_id = match payload.data_request.map(|r| r.id) {
                Some(serde_json::Value::Number(n)) => n.to_string(),
                Some(serde_json::Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
                _ => return Err(InvalidPayload("data_request.id: missing".into())),
            };
            Ok(Work::CustomerReport {
                customer,
                data_request_id,
                requested_at: triggered_at,
            })
        }
        Topic::ProductsDelete => {
            let payload: DeletedPayload = object(body)?;
            let id = product_id(&payload.id)?;
            let change = PlatformChange::Removed {
                id,
                at: triggered_at,
            };
            Ok(Work::Product { change })
        }
        Topic::ProductsCreate | Topic::ProductsUpdate => {
            let payload: ProductPayload = object(body)?;
            Ok(Work::Product {
                change: product_change(shop, payload, triggered_at)?,
            })
        }
    }
}

fn customer_payload(body: &[u8], shop: &ShopDomain) -> Result<CustomerPayload, InvalidPayload> {
    let payload: CustomerPayload = object(body)?;
    shop_id(&payload.shop_id, "shop_id")?;
    same_shop("shop_domain", &payload.shop_domain, shop)?;
    Ok(payload)
}

/// A product id as the platform writes it: a number, or its global id.
fn product_id(raw: &serde_json::Value) -> Result<ProductGid, InvalidPayload> {
    let text = match raw {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.clone(),
        _ => String::new(),
    };
    ProductGid::parse(&text).map_err(|e| InvalidPayload(format!("id: {e}")))
}

fn product_change(
    shop: &ShopDomain,
    payload: ProductPayload,
    triggered_at: DateTime<Utc>,
) -> Result<PlatformChange, InvalidPayload> {
    let id = product_id(&payload.id)?;
    let image = payload
        .image
        .or_else(|| payload.images.and_then(|i| i.into_iter().next()))
        .and_then(|i| i.src);
    let state = ProductState {
        title: payload.title,
        handle: payload.handle,
        active: payload.status.as_deref().is_none_or(|s| s == "active"),
        image,
        // The body does not list the product's collections.
        collections: None,
    };
    // The product's own time orders its states; a payload without one is as of its sending.
    state.into_change(shop, id, payload.updated_at.unwrap_or(triggered_at))
}

/// A product read from the Admin API (the first import), as the change it makes to the catalog.
pub fn imported_change(
    shop: &ShopDomain,
    node: ProductNode,
    started_at: DateTime<Utc>,
) -> Result<PlatformChange, InvalidPayload> {
    let id = ProductGid::parse(&node.id).map_err(|e| InvalidPayload(format!("id: {e}")))?;
    let image = node.image_url().map(str::to_string);
    let collections: Vec<CollectionGid> = node
        .collection_ids()
        .map(CollectionGid::parse)
        .collect::<Result<_, _>>()
        .map_err(|e| InvalidPayload(format!("collections: {e}")))?;
    let state = ProductState {
        title: node.title,
        handle: node.handle,
        active: node.status.as_deref().is_none_or(|s| s == "ACTIVE"),
        image,
        collections: Some(collections),
    };
    state.into_change(shop, id, node.updated_at.unwrap_or(started_at))
}

/// A required line of the platform's text (a title, a handle) as the catalog holds it: present,
/// not blank, without the stray control characters the platform's text may carry.
pub fn platform_line(field: &str, value: Option<&str>) -> Result<TextLine, InvalidPayload> {
    let value = value.filter(|v| !v.trim().is_empty());
    let value = value.ok_or_else(|| InvalidPayload(format!("{field}: missing or empty")))?;
    let line: String = value.chars().filter(|c| !c.is_control()).collect();
    TextLine::parse(&line).map_err(|e| InvalidPayload(format!("{field}: {e}")))
}

/// What the catalog keeps of a product, from a webhook or the Admin API.
struct ProductState {
    title: Option<String>,
    handle: Option<String>,
    /// Only an active product is shown; another is removed from the storefront's reach.
    active: bool,
    image: Option<String>,
    /// Every collection the product is in, where the source lists them.
    collections: Option<Vec<CollectionGid>>,
}

impl ProductState {
    fn into_change(
        self,
        shop: &ShopDomain,
        id: ProductGid,
        at: DateTime<Utc>,
    ) -> Result<PlatformChange, InvalidPayload> {
        if !self.active {
            return Ok(PlatformChange::Removed { id, at });
        }
        let title = platform_line("title", self.title.as_deref())?;
        let handle = platform_line("handle", self.handle.as_deref())?;
        let with_collections = self.collections.is_some();
        let image = self.image.unwrap_or_default();
        let url = format!("https://{shop}/products/{}", handle.as_str());
        let product = Product {
            id,
            title,
            handle,
            image: TextLine::parse(&image).map_err(|e| InvalidPayload(format!("image: {e}")))?,
            url: TextLine::parse(&url).map_err(|e| InvalidPayload(format!("handle: {e}")))?,
            collection_ids: self.collections.unwrap_or_default(),
        };
        Ok(PlatformChange::Active {
            product,
            at,
            with_collections,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shop() -> ShopDomain {
        ShopDomain::parse("a-shop.myshopify.com").unwrap()
    }

    fn now() -> DateTime<Utc> {
        "2026-11-24T10:00:00Z".parse().unwrap()
    }

    #[test]
    fn an_active_product_becomes_a_catalog_product_as_of_its_updated_at() {
        let body = br#"{"id": 632910392, "title": "IPod Nano", "handle": "ipod-nano",
            "status": "active", "updated_at": "2026-11-24T05:00:00-05:00",
            "image": {"src": "https://cdn.example/ipod.png"}, "variants": []}"#;
        let work = parse(Topic::ProductsUpdate, &shop(), body, now()).unwrap();
        let Work::Product {
            change:
                PlatformChange::Active {
                    product,
                    at,
                    with_collections,
                },
        } = work
        else {
            panic!("not an active product: {work:?}")
        };
        assert_eq!(product.id.as_str(), "gid://shopify/Product/632910392");
        assert_eq!(product.title.as_str(), "IPod Nano");
        assert_eq!(product.image.as_str(), "https://cdn.example/ipod.png");
        assert_eq!(
            product.url.as_str(),
            "https://a-shop.myshopify.com/products/ipod-nano"
        );
        assert_eq!(at, now());
        // The body does not list the product's collections: the catalog keeps those it holds.
        assert!(!with_collections);
    }

    #[test]
    fn a_product_change_recorded_by_an_earlier_release_is_still_worked_on() {
        // Work is recorded as JSON until it is done; this is how it was written before the
        // changes said whether they list the product's collections.
        let recorded = r#"{"kind": "product", "change": {"state": "active",
            "at": "2026-11-24T10:00:00Z", "product": {"id": "gid://shopify/Product/1",
            "title": "T", "handle": "t", "image": "", "url": "https://a-shop.myshopify.com/products/t",
            "collectionIds": []}}}"#;
        let work: Work = serde_json::from_str(recorded).unwrap();
        let Work::Product {
            change: PlatformChange::Active {
                with_collections, ..
            },
        } = work
        else {
            panic!("not an active product: {work:?}")
        };
        assert!(!with_collections);
    }

    #[test]
    fn a_draft_product_and_a_deleted_one_are_removals() {
        let draft = br#"{"id": 1, "title": "T", "handle": "t", "status": "draft"}"#;
        let work = parse(Topic::ProductsCreate, &shop(), draft, now()).unwrap();
        assert!(matches!(
            work,
            Work::Product {
                change: PlatformChange::Removed { .. }
            }
        ));
        let deleted = parse(Topic::ProductsDelete, &shop(), br#"{"id": 7}"#, now()).unwrap();
        let Work::Product {
            change: PlatformChange::Removed { id, at },
        } = deleted
        else {
            panic!("not a removal")
        };
        assert_eq!((id.as_str(), at), ("gid://shopify/Product/7", now()));
    }

    /// The documented payloads, trimmed to a few of their fields, for `a-shop`.
    fn documented(topic: Topic) -> serde_json::Value {
        let customer = serde_json::json!({
            "id": 191167, "email": "john@example.com", "phone": "555-625-1199"
        });
        match topic {
            Topic::AppUninstalled => serde_json::json!({
                "id": 548380009, "name": "Super Toys", "email": "super@supertoys.com",
                "domain": "www.supertoys.example", "myshopify_domain": "a-shop.myshopify.com",
            }),
            Topic::ShopRedact => {
                serde_json::json!({ "shop_id": 954889, "shop_domain": "a-shop.myshopify.com" })
            }
            Topic::CustomersRedact => serde_json::json!({
                "shop_id": 954889, "shop_domain": "a-shop.myshopify.com",
                "customer": customer, "orders_to_redact": [299938, 280263],
            }),
            Topic::CustomersDataRequest => serde_json::json!({
                "shop_id": 954889, "shop_domain": "a-shop.myshopify.com",
                "orders_requested": [299938], "customer": customer,
                "data_request": { "id": 9999 },
            }),
            Topic::ProductsDelete => serde_json::json!({ "id": 788032119674292922_u64 }),
            Topic::ProductsCreate | Topic::ProductsUpdate => serde_json::json!({
                "id": 788032119674292922_u64, "title": "Example T-Shirt", "handle": "example-t-shirt",
                "status": "active", "updated_at": "2026-11-24T05:00:00-05:00",
            }),
        }
    }

    #[test]
    fn every_topics_documented_payload_is_taken() {
        for topic in Topic::ALL {
            let body = serde_json::to_vec(&documented(topic)).unwrap();
            let work = parse(topic, &shop(), &body, now());
            assert!(work.is_ok(), "{}: {:?}", topic.as_str(), work.unwrap_err());
        }
    }

    #[test]
    fn a_session_tokens_signed_part_or_any_body_but_a_json_object_is_no_topics_payload() {
        // `header.payload` of an HS256 token: what its signature is the HMAC of.
        let token_part: &[u8] = b"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJkZXN0IjoiaHR0cHM6Ly9hLXNob3AubXlzaG9waWZ5LmNvbSJ9";
        for body in [
            token_part,
            b"",
            b"[1, 2]",
            br#""a-shop.myshopify.com""#,
            b"null",
        ] {
            for topic in Topic::ALL {
                let error = parse(topic, &shop(), body, now()).unwrap_err();
                assert!(
                    error.0.starts_with("body: not"),
                    "{}: {}",
                    topic.as_str(),
                    error.0
                );
            }
        }
    }

    #[test]
    fn a_payload_that_names_another_shop_or_none_is_refused_naming_the_field() {
        for (topic, field) in [
            (Topic::AppUninstalled, "myshopify_domain"),
            (Topic::ShopRedact, "shop_domain"),
            (Topic::CustomersRedact, "shop_domain"),
            (Topic::CustomersDataRequest, "shop_domain"),
        ] {
            let mut other = documented(topic);
            other[field] = "another-shop.myshopify.com".into();
            let body = serde_json::to_vec(&other).unwrap();
            let error = parse(topic, &shop(), &body, now()).unwrap_err();
            assert_eq!(
                error.0,
                format!(
                    "{field}: 'another-shop.myshopify.com' is not the shop of \
                     X-Shopify-Shop-Domain (a-shop.myshopify.com)"
                )
            );
            let mut none = documented(topic);
            none.as_object_mut().unwrap().remove(field);
            let body = serde_json::to_vec(&none).unwrap();
            let error = parse(topic, &shop(), &body, now()).unwrap_err();
            assert_eq!(error.0, format!("body: missing field `{field}`"));
        }
        let mut no_id = documented(Topic::ShopRedact);
        no_id["shop_id"] = "shop".into();
        let body = serde_json::to_vec(&no_id).unwrap();
        let error = parse(Topic::ShopRedact, &shop(), &body, now()).unwrap_err();
        assert_eq!(error.0, "shop_id: not a shop id");
    }

    #[test]
    fn a_body_without_what_the_catalog_needs_names_the_field() {
        let cases: [(&[u8], &str); 4] = [
            (b"not json", "body"),
            (br#"{"id": "x", "title": "T", "handle": "t"}"#, "id"),
            (br#"{"id": 1, "handle": "t"}"#, "title"),
            (br#"{"id": 1, "title": "T", "handle": " "}"#, "handle"),
        ];
        for (body, field) in cases {
            let error = parse(Topic::ProductsUpdate, &shop(), body, now()).unwrap_err();
            assert!(error.0.starts_with(field), "{field}: {}", error.0);
        }
    }
}
