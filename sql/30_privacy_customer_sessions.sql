-- The sessions in which a customer appeared: by the customer's id, or one of their orders.
-- Bound: the shop, the customer's ids (every form events carry), their order ids.
-- (An empty list is bound as `[]`, which is Array(Nothing) to ClickHouse 18.16: hence the CAST.)
-- check-params: 'a.myshopify.com', ['7', 'gid://shopify/Customer/7'], ['9']
SELECT DISTINCT session_id
FROM events
WHERE shop_domain = ? AND (has(CAST(? AS Array(String)), customer_id) OR has(CAST(? AS Array(String)), order_id)) AND session_id != ''
