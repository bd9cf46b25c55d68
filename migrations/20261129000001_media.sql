-- Videos made from a file: the upload, the processing jobs, and the objects they leave behind.
-- The bytes live in object storage (a directory, or an S3-compatible bucket); everything that
-- says where an upload or a job stands lives here, so any instance can take any request.

-- A video made from an upload or an import carries its processing state; a video given as URLs
-- has none (`processing_state` NULL) and is playable as it always was.
ALTER TABLE videos
    ADD COLUMN processing_state TEXT
        CHECK (processing_state IN ('uploading', 'queued', 'processing', 'ready', 'failed')),
    ADD COLUMN processing_progress SMALLINT NOT NULL DEFAULT 0
        CHECK (processing_progress BETWEEN 0 AND 100),
    -- Why processing failed, as a code and a sentence a merchant can act on.
    ADD COLUMN processing_error_code TEXT,
    ADD COLUMN processing_error TEXT,
    ADD COLUMN hls_url TEXT NOT NULL DEFAULT '',
    ADD COLUMN poster_url TEXT NOT NULL DEFAULT '',
    -- The object prefix of the outputs the video shows now (`…/{run}/`): one processing run's
    -- outputs, never changed; a new run writes a new prefix and the old one is deleted. A poster
    -- chosen later is a run of its own.
    ADD COLUMN media_prefix TEXT,
    ADD COLUMN poster_prefix TEXT,
    -- Bytes of the outputs and of the source, for the shop's storage quota.
    ADD COLUMN media_bytes BIGINT NOT NULL DEFAULT 0,
    -- Where in the video the poster was taken, in milliseconds; NULL: chosen by the service.
    ADD COLUMN poster_time_ms INTEGER,
    -- The source's facts, as probed.
    ADD COLUMN width INTEGER,
    ADD COLUMN height INTEGER,
    ADD COLUMN frame_rate DOUBLE PRECISION,
    ADD COLUMN has_audio BOOLEAN;

-- A tus upload; its id is its video's. The bytes received so far are the objects `parts` names,
-- in order (`uploads/{video_id}/{offset}-{id}`, one per PATCH that stored anything). A part is
-- written before it is listed here, under a name no other request uses: two requests racing at
-- one offset each write their own object, one is listed, and the other deletes its own.
CREATE TABLE media_uploads (
    video_id     UUID PRIMARY KEY REFERENCES videos (id) ON DELETE CASCADE,
    shop_domain  TEXT NOT NULL,
    -- `Upload-Length`; NULL until the client knows it (`Upload-Defer-Length` is not offered, so
    -- always set today).
    length       BIGINT NOT NULL CHECK (length >= 0),
    received     BIGINT NOT NULL DEFAULT 0 CHECK (received >= 0 AND received <= length),
    parts        TEXT[] NOT NULL DEFAULT '{}',
    filename     TEXT NOT NULL DEFAULT '',
    expires_at   TIMESTAMPTZ NOT NULL,
    completed_at TIMESTAMPTZ,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX media_uploads_expiring ON media_uploads (expires_at) WHERE completed_at IS NULL;

-- Processing work: a leased, retried job per request to (re)make a video's outputs. A worker
-- takes one with `FOR UPDATE SKIP LOCKED`, holds a lease it renews while it works, and publishes
-- its outputs only while its lease token is still the job's: a worker that lost its lease
-- (killed, stalled) publishes nothing, and another takes the job.
CREATE TABLE media_jobs (
    id           BIGSERIAL PRIMARY KEY,
    video_id     UUID NOT NULL REFERENCES videos (id) ON DELETE CASCADE,
    shop_domain  TEXT NOT NULL,
    -- `import`: fetch `source_url`, then as `process`; `process`: every output from the
    -- source; `poster`: the poster again, at the video's `poster_time_ms`.
    kind         TEXT NOT NULL CHECK (kind IN ('import', 'process', 'poster')),
    source_url   TEXT,
    state        TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    run_after    TIMESTAMPTZ NOT NULL DEFAULT now(),
    lease_token  UUID,
    lease_until  TIMESTAMPTZ,
    -- The step it is in (probe, poster, mini, renditions, progressive, publish), for metrics.
    step         TEXT,
    last_error   TEXT,
    created_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE INDEX media_jobs_ready ON media_jobs (run_after, id) WHERE state = 'queued';
CREATE INDEX media_jobs_leased ON media_jobs (lease_until) WHERE state = 'running';
CREATE INDEX media_jobs_by_video ON media_jobs (video_id);

-- Objects to delete, by prefix: a deleted video's outputs and source, an expired upload's
-- parts, a replaced run's outputs, a redacted shop's everything. Written in the transaction that
-- makes them unreferenced; a worker deletes them and then the row (retried until it can).
CREATE TABLE media_deletions (
    prefix     TEXT PRIMARY KEY,
    run_after  TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempts   INTEGER NOT NULL DEFAULT 0,
    created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
