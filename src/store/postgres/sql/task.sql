-- The task directory (migrations 0015, 0016): each task type's queue, whether its per-key
-- limits need a key computed from the payload, and its maxAttempts, as the last worker to
-- start declared them. Read by processes that enqueue a type they did not register.

-- name: taskRecord
-- Every type a starting worker registered, in one statement; a newer record replaces an
-- older one. In type order, so two workers starting at once lock their common rows in the
-- same order and cannot deadlock. The budget is stamped with the record's time (see 0016:
-- a record by older code leaves it behind, and then it no longer counts).
-- params: $1 types, $2 queues, $3 keyed flags, $4 maxAttempts (null: the default), $5 now
INSERT INTO mailroom_task (type, queue, keyed, max_attempts, max_attempts_recorded_at, recorded_at)
SELECT t.type, t.queue, t.keyed, t.max_attempts, r.at, r.at
FROM unnest($1::text[], $2::text[], $3::boolean[], $4::integer[]) AS t(type, queue, keyed, max_attempts),
  (SELECT coalesce($5::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS at) AS r
ORDER BY t.type
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, max_attempts = excluded.max_attempts,
  max_attempts_recorded_at = excluded.max_attempts_recorded_at, recorded_at = excluded.recorded_at;

-- name: taskRecord.withoutBudget
-- The same on a schema before 0016 (a process opened without migrating): queue and keyed only.
-- params: $1 types, $2 queues, $3 keyed flags, $4 now
INSERT INTO mailroom_task (type, queue, keyed, recorded_at)
SELECT t.type, t.queue, t.keyed, coalesce($4::timestamptz, date_trunc('milliseconds', statement_timestamp()))
FROM unnest($1::text[], $2::text[], $3::boolean[]) AS t(type, queue, keyed)
ORDER BY t.type
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, recorded_at = excluded.recorded_at;

-- name: taskList
-- Every recorded type, by name. Every column: a process opened without migrating reads a
-- schema before 0016 too (no budget: the default).
-- params: (none)
SELECT * FROM mailroom_task ORDER BY type;
