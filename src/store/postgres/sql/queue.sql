-- Queue-wide state: pauses (mr.pauseQueue). The claim predicate reads mailroom_queue_pause
-- (job.sql's claimable fragment); these statements keep it.

-- name: queuePause
-- Pauses a queue, or updates the reason of a pause already in force (its time is kept;
-- a pause again without a reason keeps the one it had).
-- Returns whether this call paused it (xmax = 0: the row was inserted, not updated).
-- params: $1 queue, $2 reason, $3 now
INSERT INTO mailroom_queue_pause (queue, reason, paused_at)
VALUES ($1, $2, coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())))
ON CONFLICT (queue) DO UPDATE SET reason = coalesce(excluded.reason, mailroom_queue_pause.reason)
RETURNING (xmax = 0) AS is_new;

-- name: queueResume
-- Returns the queue when it was paused, and wakes its idle workers at commit ($2: the
-- schema's channel), as an enqueue does: jobs that waited are claimable again.
-- params: $1 queue, $2 channel
WITH resumed AS (DELETE FROM mailroom_queue_pause WHERE queue = $1 RETURNING queue)
SELECT queue, pg_notify($2::text, queue) FROM resumed;

-- name: queuePaused
-- Every paused queue, by name.
-- params: (none)
SELECT queue, reason, paused_at FROM mailroom_queue_pause ORDER BY queue;
