"""The API contract: schemathesis against the service's own /openapi.json, every check, on every
surface, with real credentials.

Usage: api_contract.py BINARY DATABASE_URL CLICKHOUSE_URL CLICKHOUSE_DATABASE SPOOL_DIR

Starts `BINARY serve` on free loopback ports against the given (fresh) databases, seeds one shop
with a video, a widget and an analytics API key through the admin API, then runs schemathesis
five times, the first four at once and the webhooks last: the admin API with the admin token, the
analytics API with the key, the storefront and health endpoints with every request signed as the
platform's app proxy signs it, the dashboard's API with a session token of the seeded shop, and
the platform's webhook endpoint with every valid delivery signed as the platform signs it
(`contract_hooks.py`). Each run is bounded by examples per operation (SCHEMATHESIS_EXAMPLES, 25);
CONTRACT_SURFACES (e.g. `admin,storefront`) runs only some of the five.
Exits non-zero on any failure, after printing schemathesis's report.
"""

import base64
import hashlib
import hmac
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

ADMIN_TOKEN = "contract-admin-token-0123456789"
PROXY_SECRET = "contract-proxy-secret"
SHOP = "contract-shop.myshopify.com"
CLIENT_ID = "contract-client-id"
HERE = Path(__file__).resolve().parent


def serve(binary, database_url, clickhouse_url, clickhouse_database, spool_dir):
    """Starts the service; returns the process and its base URL (from its "serving" log line)."""
    env = dict(
        os.environ,
        DATABASE_URL=database_url,
        CLICKHOUSE_URL=clickhouse_url,
        CLICKHOUSE_DATABASE=clickhouse_database,
        VIDEOAPP_LISTEN="127.0.0.1:0",
        VIDEOAPP_METRICS_LISTEN="127.0.0.1:0",
        VIDEOAPP_LOG_FORMAT="json",
        VIDEOAPP_PROXY_SECRET=PROXY_SECRET,
        VIDEOAPP_ADMIN_TOKEN=ADMIN_TOKEN,
        # The platform settings on, so the dashboard's API takes session tokens.
        VIDEOAPP_CLIENT_ID=CLIENT_ID,
        VIDEOAPP_TOKEN_KEY="00" * 32,
        VIDEOAPP_SPOOL_DIR=spool_dir,
        VIDEOAPP_MEDIA_DIR=spool_dir + "-media",
        # Generated requests come fast; the analytics rate limit is not what is tested here.
        VIDEOAPP_RATE_LIMIT_PER_MINUTE="1000000",
        RUST_LOG="warn,videoapp=info",
    )
    process = subprocess.Popen(
        [binary, "serve"], env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
    )
    for line in process.stderr:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if entry.get("message") == "videoapp serving":
            # Keep reading the log so the service never blocks on a full pipe.
            drain = subprocess.Popen(["cat"], stdin=process.stderr, stdout=subprocess.DEVNULL)
            return process, drain, f"http://{entry['listen']}"
    sys.exit(f"the service exited before serving (status {process.wait()})")


def admin(base, method, path, body=None):
    request = urllib.request.Request(
        f"{base}/admin/v1{path}",
        method=method,
        data=None if body is None else json.dumps(body).encode(),
        headers={"authorization": f"Bearer {ADMIN_TOKEN}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read() or b"null")


def seed(base):
    """One shop with a product, a published video on a widget, and an analytics API key."""
    admin(base, "PUT", f"/shops/{SHOP}", {"name": "Contract Shop"})
    product = "gid://shopify/Product/1"
    admin(base, "PUT", f"/shops/{SHOP}/products", {"products": [
        {"id": product, "title": "A shirt", "handle": "a-shirt"},
    ]})
    video = admin(base, "POST", f"/shops/{SHOP}/videos", {
        "title": "A video", "videoUrl": "https://cdn.example.com/v.mp4", "productIds": [product],
    })
    admin(base, "POST", f"/shops/{SHOP}/widgets", {
        "type": "carousel", "title": "Home", "status": "active", "videoIds": [video["id"]],
    })
    return admin(base, "POST", f"/shops/{SHOP}/api-keys", {"name": "contract"})["key"]


def session_token():
    """A session token for the seeded shop, as the platform signs them (HS256 under the app's
    secret), valid for the hour the run may take."""
    now = int(time.time())
    claims = {
        "iss": f"https://{SHOP}/admin", "dest": f"https://{SHOP}", "aud": CLIENT_ID,
        "sub": "1", "exp": now + 3600, "nbf": now - 1, "iat": now - 1,
        "jti": str(uuid.uuid4()), "sid": "contract",
    }
    part = lambda value: base64.urlsafe_b64encode(
        json.dumps(value, separators=(",", ":")).encode()
    ).rstrip(b"=")
    signed = part({"alg": "HS256", "typ": "JWT"}) + b"." + part(claims)
    mac = hmac.new(PROXY_SECRET.encode(), signed, hashlib.sha256).digest()
    return (signed + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


def schemathesis(base, paths, headers=()):
    """Starts schemathesis on the operations whose paths match `paths`; its output goes to a
    temporary file. Returns (process, output file)."""
    examples = os.environ.get("SCHEMATHESIS_EXAMPLES", "25")
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file", str(HERE / "schemathesis.toml"),
        "run", f"{base}/openapi.json",
        # Every check is on by default; the config file turns one operation's off (with why).
        "--max-examples", examples, "--include-path-regex", paths,
        "--seed", "1", "--no-color",
        # One worker: concurrent workers crash schemathesis's schema walk on some Python builds.
        "--workers", "1",
    ]
    for header in headers:
        command += ["--header", header]
    env = dict(
        os.environ,
        SCHEMATHESIS_HOOKS="contract_hooks",
        PYTHONPATH=str(HERE),
        VIDEOAPP_PROXY_SECRET=PROXY_SECRET,
        VIDEOAPP_CONTRACT_SHOP=SHOP,
        VIDEOAPP_CONTRACT_BASE=base,
        VIDEOAPP_CONTRACT_ADMIN_TOKEN=ADMIN_TOKEN,
    )
    output = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(command, env=env, stdout=output, stderr=subprocess.STDOUT)
    return process, output


def run_together(base, surfaces):
    """Runs schemathesis on `surfaces` (name → (paths, headers)) at the same time, each against
    the same service; prints each one's report in turn. Returns the names of those that failed."""
    started = {name: schemathesis(base, *surface) for name, surface in surfaces.items()}
    failed = []
    for name, (process, output) in started.items():
        code = process.wait()
        output.seek(0)
        print(f"\n--- schemathesis: {name} ({surfaces[name][0]})", flush=True)
        print(output.read(), flush=True)
        output.close()
        if code != 0:
            failed.append(name)
    return failed


def main():
    binary, database_url, clickhouse_url, clickhouse_database, spool_dir = sys.argv[1:6]
    process, drain, base = serve(binary, database_url, clickhouse_url, clickhouse_database, spool_dir)
    try:
        key = seed(base)
        surfaces = {
            "admin": ("^/admin/", [f"Authorization: Bearer {ADMIN_TOKEN}"]),
            "analytics": ("^/api/v1/", [f"Authorization: Bearer {key}"]),
            "storefront": ("^/(apps/|healthz|readyz)", []),
            # Not the install: with a valid token it would call the platform, which is not here
            # (tests/api/platform_install.rs runs it against a stand-in).
            "app": ("^/app/api/(shops|analytics)/", [f"Authorization: Bearer {session_token()}"]),
            # Last: a generated app/uninstalled delivery may name the seeded shop.
            "platform": ("^/webhooks/", []),
        }
        chosen = (os.environ.get("CONTRACT_SURFACES") or ",".join(surfaces)).split(",")
        # The surfaces touch different state, so they run at the same time (each run spends most
        # of its time in Python, on one core); the platform's last, as it may uninstall the shop.
        together = {name: surfaces[name] for name in chosen if name != "platform"}
        failed = run_together(base, together)
        if "platform" in chosen:
            failed += run_together(base, {"platform": surfaces["platform"]})
    finally:
        process.terminate()
        process.wait()
        drain.wait()
    if failed:
        sys.exit(f"schemathesis found failures on: {', '.join(failed)}")
    print("API contract: no failures on any surface")


if __name__ == "__main__":
    main()
