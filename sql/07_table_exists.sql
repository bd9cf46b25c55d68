-- Whether the node asked holds a table (on a cluster, the migration runner's check that the
-- database and ledger exist before it would make them on every node).
-- check-params: 'check', 'schema_migrations'
SELECT count()
FROM system.tables
WHERE database = ? AND name = ?
