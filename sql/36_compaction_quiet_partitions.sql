-- The partitions of the given tables that are held in more than one part and that nothing has
-- written (an insert, a merge, a deletion) for the given number of seconds: those to merge. A
-- table with a deletion still running is left alone (a merge would wait for it, or it for the
-- merge). A partition is named by its id, which `OPTIMIZE … PARTITION ID` takes on every version.
-- check-params: ['video_daily', 'video_monthly'], 0
SELECT table, partition_id
FROM system.parts
WHERE database = currentDatabase() AND active AND has(CAST(? AS Array(String)), table)
  AND table NOT IN (
      SELECT table FROM system.mutations WHERE database = currentDatabase() AND is_done = 0
  )
GROUP BY table, partition_id
HAVING count() > 1 AND max(modification_time) <= now() - ?
ORDER BY table, partition_id
