-- One video's totals per local day with any events, from video_daily_by_video.
-- Bound in order: the shop, the video's id, the first and last date. One primary-key range.
-- check-params: 'a.myshopify.com', 'x-1', '2026-01-15', '2026-12-10'
SELECT
    local_date,
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
    sum(influenced_revenue_e4),
    sum(watched_ms_sum),
    sum(watches),
    sum(reached_25),
    sum(reached_50),
    sum(reached_75),
    sum(reached_95),
    sum(reached_100)
FROM video_daily_by_video
WHERE shop_domain = ? AND video_id = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
GROUP BY local_date
