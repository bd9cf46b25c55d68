-- Monthly counters per (shop, month, video) and per (shop, month, widget), filled like the daily
-- ones. A long range reads whole months here and only its partial months at the edges from the
-- daily tables: a year is ~12 rows per video instead of 365.
CREATE TABLE IF NOT EXISTS video_monthly
(
    shop_domain  String,
    -- The first day of the month, in the shop's timezone like local_date.
    month        Date,
    video_id     String,
    impressions  UInt64,
    views        UInt64,
    clicks       UInt64,
    add_to_cart  UInt64,
    orders       UInt64,
    revenue_e4   Int64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(month)
ORDER BY (shop_domain, month, video_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_monthly_mv TO video_monthly AS
SELECT
    shop_domain,
    toStartOfMonth(local_date) AS month,
    video_id,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sumIf(revenue_e4, event_type = 'checkout_completed') AS revenue_e4
FROM events
GROUP BY shop_domain, month, video_id;

CREATE TABLE IF NOT EXISTS widget_monthly
(
    shop_domain  String,
    month        Date,
    widget_id    String,
    impressions  UInt64,
    views        UInt64,
    clicks       UInt64,
    add_to_cart  UInt64,
    orders       UInt64,
    revenue_e4   Int64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(month)
ORDER BY (shop_domain, month, widget_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS widget_monthly_mv TO widget_monthly AS
SELECT
    shop_domain,
    toStartOfMonth(local_date) AS month,
    widget_id,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sumIf(revenue_e4, event_type = 'checkout_completed') AS revenue_e4
FROM events
GROUP BY shop_domain, month, widget_id;
