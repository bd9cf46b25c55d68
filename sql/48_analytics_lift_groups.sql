-- The two groups of a shop's holdout over whole local days: each group's sessions, orders and
-- revenue, and the sum over its sessions of each session's revenue squared (the spread of revenue
-- per session). Read from the raw events: the spread needs each session's own revenue, which no
-- aggregate keeps. The key (shop, day, type) keeps it to the range's sessions and orders. An
-- order that names no session is a session of its own.
-- Bound in order: the shop, the first and last date.
-- check-params: 'a.myshopify.com', '2026-01-15', '2026-12-10'
SELECT
    toString(lift_group) AS group_name,
    sum(sessions) AS sessions,
    sum(orders) AS orders,
    sum(session_revenue_e4) AS revenue_e4,
    sum(toFloat64(session_revenue_e4) * toFloat64(session_revenue_e4)) AS revenue_e4_squares
FROM
(
    SELECT
        lift_group,
        if(session_id = '', toString(event_id), session_id) AS session,
        countIf(event_type = 'session') AS sessions,
        countIf(event_type = 'checkout_completed') AS orders,
        sum(order_revenue_e4) AS session_revenue_e4
    FROM events
    WHERE shop_domain = ? AND local_date >= toDate(?) AND local_date <= toDate(?)
      AND event_type IN ('session', 'checkout_completed') AND lift_group != ''
    GROUP BY lift_group, session
)
GROUP BY group_name
