-- What shoppers do with a video, and where.
--
-- Events gain the page type the widget showed on, the device (the service's reading of the
-- request), the storefront's country and the visit's traffic source, each '' when not known
-- (events before this file, and clients that do not send it); and a sixth type, `watch`, with
-- the milliseconds played and the furthest percent reached.
--
-- Every aggregate gains the watching figures: the milliseconds played, the openings, and the
-- openings that reached 25, 50, 75, 95 and 100 percent. No event before this file is a watch, so
-- these columns need no back-fill; the views are made again with them (see 0007 for why).
--
-- New aggregates answer the breakdowns and filters. A breakdown, or a filter, names one
-- dimension: the `_by_dimension` aggregates count each event once under each of its four
-- dimensions (`dimension`, `value`), keyed so that one value's rows are one key range, like the
-- plain aggregate they stand beside. Several dimensions at once (a breakdown with a filter on
-- another, or two filters) are read from the `_by_dimensions` aggregates, which keep the four
-- together per day: exact, and more rows to read. What was counted before this file is copied
-- into them by 0017-0024 (one INSERT per file), from the plain aggregates, which hold exactly
-- those events: none of them says where, on what or from where.
-- 18.16 knows no `ADD COLUMN IF NOT EXISTS`: the runner skips each ALTER whose column exists.
ALTER TABLE events ADD COLUMN placement Enum8('' = 0, 'home' = 1, 'product' = 2, 'collection' = 3, 'page' = 4, 'cart' = 5, 'other' = 6);
ALTER TABLE events ADD COLUMN device Enum8('' = 0, 'mobile' = 1, 'tablet' = 2, 'desktop' = 3);
ALTER TABLE events ADD COLUMN country String;
ALTER TABLE events ADD COLUMN source Enum8('' = 0, 'direct' = 1, 'search' = 2, 'social' = 3, 'email' = 4, 'paid' = 5, 'referral' = 6);
ALTER TABLE events ADD COLUMN watched_ms UInt32;
ALTER TABLE events ADD COLUMN max_percent UInt8;

ALTER TABLE events MODIFY COLUMN event_type Enum8('impression' = 1, 'view' = 2, 'click' = 3, 'add_to_cart' = 4, 'checkout_completed' = 5, 'watch' = 6);

ALTER TABLE video_daily ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE video_daily ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE video_daily ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE video_daily ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE video_daily ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE video_daily ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE video_daily ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE widget_daily ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE widget_daily ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE widget_daily ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE widget_daily ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE widget_daily ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE widget_daily ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE widget_daily ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE video_monthly ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE video_monthly ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE video_monthly ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE video_monthly ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE video_monthly ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE video_monthly ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE video_monthly ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE widget_monthly ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE widget_monthly ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE widget_monthly ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE widget_monthly ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE widget_monthly ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE widget_monthly ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE widget_monthly ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE shop_daily ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE shop_daily ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE shop_daily ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE shop_daily ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE shop_daily ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE shop_daily ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE shop_daily ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE video_daily_by_video ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE video_daily_by_video ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE video_daily_by_video ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE video_daily_by_video ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE video_daily_by_video ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE video_daily_by_video ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE video_daily_by_video ADD COLUMN reached_100 UInt64 AFTER reached_95;

ALTER TABLE video_yearly ADD COLUMN watched_ms_sum UInt64 AFTER influenced_revenue_e4;
ALTER TABLE video_yearly ADD COLUMN watches UInt64 AFTER watched_ms_sum;
ALTER TABLE video_yearly ADD COLUMN reached_25 UInt64 AFTER watches;
ALTER TABLE video_yearly ADD COLUMN reached_50 UInt64 AFTER reached_25;
ALTER TABLE video_yearly ADD COLUMN reached_75 UInt64 AFTER reached_50;
ALTER TABLE video_yearly ADD COLUMN reached_95 UInt64 AFTER reached_75;
ALTER TABLE video_yearly ADD COLUMN reached_100 UInt64 AFTER reached_95;

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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, month, widget_id;

DROP TABLE IF EXISTS shop_daily_mv;

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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, local_date;

DROP TABLE IF EXISTS video_daily_by_video_mv;

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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, video_id, local_date;

DROP TABLE IF EXISTS video_yearly_mv;

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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, year, video_id;

-- A shop's days per value of each dimension: a summary or a shop's series broken down or filtered.
CREATE TABLE IF NOT EXISTS shop_daily_by_dimension
(
    shop_domain            String,
    dimension              String,
    value                  String,
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, dimension, value, local_date);

CREATE MATERIALIZED VIEW IF NOT EXISTS shop_daily_by_dimension_mv TO shop_daily_by_dimension AS
SELECT
    shop_domain,
    dimension,
    value,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
ARRAY JOIN
    ['placement', 'device', 'country', 'source'] AS dimension,
    [toString(placement), toString(device), country, toString(source)] AS value
GROUP BY shop_domain, dimension, value, local_date;

-- Each widget's days per value: the widgets filtered by one value, or one widget broken down.
CREATE TABLE IF NOT EXISTS widget_daily_by_dimension
(
    shop_domain            String,
    dimension              String,
    value                  String,
    local_date             Date,
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, dimension, value, local_date, widget_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS widget_daily_by_dimension_mv TO widget_daily_by_dimension AS
SELECT
    shop_domain,
    dimension,
    value,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
ARRAY JOIN
    ['placement', 'device', 'country', 'source'] AS dimension,
    [toString(placement), toString(device), country, toString(source)] AS value
GROUP BY shop_domain, dimension, value, local_date, widget_id;

-- Each video's days, months and years per value: the videos filtered by one value, read as the
-- plain list reads video_daily, video_monthly and video_yearly (see `analytics::split`).
CREATE TABLE IF NOT EXISTS video_daily_by_dimension
(
    shop_domain            String,
    dimension              String,
    value                  String,
    local_date             Date,
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYYYYMM(local_date)
ORDER BY (shop_domain, dimension, value, local_date, video_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_daily_by_dimension_mv TO video_daily_by_dimension AS
SELECT
    shop_domain,
    dimension,
    value,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
ARRAY JOIN
    ['placement', 'device', 'country', 'source'] AS dimension,
    [toString(placement), toString(device), country, toString(source)] AS value
GROUP BY shop_domain, dimension, value, local_date, video_id;

CREATE TABLE IF NOT EXISTS video_monthly_by_dimension
(
    shop_domain            String,
    dimension              String,
    value                  String,
    month                  Date,
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(month)
ORDER BY (shop_domain, dimension, value, month, video_id);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_monthly_by_dimension_mv TO video_monthly_by_dimension AS
SELECT
    shop_domain,
    dimension,
    value,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
ARRAY JOIN
    ['placement', 'device', 'country', 'source'] AS dimension,
    [toString(placement), toString(device), country, toString(source)] AS value
GROUP BY shop_domain, dimension, value, month, video_id;

CREATE TABLE IF NOT EXISTS video_yearly_by_dimension
(
    shop_domain            String,
    dimension              String,
    value                  String,
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(year)
ORDER BY (shop_domain, dimension, value, year, video_id)
SETTINGS index_granularity = 1024;

CREATE MATERIALIZED VIEW IF NOT EXISTS video_yearly_by_dimension_mv TO video_yearly_by_dimension AS
SELECT
    shop_domain,
    dimension,
    value,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
ARRAY JOIN
    ['placement', 'device', 'country', 'source'] AS dimension,
    [toString(placement), toString(device), country, toString(source)] AS value
GROUP BY shop_domain, dimension, value, year, video_id;

-- The four dimensions together, per day: the shop's, each video's and each widget's, for a request
-- that names more than one dimension, and for one video or widget broken down or filtered.
CREATE TABLE IF NOT EXISTS shop_daily_by_dimensions
(
    shop_domain            String,
    local_date             Date,
    placement              Enum8('' = 0, 'home' = 1, 'product' = 2, 'collection' = 3, 'page' = 4, 'cart' = 5, 'other' = 6),
    device                 Enum8('' = 0, 'mobile' = 1, 'tablet' = 2, 'desktop' = 3),
    country                String,
    source                 Enum8('' = 0, 'direct' = 1, 'search' = 2, 'social' = 3, 'email' = 4, 'paid' = 5, 'referral' = 6),
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, local_date, placement, device, country, source);

CREATE MATERIALIZED VIEW IF NOT EXISTS shop_daily_by_dimensions_mv TO shop_daily_by_dimensions AS
SELECT
    shop_domain,
    local_date,
    placement,
    device,
    country,
    source,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, local_date, placement, device, country, source;

CREATE TABLE IF NOT EXISTS video_daily_by_dimensions
(
    shop_domain            String,
    video_id               String,
    local_date             Date,
    placement              Enum8('' = 0, 'home' = 1, 'product' = 2, 'collection' = 3, 'page' = 4, 'cart' = 5, 'other' = 6),
    device                 Enum8('' = 0, 'mobile' = 1, 'tablet' = 2, 'desktop' = 3),
    country                String,
    source                 Enum8('' = 0, 'direct' = 1, 'search' = 2, 'social' = 3, 'email' = 4, 'paid' = 5, 'referral' = 6),
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, video_id, local_date, placement, device, country, source);

CREATE MATERIALIZED VIEW IF NOT EXISTS video_daily_by_dimensions_mv TO video_daily_by_dimensions AS
SELECT
    shop_domain,
    video_id,
    local_date,
    placement,
    device,
    country,
    source,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, video_id, local_date, placement, device, country, source;

CREATE TABLE IF NOT EXISTS widget_daily_by_dimensions
(
    shop_domain            String,
    widget_id              String,
    local_date             Date,
    placement              Enum8('' = 0, 'home' = 1, 'product' = 2, 'collection' = 3, 'page' = 4, 'cart' = 5, 'other' = 6),
    device                 Enum8('' = 0, 'mobile' = 1, 'tablet' = 2, 'desktop' = 3),
    country                String,
    source                 Enum8('' = 0, 'direct' = 1, 'search' = 2, 'social' = 3, 'email' = 4, 'paid' = 5, 'referral' = 6),
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
    influenced_revenue_e4  Int64,
    watched_ms_sum         UInt64,
    watches                UInt64,
    reached_25             UInt64,
    reached_50             UInt64,
    reached_75             UInt64,
    reached_95             UInt64,
    reached_100            UInt64
)
ENGINE = SummingMergeTree
PARTITION BY toYear(local_date)
ORDER BY (shop_domain, widget_id, local_date, placement, device, country, source);

CREATE MATERIALIZED VIEW IF NOT EXISTS widget_daily_by_dimensions_mv TO widget_daily_by_dimensions AS
SELECT
    shop_domain,
    widget_id,
    local_date,
    placement,
    device,
    country,
    source,
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
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4,
    sum(watched_ms) AS watched_ms_sum,
    countIf(event_type = 'watch') AS watches,
    countIf(event_type = 'watch' AND max_percent >= 25) AS reached_25,
    countIf(event_type = 'watch' AND max_percent >= 50) AS reached_50,
    countIf(event_type = 'watch' AND max_percent >= 75) AS reached_75,
    countIf(event_type = 'watch' AND max_percent >= 95) AS reached_95,
    countIf(event_type = 'watch' AND max_percent >= 100) AS reached_100
FROM events
GROUP BY shop_domain, widget_id, local_date, placement, device, country, source;
