-- A customer's events: those the platform's signed customer id bound to them (an event's
-- `customer_id` is never the client's say). Oldest first.
-- Bound: the shop, the customer's number.
-- check-params: 'a.myshopify.com', '7'
SELECT
    event_id,
    event_time,
    toString(event_type),
    toString(attribution),
    video_id,
    widget_id,
    session_id,
    customer_id,
    product_id,
    order_id,
    revenue_e4,
    currency
FROM events
WHERE shop_domain = ? AND customer_id = ?
ORDER BY event_time, event_id
