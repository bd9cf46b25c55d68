-- The share of browsers kept from every widget, to measure what the widgets sell: 0 (none) to 50.
ALTER TABLE shops ADD COLUMN holdout_percent smallint NOT NULL DEFAULT 0
    CHECK (holdout_percent BETWEEN 0 AND 50);
