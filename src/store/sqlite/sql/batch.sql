-- Batch statements for SQLite (mr.enqueueBatch, getBatch). The counts and the completion
-- job are not written here: the mailroom_job_batch_settle trigger (migration 0011) keeps
-- them in the transaction of every statement that makes a child terminal.

-- name: batchInsert
-- The batch record, with its completion job resolved (type, payload, policy); its
-- children are inserted after it in the same transaction, carrying its id.
INSERT INTO mailroom_batch (total, then_type, then_payload, then_queue, then_priority, then_max_attempts,
                            then_limit_key, then_trace_context, then_delay_ms, created_at)
VALUES (@total, @thenType, @thenPayload, @thenQueue, @thenPriority, @thenMaxAttempts,
        @thenLimitKey, @thenTraceContext, @thenDelayMs, @now)
RETURNING *;

-- name: batchInsert.completeEmpty
-- A batch with no children is complete as it is created: its completion job is inserted
-- in the same transaction, as the trigger would insert it for the last child.
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          trace_context, limit_key, completes_batch_id, created_at)
SELECT then_queue, then_type, 'pending', then_priority, then_payload, @now + then_delay_ms,
       then_max_attempts, then_trace_context, then_limit_key, id, @now
FROM mailroom_batch WHERE id = @id AND total = 0 AND completion_job_id IS NULL
RETURNING *;

-- name: batchInsert.recordCompletion
-- The completion job batchInsert.completeEmpty inserted, on its batch.
UPDATE mailroom_batch SET completion_job_id = @jobId WHERE id = @id RETURNING *;

-- name: batchGet
-- One batch, with its completion job's status (none before it exists or once purged).
SELECT b.*, j.status AS completion_status
FROM mailroom_batch b LEFT JOIN mailroom_job j ON j.id = b.completion_job_id
WHERE b.id = @id;
