-- How many nodes ClickHouse lists for the cluster the service is configured to run on (0: the
-- servers' remote_servers do not name it).
-- check-params: 'videoapp'
SELECT count()
FROM system.clusters
WHERE cluster = ?
