-- Per-video totals of one shop over whole local days, from the views only: whole years from
-- video_yearly, the months at their edges from video_monthly, and the days at the edges of those
-- from video_daily (see `analytics::split`): a year to yesterday reads this year's row of each
-- video, less December and the days to come of this month, plus last year's months and days in
-- the range.
-- Bound in order: for the years, the shop and the first and last date; then for each of four
-- edges (the months at the start and at the end, the days at the start and at the end) its sign
-- (1 added, -1 subtracted), the shop and the first and last date. An empty part is bound as a
-- range that ends before it starts. Each part is one primary-key range.
-- The views count the same inserts, so a difference never goes below zero once an insert is
-- done; a read that races one (the daily view written, the yearly not yet) is held at zero.
-- Each sign is `materialize`d: on a cluster, 18.16 refuses a union of Distributed reads whose
-- parts all carry the same constant sign ("non constant in source stream").
-- check-params: 'a.myshopify.com', '2026-01-01', '2026-01-01', 1, 'a.myshopify.com', '2025-12-01', '2025-12-01', -1, 'a.myshopify.com', '2026-12-01', '2026-12-01', 1, 'a.myshopify.com', '2025-11-28', '2025-11-30', -1, 'a.myshopify.com', '2026-11-27', '2026-11-30'
SELECT
    video_id,
    toUInt64(greatest(sum(sign * impressions), 0)),
    toUInt64(greatest(sum(sign * views), 0)),
    toUInt64(greatest(sum(sign * clicks), 0)),
    toUInt64(greatest(sum(sign * add_to_cart), 0)),
    toUInt64(greatest(sum(sign * orders), 0)),
    sum(sign * revenue_e4),
    toUInt64(greatest(sum(sign * direct_add_to_cart), 0)),
    toUInt64(greatest(sum(sign * direct_orders), 0)),
    sum(sign * direct_revenue_e4),
    toUInt64(greatest(sum(sign * influenced_add_to_cart), 0)),
    toUInt64(greatest(sum(sign * influenced_orders), 0)),
    sum(sign * influenced_revenue_e4),
    toUInt64(greatest(sum(sign * watched_ms_sum), 0)),
    toUInt64(greatest(sum(sign * watches), 0)),
    toUInt64(greatest(sum(sign * reached_25), 0)),
    toUInt64(greatest(sum(sign * reached_50), 0)),
    toUInt64(greatest(sum(sign * reached_75), 0)),
    toUInt64(greatest(sum(sign * reached_95), 0)),
    toUInt64(greatest(sum(sign * reached_100), 0))
FROM
(
    SELECT materialize(toInt8(1)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_yearly
    WHERE shop_domain = ? AND year >= toDate(?) AND year <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
GROUP BY video_id
