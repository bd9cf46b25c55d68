-- Deletes every row of a shop from one table (raw events, or an aggregate).
-- (Checked on a shop without events: the check's recount of the others must still hold.)
-- check-params: events, 'nobody.myshopify.com'
ALTER TABLE ? DELETE WHERE shop_domain = ?
