-- The batches of events being inserted into ClickHouse, by shop: a row is written before a
-- batch's insert begins and deleted with the record of the days it landed on (`analytics_days`).
-- ClickHouse writes a batch into each aggregate one after another, so a query that reads two
-- aggregates while a batch is going in may see it in one and not the other; an analytics cache
-- keeps nothing computed while a row of its shop is here. A shipper that stops mid-insert leaves
-- its rows behind: they count until `until`, by which time its insert has ended one way or the
-- other.
CREATE TABLE analytics_inserts (
    batch_id    UUID NOT NULL,
    shop_domain TEXT NOT NULL,
    until       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (batch_id, shop_domain)
);

CREATE INDEX analytics_inserts_by_shop ON analytics_inserts (shop_domain, until);
