-- When each analytics key last authenticated a request, to the minute (the admin key list shows
-- it). Written at most once a minute per key: the service skips a minute it already wrote, and
-- its update only moves the value forward, so several instances write it once a minute too.
ALTER TABLE api_keys ADD COLUMN last_used_at TIMESTAMPTZ;
