-- The shop's totals per value of one dimension (a summary or a shop's series broken down by it,
-- or filtered on it), per day or over the whole range, from shop_daily_by_dimension: one key
-- range per value.
-- Bound in order: 1 to group by day (else one row per value), the shop, the dimension's name,
-- the first and last date, then 1 and a value to keep that value alone (0 and '' for every value).
-- check-params: 0, 'a.myshopify.com', 'device', '2026-01-15', '2026-12-10', 1, 'mobile'
SELECT
    if(? = 1, local_date, toDate('1970-01-01')) AS day,
    value,
    sum(impressions),
    sum(views),
    sum(clicks),
    sum(add_to_cart),
    sum(orders),
    sum(revenue_e4),
    sum(direct_add_to_cart),
    sum(direct_orders),
    sum(direct_revenue_e4),
    sum(influenced_add_to_cart),
    sum(influenced_orders),
    sum(influenced_revenue_e4),
    sum(watched_ms_sum),
    sum(watches),
    sum(reached_25),
    sum(reached_50),
    sum(reached_75),
    sum(reached_95),
    sum(reached_100)
FROM shop_daily_by_dimension
WHERE shop_domain = ? AND dimension = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
  AND (? = 0 OR value = ?)
GROUP BY day, value
