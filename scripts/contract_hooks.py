"""Schemathesis hooks for the storefront endpoints (`scripts/api_contract.py`).

The platform's app proxy signs every request it forwards; the hook does what the proxy does, so
that generated requests reach the handlers instead of stopping at the signature check: it sets
`timestamp` to now and `signature` to the HMAC-SHA256 of the query (every parameter but
`signature`, a repeated key's values joined with `,`, the `key=value` groups sorted by their
bytes and concatenated), with the secret in VIDEOAPP_PROXY_SECRET. A generated shop domain is
replaced by the seeded shop (VIDEOAPP_CONTRACT_SHOP) so that requests find a catalog.
"""

import hashlib
import hmac
import os
import re
import time

import schemathesis

SECRET = os.environ["VIDEOAPP_PROXY_SECRET"].encode()
SHOP = os.environ["VIDEOAPP_CONTRACT_SHOP"]
SHOP_DOMAIN = re.compile(r"^\s*[A-Za-z0-9][A-Za-z0-9-]{0,62}\.myshopify\.com\s*$", re.IGNORECASE)


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


@schemathesis.hook
def before_call(ctx, case, **kwargs):
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
