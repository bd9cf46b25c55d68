-- How many mutations of a table are still running.
-- check-params: 'events'
SELECT count() FROM system.mutations WHERE database = currentDatabase() AND table = ? AND is_done = 0
