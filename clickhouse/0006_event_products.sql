-- The products of an order (checkout_completed), as the checkout pixel names them: global ids.
-- 18.16 has no `ADD COLUMN IF NOT EXISTS`; the runner skips this statement when the column is
-- already there, so the file can still be applied again.
ALTER TABLE events ADD COLUMN product_ids Array(String) AFTER currency;
