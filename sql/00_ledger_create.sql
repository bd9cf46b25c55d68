-- The ledger of applied ClickHouse migrations, created by the runner before anything else.
CREATE TABLE IF NOT EXISTS schema_migrations
(
    version    UInt32,
    name       String,
    applied_at DateTime
)
ENGINE = MergeTree
ORDER BY version
