-- Queue-wide state: pauses (mr.pauseQueue). The claim predicate reads mailroom_queue_pause
-- (job.sql's claimable fragment); these statements keep it.

-- name: queuePause
-- Pauses a queue, or updates the reason of a pause already in force (its time is kept;
-- a pause again without a reason keeps the one it had).
-- Returns whether this call paused it.
INSERT INTO mailroom_queue_pause (queue, reason, paused_at) VALUES (@queue, @reason, @now)
ON CONFLICT (queue) DO UPDATE SET reason = coalesce(excluded.reason, mailroom_queue_pause.reason)
RETURNING paused_at = @now AS is_new;

-- name: queueResume
-- Returns the queue when it was paused.
DELETE FROM mailroom_queue_pause WHERE queue = @queue RETURNING queue;

-- name: queuePaused
-- Every paused queue, by name.
SELECT queue, reason, paused_at FROM mailroom_queue_pause ORDER BY queue;
