-- The shop's totals over whole local days: every event counts once (events without a video sit
-- under video_id '').
-- check-params: 'a.myshopify.com', '2026-01-01', '2026-12-31'
SELECT
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM video_daily
WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
