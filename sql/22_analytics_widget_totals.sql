-- Per-widget totals of one shop over whole local days (months and edges as for videos).
-- Bound in order: shop, first and last whole month, then shop and the two partial-month edges
-- (an empty edge is bound as a range that ends before it starts).
-- check-params: 'a.myshopify.com', '2026-02-01', '2026-11-01', 'a.myshopify.com', '2026-01-15', '2026-01-31', '2026-12-01', '2026-12-10'
SELECT
    widget_id,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM
(
    SELECT widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4
    FROM widget_monthly
    WHERE shop_domain = ? AND month >= toDate(?) AND month <= toDate(?)
    UNION ALL
    SELECT widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4
    FROM widget_daily
    WHERE shop_domain = ?
      AND ((local_date >= toDate(?) AND local_date <= toDate(?))
        OR (local_date >= toDate(?) AND local_date <= toDate(?)))
)
GROUP BY widget_id
