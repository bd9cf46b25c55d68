-- Every event held for a customer: theirs by id or order, and the rest of the sessions they
-- appeared in (what they did before they logged in). Oldest first.
-- Bound: the shop, the customer's ids, their order ids, their sessions.
-- (An empty list is bound as `[]`, which is Array(Nothing) to ClickHouse 18.16: hence the CAST.)
-- check-params: 'a.myshopify.com', ['7'], ['9'], ['s-1']
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
WHERE shop_domain = ? AND (has(CAST(? AS Array(String)), customer_id) OR has(CAST(? AS Array(String)), order_id) OR has(CAST(? AS Array(String)), session_id))
ORDER BY event_time, event_id
