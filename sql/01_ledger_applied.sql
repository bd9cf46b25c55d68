-- Versions already applied. Two instances may race to record one; DISTINCT makes that harmless.
SELECT DISTINCT version FROM schema_migrations ORDER BY version
