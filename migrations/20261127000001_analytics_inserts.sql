-- The inserts of batches of events into ClickHouse under way, by shop: a row is written before
-- an insert begins and deleted, once the insert has returned, with the record of the days its
-- batch landed on (`analytics_days`). ClickHouse writes a batch into each aggregate one after
-- another, so a query that reads two aggregates while a batch is going in may see it in one and
-- not the other; an analytics cache keeps nothing computed while a row of its shop is here. An
-- insert that never returned (a timeout, a lost connection, a shipper that stopped) may still be
-- writing: its rows count until `until`, and its batch's retry is another insert, with rows of
-- its own.
CREATE TABLE analytics_inserts (
    insert_id   UUID NOT NULL,
    shop_domain TEXT NOT NULL,
    until       TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (insert_id, shop_domain)
);

CREATE INDEX analytics_inserts_by_shop ON analytics_inserts (shop_domain, until);
