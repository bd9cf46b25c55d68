-- Per-video totals of one shop over a range of local days within one month, from video_daily
-- alone: what `sql/20` reads for a range its month split reads as days only (today's, after
-- every batch), without its four other parts, each of which costs a query about a millisecond
-- even when empty.
-- Bound in order: the shop, the first and last date. One primary-key range.
-- check-params: 'a.myshopify.com', '2026-11-25', '2026-11-25'
SELECT
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
    sum(influenced_revenue_e4),
    sum(watched_ms_sum),
    sum(watches),
    sum(reached_25),
    sum(reached_50),
    sum(reached_75),
    sum(reached_95),
    sum(reached_100)
FROM video_daily
WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
GROUP BY video_id
