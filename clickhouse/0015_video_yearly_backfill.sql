-- The years of events counted before video_yearly existed, from the monthly view: a year is its
-- months, and video_monthly holds every event's counts (its own back-fills ran before this file),
-- so this sums some rows per video and month instead of reading every event again. One
-- statement per file, run before ingestion starts, like every back-fill (see README.md).
INSERT INTO video_yearly
SELECT
    shop_domain,
    toStartOfYear(month),
    video_id,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4),
    sum(direct_add_to_cart),
    sum(direct_orders),
    sum(direct_revenue_e4),
    sum(influenced_add_to_cart),
    sum(influenced_orders),
    sum(influenced_revenue_e4)
FROM video_monthly
GROUP BY shop_domain, toStartOfYear(month), video_id
