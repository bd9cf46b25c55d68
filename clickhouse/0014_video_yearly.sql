-- Yearly counters per (shop, year, video), filled like the monthly ones. A year's list of videos
-- reads each video's row of the year (less the months and days outside the range) instead of a
-- row per month: a shop with 10,000 videos reads some 10,000 rows for the months of a year, not
-- 120,000, and the rows it reads are what a list computed afresh spends its time on.
-- A shop's year is some 10,000 rows where many shops share a granule of 8,192: smaller granules
-- keep what a range reads beside its own rows small.
CREATE TABLE IF NOT EXISTS video_yearly
(
    shop_domain            String,
    -- The first day of the year, in the shop's timezone like local_date.
    year                   Date,
    video_id               String,
    impressions            UInt64,
    views                  UInt64,
    clicks                 UInt64,
    add_to_cart            UInt64,
    orders                 UInt64,
    revenue_e4             Int64,
    direct_add_to_cart     UInt64,
    direct_orders          UInt64,
    direct_revenue_e4      Int64,
    influenced_add_to_cart UInt64,
    influenced_orders      UInt64,
    influenced_revenue_e4  Int64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(year)
ORDER BY (shop_domain, year, video_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS video_yearly_mv TO video_yearly AS
SELECT
    shop_domain,
    toStartOfYear(local_date) AS year,
    video_id,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, year, video_id;
