-- Per-video totals of one shop over whole local days, from the views only: whole months from
-- video_monthly, days from video_daily.
-- Bound in order, for each of five parts (the months, the two ranges of days added, the two
-- subtracted): the shop, the first and last date (an empty part is bound as a range that ends
-- before it starts). Each part is one primary-key range. The days a range holds are its
-- months' plus the days added less the days subtracted (see `MonthSplit`): a partial month is
-- read as its own days, or as its month less the days outside the range when those are fewer.
-- Both views count the same inserts, so a difference never goes below zero once an insert is
-- done; a read that races one (the daily view written, the monthly not yet) is held at zero.
-- check-params: 'a.myshopify.com', '2026-02-01', '2026-11-01', 'a.myshopify.com', '2026-01-15', '2026-01-31', 'a.myshopify.com', '2026-12-01', '2026-12-10', 'a.myshopify.com', '2026-11-25', '2026-11-30', 'a.myshopify.com', '2105-12-31', '1970-01-01'
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
    sum(sign * influenced_revenue_e4)
FROM
(
    SELECT toInt8(1) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM video_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
GROUP BY video_id
