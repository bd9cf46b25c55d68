-- Merges every part of one partition of an aggregate into one, summing the rows of each key.
-- Bound in order: the table (one of ours, written into the text), the partition's id.
-- check-params: video_daily, '202601'
OPTIMIZE TABLE ? PARTITION ID ? FINAL
