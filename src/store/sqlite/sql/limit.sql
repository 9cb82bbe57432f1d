-- What the claim of a limited task type reads and writes (store/limits.ts holds the rule):
-- the running jobs of limited types, and the recent starts of rate-limited ones.

-- name: limitRunning
-- Running (and buffered: claimed is running) jobs of these types per limit key. Only
-- running rows are read, through the partial lease index: their number is bounded by
-- every worker's capacity, not by the backlog or the history.
SELECT type, coalesce(limit_key, '') AS key, count(*) AS n FROM mailroom_job INDEXED BY mailroom_job_lease_idx
WHERE status = 'running' AND type IN (SELECT value FROM json_each(@types))
GROUP BY type, coalesce(limit_key, '');

-- name: limitStarts
-- Starts of these types after @since (the longest window the claim applies). `+@since`,
-- not @since: a bare parameter compared with an indexed column is compiled again at every
-- run once an ANALYZE has written STAT4 statistics (job.sql, fragment claimable).
SELECT type, limit_key AS key, started_at AS at FROM mailroom_limit_start
WHERE type IN (SELECT value FROM json_each(@types)) AND started_at > +@since;

-- name: limitStartsPrune
-- Starts no window reaches any more; each claim of a rate-limited type drops its own.
DELETE FROM mailroom_limit_start WHERE type IN (SELECT value FROM json_each(@types)) AND started_at <= +@before;

-- name: limitStartsInsert
-- This claim's starts of rate-limited types: @starts is a JSON array of [type, key].
INSERT INTO mailroom_limit_start (type, limit_key, started_at)
SELECT value ->> 0, value ->> 1, @now FROM json_each(@starts);
