-- One widget's totals where the events say what the filters name, per value of
-- the dimension broken down by (or all together), per day or over the whole range, from
-- widget_daily_by_dimensions: the four dimensions together, for a request that names more than one, or
-- one video or widget.
-- Bound in order: 1 to group by day (else over the whole range); the dimension broken down by,
-- as its number (1 placement, 2 device, 3 country, 4 source; 0 for none) four times; the shop, the widget's id,
-- the first and last date; then for placement, device, country and source, 1 and the value to
-- keep (0 and '' for any).
-- check-params: 1, 2, 2, 2, 2, 'a.myshopify.com', 'x-1', '2026-01-15', '2026-12-10', 0, '', 1, 'mobile', 1, 'FR', 0, ''
SELECT
    if(? = 1, local_date, toDate('1970-01-01')) AS day,
    multiIf(? = 1, toString(placement), ? = 2, toString(device), ? = 3, country, ? = 4, toString(source), '') AS value,
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
WHERE shop_domain = ? AND widget_id = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
  AND (? = 0 OR placement = ?) AND (? = 0 OR device = ?)
  AND (? = 0 OR country = ?) AND (? = 0 OR source = ?)
GROUP BY day, value
