-- Yearly counters per (shop, local year, video) and per (shop, local year, widget), beside the
-- monthly ones: a range of a year or more reads a year's row where it read twelve months', and a
-- range that ends near today reads its year less the few days after it (days to come have no
-- rows), not its months one by one (see `PeriodSplit`). `year` is the year's first day.
-- The counts of earlier events are added by 0015 and 0016, from the monthly views.

CREATE TABLE IF NOT EXISTS video_yearly
(
    shop_domain            String,
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
ORDER BY (shop_domain, year, video_id);

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

CREATE TABLE IF NOT EXISTS widget_yearly
(
    shop_domain            String,
    year                   Date,
    widget_id              String,
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
ORDER BY (shop_domain, year, widget_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS widget_yearly_mv TO widget_yearly AS
SELECT
    shop_domain,
    toStartOfYear(local_date) AS year,
    widget_id,
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
GROUP BY shop_domain, year, widget_id;
