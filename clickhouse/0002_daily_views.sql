-- Daily counters per (shop, local date, video) and per (shop, local date, widget), filled by
-- materialized views on every insert into events. SummingMergeTree folds rows with equal keys
-- as it merges, so readers still sum() with GROUP BY. Money stays an integer (× 10 000).
CREATE TABLE IF NOT EXISTS video_daily
(
    shop_domain  String,
    local_date   Date,
    video_id     String,
    impressions  UInt64,
    views        UInt64,
    clicks       UInt64,
    add_to_cart  UInt64,
    orders       UInt64,
    revenue_e4   Int64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(local_date)
ORDER BY (shop_domain, local_date, video_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_daily_mv TO video_daily AS
SELECT
    shop_domain,
    local_date,
    video_id,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sumIf(revenue_e4, event_type = 'checkout_completed') AS revenue_e4
FROM events
GROUP BY shop_domain, local_date, video_id;

CREATE TABLE IF NOT EXISTS widget_daily
(
    shop_domain  String,
    local_date   Date,
    widget_id    String,
    impressions  UInt64,
    views        UInt64,
    clicks       UInt64,
    add_to_cart  UInt64,
    orders       UInt64,
    revenue_e4   Int64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(local_date)
ORDER BY (shop_domain, local_date, widget_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS widget_daily_mv TO widget_daily AS
SELECT
    shop_domain,
    local_date,
    widget_id,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sumIf(revenue_e4, event_type = 'checkout_completed') AS revenue_e4
FROM events
GROUP BY shop_domain, local_date, widget_id;
