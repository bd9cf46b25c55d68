-- check-params: 1, '0001_example.sql'
INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, now())
