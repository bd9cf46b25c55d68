-- How many days an order is credited to a video the shopper added to cart from or watched.
ALTER TABLE shops ADD COLUMN attribution_window_days SMALLINT NOT NULL DEFAULT 7
    CONSTRAINT shops_attribution_window_days CHECK (attribution_window_days IN (1, 7, 30));
