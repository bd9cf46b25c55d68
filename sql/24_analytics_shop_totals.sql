-- The shop's totals over whole local days: every event counts once (events without a video sit
-- under video_id '').
-- Bound in order, for each part (whole months, then the partial month before, then the one
-- after): the shop, the first and last date (an empty part is bound as a range that ends before
-- it starts) and, for one video or widget, its id. Each part is one primary-key range.
-- check-params: 'a.myshopify.com', '2026-02-01', '2026-11-01', 'a.myshopify.com', '2026-01-15', '2026-01-31', 'a.myshopify.com', '2026-12-01', '2026-12-10'
SELECT
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM
(
    SELECT impressions, views, clicks, add_to_cart, orders, revenue_e4
    FROM video_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT impressions, views, clicks, add_to_cart, orders, revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT impressions, views, clicks, add_to_cart, orders, revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
