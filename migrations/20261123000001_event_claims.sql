-- Counted once (a client's retry, a reloaded thank-you page, a pixel that fires twice): before
-- the shipper inserts a spool batch into ClickHouse, it claims each client-chosen event id, and
-- each order id, for that batch. An id another batch holds was counted already and is left out;
-- a batch that is retried finds its own claims again, so a retry counts the same events.

-- Kept for a day after the claim (the shipper deletes older ones): the window within which a
-- repeated event id is recognised.
CREATE TABLE event_claims (
    shop_domain  TEXT NOT NULL,
    event_id     UUID NOT NULL,
    batch_id     UUID NOT NULL,
    claimed_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (shop_domain, event_id)
);

CREATE INDEX event_claims_by_age ON event_claims (claimed_at);

-- Kept for good: an order is counted once, however late it is sent again.
CREATE TABLE order_claims (
    shop_domain  TEXT NOT NULL,
    order_id     TEXT NOT NULL,
    batch_id     UUID NOT NULL,
    -- The event that carried the order into the count.
    event_id     UUID NOT NULL,
    claimed_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (shop_domain, order_id)
);
