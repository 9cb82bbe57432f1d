-- Batch statements for SQLite (mr.enqueueBatch, getBatch, and the settle of a batch whose
-- children moved). The executor runs batchSettle, and batchComplete when it finds the
-- batch complete, inside the transaction that wrote the children's outcomes, once per
-- batch per transaction (status-count-deltas.ts). PostgreSQL does the same in a trigger.

-- name: batchInsert
-- The batch record, with its completion job resolved (type, payload, policy); its
-- children are inserted after it in the same transaction, carrying its id.
INSERT INTO mailroom_batch (total, then_type, then_payload, then_queue, then_priority, then_max_attempts,
                            then_limit_key, then_trace_context, then_delay_ms, created_at)
VALUES (@total, @thenType, @thenPayload, @thenQueue, @thenPriority, @thenMaxAttempts,
        @thenLimitKey, @thenTraceContext, @thenDelayMs, @now)
RETURNING *;

-- name: batchSettle
-- Moves a batch's counts by what its children did in this transaction (@done, @dead: +1
-- for each that became done or dead, −1 for each a replay took back). Returns what
-- decides whether the batch is now complete: no completion job yet, done + dead = total.
UPDATE mailroom_batch SET done = done + @done, dead = dead + @dead
WHERE id = @id
RETURNING id, total, done, dead, completion_job_id;

-- name: batchComplete
-- The completion job of a complete batch (its last child ended in this transaction, or
-- it has no children), due at @at plus the batch's delay. Guarded by completion_job_id,
-- which batchComplete.record sets in the same transaction: inserted once per batch.
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          trace_context, limit_key, completes_batch_id, created_at)
SELECT then_queue, then_type, 'pending', then_priority, then_payload, @at + then_delay_ms,
       then_max_attempts, then_trace_context, then_limit_key, id, @at
FROM mailroom_batch WHERE id = @id AND completion_job_id IS NULL
RETURNING id, queue, status;

-- name: batchComplete.record
-- The completion job batchComplete inserted, on its batch.
UPDATE mailroom_batch SET completion_job_id = @jobId WHERE id = @id RETURNING *;

-- name: batchGet
-- One batch, with its completion job's status (none before it exists or once purged).
SELECT b.*, j.status AS completion_status
FROM mailroom_batch b LEFT JOIN mailroom_job j ON j.id = b.completion_job_id
WHERE b.id = @id;

-- name: jobPurge.batches
-- Retention: batch records nothing refers to any more (their completion job and every
-- child purged), a bounded batch per transaction. A batch still open, or with a dead
-- child kept, stays. Reads every completed batch record (no index serves "gone"); batch
-- records are few next to jobs.
DELETE FROM mailroom_batch
WHERE id IN (SELECT b.id FROM mailroom_batch b
             WHERE b.completion_job_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.id = b.completion_job_id)
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.batch_id = b.id)
             LIMIT 1000);
