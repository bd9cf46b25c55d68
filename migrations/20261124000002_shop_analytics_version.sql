-- Moves whenever a shop's numbers in ClickHouse may have changed: after every shipped batch of its
-- events and after a ClickHouse migration that rewrites aggregates. An analytics answer computed
-- under an older value is never served from a cache.
ALTER TABLE shops ADD COLUMN analytics_version BIGINT NOT NULL DEFAULT 0;
