-- Months counted before widget_monthly existed (see 0004).
INSERT INTO widget_monthly
SELECT
    shop_domain,
    toStartOfMonth(local_date) AS month,
    widget_id,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM widget_daily
GROUP BY shop_domain, month, widget_id
