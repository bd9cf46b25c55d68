-- The years of events counted before widget_yearly existed (see 0015).
INSERT INTO widget_yearly
SELECT
    shop_domain,
    toStartOfYear(month) AS year,
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
    sum(influenced_revenue_e4)
FROM widget_monthly
GROUP BY shop_domain, year, widget_id
