-- Per-widget totals of one shop over whole local days, of the events with one value of one
-- dimension (the widgets filtered on it), from widget_daily_by_dimension: one key range.
-- Bound in order: the shop, the dimension's name, the value, the first and last date.
-- check-params: 'a.myshopify.com', 'source', 'email', '2026-01-15', '2026-12-10'
SELECT
    widget_id,
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
FROM widget_daily_by_dimension
WHERE shop_domain = ? AND dimension = ? AND value = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
GROUP BY widget_id
