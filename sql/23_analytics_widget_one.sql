-- One widget's totals over whole local days.
-- check-params: 'a.myshopify.com', '2026-01-01', '2026-12-31', 'widget-1'
SELECT
    widget_id,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM widget_daily
WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?) AND widget_id = ?
GROUP BY widget_id
