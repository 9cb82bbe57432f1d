-- The task directory (migration 0015): each task type's queue and whether its per-key
-- limits need a key computed from the payload, as the last worker to start declared
-- them. Read by processes that enqueue a type they did not register.

-- name: taskRecord
-- Every type a starting worker registered, in one statement; a newer record replaces an
-- older one. In type order, so two workers starting at once lock their common rows in the
-- same order and cannot deadlock.
-- params: $1 types, $2 queues, $3 keyed flags, $4 now
INSERT INTO mailroom_task (type, queue, keyed, recorded_at)
SELECT t.type, t.queue, t.keyed, coalesce($4::timestamptz, date_trunc('milliseconds', statement_timestamp()))
FROM unnest($1::text[], $2::text[], $3::boolean[]) AS t(type, queue, keyed)
ORDER BY t.type
ON CONFLICT (type) DO UPDATE SET queue = excluded.queue, keyed = excluded.keyed, recorded_at = excluded.recorded_at;

-- name: taskList
-- Every recorded type, by name.
-- params: (none)
SELECT type, queue, keyed, recorded_at FROM mailroom_task ORDER BY type;
