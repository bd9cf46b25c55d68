-- The analytics API's per-key rate limit, one quota per key however many instances serve it:
-- each key's theoretical arrival time (GCRA), read, decided on and advanced by one statement
-- (`analytics::auth`), on this server's clock.
--
-- Unlogged: its writes wait for no WAL flush, and what a crash or a failover loses (the table
-- comes back empty) only gives every key its full quota again.
--
-- One row per key that has made a request, gone with its key. Nothing sweeps idle rows: a row
-- whose time is past counts as a full quota, exactly as no row would, and there are never more
-- rows than keys.
CREATE UNLOGGED TABLE api_key_rate (
    key_id        UUID PRIMARY KEY REFERENCES api_keys (id) ON DELETE CASCADE,
    tat           TIMESTAMPTZ NOT NULL,
    -- Whether the request that last wrote the row was allowed. A refusal writes `tat` back as it
    -- was, and RETURNING sees only the row as written, so the decision is kept here for it.
    last_allowed  BOOLEAN NOT NULL
);
