-- The attribution split of earlier events for video_monthly (see 0008).
INSERT INTO video_monthly
SELECT
    shop_domain,
    toStartOfMonth(local_date) AS month,
    video_id,
    0, 0, 0, 0, 0, 0,
    countIf(event_type = 'add_to_cart' AND attribution = 'direct'),
    countIf(event_type = 'checkout_completed' AND attribution = 'direct'),
    sumIf(order_revenue_e4, attribution = 'direct'),
    countIf(event_type = 'add_to_cart' AND attribution = 'influenced'),
    countIf(event_type = 'checkout_completed' AND attribution = 'influenced'),
    sumIf(order_revenue_e4, attribution = 'influenced')
FROM events
WHERE attribution != 'none' AND event_type IN ('add_to_cart', 'checkout_completed')
GROUP BY shop_domain, month, video_id
