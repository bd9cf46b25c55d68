-- The days of events counted before shop_daily existed (see 0007).
INSERT INTO shop_daily
SELECT
    shop_domain,
    local_date,
    countIf(event_type = 'impression') AS impressions,
    countIf(event_type = 'view') AS views,
    countIf(event_type = 'click') AS clicks,
    countIf(event_type = 'add_to_cart') AS add_to_cart,
    countIf(event_type = 'checkout_completed') AS orders,
    sum(order_revenue_e4) AS revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct') AS direct_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'direct') AS direct_orders,
    sumIf(order_revenue_e4, attribution = 'direct') AS direct_revenue_e4,
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced') AS influenced_add_to_cart,
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced') AS influenced_orders,
    sumIf(order_revenue_e4, attribution = 'influenced') AS influenced_revenue_e4
FROM events
GROUP BY shop_domain, local_date
