-- The shop's collections, imported from the platform at install, so the dashboard can offer
-- them in a picker. A full import replaces what an earlier one held.
CREATE TABLE collections (
    shop_domain  TEXT NOT NULL REFERENCES shops (domain) ON DELETE CASCADE,
    gid          TEXT NOT NULL,
    title        TEXT NOT NULL,
    handle       TEXT NOT NULL,
    image        TEXT NOT NULL DEFAULT '',
    imported_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (shop_domain, gid)
);
