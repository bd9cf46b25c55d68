-- The merchant-configured catalog. Postgres is its source of truth; the service caches a
-- snapshot per shop and invalidates it through NOTIFY on every write (see catalog::changes).

CREATE TABLE shops (
    domain           TEXT PRIMARY KEY,
    name             TEXT NOT NULL DEFAULT '',
    timezone         TEXT NOT NULL DEFAULT 'UTC',
    currency         TEXT NOT NULL DEFAULT 'USD',
    remove_branding  BOOLEAN NOT NULL DEFAULT FALSE,
    -- Bumped in the same transaction as every catalog write; the storefront's `version`.
    -- Never reset, not even by uninstall and reinstall, so a version is never reused.
    catalog_version  BIGINT NOT NULL DEFAULT 1,
    -- Uninstall keeps the row (and with it the version counter and revoked keys).
    uninstalled_at   TIMESTAMPTZ,
    created_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE products (
    shop_domain     TEXT NOT NULL REFERENCES shops (domain) ON DELETE CASCADE,
    gid             TEXT NOT NULL,
    title           TEXT NOT NULL,
    handle          TEXT NOT NULL,
    image           TEXT NOT NULL DEFAULT '',
    url             TEXT NOT NULL DEFAULT '',
    collection_ids  TEXT[] NOT NULL DEFAULT '{}',
    updated_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (shop_domain, gid)
);

-- Storefront pages may name a product by handle only.
CREATE INDEX products_by_handle ON products (shop_domain, handle);

CREATE TABLE videos (
    id                UUID PRIMARY KEY,
    shop_domain       TEXT NOT NULL REFERENCES shops (domain) ON DELETE CASCADE,
    title             TEXT NOT NULL,
    thumbnail         TEXT NOT NULL DEFAULT '',
    video_url         TEXT NOT NULL,
    mini_version_url  TEXT NOT NULL DEFAULT '',
    -- Seconds.
    duration          DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (duration >= 0),
    status            TEXT NOT NULL CHECK (status IN ('PUBLISHED', 'DRAFT', 'ARCHIVED')),
    -- Linked products as global ids, in the merchant's order. Links may name products that are
    -- not synced yet; the storefront shows the ones it knows.
    product_ids       TEXT[] NOT NULL DEFAULT '{}',
    created_at        TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at        TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX videos_by_shop ON videos (shop_domain, created_at, id);

CREATE TABLE widgets (
    id                   UUID PRIMARY KEY,
    shop_domain          TEXT NOT NULL REFERENCES shops (domain) ON DELETE CASCADE,
    type                 TEXT NOT NULL CHECK (type IN ('carousel', 'story', 'productpage')),
    title                TEXT NOT NULL,
    status               TEXT NOT NULL CHECK (status IN ('active', 'draft', 'archived')),
    priority             INTEGER NOT NULL DEFAULT 0,
    view_style           TEXT NOT NULL,
    click_behavior       TEXT NOT NULL,
    modal_layout         TEXT NOT NULL,
    source_type          TEXT NOT NULL CHECK (source_type IN ('manual', 'product')),
    -- Display rules; an empty list matches everything.
    rule_locations       TEXT[] NOT NULL DEFAULT '{}',
    rule_product_ids     TEXT[] NOT NULL DEFAULT '{}',
    rule_collection_ids  TEXT[] NOT NULL DEFAULT '{}',
    created_at           TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at           TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX widgets_by_shop ON widgets (shop_domain, created_at, id);

-- A widget's ordered videos. Deleting a video removes it from every widget.
CREATE TABLE widget_videos (
    widget_id  UUID NOT NULL REFERENCES widgets (id) ON DELETE CASCADE,
    video_id   UUID NOT NULL REFERENCES videos (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    PRIMARY KEY (widget_id, video_id)
);

CREATE INDEX widget_videos_by_video ON widget_videos (video_id);

CREATE TABLE api_keys (
    id           UUID PRIMARY KEY,
    shop_domain  TEXT NOT NULL REFERENCES shops (domain) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    -- SHA-256 of the whole key; the key itself is never stored.
    key_hash     BYTEA NOT NULL UNIQUE,
    -- The first characters of the key, so a merchant can tell keys apart.
    prefix       TEXT NOT NULL,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    revoked_at   TIMESTAMPTZ
);

CREATE INDEX api_keys_by_shop ON api_keys (shop_domain, created_at);
