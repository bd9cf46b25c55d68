-- The attribution split of the events video_daily counted before 0007 gave it the columns: rows
-- with only those columns set, which the table sums into the rows it has. One INSERT per file:
-- it is not idempotent, so it is recorded as soon as it succeeded.
INSERT INTO video_daily
SELECT
    shop_domain,
    local_date,
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
GROUP BY shop_domain, local_date, video_id
