-- The partitions of the given tables held in more than the given number of parts, of no more
-- than the given number of rows, that nothing has written (an insert, a merge, a deletion) for
-- the given number of seconds: those to merge (quiet ones: more than one part, any size, quiet
-- for a while; crowded ones: more parts, few rows, written or not). A table with a deletion
-- still running is left alone (a merge would wait for it, or it for the merge). A partition is
-- named by its id, which `OPTIMIZE … PARTITION ID` takes on every version.
-- check-params: ['video_daily', 'video_monthly'], 1, 18446744073709551615, 0
SELECT table, partition_id
FROM system.parts
WHERE database = currentDatabase() AND active AND has(CAST(? AS Array(String)), table)
  AND table NOT IN (
      SELECT table FROM system.mutations WHERE database = currentDatabase() AND is_done = 0
  )
GROUP BY table, partition_id
HAVING count() > ? AND sum(rows) <= ? AND max(modification_time) <= now() - ?
ORDER BY table, partition_id
