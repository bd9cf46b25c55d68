-- Per-widget totals of one shop over whole local days, of the events that say what every filter
-- names (the widgets filtered on more than one dimension), from widget_daily_by_dimensions. It reads
-- every row of the shop's widgets in the range: exact, and slower than one filter's key range.
-- Bound in order: the shop, the first and last date; then for placement, device, country and
-- source, 1 and the value to keep (0 and '' for any).
-- check-params: 'a.myshopify.com', '2026-01-15', '2026-12-10', 0, '', 1, 'mobile', 0, '', 1, 'email'
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
FROM widget_daily_by_dimensions
WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
  AND (? = 0 OR placement = ?) AND (? = 0 OR device = ?)
  AND (? = 0 OR country = ?) AND (? = 0 OR source = ?)
GROUP BY widget_id
