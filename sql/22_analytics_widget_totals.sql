-- Per-widget totals of one shop over whole local days (parts as for videos).
-- Bound in order, for each of nine parts (see `PeriodSplit`: the years added; the two runs of
-- months added, the two subtracted; the two runs of days added, the two subtracted): the shop,
-- the part's first and last date (the first days of its first and last month or year; an empty
-- part is bound as a range that ends before it starts). Each part is one primary-key range.
-- The days a range holds are its years' and months' and days' added, less those subtracted: a
-- year to yesterday is read as its year less the days after it, plus the days before it.
-- The views count the same inserts, so a difference never goes below zero once an insert is
-- done; a read that races one (one view written, another not yet) is held at zero.
-- check-params: 'a.myshopify.com', '2026-01-01', '2026-01-01', 'a.myshopify.com', '2025-12-01', '2025-12-01', 'a.myshopify.com', '2105-12-31', '1970-01-01', 'a.myshopify.com', '2026-12-01', '2026-12-01', 'a.myshopify.com', '2105-12-31', '1970-01-01', 'a.myshopify.com', '2025-11-28', '2025-11-30', 'a.myshopify.com', '2105-12-31', '1970-01-01', 'a.myshopify.com', '2026-11-27', '2026-11-30', 'a.myshopify.com', '2105-12-31', '1970-01-01'
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
    sum(sign * influenced_revenue_e4)
FROM
(
    SELECT toInt8(1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_yearly
    WHERE shop_domain = ? AND year >= toDate(?) AND year <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
    UNION ALL
    SELECT toInt8(-1) AS sign, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4,
           direct_add_to_cart, direct_orders, direct_revenue_e4,
           influenced_add_to_cart, influenced_orders, influenced_revenue_e4
    FROM widget_daily
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
)
GROUP BY widget_id
