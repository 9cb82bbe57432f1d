-- The task directory (migration 0015): each task type's queue and whether its per-key
-- limits need a key computed from the payload, as the last worker to start declared
-- them. Read by processes that enqueue a type they did not register.

-- name: taskRecord
-- One type as a starting worker registered it; a newer record replaces an older one.
INSERT INTO mailroom_task (type, queue, keyed, recorded_at) VALUES (@type, @queue, @keyed, @now)
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, recorded_at = excluded.recorded_at;

-- name: taskList
-- Every recorded type, by name.
SELECT type, queue, keyed, recorded_at FROM mailroom_task ORDER BY type;
