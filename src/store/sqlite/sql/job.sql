-- Job statements for SQLite. One writer connection runs them; each write method wraps its
-- statements in one BEGIN IMMEDIATE transaction. Times are integer ms (@now from the store).
-- A LIMIT takes its parameter as CAST(@limit AS INTEGER), never bare: SQLite compiles a
-- statement with a bare `LIMIT @limit` again at every run (test/sqlite/plans.sqlite.test.ts).

-- name: jobInsertMany
-- Inserts one job; a duplicate key inserts nothing and returns no row (the caller then
-- reads the existing job and compares payloads). Only the id comes back: the caller knows
-- every other column, and RETURNING * would cost two thirds of the insert.
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          key, group_key, event_id, source, trace_context, limit_key, created_at)
VALUES (@queue, @type, 'pending', @priority, @payload, @runAt, @maxAttempts,
        @key, @group, @eventId, @source, @traceContext, @limitKey, @now)
ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING
RETURNING id;

-- name: jobInsertMany.keyless
-- Jobs without idempotency keys, several rows a statement: the store repeats the one
-- VALUES row below for each job of a chunk (sqlite-executor.ts, KEYLESS_ROWS_PER_INSERT)
-- and binds [queue, type, priority, payload text, run_at, max_attempts, group_key,
-- event_id, source, trace_context, limit_key, batch_id, created_at] per job, in enqueue
-- order (one enqueueMany, or every keyless enqueue and event of a group commit). Nothing
-- can conflict, so every row inserts, in order, and AUTOINCREMENT hands out consecutive
-- ids under the write lock: the caller derives them from last_insert_rowid(). Bound rows
-- cost 3.2 µs a job where one statement over a JSON array of them cost 4.8–5.2 (parsing
-- the JSON back out of its text), and 1,000 one-row statements 4× that.
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          key, group_key, event_id, source, trace_context, limit_key, batch_id, created_at)
VALUES (?, ?, 'pending', ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?);

-- name: jobInsertMany.byKey
-- The existing job holding an idempotency key.
SELECT * FROM mailroom_job WHERE key = @key;

-- name: jobGet
SELECT * FROM mailroom_job WHERE id = @id;

-- name: jobGet.attempts
SELECT * FROM mailroom_attempt WHERE job_id = @id ORDER BY id;

-- name: jobGet.replays
SELECT * FROM mailroom_replay WHERE job_id = @id ORDER BY id;

-- fragment: claimable
-- THE claim predicate: which pending jobs may run now, for alias `j` at @now. Every
-- statement that claims or asks "is anything claimable" splices it in ({{claimable}}),
-- so a limit or a pause is added here once. A grouped job is claimable only as its
-- group's head: the lowest id among the group's pending or running jobs, so a job
-- waiting for a retry still holds its group's turn. A paused queue (mailroom_queue_pause)
-- has nothing claimable; the subquery is uncorrelated, read once per statement. Which
-- types and queues a worker takes is the caller's filter, not part of this.
-- `+j.run_at` (and `+@type` in the picks of one type): once an ANALYZE (or PRAGMA optimize)
-- has written STAT4 statistics, SQLite plans a parameter compared to an indexed column with
-- the value bound to it, so binding it again compiles the statement anew at every run. On
-- an analysed store of 30,000 pending deliveries the limited pick of 7 took 52 µs and the
-- "anything claimable" probe 51, against 18 and 9 with these (the same as before any
-- ANALYZE). `+` on the column keeps run_at out of the index search, where it cannot help
-- (it follows priority) and where `@now + 0` let the analysed planner skip-scan the whole
-- index instead (6 ms a pick of several types); `+@type` keeps the type index's equality.
j.status = 'pending' AND +j.run_at <= @now
  AND (j.group_key IS NULL OR j.id = (
    SELECT min(g.id) FROM mailroom_job g
    WHERE g.group_key = j.group_key AND g.status IN ('pending', 'running')))
  AND j.queue NOT IN (SELECT p.queue FROM mailroom_queue_pause p)

-- name: jobClaim.pick
-- The first half of jobClaim: picks up to @limit claimable jobs, in claim order (and
-- with its keys, to merge with a pick of limited types: sqlite-executor.ts pickMixed);
-- jobClaim.lease then leases them in the same write transaction, so nothing can take
-- them in between (one writer at a time). (PostgreSQL's jobClaim is the whole claim in
-- one statement; here it is these two.) Two statements rather than one
-- `UPDATE … WHERE id IN (SELECT …)`: the single UPDATE cost about 15 % more per claim.
-- It reads only the pending jobs of @types, each type's in claim order, from the type
-- index (migration 0014), and merges them; named, so that statistics from an ANALYZE
-- cannot send it back to walking every pending job past other types' backlogs.
SELECT j.id, j.priority, j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
WHERE {{claimable}}
  AND j.type IN (SELECT value FROM json_each(@types))
ORDER BY j.priority DESC, j.run_at, j.id
LIMIT CAST(@limit AS INTEGER);

-- fragment: levels
-- The first priorities of one type's pending jobs (@type), highest first: the CTE `levels`
-- (priority, depth), spliced after WITH RECURSIVE, for a walk that reads each priority's due
-- jobs and nothing else (dueAtLevel). A pick that walked the type index in claim order with
-- `run_at <= @now` as a filter read every job not yet due before it could say "no more":
-- behind 100,000 snoozed deliveries (an endpoint's open breaker), 4.4 ms a claim or a probe
-- while nothing was due, inside the write transaction. One index probe a priority; the
-- walk takes 16 and its 17th row is the highest priority it did not take, from which the
-- rest is read in claim order as before (dueBelowLevels): a type with thousands of
-- priorities would otherwise pay thousands of probes for a claim that finds nothing. That last
-- branch reads `below`, the same walk written again: a CTE read twice is materialized, so
-- every claim paid the whole walk up front, and a probe over 100,000 due jobs took 0.25 ms
-- against 0.01 (each a co-routine, `below` is walked only when the branches before it came
-- up short). And the top priority (`top`) is sought on its own, before the walk of the
-- rest (`levels` from depth 2): each row read through the join with the walk cost about
-- 0.8 µs more, 0.08 -> 0.29 ms for a limited pick reading 256 candidates, where a
-- priority given by a scalar subquery costs nothing a row. So a statement is three
-- branches of a UNION ALL: the top priority, the next 15 walked, the rest.
top(priority) AS (
  SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_type_idx
  WHERE l.status = 'pending' AND l.type = +@type ORDER BY l.priority DESC LIMIT 1
),
levels(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_type_idx
          WHERE l.status = 'pending' AND l.type = +@type ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_type_idx
          WHERE l.status = 'pending' AND l.type = +@type AND l.priority < levels.priority ORDER BY l.priority DESC LIMIT 1),
         levels.depth + 1
  FROM levels WHERE levels.priority IS NOT NULL AND levels.depth <= 16
),
below(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_type_idx
          WHERE l.status = 'pending' AND l.type = +@type ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_type_idx
          WHERE l.status = 'pending' AND l.type = +@type AND l.priority < below.priority ORDER BY l.priority DESC LIMIT 1),
         below.depth + 1
  FROM below WHERE below.priority IS NOT NULL AND below.depth <= 16
)

-- fragment: dueAtLevel
-- The claimable jobs (alias `j`) at the priority of a walked level: within one priority the
-- type index is in (run_at, id) order, so `run_at <= now` is a seek that stops at the first
-- job not yet due. Written `FROM levels CROSS JOIN mailroom_job j INDEXED BY
-- mailroom_job_claim_type_idx`, the walk is in claim order with no ORDER BY: CROSS JOIN
-- keeps `levels` the outer loop, a recursive CTE hands its rows out in the order it made
-- them (highest priority first), and within a level the index gives (run_at, id). An
-- ORDER BY would sort every due job of the type before the LIMIT
-- (test/sqlite/plans.sqlite.test.ts pins the plan).
levels.priority IS NOT NULL AND levels.depth <= 16 AND j.priority = levels.priority AND j.run_at <= +@now
  AND {{claimable}}

-- fragment: dueBelowLevels
-- The claimable jobs (alias `j`) from the first priority the walk did not take (the 17th row
-- of `below`) on down, in the index's own order (claim order), `run_at` a filter as before
-- the walk: the last branch of the UNION ALL, which SQLite runs after the others, so the
-- LIMIT reaches it only when the walked priorities came up short.
below.priority IS NOT NULL AND below.depth = 17 AND j.priority <= below.priority
  AND {{claimable}}

-- fragment: laneLevels
-- The same walk (the CTEs `levels` and `below`, for dueAtLevel and dueBelowLevels) in one named queue
-- (@queue) for one type (@type), from the lane index: the claims of a worker that names one
-- queue, as docs/outgoing.md's `webhooks` worker does.
top(priority) AS (
  SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_lane_idx
  WHERE l.status = 'pending' AND l.queue = +@queue AND l.type = +@type ORDER BY l.priority DESC LIMIT 1
),
levels(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_lane_idx
          WHERE l.status = 'pending' AND l.queue = +@queue AND l.type = +@type ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_lane_idx
          WHERE l.status = 'pending' AND l.queue = +@queue AND l.type = +@type AND l.priority < levels.priority
          ORDER BY l.priority DESC LIMIT 1),
         levels.depth + 1
  FROM levels WHERE levels.priority IS NOT NULL AND levels.depth <= 16
),
below(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_lane_idx
          WHERE l.status = 'pending' AND l.queue = +@queue AND l.type = +@type ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l INDEXED BY mailroom_job_claim_lane_idx
          WHERE l.status = 'pending' AND l.queue = +@queue AND l.type = +@type AND l.priority < below.priority
          ORDER BY l.priority DESC LIMIT 1),
         below.depth + 1
  FROM below WHERE below.priority IS NOT NULL AND below.depth <= 16
)

-- name: jobClaim.pick.oneType
-- The same pick for a worker of one type (the common case, and every outgoing delivery's
-- claim): `type = @type` walks that type's due jobs in claim order (levels, dueAtLevel) and stops
-- at @limit, where the IN list above costs a json_each, a sorter and its early-out on every
-- claim (a pick of 5 over 9,000 pending: 45 -> 21 µs).
WITH RECURSIVE {{levels}}
SELECT j.id, j.priority, j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
  AND j.type = +@type
UNION ALL
SELECT j.id, j.priority, j.run_at FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
WHERE {{dueAtLevel}} AND levels.depth >= 2
  AND j.type = +@type
UNION ALL
SELECT j.id, j.priority, j.run_at FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
WHERE {{dueBelowLevels}}
  AND j.type = +@type
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pick.inQueues
-- The same pick for a worker that names its queues, from the lane index (migration 0019):
-- each (queue, type) pair's pending jobs in claim order, merged, so neither another
-- queue's backlog of the worker's types (SPEC's lanes: the `email` worker's pick took
-- 15.7 ms past 100,000 pending reports from the type index) nor another type's backlog in
-- the worker's queues (the case migration 0014 fixed) is read. Named, as the type index is
-- above: with statistics where every pending job had one type and one queue, the planner
-- left to itself scanned and sorted the whole jobs table (7 ms a pick).
SELECT j.id, j.priority, j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
WHERE {{claimable}}
  AND j.queue IN (SELECT value FROM json_each(@queues))
  AND j.type IN (SELECT value FROM json_each(@types))
ORDER BY j.priority DESC, j.run_at, j.id
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pick.inQueues.oneType
-- The same for a worker of one type in some queues (as jobClaim.pick.oneType).
SELECT j.id, j.priority, j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
WHERE {{claimable}}
  AND j.queue IN (SELECT value FROM json_each(@queues))
  AND j.type = +@type
ORDER BY j.priority DESC, j.run_at, j.id
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pick.oneQueue.oneType
-- The pick of a worker of one type in one named queue: its due jobs in claim order, priority
-- by priority (laneLevels, dueAtLevel), never the jobs that wait for later.
WITH RECURSIVE {{laneLevels}}
SELECT j.id, j.priority, j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
  AND j.queue = +@queue AND j.type = +@type
UNION ALL
SELECT j.id, j.priority, j.run_at FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
WHERE {{dueAtLevel}} AND levels.depth >= 2
  AND j.queue = +@queue AND j.type = +@type
UNION ALL
SELECT j.id, j.priority, j.run_at FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
WHERE {{dueBelowLevels}}
  AND j.queue = +@queue AND j.type = +@type
LIMIT CAST(@limit AS INTEGER);

-- name: jobQueuesPending
-- The queues that have pending jobs, one lane-index probe each, at most @most of them (a
-- claim while a queue is paused: sqlite-executor.ts unpausedQueues). Read from the jobs,
-- not the counters, so a queue's jobs are claimable whatever its counters say.
WITH RECURSIVE queues(queue, n) AS (
  SELECT (SELECT min(j.queue) FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx WHERE j.status = 'pending'), 1
  UNION ALL
  SELECT (SELECT j.queue FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
          WHERE j.status = 'pending' AND j.queue > q.queue ORDER BY j.queue LIMIT 1), q.n + 1
  FROM queues q WHERE q.queue IS NOT NULL AND q.n < CAST(@most AS INTEGER)
)
SELECT queue FROM queues WHERE queue IS NOT NULL;

-- name: jobClaim.lease
-- The second half of jobClaim: leases the picked jobs (@ids, a JSON array). Attempts are
-- charged here, so a job that kills its process still reaches its limit. No
-- `status = 'pending'` re-check: the pick ran in this same write transaction, and with it
-- the planner, trusting statistics that saw no pending rows, scanned the whole partial
-- claim index for every claim.
UPDATE mailroom_job
SET status = 'running', attempts = attempts + 1, lease_owner = @workerId,
    lease_token = @leaseToken, lease_expires_at = @now + @leaseMs, started_at = @now
WHERE id IN (SELECT value FROM json_each(@ids))
RETURNING id, queue, type, priority, payload, run_at, attempts, max_attempts, last_error, key, group_key, event_id, source, created_at,
          trace_context, snoozes, batch_id, completes_batch_id;

-- fragment: roomFor
-- Which of a limited pick's claimable jobs (alias `c`: its type and limit_key) may start
-- now (store/limits.ts): not of the types (@fullTypes) or (type, key) pairs (@fullKeys,
-- JSON [type, key]) at a limit now. The full pairs are an uncorrelated NOT IN, built into
-- an index once per statement: as a correlated NOT EXISTS, json_each re-read the whole
-- list for every row scanned (28 ms a claim with 100 keys at their limit). An empty list is
-- not built at all (the OR stops first): most claims find nothing full, and the two lists
-- cost a third of the pick.
(@fullTypes = '[]' OR c.type NOT IN (SELECT value FROM json_each(@fullTypes)))
  AND (@fullKeys = '[]' OR (c.type, coalesce(c.limit_key, '')) NOT IN (SELECT f.value ->> 0, f.value ->> 1 FROM json_each(@fullKeys) f))

-- name: jobClaim.pickLimited
-- The pick of a claim's limited types: the claimable jobs in claim order that may start
-- (roomFor). The claim then admits candidates one by one against the limits (several may
-- share a key) and leases them with jobClaim.lease. It reads at most @scan claimable jobs
-- (the inner LIMIT; SQLite runs the subquery as a co-routine, in its order, and stops it
-- with the outer LIMIT): left unbounded, a backlog whose keys were all full was read to
-- its end at every claim (56 ms past 100,000 deliveries to 3 full endpoints). A pick cut
-- short there goes on by key (jobClaim.pickLimited.byKey).
SELECT c.id, c.priority, c.run_at, c.type, coalesce(c.limit_key, '') AS key FROM (
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{claimable}}
    AND j.type IN (SELECT value FROM json_each(@types))
  ORDER BY j.priority DESC, j.run_at, j.id
  LIMIT CAST(@scan AS INTEGER)
) c
WHERE {{roomFor}}
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pickLimited.oneType
-- The same for one limited type (as jobClaim.pick.oneType): every outgoing delivery's claim.
WITH RECURSIVE {{levels}}
SELECT c.id, c.priority, c.run_at, c.type, coalesce(c.limit_key, '') AS key FROM (
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
    AND j.type = +@type
  UNION ALL
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{dueAtLevel}} AND levels.depth >= 2
    AND j.type = +@type
  UNION ALL
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{dueBelowLevels}}
    AND j.type = +@type
  LIMIT CAST(@scan AS INTEGER)
) c
WHERE {{roomFor}}
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pickLimited.inQueues
-- The limited pick in named queues, from the lane index (see jobClaim.pick.inQueues).
SELECT c.id, c.priority, c.run_at, c.type, coalesce(c.limit_key, '') AS key FROM (
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{claimable}}
    AND j.queue IN (SELECT value FROM json_each(@queues))
    AND j.type IN (SELECT value FROM json_each(@types))
  ORDER BY j.priority DESC, j.run_at, j.id
  LIMIT CAST(@scan AS INTEGER)
) c
WHERE {{roomFor}}
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaim.pickLimited.inQueues.oneType
SELECT c.id, c.priority, c.run_at, c.type, coalesce(c.limit_key, '') AS key FROM (
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{claimable}}
    AND j.queue IN (SELECT value FROM json_each(@queues))
    AND j.type = +@type
  ORDER BY j.priority DESC, j.run_at, j.id
  LIMIT CAST(@scan AS INTEGER)
) c
WHERE {{roomFor}}
LIMIT CAST(@limit AS INTEGER);

-- fragment: keysWithRoom
-- The CTEs of a pick by key, for one limited type (@type): `keys`, the type's keys with
-- pending jobs, walked in the limit-key index (migration 0020; one index probe a key), and
-- `roomy`, those that are not full (@fullTypes, @fullKeys as in roomFor). Spliced after
-- WITH RECURSIVE.
keys(key) AS (
  SELECT (SELECT min(k.limit_key) FROM mailroom_job k INDEXED BY mailroom_job_limit_key_idx
          WHERE k.type = +@type AND k.status = 'pending' AND k.limit_key IS NOT NULL)
  UNION ALL
  SELECT (SELECT min(k.limit_key) FROM mailroom_job k INDEXED BY mailroom_job_limit_key_idx
          WHERE k.type = +@type AND k.status = 'pending' AND k.limit_key > keys.key)
  FROM keys WHERE keys.key IS NOT NULL
),
roomy(key) AS (
  SELECT keys.key FROM keys
  WHERE keys.key IS NOT NULL
    AND (@fullTypes = '[]' OR +@type NOT IN (SELECT value FROM json_each(@fullTypes)))
    AND (+@type, keys.key) NOT IN (SELECT f.value ->> 0, f.value ->> 1 FROM json_each(@fullKeys) f)
)

-- name: jobClaim.pickLimited.oneQueue.oneType
-- The same for one limited type in one named queue (as jobClaim.pickLimited.oneType).
WITH RECURSIVE {{laneLevels}}
SELECT c.id, c.priority, c.run_at, c.type, coalesce(c.limit_key, '') AS key FROM (
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
    AND j.queue = +@queue AND j.type = +@type
  UNION ALL
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{dueAtLevel}} AND levels.depth >= 2
    AND j.queue = +@queue AND j.type = +@type
  UNION ALL
  SELECT j.id, j.priority, j.run_at, j.type, j.limit_key FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{dueBelowLevels}}
    AND j.queue = +@queue AND j.type = +@type
  LIMIT CAST(@scan AS INTEGER)
) c
WHERE {{roomFor}}
LIMIT CAST(@limit AS INTEGER);

-- fragment: keyLevels
-- The CTE `keyLevels` (key, priority, depth), spliced after keysWithRoom: for each key with
-- room, its priorities in the limit-key index, highest first, walked only until one has a
-- due job (dueAtLevel, the recursion's alias `levels`), 16 at most, a 17th row starting
-- the rest. Read once, by a CASE that looks each row's head up at its priority or, on the
-- 17th, below it: a CTE read twice is materialized, and this one, materialized, cost 1.3 ms
-- a statement on the store's connection against 0.03. A key's head looked up in claim order with `run_at <= now` as
-- a filter read every job of the key not yet due: an endpoint whose 100,000 deliveries
-- wait behind its open breaker is a key with room, and beside two full endpoints every
-- claim took 30 ms reading them.
keyLevels(key, priority, depth) AS (
  SELECT roomy.key,
         (SELECT k.priority FROM mailroom_job k INDEXED BY mailroom_job_limit_key_idx
          WHERE k.type = +@type AND k.limit_key = roomy.key AND k.status = 'pending' ORDER BY k.priority DESC LIMIT 1), 1
  FROM roomy
  UNION ALL
  SELECT levels.key,
         (SELECT k.priority FROM mailroom_job k INDEXED BY mailroom_job_limit_key_idx
          WHERE k.type = +@type AND k.limit_key = levels.key AND k.status = 'pending' AND k.priority < levels.priority
          ORDER BY k.priority DESC LIMIT 1),
         levels.depth + 1
  FROM keyLevels levels
  WHERE levels.priority IS NOT NULL AND levels.depth <= 16
    AND NOT EXISTS (
      SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_limit_key_idx
      WHERE j.type = +@type AND j.limit_key = levels.key AND {{dueAtLevel}}
        AND (@queues IS NULL OR j.queue IN (SELECT value FROM json_each(@queues))))
)

-- name: jobClaim.pickLimited.byKey
-- A limited pick of one type that the bounded pick left short while some of its keys are
-- full: the claimable head of each key that is not full (keysWithRoom), in claim order. A
-- key's jobs past the bounded stretch are reached this way, however many jobs of full keys
-- wait ahead of them. One head a key, found priority by priority (keyLevels): the next
-- claim takes the next.
WITH RECURSIVE {{keysWithRoom}},
{{keyLevels}}
SELECT h.id, h.priority, h.run_at, h.type, h.limit_key AS key
FROM keyLevels levels JOIN mailroom_job h ON h.id = CASE WHEN levels.depth <= 16
  THEN (SELECT j.id FROM mailroom_job j INDEXED BY mailroom_job_limit_key_idx
        WHERE j.type = +@type AND j.limit_key = levels.key AND {{dueAtLevel}}
          AND (@queues IS NULL OR j.queue IN (SELECT value FROM json_each(@queues)))
        ORDER BY j.run_at, j.id
        LIMIT 1)
  -- The rest below the walk's 16 priorities, as dueBelowLevels reads it.
  ELSE (SELECT j.id FROM mailroom_job j INDEXED BY mailroom_job_limit_key_idx
        WHERE j.type = +@type AND j.limit_key = levels.key
          AND levels.priority IS NOT NULL AND j.priority <= levels.priority AND {{claimable}}
          AND (@queues IS NULL OR j.queue IN (SELECT value FROM json_each(@queues)))
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT 1)
  END
ORDER BY h.priority DESC, h.run_at, h.id
LIMIT CAST(@limit AS INTEGER);

-- name: jobClaimable
-- Whether anything is claimable now by the claim predicate (drained()).
SELECT EXISTS (
  SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{claimable}}
    AND j.type IN (SELECT value FROM json_each(@types))
) AS has_claimable;

-- name: jobClaimable.oneType
-- The same for one type, which every limited claim asks first (see jobClaim.pick.oneType).
WITH RECURSIVE {{levels}}
SELECT EXISTS (
  SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
    AND j.type = +@type
  UNION ALL
  SELECT 1 FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{dueAtLevel}} AND levels.depth >= 2
    AND j.type = +@type
  UNION ALL
  SELECT 1 FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_type_idx
  WHERE {{dueBelowLevels}}
    AND j.type = +@type
) AS has_claimable;

-- name: jobClaimable.inQueues
-- The same in named queues, from the lane index (see jobClaim.pick.inQueues): 14.6 ms from
-- the type index past 100,000 pending reports, for an email worker's probe.
SELECT EXISTS (
  SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{claimable}}
    AND j.queue IN (SELECT value FROM json_each(@queues))
    AND j.type IN (SELECT value FROM json_each(@types))
) AS has_claimable;

-- name: jobClaimable.inQueues.oneType
SELECT EXISTS (
  SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{claimable}}
    AND j.queue IN (SELECT value FROM json_each(@queues))
    AND j.type = +@type
) AS has_claimable;

-- name: jobClaimable.oneQueue.oneType
-- The same for one type in one named queue (as jobClaimable.oneType).
WITH RECURSIVE {{laneLevels}}
SELECT EXISTS (
  SELECT 1 FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE j.priority = (SELECT priority FROM top) AND j.run_at <= +@now AND {{claimable}}
    AND j.queue = +@queue AND j.type = +@type
  UNION ALL
  SELECT 1 FROM levels CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{dueAtLevel}} AND levels.depth >= 2
    AND j.queue = +@queue AND j.type = +@type
  UNION ALL
  SELECT 1 FROM below CROSS JOIN mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
  WHERE {{dueBelowLevels}}
    AND j.queue = +@queue AND j.type = +@type
) AS has_claimable;

-- name: jobClaimable.nextRunAt
-- The earliest future run_at among pending jobs these workers could run (sleep target).
-- Not the claim predicate: these jobs are not due yet, which is the point. A worker asks
-- after every empty claim, and a claim comes back empty with a backlog that waits: behind
-- an open breaker (snoozed deliveries), a full limit or a group's head. A min(run_at) of
-- the types' pending jobs read that whole backlog: 8 ms a look past 100,000 jobs. Instead,
-- each type's priorities in the type index (walked as jobStats.oldestPending walks them),
-- and in each the first run_at past @now: one index probe a step. At 32 priorities of a
-- type the walk stops and says `capped`; the store then reads the rows (nextRunAt.read).
-- Each index named: with statistics of a table of finished jobs, the planner scanned the
-- lane index for the probe. `+@now` for the reason in the claimable fragment.
WITH RECURSIVE levels(type, priority, depth) AS (
  SELECT t.value, (SELECT j.priority FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
                   WHERE j.status = 'pending' AND j.type = t.value ORDER BY j.priority DESC LIMIT 1), 1
  FROM json_each(@types) t
  UNION ALL
  SELECT l.type, (SELECT j.priority FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
                  WHERE j.status = 'pending' AND j.type = l.type AND j.priority < l.priority
                  ORDER BY j.priority DESC LIMIT 1), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 32
)
SELECT min(next) AS next_run_at, min(next) - @now AS next_run_in_ms, max(capped) AS capped FROM (
  SELECT (SELECT j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_type_idx
          WHERE j.status = 'pending' AND j.type = l.type AND j.priority = l.priority AND j.run_at > +@now
          ORDER BY j.run_at LIMIT 1) AS next,
         l.depth = 32 AS capped
  FROM levels l WHERE l.priority IS NOT NULL
);

-- name: jobClaimable.nextRunAt.inQueues
-- The same in named queues: each (queue, type) pair's priorities in the lane index.
WITH RECURSIVE levels(queue, type, priority, depth) AS (
  SELECT q.value, t.value, (SELECT j.priority FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
                            WHERE j.status = 'pending' AND j.queue = q.value AND j.type = t.value ORDER BY j.priority DESC LIMIT 1), 1
  FROM json_each(@queues) q, json_each(@types) t
  UNION ALL
  SELECT l.queue, l.type, (SELECT j.priority FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
                           WHERE j.status = 'pending' AND j.queue = l.queue AND j.type = l.type AND j.priority < l.priority
                           ORDER BY j.priority DESC LIMIT 1), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 32
)
SELECT min(next) AS next_run_at, min(next) - @now AS next_run_in_ms, max(capped) AS capped FROM (
  SELECT (SELECT j.run_at FROM mailroom_job j INDEXED BY mailroom_job_claim_lane_idx
          WHERE j.status = 'pending' AND j.queue = l.queue AND j.type = l.type AND j.priority = l.priority AND j.run_at > +@now
          ORDER BY j.run_at LIMIT 1) AS next,
         l.depth = 32 AS capped
  FROM levels l WHERE l.priority IS NOT NULL
);

-- name: jobClaimable.nextRunAt.read
-- The same read row by row, for a walk cut short (a type with 32 priorities or more).
SELECT min(run_at) AS next_run_at, min(run_at) - @now AS next_run_in_ms FROM mailroom_job
WHERE status = 'pending' AND +run_at > @now
  AND (@queues IS NULL OR queue IN (SELECT value FROM json_each(@queues)))
  AND type IN (SELECT value FROM json_each(@types));

-- name: jobExtendLease
-- Extends a lease only while the caller still holds it (same token, still running).
UPDATE mailroom_job SET lease_expires_at = @now + @leaseMs
WHERE id = @id AND lease_token = @leaseToken AND status = 'running'
RETURNING id;

-- name: jobProgress
-- One running job's progress (ctx.progress), fenced by its lease token: a worker whose
-- lease was taken over (or whose job is done) writes nothing.
UPDATE mailroom_job SET progress = @fraction, progress_note = @note
WHERE id = @id AND lease_token = @leaseToken AND status = 'running'
RETURNING id;

-- name: jobFinishMany.done
-- The successes of one jobFinishMany, in one statement: @finishes is a JSON array of
-- [id, lease_token] or [id, lease_token, result, details] (JSON texts, NULL for none; the
-- hot path of handlers that return nothing sends the short form, and `->>` of a missing
-- index is NULL). The successful attempt lives on the row (started_at, finished_at,
-- lease_owner, details).
-- Fenced by the token alone: a worker whose lease was taken over (new token) or rescued
-- changes nothing. A claim sets the token and every statement that moves a job out of
-- `running` clears it. With `status = 'running'` here, and table statistics from an
-- ANALYZE, the planner scanned the partial lease index and re-scanned the batch for every
-- running row instead of probing each id (as PostgreSQL did; see its jobExtendLease).
-- batch_id comes back so the executor settles the batches of children it finished
-- (null for a job outside a batch: its only cost).
UPDATE mailroom_job AS j
SET status = 'done', finished_at = @now, lease_token = NULL, lease_expires_at = NULL,
    last_error = NULL, result = f.result, details = f.details
FROM (SELECT value ->> 0 AS id, value ->> 1 AS lease_token, value ->> 2 AS result, value ->> 3 AS details
      FROM json_each(@finishes)) AS f
WHERE j.id = f.id AND j.lease_token = f.lease_token
RETURNING mailroom_job.id, mailroom_job.queue, mailroom_job.batch_id;

-- name: jobFinishMany.doneHeld
-- A success committed inside the handler's own transaction (ctx.complete): done like
-- jobFinishMany.done, in the caller's transaction, but the token is not cleared: it is
-- kept as 'held:<token>', which fences the result the handler returns afterwards
-- (jobFinishMany.result) and matches no statement that takes a lease (extend, finish,
-- hand back), so nothing can move the done job back or extend it.
UPDATE mailroom_job
SET status = 'done', finished_at = @now, lease_token = 'held:' || lease_token, lease_expires_at = NULL,
    last_error = NULL, details = @details
WHERE id = @id AND lease_token = @leaseToken AND status = 'running'
RETURNING id, queue, batch_id;

-- name: jobFinishMany.result
-- The return value of a handler whose job jobFinishMany.doneHeld made done, written when
-- the handler returns; fenced by the held token, which it clears. The status does not
-- move. Details given since the commit replace the committed ones.
UPDATE mailroom_job
SET result = @result, details = coalesce(@details, details), lease_token = NULL
WHERE id = @id AND lease_token = 'held:' || @leaseToken
RETURNING id;

-- name: jobFinishMany.notDone
-- One finish that is not a success, fenced like jobFinishMany.done. @kind 'failed'
-- charges the attempt: retry at @retryAt, or dead (with @deadReason) when it is NULL.
-- 'handed_back' and 'snoozed' do not: the attempt count goes back down, and a snooze waits
-- until @retryAt and is counted in `snoozes`. Returns what the history row needs
-- (attemptInsert, same transaction).
UPDATE mailroom_job
SET status = CASE WHEN @kind = 'failed' AND @retryAt IS NULL THEN 'dead' ELSE 'pending' END,
    attempts = CASE WHEN @kind = 'failed' THEN attempts ELSE attempts - 1 END,
    snoozes = snoozes + (@kind = 'snoozed'),
    run_at = coalesce(@retryAt, run_at),
    dead_reason = CASE WHEN @kind = 'failed' AND @retryAt IS NULL THEN @deadReason ELSE NULL END,
    finished_at = CASE WHEN @kind = 'failed' AND @retryAt IS NULL THEN @now ELSE NULL END,
    last_error = CASE WHEN @kind = 'failed' THEN @error ELSE last_error END,
    lease_token = NULL, lease_expires_at = NULL
WHERE id = @id AND lease_token = @leaseToken AND status = 'running'
RETURNING id, queue, status, attempts, started_at, lease_owner, batch_id;

-- name: jobRescue
-- Expired leases: back to pending with the attempt still charged, or dead when it was
-- the last attempt. This is what ends a poison job that kills its own process.
UPDATE mailroom_job
SET status = CASE WHEN attempts >= max_attempts THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN attempts >= max_attempts THEN 'exhausted' ELSE NULL END,
    finished_at = CASE WHEN attempts >= max_attempts THEN @now ELSE NULL END,
    run_at = @now,
    last_error = 'lease expired: the worker stopped heartbeating (crashed, killed or stalled)',
    lease_token = NULL, lease_expires_at = NULL
WHERE id IN (SELECT id FROM mailroom_job WHERE status = 'running' AND lease_expires_at < @now
             ORDER BY lease_expires_at LIMIT CAST(@limit AS INTEGER))
RETURNING id, queue, status, attempts, started_at, lease_owner, batch_id;

-- name: attemptInsert
-- One history row for an attempt that did not end `done` on the row itself.
INSERT INTO mailroom_attempt (job_id, attempt, started_at, finished_at, outcome, error, stack, worker_id, details)
VALUES (@jobId, @attempt, @startedAt, @finishedAt, @outcome, @error, @stack, @workerId, @details);

-- name: jobReplay
-- Fresh budget for one dead (or, forced, done) job; history is kept. Guarded by status so
-- two concurrent replays of one job replay it once. The previous run's start and worker
-- are cleared: its attempt rows keep them, and on the row they read as the new run's.
-- Its result, details and snooze count go too: they belong to the run being replaced
-- (a forced replay moved the success's details into the history first).
UPDATE mailroom_job
SET status = 'pending', attempts = 0, snoozes = 0, max_attempts = coalesce(@maxAttempts, max_attempts),
    last_error = NULL, dead_reason = NULL, run_at = @now, finished_at = NULL,
    started_at = NULL, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
    result = NULL, details = NULL, progress = NULL, progress_note = NULL
WHERE id = @id
  AND (status = 'dead' OR (@force = 1 AND status = 'done'))
  AND (dead_reason IS NULL OR dead_reason <> 'cancelled' OR @includeCancelled = 1)
RETURNING id, queue, batch_id;

-- name: jobReplay.status
-- The status a replay moves the job from (for the counters).
SELECT status FROM mailroom_job WHERE id = @id;

-- name: jobReplay.doneAttempt
-- Before a forced replay of a done job, move its row-held success into the history.
INSERT INTO mailroom_attempt (job_id, attempt, started_at, finished_at, outcome, error, worker_id, details)
SELECT id, attempts, started_at, finished_at, 'done', NULL, lease_owner, details
FROM mailroom_job WHERE id = @id AND status = 'done';

-- name: jobReplay.record
-- When, why, by whom, and how many history rows came before it (counted after a forced
-- replay moved the row-held success into the history).
INSERT INTO mailroom_replay (job_id, at, reason, by, attempts_before)
VALUES (@jobId, @now, @reason, @by, (SELECT count(*) FROM mailroom_attempt WHERE job_id = @jobId));

-- name: jobRetryNow
-- "Run now": one pending job that waits (for its retry or its delay) becomes due at @now.
-- Attempts and history are untouched, and so is its group's order: a grouped job is still
-- claimed only as its group's head. A due job is left as it is (run_at never moves later).
-- @include_delayed 0: only a job waiting for a retry (it has a last error), not one merely delayed.
UPDATE mailroom_job SET run_at = @now
WHERE id = @id AND status = 'pending' AND run_at > @now AND (@include_delayed = 1 OR last_error IS NOT NULL)
RETURNING id;

-- name: jobCancel
UPDATE mailroom_job
SET status = 'dead', dead_reason = 'cancelled', last_error = @reason, finished_at = @now
WHERE id = @id AND status = 'pending'
RETURNING *;

-- name: jobPurge
-- Retention: finished jobs older than the window, with their history. Bounded batches
-- keep the write lock short. The repeated `status IN (…)` is the partial index's own
-- predicate: `status = @status` alone does not prove it, so the finished index was
-- unusable and every run scanned the table until it found 1,000 old rows (all of it when
-- few are old enough). A batch's child stays while its batch's completion job is to come
-- or still kept: that job's handler reads every child's outcome and result (ctx.batch).
DELETE FROM mailroom_job
WHERE id IN (SELECT j.id FROM mailroom_job j
             WHERE j.status = @status AND j.status IN ('done', 'dead') AND j.finished_at < @before
               AND (j.batch_id IS NULL OR NOT EXISTS (
                 SELECT 1 FROM mailroom_batch b
                 WHERE b.id = j.batch_id
                   AND (b.completion_job_id IS NULL OR EXISTS (SELECT 1 FROM mailroom_job c WHERE c.id = b.completion_job_id))))
             LIMIT 1000)
RETURNING id, queue;

-- name: jobPurge.attempts
DELETE FROM mailroom_attempt WHERE job_id IN (SELECT value FROM json_each(@ids));

-- name: jobPurge.replays
DELETE FROM mailroom_replay WHERE job_id IN (SELECT value FROM json_each(@ids));

-- name: jobPurge.events
-- Events (and so their dedupe receipts) past their window whose jobs are all gone.
DELETE FROM mailroom_event
WHERE id IN (SELECT e.id FROM mailroom_event e
             WHERE e.received_at < @before
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.event_id = e.id)
             LIMIT 1000);

-- name: jobStats
-- Counts come from the counters, not from scanning jobs.
SELECT queue, status, n FROM mailroom_queue_count WHERE n <> 0;

-- name: jobStats.oldestPending
-- The oldest due pending job per queue, without reading every pending row: a plain
-- min(run_at) … GROUP BY queue read the whole claim index (23 ms at 300,000 pending,
-- blocking the event loop on every stats() and metrics scrape). Instead, for each queue
-- with pending jobs (from the counters, so writes that bypass the store's counting are
-- not seen here), step through its types, then each type's distinct priorities, in the
-- lane index (queue, type, priority, run_at), and take each priority's earliest run_at:
-- one index probe per step, so the cost follows how many types and priorities are in use,
-- not the backlog. A queue with 32 types or more, or a type with 32 priorities or
-- more, comes back `capped`, its walk cut short; the store reads that queue's
-- pending rows instead (jobStats.oldestPending.read), where the walk would cost more.
-- Each step reads one index entry (`ORDER BY … LIMIT 1`): as `max(priority) … <` the step
-- to the next priority cost several times as much. `+@now`: a bare parameter compared with
-- run_at is compiled again at every run once an ANALYZE has written statistics (the
-- claimable fragment says why).
WITH RECURSIVE kinds(queue, type, depth) AS (
  SELECT c.queue, (SELECT j.type FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = c.queue
                   ORDER BY j.type LIMIT 1), 1
  FROM mailroom_queue_count c WHERE c.status = 'pending' AND c.n > 0
  UNION ALL
  SELECT k.queue, (SELECT j.type FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = k.queue AND j.type > k.type
                   ORDER BY j.type LIMIT 1), k.depth + 1
  FROM kinds k WHERE k.type IS NOT NULL AND k.depth < 32
),
levels(queue, type, priority, depth) AS (
  SELECT k.queue, k.type, (SELECT j.priority FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = k.queue AND j.type = k.type
                           ORDER BY j.priority DESC LIMIT 1), 1
  FROM kinds k WHERE k.type IS NOT NULL
  UNION ALL
  SELECT l.queue, l.type, (SELECT j.priority FROM mailroom_job j
                           WHERE j.status = 'pending' AND j.queue = l.queue AND j.type = l.type AND j.priority < l.priority
                           ORDER BY j.priority DESC LIMIT 1), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 32
)
SELECT l.queue,
       min((SELECT j.run_at FROM mailroom_job j
            WHERE j.status = 'pending' AND j.queue = l.queue AND j.type = l.type AND j.priority = l.priority AND j.run_at <= +@now
            ORDER BY j.run_at LIMIT 1)) AS oldest,
       max(l.depth = 32) AS capped
FROM levels l WHERE l.priority IS NOT NULL
GROUP BY l.queue
UNION ALL
SELECT queue, NULL, 1 FROM kinds WHERE depth = 32 AND type IS NOT NULL;

-- name: jobStats.oldestPending.read
-- The oldest due pending job of one queue whose walk was cut short, read row by row.
-- `+run_at`: with statistics, the planner skip-scanned the lane index across every queue for
-- it; `+@queue` for the reason in the claimable fragment.
SELECT min(run_at) AS oldest FROM mailroom_job
WHERE status = 'pending' AND queue = +@queue AND +run_at <= @now;

-- name: queueCountAdd
-- Applies one status counter delta; the store calls it once per (queue, status) per batch,
-- in the transaction that changed the jobs. (PostgreSQL does this with statement triggers.)
INSERT INTO mailroom_queue_count (queue, status, n) VALUES (@queue, @status, @delta)
ON CONFLICT (queue, status) DO UPDATE SET n = n + excluded.n;

-- name: jobFinishedPerMinute
-- Jobs done and dead per minute of finished_at over a recent window (the dashboard's
-- chart), read from the finished index (status, finished_at) alone: one range per status,
-- no table rows, so its cost follows the jobs finished in the window, not the table.
SELECT status, (finished_at / 60000) * 60000 AS minute, count(*) AS n
FROM mailroom_job
WHERE status IN ('done', 'dead') AND finished_at >= @since AND finished_at <= @now
GROUP BY status, minute;

-- name: jobFinishedPerMinute.failedAttempts
-- Failed attempts per minute, from a bounded tail of the attempt table's primary key
-- (ATTEMPT_SCAN_LIMIT in store.ts says why not an index). Rows with a null minute carry
-- the tail's size and oldest finish, which tell whether the window was cut short.
WITH tail AS MATERIALIZED (
  SELECT finished_at, outcome FROM mailroom_attempt ORDER BY id DESC LIMIT CAST(@limit AS INTEGER)
)
SELECT (finished_at / 60000) * 60000 AS minute, count(*) AS n, NULL AS oldest
FROM tail
WHERE outcome IN ('failed', 'timeout', 'lost') AND finished_at >= @since AND finished_at <= @now
GROUP BY minute
UNION ALL
SELECT NULL AS minute, count(*) AS n, min(finished_at) AS oldest FROM tail;

-- name: jobList.matchEstimate
-- How many jobs a status filter (and queue) matches, and how many jobs there are, from the
-- counters: lets a list choose between the partial index and a walk in id order.
SELECT coalesce(sum(CASE WHEN status = @status AND (@queue IS NULL OR queue = @queue) THEN n END), 0) AS matching,
       coalesce(sum(n), 0) AS total
FROM mailroom_queue_count;
