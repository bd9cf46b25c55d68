-- One widget's totals per local day with any events. widget_daily is ordered by day, then
-- widget; a shop has tens of widgets, not thousands, so a range reads few rows per day.
-- Bound in order: the shop, the widget's id, the first and last date. One primary-key range.
-- check-params: 'a.myshopify.com', 'x-1', '2026-01-15', '2026-12-10'
SELECT
    local_date,
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
FROM widget_daily
WHERE shop_domain = ? AND widget_id = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
GROUP BY local_date
