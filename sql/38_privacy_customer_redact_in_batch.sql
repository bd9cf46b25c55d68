-- The rows of one spool batch that a customer's redaction covers, deleted by the shipper when
-- the redaction was recorded while the batch was going in (the redaction's own deletion may have
-- run before the rows landed). As 32, within the batch.
-- Bound: the batch id, the shop, the customer's ids, their order ids, the redaction's Unix time.
-- (Checked on a shop without events: the check's recount of the others must still hold.)
-- check-params: '01a20082-29f1-702f-93f8-69422999f903', 'nobody.myshopify.com', ['7'], ['9'], 1790000000
ALTER TABLE events DELETE
WHERE batch_id = toUUID(?) AND shop_domain = ? AND (has(CAST(? AS Array(String)), customer_id) OR has(CAST(? AS Array(String)), order_id)) AND received_at <= toDateTime(?)
