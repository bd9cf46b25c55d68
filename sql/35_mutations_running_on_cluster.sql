-- Deletions not done yet on a cluster: asked of a replica of every shard (the cluster() table
-- function), about a node table.
-- check-params: 'videoapp', 'check', 'events_local'
-- check-parse-only: the cluster() table function needs a cluster, which chDB has not
SELECT count()
FROM cluster(?, system, mutations)
WHERE database = ? AND table = ? AND is_done = 0
