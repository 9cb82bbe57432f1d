-- Batch statements for PostgreSQL (mr.enqueueBatch, getBatch): the dialect twin of
-- sqlite/sql/batch.sql. The counts and the completion job are not written here: the
-- mailroom_job_batch_settle trigger (migration 0011) keeps them in the transaction of
-- every statement that makes a child terminal.

-- name: batchInsert
-- The batch record, with its completion job resolved (type, payload, policy); its
-- children are inserted after it in the same transaction, carrying its id.
-- params: $1 total, $2 then_type, $3 then_payload, $4 then_queue, $5 then_priority,
--         $6 then_max_attempts, $7 then_limit_key, $8 then_trace_context, $9 then_delay_ms, $10 now
INSERT INTO mailroom_batch (total, then_type, then_payload, then_queue, then_priority, then_max_attempts,
                            then_limit_key, then_trace_context, then_delay_ms, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, coalesce($10::timestamptz, date_trunc('milliseconds', statement_timestamp())))
RETURNING *;

-- name: batchComplete
-- The completion job of a batch with no children, complete as it is created, inserted in
-- the same transaction (the trigger inserts it for the last child of any other batch).
-- Guarded by completion_job_id, which batchComplete.record sets in the same transaction.
-- params: $1 batch id, $2 now
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                          trace_context, limit_key, completes_batch_id, created_at)
SELECT b.then_queue, b.then_type, 'pending', b.then_priority, b.then_payload,
       clock.now + b.then_delay_ms * interval '1 millisecond', b.then_max_attempts,
       b.then_trace_context, b.then_limit_key, b.id, clock.now
FROM mailroom_batch b, clock
WHERE b.id = $1 AND b.total = 0 AND b.completion_job_id IS NULL
RETURNING *;

-- name: batchComplete.record
-- The completion job batchComplete inserted, on its batch.
-- params: $1 batch id, $2 job id
UPDATE mailroom_batch SET completion_job_id = $2 WHERE id = $1 RETURNING *;

-- name: batchGet
-- One batch, with its completion job's status (none before it exists or once purged).
-- params: $1 id
SELECT b.*, j.status AS completion_status
FROM mailroom_batch b LEFT JOIN mailroom_job j ON j.id = b.completion_job_id
WHERE b.id = $1;

-- name: jobPurge.batches
-- Retention: batch records nothing refers to any more (their completion job and every
-- child purged), a bounded batch per statement. A batch still open, or with a dead child
-- kept, stays. Reads every completed batch record (no index serves "gone"); batch
-- records are few next to jobs.
-- params: none
DELETE FROM mailroom_batch
WHERE id IN (SELECT b.id FROM mailroom_batch b
             WHERE b.completion_job_id IS NOT NULL
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.id = b.completion_job_id)
               AND NOT EXISTS (SELECT 1 FROM mailroom_job j WHERE j.batch_id = b.id)
             LIMIT 1000)
RETURNING id;
