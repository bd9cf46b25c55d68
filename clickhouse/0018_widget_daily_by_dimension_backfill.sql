-- widget_daily_by_dimension: each event counted before 0016, under each dimension with the value '' (not known), from widget_daily.
-- One INSERT per file: it is not idempotent, so it is recorded as soon as it succeeded.
INSERT INTO widget_daily_by_dimension (shop_domain, dimension, value, local_date, widget_id, impressions, views, clicks, add_to_cart, orders, revenue_e4, direct_add_to_cart, direct_orders, direct_revenue_e4, influenced_add_to_cart, influenced_orders, influenced_revenue_e4, watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100)
SELECT shop_domain, dimension, '' AS value, local_date, widget_id,
    impressions, views, clicks, add_to_cart, orders, revenue_e4, direct_add_to_cart, direct_orders, direct_revenue_e4, influenced_add_to_cart, influenced_orders, influenced_revenue_e4, watched_ms_sum, watches, reached_25, reached_50, reached_75, reached_95, reached_100
FROM widget_daily
ARRAY JOIN ['placement', 'device', 'country', 'source'] AS dimension
