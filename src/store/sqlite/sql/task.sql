-- The task directory (migrations 0015, 0016): each task type's queue, whether its per-key
-- limits need a key computed from the payload, and its maxAttempts, as the last worker to
-- start declared them. Read by processes that enqueue a type they did not register.

-- name: taskRecord
-- One type as a starting worker registered it; a newer record replaces an older one.
INSERT INTO mailroom_task (type, queue, keyed, max_attempts, recorded_at) VALUES (@type, @queue, @keyed, @maxAttempts, @now)
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, max_attempts = excluded.max_attempts, recorded_at = excluded.recorded_at;

-- name: taskList
-- Every recorded type, by name. Every column: a process opened without migrating reads a
-- schema before 0016 too (no max_attempts: the default).
SELECT * FROM mailroom_task ORDER BY type;
