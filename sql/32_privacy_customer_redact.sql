-- Deletes a customer's raw events (the same rows 31 reports). The aggregates hold no personal
-- data and keep their counts. A mutation: it runs after the statement returns (see 34).
-- (An empty list is bound as `[]`, which is Array(Nothing) to ClickHouse 18.16: hence the CAST.)
-- (Checked on a shop without events: the check's recount of the others must still hold.)
-- check-params: 'nobody.myshopify.com', ['7'], ['9'], ['s-1']
ALTER TABLE events DELETE
WHERE shop_domain = ? AND (has(CAST(? AS Array(String)), customer_id) OR has(CAST(? AS Array(String)), order_id) OR has(CAST(? AS Array(String)), session_id))
