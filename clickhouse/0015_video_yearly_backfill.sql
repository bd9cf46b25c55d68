-- The years of events counted before video_yearly existed, from the monthly view (which counts
-- every event, attribution included, since 0007-0011). One statement per file (see 0004).
INSERT INTO video_yearly
SELECT
    shop_domain,
    toStartOfYear(month) AS year,
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
GROUP BY shop_domain, year, video_id
