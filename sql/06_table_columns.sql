-- The columns of a table, in the table's order, with how each gets its value: on a cluster, a
-- Distributed table is made with its node table's columns.
-- check-params: 'check', 'events'
SELECT name, type, default_kind, default_expression
FROM system.columns
WHERE database = ? AND table = ?
