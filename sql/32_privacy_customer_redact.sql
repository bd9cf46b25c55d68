-- Deletes a customer's raw events received until their redaction: theirs by id (every form events
-- carry), and those of the orders the redaction names. The aggregates hold no personal data and
-- keep their counts. A mutation: it runs after the statement returns (see 34).
-- Bound: the shop, the customer's ids, their order ids, the redaction's Unix time (allowance added).
-- (An empty list is bound as `[]`, which is Array(Nothing) to ClickHouse 18.16: hence the CAST.)
-- (Checked on a shop without events: the check's recount of the others must still hold.)
-- check-params: 'nobody.myshopify.com', ['7'], ['9'], 1790000000
ALTER TABLE events DELETE
WHERE shop_domain = ? AND (has(CAST(? AS Array(String)), customer_id) OR has(CAST(? AS Array(String)), order_id)) AND received_at <= toDateTime(?)
