-- Months that were counted before video_monthly existed, from the daily view. One statement per
-- file: an INSERT is not idempotent, so it must be recorded as soon as it succeeded. Run
-- migrations before ingestion starts (`videoapp serve` does; docker-compose runs `migrate`
-- first): events inserted between 0003 and this file would otherwise count twice.
INSERT INTO video_monthly
SELECT
    shop_domain,
    toStartOfMonth(local_date) AS month,
    video_id,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4)
FROM video_daily
GROUP BY shop_domain, month, video_id
