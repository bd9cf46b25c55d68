-- Per-video totals of one shop over whole local days, of the events with one value of one
-- dimension (the videos filtered on it): `20_analytics_video_totals.sql` read from the aggregates
-- by dimension, whose rows of one value are one key range as the plain aggregate's are.
-- Bound in order: for the years, the shop, the first and last date, the dimension's name and
-- the value; then for each of four edges (as in 20) its sign, and the same.
-- check-params: 'a.myshopify.com', '2026-01-01', '2026-01-01', 'device', 'mobile', 1, 'a.myshopify.com', '2025-12-01', '2025-12-01', 'device', 'mobile', -1, 'a.myshopify.com', '2026-12-01', '2026-12-01', 'device', 'mobile', 1, 'a.myshopify.com', '2025-11-28', '2025-11-30', 'device', 'mobile', -1, 'a.myshopify.com', '2026-11-27', '2026-11-30', 'device', 'mobile'
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
    FROM video_yearly_by_dimension
    WHERE shop_domain = ? AND year >= toDate(?) AND year <= toDate(?)
      AND dimension = ? AND value = ?
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_monthly_by_dimension
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
      AND dimension = ? AND value = ?
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_monthly_by_dimension
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
      AND dimension = ? AND value = ?
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_daily_by_dimension
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
      AND dimension = ? AND value = ?
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, video_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM video_daily_by_dimension
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
      AND dimension = ? AND value = ?
)
GROUP BY video_id
