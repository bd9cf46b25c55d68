-- Whether a column exists (the migration runner's check before `ALTER TABLE … ADD COLUMN`).
-- check-params: 'check', 'events', 'product_ids'
SELECT count()
FROM system.columns
WHERE database = ? AND table = ? AND name = ?
