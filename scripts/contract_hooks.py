"""Schemathesis hooks for `scripts/api_contract.py`.

Analytics: a date range is more than two valid dates (`end_date` not before `start_date`, at most
1096 days counting both, `end_date` defaulting to today), which a schema cannot say: when both
dates parse but make no range, the hook moves `end_date` to 30 days after `start_date`. A time
series is of the shop, one video or one widget, never of a video and a widget at once: when both
ids are given (not blank), the hook drops `widget_id`.

Admin: a product named twice in one request is refused, and "twice" counts a bare number and
its global id (`7`, `007`, `gid://shopify/Product/7`) as one product. JSON Schema's `uniqueItems`
compares the texts, and cannot say "distinct by `id`" of an array of objects at all: in a valid
generated body the hook keeps the first of each product (`products` of the products upsert,
`productIds` of a video). A widget's `videoIds` must name videos the shop has, which no schema
can know: the hook puts the shop's own videos (read through the admin API, at
VIDEOAPP_CONTRACT_BASE with VIDEOAPP_CONTRACT_ADMIN_TOKEN) in place of the generated ids, as many
as it has.

Storefront: the platform's app proxy signs every request it forwards; the hook does what the proxy
does, so
that generated requests reach the handlers instead of stopping at the signature check: it sets
`timestamp` to now and `signature` to the HMAC-SHA256 of the query (every parameter but
`signature`, a repeated key's values joined with `,`, the `key=value` groups sorted by their
bytes and concatenated), with the secret in VIDEOAPP_PROXY_SECRET. A generated shop domain is
replaced by the seeded shop (VIDEOAPP_CONTRACT_SHOP) so that requests find a catalog.

Dashboard: `/app/api/*` is the admin and analytics APIs again behind a session token of the
seeded shop; a generated `{shop}` of a valid request becomes that shop (a token opens its own
shop only), then the admin and analytics fixes above apply.

Platform webhooks: the platform signs each delivery's raw body; for a generated valid delivery the
hook serialises the body once, sends those bytes, sets `X-Shopify-Hmac-Sha256` to their
base64 HMAC-SHA256 under the same secret and `X-Shopify-Triggered-At` to now (within the replay
window), so that deliveries reach the topic and body checks.
"""

import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request

import schemathesis

SECRET = os.environ["VIDEOAPP_PROXY_SECRET"].encode()
SHOP = os.environ["VIDEOAPP_CONTRACT_SHOP"]
SHOP_DOMAIN = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9-]{0,62}\.myshopify\.com\s*$", re.IGNORECASE)


# Days a range may span, both ends counted (`MAX_DAYS` of `src/analytics/dates.rs`).
MAX_DAYS = 1096
DEFAULT_DAYS = 30


def as_date(value):
    try:
        return datetime.date.fromisoformat(value) if isinstance(value, str) else None
    except ValueError:
        return None


def one_subject(query):
    """Keeps `video_id` alone when a query names a video and a widget."""
    given = lambda key: isinstance(query.get(key), str) and query[key].strip()
    if given("video_id") and given("widget_id"):
        del query["widget_id"]


def fix_range(query):
    """Moves `end_date` to 30 days after `start_date` when the two dates parse but make no range."""
    start, end = as_date(query.get("start_date")), as_date(query.get("end_date"))
    if start is None or (query.get("end_date") and end is None):
        return
    end = end or datetime.datetime.now(datetime.timezone.utc).date()
    if start > end or (end - start).days + 1 > MAX_DAYS:
        query["end_date"] = (start + datetime.timedelta(days=DEFAULT_DAYS)).isoformat()


PRODUCT_GID = re.compile(r"^(gid://shopify/Product/)?0*([1-9][0-9]{0,18})$")


def product_key(value):
    """The product a generated id names, or the value itself when it is no product id."""
    match = PRODUCT_GID.match(value) if isinstance(value, str) else None
    return match.group(2) if match else repr(value)


def first_of_each(items, key):
    seen = set()
    kept = []
    for item in items:
        if key(item) not in seen:
            seen.add(key(item))
            kept.append(item)
    return kept


def distinct_products(body):
    """Keeps the first of each product in a valid generated admin body."""
    if not isinstance(body, dict):
        return
    if isinstance(body.get("products"), list):
        body["products"] = first_of_each(
            body["products"], lambda p: product_key(p.get("id")) if isinstance(p, dict) else repr(p)
        )
    if isinstance(body.get("productIds"), list):
        body["productIds"] = first_of_each(body["productIds"], product_key)


def shop_videos(shop):
    """The ids of the shop's videos, or None when the shop cannot be read (e.g. it does not exist)."""
    request = urllib.request.Request(
        f"{os.environ['VIDEOAPP_CONTRACT_BASE']}/admin/v1/shops/{urllib.parse.quote(shop)}/videos",
        headers={"authorization": f"Bearer {os.environ['VIDEOAPP_CONTRACT_ADMIN_TOKEN']}"},
    )
    try:
        with urllib.request.urlopen(request) as response:
            return [video["id"] for video in json.loads(response.read())["videos"]]
    except urllib.error.HTTPError:
        return None


def existing_videos(case):
    """Puts the shop's own videos in place of a valid generated widget's `videoIds`."""
    body = case.body
    if not (isinstance(body, dict) and isinstance(body.get("videoIds"), list)):
        return
    shop = (case.path_parameters or {}).get("shop")
    videos = shop_videos(shop) if isinstance(shop, str) else None
    if videos is not None:
        body["videoIds"] = videos[: len(body["videoIds"])]


def wire_text(value):
    """A generated value as the query string carries it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(value)


def signature(query):
    groups = []
    for key, value in query.items():
        values = value if isinstance(value, list) else [value]
        groups.append(f"{key}=" + ",".join(values))
    message = "".join(sorted(groups, key=lambda group: group.encode()))
    return hmac.new(SECRET, message.encode(), hashlib.sha256).hexdigest()


def is_positive(case):
    return case.meta is not None and case.meta.generation.mode.is_positive


def sign_delivery(case):
    raw = json.dumps(case.body).encode()
    case.body = raw
    mac = hmac.new(SECRET, raw, hashlib.sha256).digest()
    case.headers = dict(case.headers or {})
    case.headers["X-Shopify-Hmac-Sha256"] = base64.b64encode(mac).decode()
    case.headers["X-Shopify-Triggered-At"] = datetime.datetime.now(datetime.timezone.utc).isoformat()


@schemathesis.hook
def before_call(ctx, case, **kwargs):
    path = case.operation.path
    if path.startswith("/app/api/shops/") and is_positive(case):
        case.path_parameters = dict(case.path_parameters or {}, shop=SHOP)
        distinct_products(case.body)
        if "/widgets" in path:
            existing_videos(case)
        return
    if path.startswith("/app/api/analytics/") and isinstance(case.query, dict):
        fix_range(case.query)
        one_subject(case.query)
        return
    if case.operation.path.startswith("/webhooks/"):
        if is_positive(case) and not isinstance(case.body, bytes):
            sign_delivery(case)
        return
    if case.operation.path.startswith("/admin/") and is_positive(case):
        distinct_products(case.body)
        if "/widgets" in case.operation.path:
            existing_videos(case)
        return
    if case.operation.path.startswith("/api/v1/") and isinstance(case.query, dict):
        fix_range(case.query)
        one_subject(case.query)
        return
    if not case.operation.path.startswith("/apps/"):
        return
    query = {}
    for key, value in (case.query or {}).items():
        if key == "signature":
            continue
        if isinstance(value, list):
            query[key] = [wire_text(item) for item in value]
        else:
            query[key] = wire_text(value)
    if isinstance(query.get("shop"), str) and SHOP_DOMAIN.match(query["shop"]):
        query["shop"] = SHOP
    query["timestamp"] = str(int(time.time()))
    query["signature"] = signature(query)
    case.query = query
