#!/usr/bin/env python3
"""Run every ClickHouse statement of the repo on chDB (a current ClickHouse, in-process).

The integration tests prove the statements on the old server (Debian's 18.16); this proves them on a
current one, so both ends of what we support are exercised.

    scripts/chdb_check.py [ROOT] [--cluster-schema FILE]     ROOT defaults to the repository root

In one chDB session, in a fresh database `check`, it runs ROOT/clickhouse/*.sql (the schema
migrations, by name) and then ROOT/sql/*.sql (the queries, by name).

File format:
  * statements end with `;` at the end of a line; lines starting with `--` are comments;
  * `?` is a client-side bound parameter (clickhouse-rs style), `??` a literal `?`, and `?fields` the
    row's column list. A file that uses them says what to substitute for the check:
        -- check-params: 'shop.myshopify.com', toDate('2026-01-01'), [1, 2]
        -- check-fields: shop, video_id, views
    A statement only a cluster can run says so, and is parsed instead of run:
        -- check-parse-only: why
    Params are SQL literals, comma-separated (quotes and brackets respected), used in order across
    the file's statements.

With data: events are inserted just before the attribution migration and again after the last
file, and every aggregate must then equal a recount of the events (the back-fill counted what was
there once, the views what followed), as the integration tests prove on 18.16.

The cluster form (FILE: what `videoapp schema` prints with CLICKHOUSE_CLUSTER set and
CLICKHOUSE_DATABASE=check_cluster): current ClickHouse must parse every statement; and one node's
part of it (ON CLUSTER dropped, Replicated engines made plain, no Distributed tables, which need a
cluster and ZooKeeper that chDB has not) runs, with the views filling each `_local` aggregate from
`events_local` so that it equals a recount. What chDB cannot run (replication, distributed DDL,
Distributed routing) the cluster tests prove on a cluster of 18.16 servers.

Prints one line per statement and exits non-zero if any statement or file failed.
"""

import os
import re
import sys
import tempfile
from pathlib import Path

# Match the 18.16 server, whose config pins UTC; must be set before chDB starts.
os.environ["TZ"] = "UTC"

DIRS = ("clickhouse", "sql")
DATABASE = "check"
HEADER_RE = re.compile(r"^\s*--\s*check-(params|fields|parse-only)\s*:(.*)$")
END_OF_STATEMENT = re.compile(r";[ \t]*$", re.MULTILINE)


# The migration that must back-fill what the events table holds when it runs.
UPGRADE_WITH_DATA = "0007_attribution.sql"
# Each aggregate: its key columns, the same keys computed from `events` (when they differ), and
# how `events` is read for it (each event once under each dimension for `_by_dimension`).
BY_DIMENSION = (
    " ARRAY JOIN ['placement', 'device', 'country', 'source'] AS dimension,"
    " [toString(placement), toString(device), country, toString(source)] AS value"
)
DIMENSIONS = "placement, device, country, source"
AGGREGATES = {
    "video_daily": ("shop_domain, local_date, video_id", None, ""),
    "widget_daily": ("shop_domain, local_date, widget_id", None, ""),
    "video_monthly": ("shop_domain, month, video_id", "shop_domain, toStartOfMonth(local_date) AS month, video_id", ""),
    "video_yearly": ("shop_domain, year, video_id", "shop_domain, toStartOfYear(local_date) AS year, video_id", ""),
    "widget_monthly": ("shop_domain, month, widget_id", "shop_domain, toStartOfMonth(local_date) AS month, widget_id", ""),
    "shop_daily": ("shop_domain, local_date", None, ""),
    "video_daily_by_video": ("shop_domain, video_id, local_date", None, ""),
    "shop_daily_by_dimension": ("shop_domain, dimension, value, local_date", None, BY_DIMENSION),
    "widget_daily_by_dimension": ("shop_domain, dimension, value, local_date, widget_id", None, BY_DIMENSION),
    "video_daily_by_dimension": ("shop_domain, dimension, value, local_date, video_id", None, BY_DIMENSION),
    "video_monthly_by_dimension": ("shop_domain, dimension, value, month, video_id",
                                   "shop_domain, dimension, value, toStartOfMonth(local_date) AS month, video_id", BY_DIMENSION),
    "video_yearly_by_dimension": ("shop_domain, dimension, value, year, video_id",
                                  "shop_domain, dimension, value, toStartOfYear(local_date) AS year, video_id", BY_DIMENSION),
    "shop_daily_by_dimensions": (f"shop_domain, local_date, {DIMENSIONS}", None, ""),
    "video_daily_by_dimensions": (f"shop_domain, video_id, local_date, {DIMENSIONS}", None, ""),
    "widget_daily_by_dimensions": (f"shop_domain, widget_id, local_date, {DIMENSIONS}", None, ""),
}
SUMS = ("impressions, views, clicks, add_to_cart, orders, revenue_e4, direct_add_to_cart, direct_orders, "
        "direct_revenue_e4, influenced_add_to_cart, influenced_orders, influenced_revenue_e4, "
        "watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100")
CART, ORDER, WATCH = "event_type = 'add_to_cart'", "event_type = 'checkout_completed'", "event_type = 'watch'"
RECOUNT = (
    "countIf(event_type = 'impression'), countIf(event_type = 'view'), countIf(event_type = 'click'), "
    f"countIf({CART}), countIf({ORDER}), sumIf(revenue_e4, {ORDER}), "
    f"countIf({CART} AND attribution = 'direct'), countIf({ORDER} AND attribution = 'direct'), "
    f"sumIf(revenue_e4, {ORDER} AND attribution = 'direct'), "
    f"countIf({CART} AND attribution = 'influenced'), countIf({ORDER} AND attribution = 'influenced'), "
    f"sumIf(revenue_e4, {ORDER} AND attribution = 'influenced'), "
    f"sumIf(watched_ms, {WATCH}), countIf({WATCH}), "
    + ", ".join(f"countIf({WATCH} AND max_percent >= {p})" for p in (25, 50, 75, 95, 100))
)


def insert_events(first, n, watching=True):
    """`n` events: two shops, videos and widgets or none, every type and attribution, 45 days
    over three months, revenue on carts too (which counts nowhere); with `watching` (once the
    schema has them), watches and every placement, device and source, a few countries, and
    events that say none of them."""
    columns, values = "", ""
    if watching:
        columns = ", placement, device, country, source, watched_ms, max_percent"
        values = (
            ", ['', 'home', 'product', 'collection', 'page', 'cart', 'other'][1 + number % 7], "
            "['', 'mobile', 'tablet', 'desktop'][1 + intDiv(number, 3) % 4], "
            "['', 'US', 'FR', 'ZZ'][1 + intDiv(number, 5) % 4], "
            "['', 'direct', 'search', 'social', 'email', 'paid', 'referral'][1 + intDiv(number, 2) % 7], "
            "if(number % 6 = 5, (number * 37) % 90000, 0), if(number % 6 = 5, (number * 13) % 101, 0)"
        )
    kinds = "'impression', 'view', 'click', 'add_to_cart', 'checkout_completed'" + (", 'watch'" if watching else "")
    return (
        "INSERT INTO events (event_id, batch_id, shop_domain, local_date, event_time, received_at, "
        "timestamp_replaced, event_type, attribution, video_id, widget_id, session_id, customer_id, "
        f"product_id, order_id, revenue_e4, currency{columns}) "
        "SELECT generateUUIDv4(), generateUUIDv4(), if(number % 3 = 0, 'b.myshopify.com', 'a.myshopify.com'), "
        "toDate('2026-01-20') + number % 45, now(), now(), 0, "
        f"[{kinds}][1 + number % {6 if watching else 5}], "
        "['none', 'direct', 'influenced', 'direct', 'none', 'influenced', 'none'][1 + number % 7], "
        "['v0', 'v1', 'v2', ''][1 + number % 4], ['w0', 'w1', ''][1 + intDiv(number, 2) % 3], "
        f"'', '', '', '', (number * 7919) % 1000000, 'EUR'{values} FROM system.numbers WHERE number >= {first} LIMIT {n}"
    )


def aggregates_against_recount(sess, name=lambda table: table):
    """The aggregates that differ from a recount of `events`, with both sides; `name` gives each
    table's name as queried."""
    wrong = []
    for table, (keys, event_keys, reading) in AGGREGATES.items():
        sums = ", ".join(f"sum({c})" for c in SUMS.split(", "))
        held = f"SELECT {keys}, {sums} FROM {name(table)} GROUP BY {keys} ORDER BY {keys}"
        recount = (f"SELECT {event_keys or keys}, {RECOUNT} FROM {name('events')}{reading} "
                   f"GROUP BY {keys} ORDER BY {keys}")
        held, recount = (sess.query(q, "TSV").bytes().decode() for q in (held, recount))
        if held != recount or recount.count("\n") < 8:
            wrong.append(f"{table}:\n{held}\nrecount:\n{recount}")
    return wrong


class FileError(Exception):
    pass


def split_literals(text):
    """Split 'a', f(1, 2), [3, 4] on top-level commas, respecting quotes and brackets."""
    items, buf, depth, quote = [], [], 0, None
    i = 0
    while i < len(text):
        c = text[i]
        buf.append(c)
        if quote:
            if c == "\\" and i + 1 < len(text):
                buf.append(text[i + 1])
                i += 1
            elif c == quote:
                # SQL doubles a quote to escape it: 'it''s'
                if i + 1 < len(text) and text[i + 1] == quote:
                    buf.append(text[i + 1])
                    i += 1
                else:
                    quote = None
        elif c in "'\"`":
            quote = c
        elif c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "," and depth == 0:
            buf.pop()
            items.append("".join(buf).strip())
            buf = []
        i += 1
    if quote:
        raise FileError(f"unterminated quote in check-params: {text.strip()}")
    tail = "".join(buf).strip()
    if tail or items:
        items.append(tail)
    if any(item == "" for item in items):
        raise FileError(f"empty item in check-params: {text.strip()}")
    return items


def parse_file(path):
    """Return (statements, params, fields, parse_only) of one .sql file."""
    params, fields, parse_only, body = None, None, False, []
    for line in path.read_text(encoding="utf-8").splitlines():
        header = HEADER_RE.match(line)
        if header:
            kind, value = header.groups()
            if kind == "params":
                params = split_literals(value)
            elif kind == "fields":
                fields = value.strip()
            else:
                parse_only = True
            continue
        if line.lstrip().startswith("--"):
            continue
        body.append(line)
    statements = [s.strip() for s in END_OF_STATEMENT.split("\n".join(body))]
    return [s for s in statements if s], params, fields, parse_only


def bind(statement, params, fields, where):
    """Substitute placeholders exactly as clickhouse-rs' SqlBuilder reads them (it ignores quotes)."""
    out, i = [], 0
    while True:
        j = statement.find("?", i)
        if j < 0:
            out.append(statement[i:])
            return "".join(out)
        out.append(statement[i:j])
        if statement.startswith("??", j):
            out.append("?")
            i = j + 2
        elif statement.startswith("?fields", j):
            if fields is None:
                raise FileError(f"{where}: uses ?fields but has no '-- check-fields:' header")
            out.append(fields)
            i = j + len("?fields")
        else:
            if params is None:
                raise FileError(f"{where}: has ? placeholders but no '-- check-params:' header")
            if not params:
                raise FileError(f"{where}: more ? placeholders than check-params values")
            out.append(params.pop(0))
            i = j + 1


def one_line(text, width=100):
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 3] + "..."


def open_session(tmpdir):
    from chdb import session as chs

    sess = chs.Session(tmpdir)
    sess.query(f"CREATE DATABASE IF NOT EXISTS {DATABASE}")
    sess.query(f"USE {DATABASE}")
    current = sess.query("SELECT currentDatabase()", "TSV").bytes().decode().strip()
    if current != DATABASE:
        # Some chDB releases forgot USE between queries; the session's own database lives in the
        # same throwaway directory and is empty too, so run there instead.
        print(f"note: USE does not persist in this chDB session; running in database {current!r}")
    return sess


def run(sess, sql):
    """Run one statement; return None on success or the error text."""
    try:
        result = sess.query(sql, "TSV")
    except Exception as exc:  # chdb raises its own ChdbError (a RuntimeError in older releases)
        return str(exc).strip() or type(exc).__name__
    has_error = getattr(result, "has_error", None)
    if callable(has_error) and has_error():
        return result.error_message().strip()
    return None


def report(where, sql, error):
    """Print one statement's outcome; True when it passed."""
    if error is None:
        print(f"OK   {where}: {one_line(sql)}")
        return True
    print(f"FAIL {where}: {one_line(sql)}")
    print("     " + error.replace("\n", "\n     "))
    return False


CLUSTER_DATABASE = "check_cluster"
ON_CLUSTER_RE = re.compile(r" ON CLUSTER \w+")
REPLICATED_RE = re.compile(r"Replicated(\w*MergeTree)\('[^']*', '[^']*'\)")


def sql_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def node_form(statement):
    """One node's part of a cluster statement, or None for what only a cluster can run."""
    if "ENGINE = Distributed(" in statement or statement.startswith("INSERT"):
        return None
    return REPLICATED_RE.sub(r"\1", ON_CLUSTER_RE.sub("", statement))


def check_cluster_schema(sess, path):
    """(ok, failed) for the cluster form in `path`, printed as it goes."""
    ok = failed = 0
    statements = [s.strip() for s in END_OF_STATEMENT.split(path.read_text()) if s.strip()]
    statements = ["\n".join(l for l in s.splitlines() if not l.startswith("--")) for s in statements]
    # A step the schema names in a comment only (the Distributed table made again from the node
    # table's columns, which the printer cannot know) leaves nothing to check.
    statements = [s for s in statements if s.strip()]
    sess.query(f"CREATE DATABASE IF NOT EXISTS {CLUSTER_DATABASE}")
    for n, sql in enumerate(statements, 1):
        error = run(sess, f"SELECT formatQuery({sql_string(sql)})")
        node = node_form(sql)
        if error is None and node is not None:
            error = run(sess, node)
        passed = report(f"cluster #{n}{'' if node else ' (parsed)'}", sql, error)
        ok, failed = ok + passed, failed + (not passed)
    insert = insert_events(0, 3000).replace("INSERT INTO events ", f"INSERT INTO {CLUSTER_DATABASE}.events_local ", 1)
    error = run(sess, insert)
    wrong = [error] if error else aggregates_against_recount(sess, lambda t: f"{CLUSTER_DATABASE}.{t}_local")
    for text in wrong:
        print("FAIL cluster aggregates against a recount of the node's events: " + text)
    if not wrong:
        print("OK   on a node, every aggregate equals a recount of its events")
    return ok, failed + len(wrong)


def main(argv):
    cluster_schema = None
    if "--cluster-schema" in argv:
        at = argv.index("--cluster-schema")
        cluster_schema = Path(argv[at + 1])
        argv = argv[:at] + argv[at + 2:]
    root = Path(argv[1] if len(argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    files = []
    for name in DIRS:
        d = root / name
        found = sorted(d.glob("*.sql")) if d.is_dir() else []
        state = "" if d.is_dir() else " (directory not present)"
        print(f"{name}/: {len(found)} file(s){state}")
        files += found
    if not files:
        print("chdb check: nothing to check")
        return 0

    try:
        import chdb
    except ImportError:
        print("error: chdb is not importable; run inside the venv from ensure_chdb_venv", file=sys.stderr)
        return 2

    ok = failed = 0
    with tempfile.TemporaryDirectory(prefix="chdb-check-") as tmpdir:
        sess = open_session(tmpdir)
        version = sess.query("SELECT version()", "TSV").bytes().decode().strip()
        print(f"chdb {getattr(chdb, '__version__', '?')}, ClickHouse {version}")
        try:
            for path in files:
                rel = path.relative_to(root)
                try:
                    statements, params, fields, parse_only = parse_file(path)
                    bound = [bind(s, params, fields, f"{rel} #{n}") for n, s in enumerate(statements, 1)]
                    if params:
                        raise FileError(f"{rel}: {len(params)} check-params value(s) left unused")
                except FileError as exc:
                    print(f"FAIL {exc}")
                    failed += 1
                    continue
                except (OSError, UnicodeDecodeError) as exc:
                    print(f"FAIL {rel}: {exc}")
                    failed += 1
                    continue
                if not bound:
                    print(f"note {rel}: no statements")
                if path.name == UPGRADE_WITH_DATA:
                    error = run(sess, insert_events(0, 2000, watching=False))
                    print(f"{'OK  ' if error is None else 'FAIL'} events before {rel}")
                    failed += error is not None
                for n, sql in enumerate(bound, 1):
                    error = run(sess, f"SELECT formatQuery({sql_string(sql)})" if parse_only else sql)
                    passed = report(f"{rel} #{n}", sql, error)
                    ok, failed = ok + passed, failed + (not passed)
            error = run(sess, insert_events(2000, 1000))
            wrong = [error] if error else aggregates_against_recount(sess)
            for text in wrong:
                print("FAIL aggregates against a recount of the events: " + text)
            if not wrong:
                print(f"OK   every aggregate equals a recount of the events ({', '.join(AGGREGATES)})")
            failed += len(wrong)
            if cluster_schema:
                cluster_ok, cluster_failed = check_cluster_schema(sess, cluster_schema)
                ok, failed = ok + cluster_ok, failed + cluster_failed
        finally:
            sess.close()

    print(f"chdb check done: {ok} statement(s) ok, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
