-- The attribution split (direct / influenced add-to-carts, orders and revenue) as columns of every
-- aggregate, and two new aggregates: the shop's days, and each video's days ordered by video (one
-- video's series reads its own rows, not the whole shop's). The split is fixed, so columns, not a
-- key: a range reads as many rows as before.
-- 18.16 knows no `ADD COLUMN IF NOT EXISTS`: the runner skips each ALTER whose column exists.
-- Views cannot be altered: each is dropped and created with the new columns. Between the two, an
-- insert would not be counted; migrations run before ingestion starts (`videoapp serve` does).
-- The counts of earlier events are added by 0008-0013, one INSERT per file.

-- A checkout's revenue (0 for other events), computed as rows are inserted. The views sum it
-- under the name `revenue_e4`; their other sums could not name that column then (ClickHouse
-- reads a name as the alias first), so they read this one.
ALTER TABLE events ADD COLUMN order_revenue_e4 Int64 MATERIALIZED if(event_type = 'checkout_completed', revenue_e4, 0);

ALTER TABLE video_daily ADD COLUMN direct_add_to_cart UInt64 AFTER revenue_e4;
ALTER TABLE video_daily ADD COLUMN direct_orders UInt64 AFTER direct_add_to_cart;
ALTER TABLE video_daily ADD COLUMN direct_revenue_e4 Int64 AFTER direct_orders;
ALTER TABLE video_daily ADD COLUMN influenced_add_to_cart UInt64 AFTER direct_revenue_e4;
ALTER TABLE video_daily ADD COLUMN influenced_orders UInt64 AFTER influenced_add_to_cart;
ALTER TABLE video_daily ADD COLUMN influenced_revenue_e4 Int64 AFTER influenced_orders;

ALTER TABLE widget_daily ADD COLUMN direct_add_to_cart UInt64 AFTER revenue_e4;
ALTER TABLE widget_daily ADD COLUMN direct_orders UInt64 AFTER direct_add_to_cart;
ALTER TABLE widget_daily ADD COLUMN direct_revenue_e4 Int64 AFTER direct_orders;
ALTER TABLE widget_daily ADD COLUMN influenced_add_to_cart UInt64 AFTER direct_revenue_e4;
ALTER TABLE widget_daily ADD COLUMN influenced_orders UInt64 AFTER influenced_add_to_cart;
ALTER TABLE widget_daily ADD COLUMN influenced_revenue_e4 Int64 AFTER influenced_orders;

ALTER TABLE video_monthly ADD COLUMN direct_add_to_cart UInt64 AFTER revenue_e4;
ALTER TABLE video_monthly ADD COLUMN direct_orders UInt64 AFTER direct_add_to_cart;
ALTER TABLE video_monthly ADD COLUMN direct_revenue_e4 Int64 AFTER direct_orders;
ALTER TABLE video_monthly ADD COLUMN influenced_add_to_cart UInt64 AFTER direct_revenue_e4;
ALTER TABLE video_monthly ADD COLUMN influenced_orders UInt64 AFTER influenced_add_to_cart;
ALTER TABLE video_monthly ADD COLUMN influenced_revenue_e4 Int64 AFTER influenced_orders;

ALTER TABLE widget_monthly ADD COLUMN direct_add_to_cart UInt64 AFTER revenue_e4;
ALTER TABLE widget_monthly ADD COLUMN direct_orders UInt64 AFTER direct_add_to_cart;
ALTER TABLE widget_monthly ADD COLUMN direct_revenue_e4 Int64 AFTER direct_orders;
ALTER TABLE widget_monthly ADD COLUMN influenced_add_to_cart UInt64 AFTER direct_revenue_e4;
ALTER TABLE widget_monthly ADD COLUMN influenced_orders UInt64 AFTER influenced_add_to_cart;
ALTER TABLE widget_monthly ADD COLUMN influenced_revenue_e4 Int64 AFTER influenced_orders;

DROP TABLE IF EXISTS video_daily_mv;

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
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, local_date, video_id;

DROP TABLE IF EXISTS widget_daily_mv;

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
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, local_date, widget_id;

DROP TABLE IF EXISTS video_monthly_mv;

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
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, month, video_id;

DROP TABLE IF EXISTS widget_monthly_mv;

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
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, month, widget_id;

CREATE TABLE IF NOT EXISTS shop_daily
(
    shop_domain            String,
    local_date             Date,
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
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, local_date);

CREATE MATERIALIZED VIEW IF NOT EXISTS shop_daily_mv TO shop_daily AS
SELECT
    shop_domain,
    local_date,
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
GROUP BY shop_domain, local_date;

CREATE TABLE IF NOT EXISTS video_daily_by_video
(
    shop_domain            String,
    video_id               String,
    local_date             Date,
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
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, video_id, local_date);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_daily_by_video_mv TO video_daily_by_video AS
SELECT
    shop_domain,
    video_id,
    local_date,
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
GROUP BY shop_domain, video_id, local_date;
