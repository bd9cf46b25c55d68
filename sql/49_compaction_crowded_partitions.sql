-- The partitions of the given tables held in more than the given number of parts, all together
-- no more than the given number of rows, whether or not something is still writing them: those
-- small enough to merge while they are being written (this year's of a yearly aggregate, whose
-- every part holds a row per video and value). A table with a deletion still running is left
-- alone, as in `36_…`.
-- check-params: ['video_yearly', 'video_yearly_by_dimension'], 2, 1000000
SELECT table, partition_id
FROM system.parts
WHERE database = currentDatabase() AND active AND has(CAST(? AS Array(String)), table)
  AND table NOT IN (
      SELECT table FROM system.mutations WHERE database = currentDatabase() AND is_done = 0
  )
GROUP BY table, partition_id
HAVING count() > ? AND sum(rows) <= ?
ORDER BY table, partition_id
