-- Job statements for PostgreSQL. mailroom_* names are qualified with the store's schema
-- when loaded (schema-sql.ts). Every write is one statement or one short transaction;
-- times come from `coalesce($now, date_trunc('milliseconds', statement_timestamp()))`
-- (the `clock` CTE): the database's clock unless a test pins it, cut to milliseconds so
-- a stored time round-trips through a JS Date exactly, as SQLite's integer ms do.
-- Batches arrive as parallel arrays and are expanded with unnest (one round trip).

-- name: jobInsertMany
-- Inserts a batch in input order (identity values follow it, so ids keep enqueue order);
-- a duplicate key inserts nothing for that row and the caller reads the holder
-- (jobInsertMany.byKey) and compares payloads. A concurrent insert of the same key waits
-- for the other transaction, then does nothing once it commits. One statement: one
-- counter upsert and one NOTIFY per queue from the statement trigger.
-- Groups: before any id is drawn, a transaction-scoped advisory lock per group (taken in
-- name order, so two batches cannot deadlock on them) makes a second transaction
-- enqueueing into the same group wait until the first commits. Without it the lower id
-- could commit after the higher one, and a claimer in between would run the higher one
-- first and then both at once. (The InitPlan in WHERE runs once, before the first row.)
-- Returns only what the caller does not know: each row's id, its key (to match keyed
-- rows to their jobs) and the two times the clock made, as epoch ms like jobClaim's; the
-- caller builds each Job from what it inserted (rows.ts insertedJob, as SQLite does).
-- Not `RETURNING *`: node-postgres makes every row of every query at one object-spread
-- site (a copy of a prebuilt object with a key per column), which V8 copies fast only
-- while that site has seen at most four row shapes. Opening a store already shows it
-- five (the migrator's statements), so each row is then copied property by property, and
-- the job row has 31 columns (22 before migrations 0005-0011): enqueues cost ~20 % more
-- client instructions a job (callgrind), most of it that copy, for values the caller had.
-- params: $1 queues, $2 types, $3 priorities, $4 payloads, $5 run_ats (null: now + delay), $6 delays_ms, $7 max_attempts, $8 keys, $9 group_keys, $10 event_id, $11 source, $12 now, $13 trace_contexts (null: none), $14 limit_keys (null: none), $15 batch_id (null: none)
WITH clock AS (SELECT coalesce($12::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
group_locks AS MATERIALIZED (
  SELECT pg_advisory_xact_lock(hashtextextended('mailroom.group.{{schema}}.' || g.group_key, 0))
  FROM (SELECT DISTINCT group_key FROM unnest($9::text[]) AS u(group_key)
        WHERE group_key IS NOT NULL ORDER BY group_key) AS g
)
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          key, group_key, event_id, source, trace_context, limit_key, batch_id, created_at)
SELECT i.queue, i.type, 'pending', i.priority, i.payload,
       coalesce(i.run_at, clock.now + i.delay_ms * interval '1 millisecond'),
       i.max_attempts, i.key, i.group_key, $10::bigint, $11::text, i.trace_context, i.limit_key, $15::bigint, clock.now
FROM unnest($1::text[], $2::text[], $3::integer[], $4::text[], $5::timestamptz[],
            $6::float8[], $7::integer[], $8::text[], $9::text[], $13::text[], $14::text[])
       WITH ORDINALITY AS i(queue, type, priority, payload, run_at, delay_ms, max_attempts, key, group_key, trace_context, limit_key, ord)
CROSS JOIN clock
WHERE (SELECT count(*) FROM group_locks) >= 0
ORDER BY i.ord
ON CONFLICT (key) WHERE key IS NOT NULL DO NOTHING
RETURNING id, key, (extract(epoch FROM run_at) * 1000)::float8 AS run_at,
          (extract(epoch FROM created_at) * 1000)::float8 AS created_at;

-- name: jobInsertMany.byKey
-- The existing jobs holding these idempotency keys (committed ones, or this transaction's).
-- params: $1 keys
SELECT * FROM mailroom_job WHERE key = ANY($1::text[]);

-- name: jobGet
-- One job by id with its attempt history and replays, in ONE statement so all three come
-- from one snapshot (separate statements could show a finished attempt on a job still
-- running). Read-only.
-- params: $1 id
SELECT j.*,
  (SELECT coalesce(json_agg(a ORDER BY a.id), '[]'::json) FROM mailroom_attempt a WHERE a.job_id = j.id) AS attempts_log,
  (SELECT coalesce(json_agg(r ORDER BY r.id), '[]'::json) FROM mailroom_replay r WHERE r.job_id = j.id) AS replays_log
FROM mailroom_job j WHERE j.id = $1;

-- fragment: claimable
-- THE claim predicate: which pending jobs may run now, for alias `j` at `clock.now` (the
-- statement's clock CTE). Every statement that claims or asks "is anything claimable"
-- splices it in ({{claimable}}), so a limit or a pause is added here once. A grouped job
-- is claimable only as its group's head: the lowest id among the group's pending or
-- running jobs, so a job waiting for a retry still holds its group's turn. A paused queue
-- (mailroom_queue_pause) has nothing claimable; the subquery is uncorrelated, read once per
-- statement. Which types and queues a worker takes is the caller's filter, not part of this.
j.status = 'pending' AND j.run_at <= clock.now
    AND (j.group_key IS NULL OR j.id = (
      SELECT min(g.id) FROM mailroom_job g
      WHERE g.group_key = j.group_key AND g.status IN ('pending', 'running')))
    AND j.queue NOT IN (SELECT p.queue FROM mailroom_queue_pause p)

-- fragment: levels
-- The first priorities of pending jobs, highest first, from the claim index (one probe
-- each): the CTE `levels` (priority, depth), spliced after WITH RECURSIVE, for a walk that
-- reads each priority's due jobs and nothing else (dueAtLevel). The claim index is
-- (priority, run_at, id), so a walk in claim order with `run_at <= now` as a filter read
-- every job not yet due before it could say "no more": 36 ms a claim behind 100,000 snoozed
-- deliveries (an endpoint's open breaker) or jobs scheduled for later. Of every type: there
-- is no type index here, so another type's priorities count too. The walk takes 16, and its
-- 17th row is the highest priority it did not take, from which the rest is read in claim
-- order as before (dueBelowLevels): priorities by the thousand would otherwise cost
-- thousands of probes a claim.
levels(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l WHERE l.status = 'pending' ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l WHERE l.status = 'pending' AND l.priority < levels.priority
          ORDER BY l.priority DESC LIMIT 1), levels.depth + 1
  FROM levels WHERE levels.priority IS NOT NULL AND levels.depth <= 16
)

-- fragment: dueAtLevel
-- The claimable jobs (alias `j`, with the statement's `clock`) at the priority of a walked
-- level, for a LATERAL over `levels`: within one priority the claim index is in (run_at, id)
-- order, so `run_at <= now`, with the clock as a scalar subquery, is an index search that
-- stops at the first job not yet due. The LATERAL's nested loop keeps `levels` the outer
-- loop, in the order the recursive CTE made them (highest priority first): the walk is in
-- claim order without sorting every due job first.
levels.priority IS NOT NULL AND levels.depth <= 16 AND j.priority = levels.priority AND j.run_at <= (SELECT now FROM clock)
    AND {{claimable}}

-- fragment: dueBelowLevels
-- The claimable jobs (alias `j`, with `clock`) from the first priority the walk did not
-- take on down, read in claim order as before the walk (`run_at <= now` checked in the
-- index, before the row is read): the second branch of a UNION ALL after dueAtLevel's,
-- which runs only when the LIMIT above is not met by the first.
levels.priority IS NOT NULL AND levels.depth = 17 AND j.priority <= levels.priority AND j.run_at <= (SELECT now FROM clock)
    AND {{claimable}}

-- fragment: laneLevels
-- The same walk (the CTE `levels`, for dueAtLevel and dueBelowLevels) in one named queue,
-- the statement's `lane` CTE, from the queue index: the claims of a worker that names one
-- queue, as docs/outgoing.md's `webhooks` worker does (36 ms a claim there behind 100,000
-- snoozed deliveries before the walk).
levels(priority, depth) AS (
  SELECT (SELECT l.priority FROM mailroom_job l WHERE l.status = 'pending' AND l.queue = (SELECT queue FROM lane)
          ORDER BY l.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT l.priority FROM mailroom_job l WHERE l.status = 'pending' AND l.queue = (SELECT queue FROM lane)
            AND l.priority < levels.priority
          ORDER BY l.priority DESC LIMIT 1), levels.depth + 1
  FROM levels WHERE levels.priority IS NOT NULL AND levels.depth <= 16
)

-- name: jobClaim
-- Leases up to $3 due jobs in one statement: the CTE picks and row-locks them, skipping
-- rows other claimers hold, and the UPDATE leases exactly those. The pick walks the
-- priorities in use (levels) and each one's due jobs (dueAtLevel), so a backlog not yet due
-- is never read; the outer LIMIT stops the walk, and a row is locked only as it is read. MATERIALIZED is the
-- optimisation fence: it keeps the planner from folding the pick into the UPDATE, where
-- a re-evaluated LIMIT under SKIP LOCKED can lease more rows than asked (the reason this
-- is not `WHERE id IN (SELECT … LIMIT n)` as in SQLite, where jobClaim is the two steps
-- jobClaim.pick and jobClaim.lease). Which jobs qualify is the `claimable` fragment.
-- Attempts are charged here, so a job that kills its process still reaches its limit.
-- Lease times use the database clock.
-- The UPDATE finds the picked rows through `id = ANY (ARRAY(…))`, a primary-key probe
-- whatever the statistics say; a join to the CTE let the planner hash-join a sequential
-- scan of the whole table when LIMIT was large, which grows with history. RETURNING
-- leaves out what the caller knows (status, lease, owner) and sends times as epoch ms, the
-- row SQLite's claim returns too (store/claimed-job.ts): parsing five timestamps a row was
-- the worker's largest single cost after the network.
-- The commit waits for the WAL flush (`durable`: synchronous_commit on for this
-- transaction, on the bookkeeping pool whose sessions have it off): a worker runs a job
-- the moment its claim returns, so a claim a server crash could lose would leave the job
-- pending again, to be claimed and run a second time while the first run goes on.
-- Outcomes may be lost (the job runs again, later); a lease may not (two runs at once).
-- Set in the clock CTE, which every leased row reads, so it costs no round trip.
-- params: $1 worker_id, $2 types, $3 limit, $4 lease_token, $5 lease_ms, $6 now
WITH RECURSIVE clock AS (SELECT coalesce($6::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now,
                                set_config('synchronous_commit', 'on', true) AS durable),
{{levels}},
picked AS MATERIALIZED (
  SELECT p.id FROM (
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueAtLevel}}
        AND j.type = ANY($2::text[])
      ORDER BY j.run_at, j.id
      LIMIT $3
      FOR UPDATE OF j SKIP LOCKED
    ) d
    UNION ALL
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueBelowLevels}}
        AND j.type = ANY($2::text[])
      ORDER BY j.priority DESC, j.run_at, j.id
      LIMIT $3
      FOR UPDATE OF j SKIP LOCKED
    ) d
  ) p
  LIMIT $3
)
UPDATE mailroom_job j
SET status = 'running', attempts = j.attempts + 1, lease_owner = $1, lease_token = $4,
    lease_expires_at = clock.now + $5::float8 * interval '1 millisecond', started_at = clock.now
FROM clock
WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING j.id, j.queue, j.type, j.priority, j.payload, j.attempts, j.max_attempts, j.last_error,
          j.key, j.group_key, j.event_id, j.source, j.trace_context, j.snoozes, j.batch_id, j.completes_batch_id,
          (extract(epoch FROM j.run_at) * 1000)::float8 AS run_at,
          (extract(epoch FROM j.created_at) * 1000)::float8 AS created_at,
          (extract(epoch FROM clock.now) * 1000)::float8 AS started_at;

-- name: jobClaim.inQueues
-- The same claim in several named queues: each named queue's jobs from the queue index, in
-- claim order (a LATERAL over unnest($7)), row-locked with SKIP LOCKED, up to $3 of each;
-- then the first $3 of them all. With `queue = ANY($7)` the generic plan could not seek the
-- queue index by the list and walked the claim index past every other queue's backlog (see
-- jobClaim.oneQueue): 20-29 ms a claim beside 100,000 pending reports. Each queue's walk
-- skips what other claimers hold and goes on, as the single walk did, so a claim under
-- contention still fills up; the lock re-checks the claim predicate on the row's latest
-- version. The price: a queue's locked rows beyond the $3 kept stay locked until this
-- statement commits, at most $3 a queue. (A version that read candidates unlocked and
-- locked only what it kept came back short whenever other claims had taken the first
-- candidates, and a short claim sends a worker to sleep for its poll interval.)
-- params: $1 worker_id, $2 types, $3 limit, $4 lease_token, $5 lease_ms, $6 now, $7 queues (distinct)
WITH clock AS (SELECT coalesce($6::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now,
                      set_config('synchronous_commit', 'on', true) AS durable),
picked AS MATERIALIZED (
  SELECT p.id FROM unnest($7::text[]) AS q(queue)
  CROSS JOIN LATERAL (
    SELECT j.id, j.priority, j.run_at FROM mailroom_job j, clock
    WHERE {{claimable}}
      AND j.queue = q.queue
      AND j.type = ANY($2::text[])
    ORDER BY j.priority DESC, j.run_at, j.id
    LIMIT $3
    FOR UPDATE OF j SKIP LOCKED
  ) p
  ORDER BY p.priority DESC, p.run_at, p.id
  LIMIT $3
)
UPDATE mailroom_job j
SET status = 'running', attempts = j.attempts + 1, lease_owner = $1, lease_token = $4,
    lease_expires_at = clock.now + $5::float8 * interval '1 millisecond', started_at = clock.now
FROM clock
WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING j.id, j.queue, j.type, j.priority, j.payload, j.attempts, j.max_attempts, j.last_error,
          j.key, j.group_key, j.event_id, j.source, j.trace_context, j.snoozes, j.batch_id, j.completes_batch_id,
          (extract(epoch FROM j.run_at) * 1000)::float8 AS run_at,
          (extract(epoch FROM j.created_at) * 1000)::float8 AS created_at,
          (extract(epoch FROM clock.now) * 1000)::float8 AS started_at;

-- name: jobClaim.oneQueue
-- The same claim in one named queue (SPEC's lanes: `mr.work({ queues: ['email'] })`). Its
-- queue is `= ($7)[1]`, a value the generic plan can seek the queue index by, in claim
-- order: with `= ANY($7)` the generic plan walked the claim index past every other queue's
-- backlog (72 ms a claim past 200,000 pending reports, 0.06 ms from the queue index).
-- params: $1 worker_id, $2 types, $3 limit, $4 lease_token, $5 lease_ms, $6 now, $7 queues
WITH RECURSIVE clock AS (SELECT coalesce($6::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now,
                                set_config('synchronous_commit', 'on', true) AS durable),
lane AS (SELECT ($7::text[])[1] AS queue),
{{laneLevels}},
picked AS MATERIALIZED (
  SELECT p.id FROM (
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueAtLevel}}
        AND j.queue = (SELECT queue FROM lane)
        AND j.type = ANY($2::text[])
      ORDER BY j.run_at, j.id
      LIMIT $3
      FOR UPDATE OF j SKIP LOCKED
    ) d
    UNION ALL
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueBelowLevels}}
        AND j.queue = (SELECT queue FROM lane)
        AND j.type = ANY($2::text[])
      ORDER BY j.priority DESC, j.run_at, j.id
      LIMIT $3
      FOR UPDATE OF j SKIP LOCKED
    ) d
  ) p
  LIMIT $3
)
UPDATE mailroom_job j
SET status = 'running', attempts = j.attempts + 1, lease_owner = $1, lease_token = $4,
    lease_expires_at = clock.now + $5::float8 * interval '1 millisecond', started_at = clock.now
FROM clock
WHERE j.id = ANY (ARRAY(SELECT id FROM picked))
RETURNING j.id, j.queue, j.type, j.priority, j.payload, j.attempts, j.max_attempts, j.last_error,
          j.key, j.group_key, j.event_id, j.source, j.trace_context, j.snoozes, j.batch_id, j.completes_batch_id,
          (extract(epoch FROM j.run_at) * 1000)::float8 AS run_at,
          (extract(epoch FROM j.created_at) * 1000)::float8 AS created_at,
          (extract(epoch FROM clock.now) * 1000)::float8 AS started_at;

-- fragment: roomFor
-- Which of a limited pick's claimable jobs (alias `c`) may start now (store/limits.ts):
-- not of the types ($5) or (type, key) pairs ($6, $7) at a limit now.
NOT (c.type = ANY($5::text[]))
  AND (c.type, coalesce(c.limit_key, '')) NOT IN (SELECT f.type, f.key FROM unnest($6::text[], $7::text[]) AS f(type, key))

-- name: jobClaim.pickLimited
-- The pick of a claim whose types include limited ones, inside the transaction that
-- holds limitLock for them: the claimable jobs in claim order that may start (roomFor),
-- row-locked (SKIP LOCKED: rows of unlimited types may be in other claims). The claim then
-- admits candidates one by one against the limits and leases them with jobClaim.lease;
-- the others' locks go at commit. It reads at most $8 claimable jobs, priority by priority
-- (levels, dueAtLevel: a backlog not yet due is never read), each looked up and locked in
-- turn through the LATERAL, which keeps the scan's order and stops with the outer LIMIT: left unbounded, a backlog whose keys were all full was
-- read to its end at every claim (46.5 ms past 100,000 deliveries to 3 full endpoints). A
-- pick cut short there goes on by key (jobClaim.pickLimited.byKey). The lookup names no
-- status: with `c.status = 'pending'` the generic plan found each row in the partial claim
-- index by scanning it (9 ms a claim of 8 beside 9,000 pending, against 3.7 before). A row
-- that stopped being pending since the scan is locked all the same and left out by
-- jobClaim.lease, which leases pending rows only.
-- params: $1 types, $2 queues (null: every queue), $3 limit, $4 now, $5 full types,
--         $6 full pairs' types, $7 full pairs' keys, $8 how many claimable jobs to read
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
{{levels}}
SELECT c.id, c.type, coalesce(c.limit_key, '') AS key, c.priority, (extract(epoch FROM c.run_at) * 1000)::float8 AS run_at FROM (
  SELECT u.id FROM (
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueAtLevel}}
        AND j.type = ANY($1::text[])
        AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      ORDER BY j.run_at, j.id
      LIMIT $8
    ) d
    UNION ALL
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueBelowLevels}}
        AND j.type = ANY($1::text[])
        AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      ORDER BY j.priority DESC, j.run_at, j.id
      LIMIT $8
    ) d
  ) u
  LIMIT $8
) s
CROSS JOIN LATERAL (
  SELECT c.id, c.type, c.limit_key, c.priority, c.run_at FROM mailroom_job c
  WHERE c.id = s.id AND {{roomFor}}
  FOR UPDATE OF c SKIP LOCKED
) c
LIMIT $3;

-- name: jobClaim.pickLimited.oneQueue
-- The same in one named queue, from the queue index (see jobClaim.oneQueue).
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
lane AS (SELECT ($2::text[])[1] AS queue),
{{laneLevels}}
SELECT c.id, c.type, coalesce(c.limit_key, '') AS key, c.priority, (extract(epoch FROM c.run_at) * 1000)::float8 AS run_at FROM (
  SELECT u.id FROM (
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueAtLevel}}
        AND j.queue = (SELECT queue FROM lane)
        AND j.type = ANY($1::text[])
      ORDER BY j.run_at, j.id
      LIMIT $8
    ) d
    UNION ALL
    SELECT d.id FROM levels
    CROSS JOIN LATERAL (
      SELECT j.id FROM mailroom_job j, clock
      WHERE {{dueBelowLevels}}
        AND j.queue = (SELECT queue FROM lane)
        AND j.type = ANY($1::text[])
      ORDER BY j.priority DESC, j.run_at, j.id
      LIMIT $8
    ) d
  ) u
  LIMIT $8
) s
CROSS JOIN LATERAL (
  SELECT c.id, c.type, c.limit_key, c.priority, c.run_at FROM mailroom_job c
  WHERE c.id = s.id AND {{roomFor}}
  FOR UPDATE OF c SKIP LOCKED
) c
LIMIT $3;

-- fragment: keysWithRoom
-- The CTEs of a pick by key, for one limited type ($1[1]): `keys`, the type's keys with
-- pending jobs, walked in the limit-key index (migration 0020; one index probe a key), and
-- `roomy`, those that are not full ($5, $6, $7 as in roomFor). Spliced after WITH
-- RECURSIVE and the clock.
keys(key) AS (
  SELECT (SELECT min(k.limit_key) FROM mailroom_job k
          WHERE k.type = ($1::text[])[1] AND k.status = 'pending' AND k.limit_key IS NOT NULL)
  UNION ALL
  SELECT (SELECT min(k.limit_key) FROM mailroom_job k
          WHERE k.type = ($1::text[])[1] AND k.status = 'pending' AND k.limit_key > keys.key)
  FROM keys WHERE keys.key IS NOT NULL
),
roomy(key) AS (
  SELECT keys.key FROM keys
  WHERE keys.key IS NOT NULL
    AND NOT (($1::text[])[1] = ANY($5::text[]))
    AND (($1::text[])[1], keys.key) NOT IN (SELECT f.type, f.key FROM unnest($6::text[], $7::text[]) AS f(type, key))
)

-- fragment: keyLevels
-- The CTE `keyLevels` (key, priority, depth), spliced after keysWithRoom: for each key with
-- room, its priorities in the limit-key index, highest first, walked only until one has a
-- due job (dueAtLevel, the recursion's alias `levels`), 16 at most, a 17th row starting
-- the rest (dueBelowLevels). A key's head looked up in claim order with `run_at <= now` as
-- a filter read every job of the key not yet due: an endpoint whose 100,000 deliveries
-- wait behind its open breaker is a key with room, and beside two full endpoints every
-- claim took 16 ms reading them. Every ORDER BY here is the limit-key index's own, and
-- "no due job at this priority" a scalar subquery with a LIMIT: so each stays a probe of
-- that index per key and priority, where a generic plan made the NOT EXISTS a hash anti
-- join over every due job of the type (a second a probe) and walked the claim index for
-- a key's priorities.
keyLevels(key, priority, depth) AS (
  SELECT roomy.key,
         (SELECT k.priority FROM mailroom_job k
          WHERE k.type = ($1::text[])[1] AND k.limit_key = roomy.key AND k.status = 'pending'
          ORDER BY k.type, k.limit_key, k.priority DESC LIMIT 1), 1
  FROM roomy
  UNION ALL
  SELECT levels.key,
         (SELECT k.priority FROM mailroom_job k
          WHERE k.type = ($1::text[])[1] AND k.limit_key = levels.key AND k.status = 'pending' AND k.priority < levels.priority
          ORDER BY k.type, k.limit_key, k.priority DESC LIMIT 1),
         levels.depth + 1
  FROM keyLevels levels
  WHERE levels.priority IS NOT NULL AND levels.depth <= 16
    AND (SELECT j.id FROM mailroom_job j, clock
         WHERE j.type = ($1::text[])[1] AND j.limit_key = levels.key AND {{dueAtLevel}}
           AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
         ORDER BY j.type, j.limit_key, j.priority DESC, j.run_at, j.id LIMIT 1) IS NULL
)

-- name: jobClaim.pickLimited.byKey
-- A limited pick of one type ($1[1]) that the bounded pick left short while some of its
-- keys are full: the claimable head of each key that is not full (keysWithRoom), in claim
-- order, the first $3 of them; those are then locked by primary key (as in
-- jobClaim.pickLimited, whose comment says why no status is named there), skipping rows
-- other claimers hold: only what the claim may take is locked, not every key's head. A key's
-- jobs past the bounded stretch are reached this way, however many jobs of full keys wait
-- ahead of them. One head a key, found priority by priority (keyLevels): the next claim
-- takes the next.
-- params: as jobClaim.pickLimited, without $8
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
{{keysWithRoom}},
{{keyLevels}},
heads AS MATERIALIZED (
  SELECT h.id FROM (
    SELECT d.id, d.priority, d.run_at FROM keyLevels levels
    CROSS JOIN LATERAL (
      SELECT j.id, j.priority, j.run_at FROM mailroom_job j, clock
      WHERE j.type = ($1::text[])[1] AND j.limit_key = levels.key AND {{dueAtLevel}}
        AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      ORDER BY j.type, j.limit_key, j.priority DESC, j.run_at, j.id
      LIMIT 1
    ) d
    UNION ALL
    SELECT d.id, d.priority, d.run_at FROM keyLevels levels
    CROSS JOIN LATERAL (
      SELECT j.id, j.priority, j.run_at FROM mailroom_job j, clock
      WHERE j.type = ($1::text[])[1] AND j.limit_key = levels.key AND {{dueBelowLevels}}
        AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      ORDER BY j.type, j.limit_key, j.priority DESC, j.run_at, j.id
      LIMIT 1
    ) d
  ) h
  ORDER BY h.priority DESC, h.run_at, h.id
  LIMIT $3
)
SELECT c.id, c.type, c.limit_key AS key, c.priority, (extract(epoch FROM c.run_at) * 1000)::float8 AS run_at FROM heads
CROSS JOIN LATERAL (
  SELECT c.id, c.type, c.limit_key, c.priority, c.run_at FROM mailroom_job c
  WHERE c.id = heads.id
  FOR UPDATE OF c SKIP LOCKED
) c
ORDER BY c.priority DESC, c.run_at, c.id;

-- name: jobClaimable.limited
-- Whether anything limited may start now (drained(), and the claim loop's "when next"):
-- read-only and without locks. With jobClaim.pickLimited's FOR UPDATE SKIP LOCKED, a
-- check that ran beside another one (a worker's claim loop asking when to wake) skipped
-- the job that one had locked for a moment and answered "nothing": drained() returned
-- with a job due, and a claim could skip a due job only because a check held it. It reads
-- what the pick reads, in the same order: the first $8 claimable jobs, then by key
-- (jobClaimable.limited.byKey). Unordered, it could see a job the pick never reaches (one
-- with no limit key behind a backlog of full keys) and say yes to every empty claim.
-- params: $1 types, $2 queues (null: every queue), $3 limit (1: the fragment's numbering),
--         $4 now, $5 full types, $6 full pairs' types, $7 full pairs' keys, $8 how many to read
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
{{levels}}
SELECT EXISTS (
  SELECT 1 FROM (
    SELECT u.type, u.limit_key FROM (
      SELECT d.type, d.limit_key FROM levels
      CROSS JOIN LATERAL (
        SELECT j.type, j.limit_key FROM mailroom_job j, clock
        WHERE {{dueAtLevel}}
          AND j.type = ANY($1::text[])
          AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
        ORDER BY j.run_at, j.id
        LIMIT $8
      ) d
      UNION ALL
      SELECT d.type, d.limit_key FROM levels
      CROSS JOIN LATERAL (
        SELECT j.type, j.limit_key FROM mailroom_job j, clock
        WHERE {{dueBelowLevels}}
          AND j.type = ANY($1::text[])
          AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT $8
      ) d
    ) u
    LIMIT $8
  ) c
  WHERE {{roomFor}}
  LIMIT $3
) AS has_claimable;

-- name: jobClaimable.limited.oneQueue
-- The same in one named queue, from the queue index (see jobClaim.oneQueue).
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
lane AS (SELECT ($2::text[])[1] AS queue),
{{laneLevels}}
SELECT EXISTS (
  SELECT 1 FROM (
    SELECT u.type, u.limit_key FROM (
      SELECT d.type, d.limit_key FROM levels
      CROSS JOIN LATERAL (
        SELECT j.type, j.limit_key FROM mailroom_job j, clock
        WHERE {{dueAtLevel}}
          AND j.queue = (SELECT queue FROM lane)
          AND j.type = ANY($1::text[])
        ORDER BY j.run_at, j.id
        LIMIT $8
      ) d
      UNION ALL
      SELECT d.type, d.limit_key FROM levels
      CROSS JOIN LATERAL (
        SELECT j.type, j.limit_key FROM mailroom_job j, clock
        WHERE {{dueBelowLevels}}
          AND j.queue = (SELECT queue FROM lane)
          AND j.type = ANY($1::text[])
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT $8
      ) d
    ) u
    LIMIT $8
  ) c
  WHERE {{roomFor}}
  LIMIT $3
) AS has_claimable;

-- name: jobClaimable.limited.byKey
-- Whether a key of one limited type ($1[1]) that is not full has a claimable job: the walk
-- of jobClaim.pickLimited.byKey (keysWithRoom), without locks (see jobClaimable.limited).
-- params: as jobClaim.pickLimited.byKey
WITH RECURSIVE clock AS (SELECT $4::timestamptz AS now),
{{keysWithRoom}},
{{keyLevels}}
SELECT EXISTS (
  SELECT 1 FROM keyLevels levels
  WHERE (SELECT j.id FROM mailroom_job j, clock
         WHERE j.type = ($1::text[])[1] AND j.limit_key = levels.key AND {{dueAtLevel}}
           AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
         ORDER BY j.type, j.limit_key, j.priority DESC, j.run_at, j.id LIMIT $3) IS NOT NULL
  UNION ALL
  SELECT 1 FROM keyLevels levels
  WHERE (SELECT j.id FROM mailroom_job j, clock
         WHERE j.type = ($1::text[])[1] AND j.limit_key = levels.key AND {{dueBelowLevels}}
           AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
         ORDER BY j.type, j.limit_key, j.priority DESC, j.run_at, j.id LIMIT $3) IS NOT NULL
) AS has_claimable;

-- name: jobQueuesPending
-- The queues that have pending jobs, one queue-index probe each, at most $1 of them (a
-- claim while a queue is paused: store/unpaused-queues.ts). Read from the jobs, not the
-- counters, so a queue's jobs are claimable whatever its counters say.
-- params: $1 most
WITH RECURSIVE queues(queue, n) AS (
  SELECT (SELECT min(j.queue) FROM mailroom_job j WHERE j.status = 'pending'), 1
  UNION ALL
  SELECT (SELECT min(j.queue) FROM mailroom_job j WHERE j.status = 'pending' AND j.queue > q.queue), q.n + 1
  FROM queues q WHERE q.queue IS NOT NULL AND q.n < $1::int
)
SELECT queue FROM queues WHERE queue IS NOT NULL;

-- name: jobClaim.lease
-- The second half of a limited claim: leases the jobs jobClaim.pickLimited picked and the
-- limits admitted, at the claim's $4 now, returning the same row as jobClaim.
-- Its commit waits for the WAL flush, as jobClaim's (`durable`).
-- params: $1 worker_id, $2 lease_token, $3 lease_ms, $4 now, $5 ids
WITH durable AS (SELECT set_config('synchronous_commit', 'on', true) AS durable)
UPDATE mailroom_job j
SET status = 'running', attempts = j.attempts + 1, lease_owner = $1, lease_token = $2,
    lease_expires_at = $4::timestamptz + $3::float8 * interval '1 millisecond', started_at = $4::timestamptz
FROM durable
WHERE j.id = ANY($5::bigint[]) AND j.status = 'pending'
RETURNING j.id, j.queue, j.type, j.priority, j.payload, j.attempts, j.max_attempts, j.last_error,
          j.key, j.group_key, j.event_id, j.source, j.trace_context, j.snoozes, j.batch_id, j.completes_batch_id,
          (extract(epoch FROM j.run_at) * 1000)::float8 AS run_at,
          (extract(epoch FROM j.created_at) * 1000)::float8 AS created_at,
          (extract(epoch FROM $4::timestamptz) * 1000)::float8 AS started_at;

-- name: claimClock
-- The store's now for a claim that runs as several statements (a limited one): each of
-- them uses this one instant, as the single-statement claim uses its clock CTE.
-- params: $1 now (null: the server's)
SELECT coalesce($1::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now;

-- name: jobClaimable
-- Whether anything is claimable now by the claim predicate (drained()); read-only. By
-- priority, as jobClaim walks (levels, dueAtLevel): behind 100,000 jobs not yet due it read
-- them all to answer "no".
-- params: $1 types, $2 queues (null: every queue), $3 now
WITH RECURSIVE clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
{{levels}}
SELECT EXISTS (
  SELECT 1 FROM levels
  CROSS JOIN LATERAL (
    SELECT 1 FROM mailroom_job j, clock
    WHERE {{dueAtLevel}}
      AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      AND j.type = ANY($1::text[])
    ORDER BY j.run_at, j.id
    LIMIT 1
  ) d
  UNION ALL
  SELECT 1 FROM levels
  CROSS JOIN LATERAL (
    SELECT 1 FROM mailroom_job j, clock
    WHERE {{dueBelowLevels}}
      AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
      AND j.type = ANY($1::text[])
    ORDER BY j.priority DESC, j.run_at, j.id
    LIMIT 1
  ) d
) AS has_claimable;

-- name: jobClaimable.oneQueue
-- The same in one named queue, from the queue index (see jobClaim.oneQueue): an idle lane's
-- worker asks this at every poll, and from the claim index it read every other queue's
-- backlog to answer "nothing".
-- params: $1 types, $2 queues (one), $3 now
WITH RECURSIVE clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
lane AS (SELECT ($2::text[])[1] AS queue),
{{laneLevels}}
SELECT EXISTS (
  SELECT 1 FROM levels
  CROSS JOIN LATERAL (
    SELECT 1 FROM mailroom_job j, clock
    WHERE {{dueAtLevel}}
      AND j.queue = (SELECT queue FROM lane)
      AND j.type = ANY($1::text[])
    ORDER BY j.run_at, j.id
    LIMIT 1
  ) d
  UNION ALL
  SELECT 1 FROM levels
  CROSS JOIN LATERAL (
    SELECT 1 FROM mailroom_job j, clock
    WHERE {{dueBelowLevels}}
      AND j.queue = (SELECT queue FROM lane)
      AND j.type = ANY($1::text[])
    ORDER BY j.priority DESC, j.run_at, j.id
    LIMIT 1
  ) d
) AS has_claimable;

-- name: jobClaimable.inQueues
-- The same in several named queues, each from the queue index (see jobClaim.inQueues).
-- params: $1 types, $2 queues, $3 now
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
SELECT EXISTS (
  SELECT 1 FROM unnest($2::text[]) AS q(queue)
  WHERE EXISTS (
    SELECT 1 FROM mailroom_job j, clock
    WHERE {{claimable}}
      AND j.queue = q.queue
      AND j.type = ANY($1::text[]))
) AS has_claimable;

-- name: jobClaimable.nextRunAt
-- The earliest future run_at among pending jobs these workers could run (sleep target).
-- Not the claim predicate: these jobs are not due yet, which is the point. A worker asks
-- after every empty claim, and a claim comes back empty beside a backlog of due jobs it
-- cannot take (full limits, a paused queue, a group's head). min(run_at) over the pending
-- jobs was a parallel sequential scan of the whole table: 61 ms at 200,000 pending.
-- Instead, as SQLite does: step through the priorities in use in the claim index, and in
-- each take the first run_at past now of these types, an index search from now on (the
-- clock as a scalar subquery, so the search can use it). At 64 priorities the walk stops
-- and says `capped`; the store then reads the rows (jobClaimable.nextRunAt.read). A
-- fallback inside this statement was planned parallel, and its workers started at every
-- run even when it read nothing (8-18 ms).
-- params: $1 types, $2 queues (null: every queue), $3 now
WITH RECURSIVE clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
levels(priority, depth) AS (
  SELECT (SELECT j.priority FROM mailroom_job j WHERE j.status = 'pending' ORDER BY j.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT j.priority FROM mailroom_job j WHERE j.status = 'pending' AND j.priority < l.priority
          ORDER BY j.priority DESC LIMIT 1), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 64
),
walked AS (
  SELECT (SELECT j.run_at FROM mailroom_job j
          WHERE j.status = 'pending' AND j.priority = l.priority AND j.run_at > (SELECT now FROM clock)
            AND ($2::text[] IS NULL OR j.queue = ANY($2::text[])) AND j.type = ANY($1::text[])
          ORDER BY j.run_at LIMIT 1) AS next,
         l.depth = 64 AS capped
  FROM levels l WHERE l.priority IS NOT NULL
)
SELECT min(next) AS next_run_at, extract(epoch FROM min(next) - (SELECT now FROM clock))::float8 * 1000 AS next_run_in_ms,
       coalesce(bool_or(capped), false) AS capped
FROM walked;

-- name: jobClaimable.nextRunAt.oneQueue
-- The same in one named queue: its priorities in the queue index (see jobClaim.oneQueue).
-- params: $1 types, $2 queues (one), $3 now
WITH RECURSIVE clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
levels(priority, depth) AS (
  SELECT (SELECT j.priority FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = ($2::text[])[1]
          ORDER BY j.priority DESC LIMIT 1), 1
  UNION ALL
  SELECT (SELECT j.priority FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = ($2::text[])[1] AND j.priority < l.priority
          ORDER BY j.priority DESC LIMIT 1), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 64
),
walked AS (
  SELECT (SELECT j.run_at FROM mailroom_job j
          WHERE j.status = 'pending' AND j.queue = ($2::text[])[1] AND j.priority = l.priority AND j.run_at > (SELECT now FROM clock)
            AND j.type = ANY($1::text[])
          ORDER BY j.run_at LIMIT 1) AS next,
         l.depth = 64 AS capped
  FROM levels l WHERE l.priority IS NOT NULL
)
SELECT min(next) AS next_run_at, extract(epoch FROM min(next) - (SELECT now FROM clock))::float8 * 1000 AS next_run_in_ms,
       coalesce(bool_or(capped), false) AS capped
FROM walked;

-- name: jobClaimable.nextRunAt.read
-- The same read row by row, for a walk cut short (64 priorities or more), in every queue or
-- the named ones.
-- params: $1 types, $2 queues (null: every queue), $3 now
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
SELECT min(j.run_at) AS next_run_at, extract(epoch FROM min(j.run_at - clock.now))::float8 * 1000 AS next_run_in_ms
FROM mailroom_job j, clock
WHERE j.status = 'pending' AND j.run_at > clock.now
  AND ($2::text[] IS NULL OR j.queue = ANY($2::text[]))
  AND j.type = ANY($1::text[]);

-- name: jobExtendLease
-- Extends leases only while the caller still holds them (same token, still running).
-- Fenced by the token alone, like every statement below that takes leases: a claim sets
-- the token and every statement that moves a job out of `running` clears it, so a match
-- means the caller's lease is current. `status = 'running'` is left out on purpose: with
-- it the planner may drive the join from the partial lease index, whose row estimate
-- from the last ANALYZE can be 1 while hundreds are running, and re-scan the unnest for
-- every row (measured: batches of 600 outcomes at 160 ms each, slowing as they grew).
-- Without it the only sane plan is a primary-key probe per id (or a hash join).
-- Its commit waits for the WAL flush, as jobClaim's (`durable`): an extension lost in a
-- server crash would let the rescue hand on a job whose worker was told it still holds it.
-- params: $1 ids, $2 lease_tokens, $3 lease_ms, $4 now
WITH clock AS (SELECT coalesce($4::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now,
                      set_config('synchronous_commit', 'on', true) AS durable)
UPDATE mailroom_job j
SET lease_expires_at = clock.now + $3::float8 * interval '1 millisecond'
FROM unnest($1::bigint[], $2::text[]) AS l(id, lease_token), clock
WHERE j.id = l.id AND j.lease_token = l.lease_token
RETURNING j.id;

-- name: jobProgress
-- Running jobs' progress (ctx.progress, coalesced by the worker into one statement), each
-- fenced by its lease token like jobFinishMany.done: a worker whose lease was taken over
-- (or whose job is done) writes nothing.
-- params: $1 ids, $2 lease_tokens, $3 fractions, $4 notes
UPDATE mailroom_job j SET progress = p.fraction, progress_note = p.note
FROM unnest($1::bigint[], $2::text[], $3::float8[], $4::text[]) AS p(id, lease_token, fraction, note)
WHERE j.id = p.id AND j.lease_token = p.lease_token
RETURNING j.id;

-- name: jobFinishMany.done
-- The successes of one jobFinishMany, in one statement. Fenced (by token, see
-- jobExtendLease): a worker whose lease was taken over (new token) or rescued changes
-- nothing. The successful attempt lives on the row (started_at, finished_at, lease_owner,
-- details); the handler's return value is kept as `result`.
-- params: $1 ids, $2 lease_tokens, $3 now, $4 results (JSON text or null), $5 details (JSON text or null)
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_job j
SET status = 'done', finished_at = clock.now, lease_token = NULL, lease_expires_at = NULL,
    last_error = NULL, result = f.result, details = f.details
FROM unnest($1::bigint[], $2::text[], $4::text[], $5::text[]) AS f(id, lease_token, result, details), clock
WHERE j.id = f.id AND j.lease_token = f.lease_token
RETURNING j.id;

-- name: jobFinishMany.doneDelivered
-- jobFinishMany.done for a batch where deliver jobs carry their success (JobFinish
-- `delivered`), with those deliveries' records, in one autocommitted statement: the job,
-- its delivery and its endpoint's health commit together, in one round trip where
-- deliveryRecordMany's transaction takes four. The record is not fenced, as
-- deliveryRecordMany is not: the receiver has the message even when the job's outcome is
-- fenced off. A delivery already delivered is left as it is and not counted again: the same
-- success written twice (the completer retries a batch whose commit it did not hear)
-- counts once. The health fold is store/delivery-health.ts's for successes alone, which
-- need no read before the write: counters up, the failure streak over, the breaker closed
-- (an open or half-open one as a fresh closed one), and its window's successes counted (a
-- new window when the breaker was not closed, had none, or it ended); the conformance
-- suite checks it against deliveryRecordMany's. Locks in the
-- order the two statements took them: the jobs (the deliveries' WHERE reads `finished`
-- first), then the deliveries, then the health rows in endpoint id order (the sort below
-- the row locks reads every delivery first). The endpoint is the delivery's own. An unreferenced CTE runs to completion after
-- the main query.
-- params: $1 ids, $2 lease_tokens, $3 now, $4 results, $5 details, $6 delivery ids (null:
--   none), $7 breaker windows (ms; null where there is no delivery)
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
f AS (
  SELECT * FROM unnest($1::bigint[], $2::text[], $4::text[], $5::text[], $6::bigint[], $7::bigint[])
    AS f(id, lease_token, result, details, delivery_id, window_ms)
),
finished AS (
  UPDATE mailroom_job j
  SET status = 'done', finished_at = clock.now, lease_token = NULL, lease_expires_at = NULL,
      last_error = NULL, result = f.result, details = f.details
  FROM f, clock
  WHERE j.id = f.id AND j.lease_token = f.lease_token
  RETURNING j.id
),
recorded AS (
  UPDATE mailroom_delivery d SET status = 'delivered', updated_at = clock.now
  FROM clock, f
  WHERE d.id = f.delivery_id AND d.status <> 'delivered' AND (SELECT count(*) FROM finished) >= 0
  RETURNING d.endpoint_id, f.window_ms
),
successes AS (
  SELECT endpoint_id, count(*)::integer AS n, min(window_ms) AS window_ms FROM recorded GROUP BY endpoint_id
),
locked AS (
  SELECT h.endpoint_id, s.n,
         (h.breaker_state <> 'closed' OR h.window_started_at IS NULL
          OR clock.now - h.window_started_at >= make_interval(secs => s.window_ms / 1000.0)) AS is_new_window
  FROM clock, mailroom_endpoint_health h JOIN successes s ON s.endpoint_id = h.endpoint_id
  ORDER BY h.endpoint_id
  FOR UPDATE OF h
),
health AS (
  UPDATE mailroom_endpoint_health h
  SET successes = h.successes + l.n, last_success_at = clock.now, failing_since = NULL,
      breaker_state = 'closed',
      opened_at = CASE WHEN h.breaker_state = 'closed' THEN h.opened_at END,
      open_ms = CASE WHEN h.breaker_state = 'closed' THEN h.open_ms END,
      probe_until = CASE WHEN h.breaker_state = 'closed' THEN h.probe_until END,
      window_started_at = CASE WHEN l.is_new_window THEN clock.now ELSE h.window_started_at END,
      window_successes = CASE WHEN l.is_new_window THEN 0 ELSE h.window_successes END + l.n,
      window_failures = CASE WHEN l.is_new_window THEN 0 ELSE h.window_failures END
  FROM clock, locked l
  WHERE h.endpoint_id = l.endpoint_id
  RETURNING 1
)
SELECT id FROM finished;

-- name: jobFinishMany.doneHeld
-- A success committed inside the handler's own transaction (ctx.complete): done like
-- jobFinishMany.done, in the caller's transaction, but the token is not cleared: it is
-- kept as 'held:<token>', which fences the result the handler returns afterwards
-- (jobFinishMany.result) and matches no statement that takes a lease (extend, finish,
-- hand back), so nothing can move the done job back or extend it.
-- params: $1 ids, $2 lease_tokens, $3 now, $4 details
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_job j
SET status = 'done', finished_at = clock.now, lease_token = 'held:' || j.lease_token, lease_expires_at = NULL,
    last_error = NULL, details = f.details
FROM unnest($1::bigint[], $2::text[], $4::text[]) AS f(id, lease_token, details), clock
WHERE j.id = f.id AND j.lease_token = f.lease_token
RETURNING j.id;

-- name: jobFinishMany.result
-- The return value of a handler whose job jobFinishMany.doneHeld made done, written when
-- the handler returns; fenced by the held token, which it clears. The status does not
-- move. Details given since the commit replace the committed ones.
-- params: $1 ids, $2 lease_tokens, $3 results, $4 details
UPDATE mailroom_job j
SET result = f.result, details = coalesce(f.details, j.details), lease_token = NULL
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[]) AS f(id, lease_token, result, details)
WHERE j.id = f.id AND j.lease_token = 'held:' || f.lease_token
RETURNING j.id;

-- name: jobFinishMany.notDone
-- The failures, hand-backs and snoozes of one jobFinishMany, in one statement, fenced like
-- jobFinishMany.done. Kind 'failed' charges the attempt: retry after its delay, or dead
-- (with its reason) when the delay is null. 'handed_back' and 'snoozed' do not: the
-- attempt count goes back down; a hand-back keeps its run_at, a snooze waits its delay and
-- is counted in `snoozes`. Returns what the history row needs (attemptInsert, same
-- transaction): the attempt number the run had, charged or not.
-- params: $1 ids, $2 lease_tokens, $3 kinds, $4 delays_ms, $5 dead_reasons, $6 errors,
--         $7 attempt outcomes, $8 now, $9 stacks, $10 details
WITH clock AS (SELECT coalesce($8::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_job j
SET status = CASE WHEN f.kind = 'failed' AND f.delay_ms IS NULL THEN 'dead' ELSE 'pending' END,
    attempts = CASE WHEN f.kind = 'failed' THEN j.attempts ELSE j.attempts - 1 END,
    snoozes = CASE WHEN f.kind = 'snoozed' THEN j.snoozes + 1 ELSE j.snoozes END,
    run_at = CASE WHEN f.delay_ms IS NULL THEN j.run_at
                  ELSE clock.now + f.delay_ms * interval '1 millisecond' END,
    dead_reason = CASE WHEN f.kind = 'failed' AND f.delay_ms IS NULL THEN f.dead_reason ELSE NULL END,
    finished_at = CASE WHEN f.kind = 'failed' AND f.delay_ms IS NULL THEN clock.now ELSE NULL END,
    last_error = CASE WHEN f.kind = 'failed' THEN f.error ELSE j.last_error END,
    lease_token = NULL, lease_expires_at = NULL
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::float8[], $5::text[], $6::text[], $7::text[], $9::text[], $10::text[])
       AS f(id, lease_token, kind, delay_ms, dead_reason, error, outcome, stack, details),
     clock
WHERE j.id = f.id AND j.lease_token = f.lease_token
RETURNING j.id, CASE WHEN f.kind = 'failed' THEN j.attempts ELSE j.attempts + 1 END AS attempt,
          j.started_at, j.lease_owner, f.outcome, f.error, f.stack, f.details, clock.now AS finished_at;

-- name: jobRescue
-- Expired leases: back to pending with the attempt still charged, or dead when it was
-- the last attempt. This is what ends a poison job that kills its own process. SKIP
-- LOCKED: a lease being completed or extended right now is left to that writer (the
-- next sweep sees it if it is still expired), so the sweep never waits on or deadlocks
-- with workers; the fence re-check after the lock keeps a just-extended lease.
-- params: $1 now, $2 limit
WITH clock AS (SELECT coalesce($1::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
expired AS MATERIALIZED (
  SELECT j.id FROM mailroom_job j, clock
  WHERE j.status = 'running' AND j.lease_expires_at < clock.now
  ORDER BY j.lease_expires_at
  LIMIT $2
  FOR UPDATE OF j SKIP LOCKED
)
UPDATE mailroom_job j
SET status = CASE WHEN j.attempts >= j.max_attempts THEN 'dead' ELSE 'pending' END,
    dead_reason = CASE WHEN j.attempts >= j.max_attempts THEN 'exhausted' ELSE NULL END,
    finished_at = CASE WHEN j.attempts >= j.max_attempts THEN clock.now ELSE NULL END,
    run_at = clock.now,
    last_error = 'lease expired: the worker stopped heartbeating (crashed, killed or stalled)',
    lease_token = NULL, lease_expires_at = NULL
FROM clock
WHERE j.id = ANY (ARRAY(SELECT id FROM expired))
RETURNING j.id, j.status, j.attempts AS attempt, j.started_at, j.lease_owner,
          'lost' AS outcome, 'lease expired' AS error, clock.now AS finished_at;

-- name: attemptInsert
-- History rows for attempts that did not end `done` on the job row itself, written in
-- the same transaction as the outcome that ended them (jobFinishMany.notDone, jobRescue).
-- params: $1 job_ids, $2 attempts, $3 started_ats, $4 finished_ats, $5 outcomes, $6 errors, $7 worker_ids, $8 stacks, $9 details
INSERT INTO mailroom_attempt (job_id, attempt, started_at, finished_at, outcome, error, worker_id, stack, details)
SELECT * FROM unnest($1::bigint[], $2::integer[], $3::timestamptz[], $4::timestamptz[],
                     $5::text[], $6::text[], $7::text[], $8::text[], $9::text[]);

-- name: jobReplay
-- Fresh budget for dead (or, forced, done) jobs; history is kept. Guarded by status, and
-- a concurrent replay waits for the row lock and then fails the re-checked guard, so two
-- concurrent replays of one job replay it once. The previous run's start and worker are
-- cleared: its attempt rows keep them, and on the row they read as the new run's.
-- Its result, details and snooze count go too: they belong to the run being replaced
-- (a forced replay moved the success's details into the history first).
-- params: $1 ids, $2 now, $3 force, $4 include_cancelled, $5 max_attempts (null: keep)
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_job j
SET status = 'pending', attempts = 0, snoozes = 0, max_attempts = coalesce($5::integer, j.max_attempts),
    last_error = NULL, dead_reason = NULL, run_at = clock.now, finished_at = NULL,
    started_at = NULL, lease_owner = NULL, lease_token = NULL, lease_expires_at = NULL,
    result = NULL, details = NULL, progress = NULL, progress_note = NULL
FROM clock
WHERE j.id = ANY($1::bigint[])
  AND (j.status = 'dead' OR ($3::boolean AND j.status = 'done'))
  AND (j.dead_reason IS NULL OR j.dead_reason <> 'cancelled' OR $4::boolean)
RETURNING j.id;

-- name: jobReplay.doneAttempt
-- Before a forced replay of done jobs, move their row-held success into the history.
-- FOR UPDATE: a concurrent replay waits here and, once the first commits, finds the job
-- no longer done, so the success is moved exactly once.
-- params: $1 ids
INSERT INTO mailroom_attempt (job_id, attempt, started_at, finished_at, outcome, error, worker_id, details)
SELECT id, attempts, started_at, finished_at, 'done', NULL, lease_owner, details
FROM mailroom_job WHERE id = ANY($1::bigint[]) AND status = 'done'
ORDER BY id
FOR UPDATE;

-- name: jobReplay.record
-- One replay record per replayed job: when, why, by whom, and how many history rows came
-- before it (counted after jobReplay.doneAttempt, in the same transaction).
-- params: $1 job_ids, $2 now, $3 reason, $4 by
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
INSERT INTO mailroom_replay (job_id, at, reason, "by", attempts_before)
SELECT r.job_id, clock.now, $3::text, $4::text,
       (SELECT count(*) FROM mailroom_attempt a WHERE a.job_id = r.job_id)
FROM unnest($1::bigint[]) AS r(job_id), clock;

-- name: jobRetryNow
-- "Run now": pending jobs that wait (for a retry or a delay) become due now. Attempts and
-- history are untouched, and so is group order: a grouped job is still claimed only as
-- its group's head. A due job is left as it is (run_at never moves later). The status
-- does not change, so the update trigger sees no job become pending and sends no NOTIFY:
-- this statement wakes the workers of each queue itself ($3: the schema's channel), at
-- commit. `(SELECT count(*) FROM woken)` makes the otherwise unreferenced CTE run.
-- $4 false: only jobs waiting for a retry (they have a last error), not ones merely delayed.
-- params: $1 ids, $2 now, $3 channel, $4 include delayed
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
due AS (
  UPDATE mailroom_job j SET run_at = clock.now
  FROM clock
  WHERE j.id = ANY($1::bigint[]) AND j.status = 'pending' AND j.run_at > clock.now
    AND ($4::boolean OR j.last_error IS NOT NULL)
  RETURNING j.id, j.queue
),
woken AS (SELECT pg_notify($3::text, q.queue) FROM (SELECT DISTINCT queue FROM due) q)
SELECT id FROM due WHERE (SELECT count(*) FROM woken) >= 0 ORDER BY id;

-- name: jobCancel
-- pending -> dead (cancelled); a job already claimed or finished is left alone.
-- params: $1 id, $2 now, $3 reason
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_job j
SET status = 'dead', dead_reason = 'cancelled', last_error = $3, finished_at = clock.now
FROM clock
WHERE j.id = $1 AND j.status = 'pending'
RETURNING j.*;

-- name: jobPurge
-- Retention: finished jobs older than the window. Bounded batches keep each transaction
-- short; the lock-and-recheck in the CTE means a job replayed meanwhile is not deleted.
-- The repeated `status IN (…)` is the finished index's partial predicate: a generic plan
-- of `status = $1` alone cannot prove it and would scan the table. The DELETE finds the
-- rows by primary key, like the claim. A batch's child stays while its batch's completion
-- job is to come or still kept: that job's handler reads every child's outcome and result.
-- params: $1 status, $2 older_than_ms, $3 now
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
doomed AS MATERIALIZED (
  SELECT j.id FROM mailroom_job j, clock
  WHERE j.status = $1 AND j.status IN ('done', 'dead')
    AND j.finished_at < clock.now - $2::float8 * interval '1 millisecond'
    -- A scalar subquery, so each child's batch and completion are probed by primary key
    -- (as NOT EXISTS, the generic plan joined them by a scan of the job table).
    AND (j.batch_id IS NULL OR (
      SELECT b.completion_job_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM mailroom_job c WHERE c.id = b.completion_job_id)
      FROM mailroom_batch b WHERE b.id = j.batch_id) IS NOT FALSE)
  LIMIT 1000
  FOR UPDATE OF j SKIP LOCKED
)
DELETE FROM mailroom_job j WHERE j.id = ANY (ARRAY(SELECT id FROM doomed))
RETURNING j.id;

-- name: jobPurge.attempts
-- The history of purged jobs (same transaction).
-- params: $1 job_ids
DELETE FROM mailroom_attempt WHERE job_id = ANY($1::bigint[]);

-- name: jobPurge.replays
-- params: $1 job_ids
DELETE FROM mailroom_replay WHERE job_id = ANY($1::bigint[]);

-- name: jobPurge.events
-- Events (and so their dedupe receipts) past their window whose jobs are all gone.
-- params: $1 older_than_ms, $2 now
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
DELETE FROM mailroom_event
WHERE id IN (SELECT e.id FROM mailroom_event e, clock
             WHERE e.received_at < clock.now - $1::float8 * interval '1 millisecond'
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.event_id = e.id)
             LIMIT 1000)
RETURNING id;

-- name: jobStats
-- Counts come from the trigger-kept counter shards, summed; never from scanning jobs.
-- params: none
SELECT queue, status, sum(n)::bigint AS n FROM mailroom_queue_count
GROUP BY queue, status
HAVING sum(n) <> 0;

-- name: databaseNow
-- The database's clock, as every statement's `clock` CTE reads it (purge fixes one for
-- all its batches).
SELECT date_trunc('milliseconds', statement_timestamp()) AS now;

-- name: jobStats.oldestPending
-- Oldest due pending job per queue, and the clock the ages are computed on: always at
-- least one row, queue null when nothing is due. Not a min(run_at) … GROUP BY queue, which
-- read every pending row (a parallel sequential scan, 70 ms at 300,000 pending, on every
-- stats() and metrics scrape, competing with the workers): for each queue with pending
-- jobs (from the counter shards, so writes that bypass the triggers are not seen here),
-- step through its distinct priorities in the per-queue claim index and take each one's
-- earliest run_at, one index probe per (queue, priority). A queue with more than 64
-- priorities in use falls back to reading its pending rows (the walk would cost more).
-- params: $1 now
WITH RECURSIVE clock AS (SELECT coalesce($1::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
queues AS (
  SELECT c.queue FROM mailroom_queue_count c WHERE c.status = 'pending' GROUP BY c.queue HAVING sum(c.n) > 0
),
levels(queue, priority, depth) AS (
  SELECT q.queue, (SELECT max(j.priority) FROM mailroom_job j WHERE j.status = 'pending' AND j.queue = q.queue), 1
  FROM queues q
  UNION ALL
  SELECT l.queue, (SELECT max(j.priority) FROM mailroom_job j
                   WHERE j.status = 'pending' AND j.queue = l.queue AND j.priority < l.priority), l.depth + 1
  FROM levels l WHERE l.priority IS NOT NULL AND l.depth < 64
),
cut AS (SELECT queue FROM levels WHERE depth = 64 AND priority IS NOT NULL),
oldest AS (
  SELECT l.queue, min(f.oldest) AS oldest
  FROM levels l, clock
  CROSS JOIN LATERAL (
    SELECT min(j.run_at) AS oldest FROM mailroom_job j
    WHERE j.status = 'pending' AND j.queue = l.queue AND j.priority = l.priority AND j.run_at <= clock.now
  ) f
  WHERE l.priority IS NOT NULL AND l.queue NOT IN (SELECT queue FROM cut)
  GROUP BY l.queue
  HAVING min(f.oldest) IS NOT NULL
  UNION ALL
  SELECT j.queue, min(j.run_at) FROM mailroom_job j, clock
  WHERE j.status = 'pending' AND j.run_at <= clock.now AND j.queue IN (SELECT queue FROM cut)
  GROUP BY j.queue
)
SELECT clock.now, o.queue, o.oldest
FROM clock LEFT JOIN oldest o ON true;

-- name: jobFinishedPerMinute
-- Jobs done and dead per minute of finished_at over a recent window (the dashboard's
-- chart), read from the finished index (status, finished_at) alone: one range per status,
-- so its cost follows the jobs finished in the window, not the table. One branch per
-- status: with `status IN ('done', 'dead')` PostgreSQL drops the status test (the partial
-- index's predicate implies it) and walks the whole index for the time range, 30–150 ms
-- at a million jobs instead of under one. Minutes are UTC epoch minutes, whatever the
-- session's time zone.
-- params: $1 since, $2 now
SELECT 'done' AS status, floor(extract(epoch FROM finished_at) / 60)::bigint * 60000 AS minute, count(*)::bigint AS n
FROM mailroom_job
WHERE status = 'done' AND finished_at >= $1::timestamptz AND finished_at <= $2::timestamptz
GROUP BY 2
UNION ALL
SELECT 'dead', floor(extract(epoch FROM finished_at) / 60)::bigint * 60000, count(*)::bigint
FROM mailroom_job
WHERE status = 'dead' AND finished_at >= $1::timestamptz AND finished_at <= $2::timestamptz
GROUP BY 2;

-- name: jobFinishedPerMinute.failedAttempts
-- Failed attempts per minute, from a bounded tail of the attempt table's primary key
-- (ATTEMPT_SCAN_LIMIT in store.ts says why not an index). Rows with a null minute carry
-- the tail's size and oldest finish, which tell whether the window was cut short.
-- params: $1 since, $2 now, $3 limit
WITH tail AS MATERIALIZED (
  SELECT finished_at, outcome FROM mailroom_attempt ORDER BY id DESC LIMIT $3
)
SELECT floor(extract(epoch FROM finished_at) / 60)::bigint * 60000 AS minute, count(*)::bigint AS n, NULL::timestamptz AS oldest
FROM tail
WHERE outcome IN ('failed', 'timeout', 'lost') AND finished_at >= $1::timestamptz AND finished_at <= $2::timestamptz
GROUP BY 1
UNION ALL
SELECT NULL, count(*)::bigint, min(finished_at) FROM tail;
