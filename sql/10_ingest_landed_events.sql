-- Which events of a batch already landed: asked only for a batch whose insert may have
-- succeeded unseen (a timeout, a crash). The shop and date bounds keep it to the few granules
-- the batch can touch.
-- check-params: '01a20082-29f1-702f-93f8-69422999f903', 'a.myshopify.com', 'z.myshopify.com', '2026-01-01', '2026-01-31'
SELECT toString(event_id)
FROM events
WHERE batch_id = toUUID(?)
  AND shop_domain >= ? AND shop_domain <= ?
  AND local_date >= toDate(?) AND local_date <= toDate(?)
