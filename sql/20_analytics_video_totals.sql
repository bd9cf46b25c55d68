-- Per-video totals of one shop over whole local days, from the views only: whole months from
-- video_monthly, the partial months at either end from video_daily.
-- Bound in order, for each part (whole months, then the partial month before, then the one
-- after): the shop, the first and last date (an empty part is bound as a range that ends before
-- it starts) and, for one video or widget, its id. Each part is one primary-key range.
-- check-params: 'a.myshopify.com', '2026-02-01', '2026-11-01', 'a.myshopify.com', '2026-01-15', '2026-01-31', 'a.myshopify.com', '2026-12-01', '2026-12-10'
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
    sum(influenced_revenue_e4)
FROM
(
    SELECT video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
GROUP BY video_id
