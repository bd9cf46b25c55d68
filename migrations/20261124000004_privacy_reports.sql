-- What a customers/data_request asked for: every event held for that customer when the request
-- was worked on, kept for the merchant (the admin API reads it) until shop/redact.
CREATE TABLE privacy_reports (
    shop_domain      TEXT NOT NULL,
    data_request_id  TEXT NOT NULL,
    customer_id      TEXT NOT NULL,
    requested_at     TIMESTAMPTZ NOT NULL,
    reported_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
    events           JSONB NOT NULL,
    PRIMARY KEY (shop_domain, data_request_id)
);
