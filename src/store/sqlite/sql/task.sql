-- The task directory (migrations 0015, 0016): each task type's queue, whether its per-key
-- limits need a key computed from the payload, and its maxAttempts, as the last worker to
-- start declared them. Read by processes that enqueue a type they did not register.

-- name: taskRecord
-- One type as a starting worker registered it; a newer record replaces an older one. The
-- budget is stamped with the record's time (see 0016: a record by older code leaves it
-- behind, and then it no longer counts).
INSERT INTO mailroom_task (type, queue, keyed, max_attempts, max_attempts_recorded_at, recorded_at)
VALUES (@type, @queue, @keyed, @maxAttempts, @now, @now)
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, max_attempts = excluded.max_attempts,
  max_attempts_recorded_at = excluded.max_attempts_recorded_at, recorded_at = excluded.recorded_at;

-- name: taskRecord.withoutBudget
-- The same on a schema before 0016 (a process opened without migrating): queue and keyed only.
INSERT INTO mailroom_task (type, queue, keyed, recorded_at) VALUES (@type, @queue, @keyed, @now)
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, recorded_at = excluded.recorded_at;

-- name: taskList
-- Every recorded type, by name. Every column: a process opened without migrating reads a
-- schema before 0016 too (no budget: the default).
SELECT * FROM mailroom_task ORDER BY type;
