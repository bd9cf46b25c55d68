-- Lifetime views per video of one shop, for the storefront's viewCount (whole months suffice).
-- check-params: 'a.myshopify.com'
SELECT video_id, sum(views)
FROM video_monthly
WHERE shop_domain = ?
GROUP BY video_id
