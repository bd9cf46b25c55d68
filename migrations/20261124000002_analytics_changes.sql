-- What changed in each shop's numbers in ClickHouse, so that an analytics answer computed before
-- a change is never served from a cache after it.
--
-- The local days a shipped batch of events touched: each (shop, day) holds the number of the
-- latest batch that touched it, drawn from one sequence, so the greatest number over a range of
-- days moves exactly when some day of the range has new events. Written after the batch is in
-- ClickHouse.
CREATE SEQUENCE analytics_changes;

CREATE TABLE analytics_days (
    shop_domain TEXT NOT NULL,
    local_date  DATE NOT NULL,
    change      BIGINT NOT NULL,
    PRIMARY KEY (shop_domain, local_date)
);

-- Moves when every number of the shop may have changed: a ClickHouse migration that rewrote
-- aggregates.
ALTER TABLE shops ADD COLUMN analytics_version BIGINT NOT NULL DEFAULT 0;
