-- A shop's holdout: each event says the group of the browser that sent it ('' when the shop has
-- no holdout, and for events before this file), and a seventh type, `session`, marks the first
-- page of a visit in both groups. (The column is not `group`, a keyword in every statement.)
-- No aggregate counts sessions: the lift is read from the events of the range
-- (`analytics::lift`), which it needs per session anyway, for the spread of revenue.
ALTER TABLE events ADD COLUMN lift_group Enum8('' = 0, 'exposed' = 1, 'holdout' = 2);

ALTER TABLE events MODIFY COLUMN event_type Enum8('impression' = 1, 'view' = 2, 'click' = 3, 'add_to_cart' = 4, 'checkout_completed' = 5, 'watch' = 6, 'session' = 7);
