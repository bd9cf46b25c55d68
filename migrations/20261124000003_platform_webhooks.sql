-- Webhook deliveries from the platform. A delivery is recorded here, in the request that
-- received it, before it is answered; the work it asks for is done after, with retries. Its id
-- (X-Shopify-Webhook-Id) is the key, so a delivery that comes again is recognised and ignored.
CREATE TABLE webhook_deliveries (
    webhook_id      TEXT PRIMARY KEY,
    shop_domain     TEXT NOT NULL,
    topic           TEXT NOT NULL,
    -- The work, as the service parsed it from the body.
    work            JSONB NOT NULL,
    received_at     TIMESTAMPTZ NOT NULL DEFAULT now(),
    attempts        INTEGER NOT NULL DEFAULT 0,
    -- Due from then; a worker that takes a delivery moves this past its lease, so a delivery
    -- whose worker died is taken again once the lease is over.
    next_attempt_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    done_at         TIMESTAMPTZ,
    -- Given up after the last retry; last_error says why.
    failed_at       TIMESTAMPTZ,
    last_error      TEXT
);

CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE done_at IS NULL AND failed_at IS NULL;

-- The platform's time of the product state a row holds (its updated_at): a webhook carrying an
-- older state than what is held is ignored. NULL for products written through the admin API.
ALTER TABLE products ADD COLUMN platform_updated_at TIMESTAMPTZ;

-- When the platform last removed a product from the storefront's reach (deleted it, or made it
-- other than active): a late webhook with an older state does not bring it back.
CREATE TABLE product_removals (
    shop_domain TEXT NOT NULL,
    gid         TEXT NOT NULL,
    removed_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (shop_domain, gid)
);
