-- Raw events: one row per accepted event, as the spool shipped it. Analytics never reads this
-- table (it reads the daily views); it is the ground truth the views are checked against, and
-- the place the shipper looks to tell whether a retried batch already landed.
CREATE TABLE IF NOT EXISTS events
(
    event_id           UUID,
    -- The spool segment the row came in; a retried batch keeps it.
    batch_id           UUID,
    shop_domain        String,
    -- The event's calendar date in the shop's timezone at ingest.
    local_date         Date,
    event_time         DateTime,
    received_at        DateTime,
    timestamp_replaced UInt8,
    event_type         Enum8('impression' = 1, 'view' = 2, 'click' = 3, 'add_to_cart' = 4, 'checkout_completed' = 5),
    attribution        Enum8('none' = 0, 'direct' = 1, 'influenced' = 2),
    video_id           String,
    widget_id          String,
    session_id         String,
    customer_id        String,
    product_id         String,
    order_id           String,
    -- Revenue × 10 000, exact.
    revenue_e4         Int64,
    currency           String
)
ENGINE = MergeTree
PARTITION BY toYYYYMM(local_date)
ORDER BY (shop_domain, local_date, event_type, video_id);
