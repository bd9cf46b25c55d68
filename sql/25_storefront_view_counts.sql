-- Lifetime views per video of one shop, for the storefront's viewCount.
-- check-params: 'a.myshopify.com'
SELECT video_id, sum(views)
FROM video_daily
WHERE shop_domain = ?
GROUP BY video_id
