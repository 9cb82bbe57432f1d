-- What the claim of a limited task type reads and writes (store/limits.ts holds the rule):
-- the running jobs of limited types, and the recent starts of rate-limited ones. All of it
-- runs inside one transaction after limitLock, so no two claims count at once.

-- name: limitLock
-- Serialises the claims of these limited types across every worker and process until the
-- transaction ends (taken in byte order of the names, whatever the database's collation,
-- so two claims never wait on each other crosswise), and answers the server's clock, read
-- once every lock is held: the count takes the locks before the one row it makes is
-- built. The key is the schema and the type: other schemas never contend. The statements
-- after it read the usage in snapshots taken after the locks. It goes in one round trip
-- with BEGIN (AtomicOptions.opening), which takes no parameters: the caller writes the
-- types in place of the marker in ARRAY[...] as text literals (pg's escapeLiteral).
-- params: none
SELECT date_trunc('milliseconds', clock_timestamp()) AS now
FROM (
  SELECT count(pg_advisory_xact_lock(hashtextextended('{{schema}}:' || type, 0))) AS held
  FROM (SELECT type FROM unnest(ARRAY[/* types */]::text[]) AS type ORDER BY type COLLATE "C") AS in_order
) AS locks;

-- name: limitRunning
-- Running (and buffered: claimed is running) jobs of these types per limit key, read
-- through the partial lease index: bounded by every worker's capacity, not the backlog.
-- A claim reads it in BEGIN's round trip, just after limitLock (its own statement, so its
-- snapshot is taken once the locks are held): the caller writes the types in place of the
-- marker in ARRAY[...] as text literals, as for limitLock.
-- params: none
SELECT type, coalesce(limit_key, '') AS key, count(*) AS n FROM mailroom_job
WHERE status = 'running' AND type = ANY(ARRAY[/* types */]::text[])
GROUP BY type, coalesce(limit_key, '');

-- name: limitStarts
-- Starts of these types after $2 (the longest window the claim applies), as epoch ms.
-- params: $1 types, $2 since
SELECT type, limit_key AS key, (extract(epoch FROM started_at) * 1000)::float8 AS at FROM mailroom_limit_start
WHERE type = ANY($1::text[]) AND started_at > $2::timestamptz;

-- name: limitStartsPrune
-- Starts no window reaches any more; each claim of a rate-limited type drops its own.
-- params: $1 types, $2 before
DELETE FROM mailroom_limit_start WHERE type = ANY($1::text[]) AND started_at <= $2::timestamptz;

-- name: limitStartsInsert
-- This claim's starts of rate-limited types.
-- params: $1 types, $2 keys, $3 now
INSERT INTO mailroom_limit_start (type, limit_key, started_at)
SELECT t, k, $3::timestamptz FROM unnest($1::text[], $2::text[]) AS s(t, k);
