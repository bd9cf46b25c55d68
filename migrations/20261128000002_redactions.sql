-- The redactions the platform asked for, kept so that what was received before one and is still
-- on its way (events in a spool, in an insert) is dropped rather than stored after the deletion.
-- A redaction covers the events received up to its time (with an allowance for clocks that
-- differ): what a customer, or a reinstalled shop, does after it is new data.

-- `shop/redact`: every event of the shop received until `redacted_at`. Both tables' records are
-- deleted 30 days after their request (the platform's deadline for a redaction), by the webhook
-- worker: past that, nothing of the shop or the customer is kept.
-- The shipper locks this table in SHARE mode while it records a batch in Postgres, so that a
-- redaction is written either before that record (which then leaves the shop out) or after it
-- (and the redaction's own deletion, which follows, removes it).
CREATE TABLE redacted_shops (
    shop_domain TEXT PRIMARY KEY,
    redacted_at TIMESTAMPTZ NOT NULL
);

-- `customers/redact`: every event of the shop received until `redacted_at` whose customer is
-- one of `customer_ids` (every form of the customer's id) or whose order is one of `order_ids`.
-- Gone when the shop is redacted (the shop's redaction covers them).
CREATE TABLE redacted_customers (
    shop_domain  TEXT NOT NULL,
    -- The customer's number, as the platform sends it.
    customer_id  TEXT NOT NULL,
    customer_ids TEXT[] NOT NULL,
    order_ids    TEXT[] NOT NULL,
    redacted_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (shop_domain, customer_id)
);
