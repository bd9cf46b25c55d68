-- Per-widget totals of one shop over whole local days: whole months from widget_monthly, the
-- days at their edges from widget_daily.
-- Bound in order: for the months, the shop and the first and last date; then for each of two
-- edges (the days at the start and at the end) its sign (1 added, -1 subtracted), the shop and
-- the first and last date. An empty part is bound as a range that ends before it starts. Each
-- part is one primary-key range.
-- The days a range holds are its months' plus or minus the days at their edges (see
-- `analytics::split`): a partial month is read as its own days, or as its month less the days
-- outside the range when those are fewer.
-- Both views count the same inserts, so a difference never goes below zero once an insert is
-- done; a read that races one (the daily view written, the monthly not yet) is held at zero.
-- Each sign is `materialize`d: on a cluster, 18.16 refuses a union of Distributed reads whose
-- parts all carry the same constant sign ("non constant in source stream").
-- check-params: 'a.myshopify.com', '2026-02-01', '2026-11-01', 1, 'a.myshopify.com', '2026-01-15', '2026-01-31', -1, 'a.myshopify.com', '2026-11-25', '2026-11-30'
SELECT
    widget_id,
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
    SELECT materialize(toInt8(1)) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT materialize(toInt8(?)) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4,
           watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
GROUP BY widget_id
