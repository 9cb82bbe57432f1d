-- Outgoing messages and their deliveries (one per message × endpoint). Listings read the
-- view mailroom_delivery_state (migration 0012), which folds a delivery's status with its
-- job's end.

-- name: messageInsert
-- A new message; nothing when (tenant, key) is already published.
-- params: $1 tenant, $2 type, $3 payload, $4 key, $5 now
INSERT INTO mailroom_message (tenant, type, payload, key, created_at)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (tenant, key) WHERE key IS NOT NULL DO NOTHING
RETURNING *;

-- name: messagePublish.keyless
-- Keyless publishes (one, or a group the store made) in one autocommitted statement: the
-- messages, their deliveries and the deliveries' jobs. The caller read the tenants'
-- endpoints and chose the deliveries (event-type filters); a transaction of separate
-- statements was nine round trips a publish, most of a single publish's cost. A delivery
-- and its job name each other, so the jobs' ids are drawn first, in delivery order (the
-- sorted subquery), and the jobs are inserted with them. The job's payload is
-- deliverPayloadJson's text (store/outgoing-rows.ts), and its other columns what
-- jobInsertMany writes for a job with no key, group, event or batch; the statement
-- triggers (counters, backlog, NOTIFY) fire as for those statements. Messages come back
-- in input order; the first carries every delivery's id and job id, in delivery order.
-- params: $1 tenants, $2 types, $3 payloads (per message), $4 now (null: the server's),
--   $5 message numbers (1-based), $6 endpoint ids, $7 statuses (per delivery),
--   $8 queues, $9 job types, $10 priorities, $11 run_ats (null: now + delay), $12 delays_ms,
--   $13 max_attempts, $14 trace_contexts (null: none) (per message)
WITH clock AS (SELECT coalesce($4::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
inserted AS (
  INSERT INTO mailroom_message (tenant, type, payload, key, created_at)
  SELECT m.tenant, m.type, m.payload, NULL, clock.now
  FROM clock, unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS m(tenant, type, payload, n)
  ORDER BY m.n
  RETURNING *
),
messages AS MATERIALIZED (SELECT i.*, row_number() OVER (ORDER BY i.id) AS n FROM inserted i),
planned AS MATERIALIZED (
  SELECT o.*, CASE WHEN o.status = 'pending' THEN nextval(pg_get_serial_sequence('mailroom_job', 'id')) END AS job_id
  FROM (
    SELECT p.n, p.message_n, m.id AS message_id, p.endpoint_id, p.status
    FROM unnest($5::bigint[], $6::bigint[], $7::text[]) WITH ORDINALITY AS p(message_n, endpoint_id, status, n)
    JOIN messages m ON m.n = p.message_n
    ORDER BY p.n
  ) o
),
deliveries AS (
  INSERT INTO mailroom_delivery (message_id, endpoint_id, status, job_id, created_at, updated_at)
  SELECT p.message_id, p.endpoint_id, p.status, p.job_id, clock.now, clock.now
  FROM planned p CROSS JOIN clock
  ORDER BY p.n
  RETURNING id, message_id, endpoint_id, job_id
),
jobs AS (
  INSERT INTO mailroom_job (id, queue, type, status, priority, payload, run_at, max_attempts,
                            trace_context, limit_key, created_at)
  OVERRIDING SYSTEM VALUE
  SELECT d.job_id, o.queue, o.type, 'pending', o.priority,
         format('{"deliveryId":"%s","messageId":"%s","endpointId":"%s"}', d.id, d.message_id, d.endpoint_id),
         coalesce(o.run_at, clock.now + o.delay_ms * interval '1 millisecond'),
         o.max_attempts, o.trace_context, d.endpoint_id::text, clock.now
  FROM deliveries d
  JOIN planned p ON p.job_id = d.job_id
  JOIN unnest($8::text[], $9::text[], $10::integer[], $11::timestamptz[], $12::float8[], $13::integer[], $14::text[])
       WITH ORDINALITY AS o(queue, type, priority, run_at, delay_ms, max_attempts, trace_context, message_n)
    ON o.message_n = p.message_n
  CROSS JOIN clock
  ORDER BY d.job_id
  RETURNING id
)
SELECT m.*,
       CASE WHEN m.n = 1 THEN (SELECT array_agg(d.id ORDER BY d.id) FROM deliveries d) END AS delivery_ids,
       CASE WHEN m.n = 1 THEN (SELECT array_agg(d.job_id ORDER BY d.id) FROM deliveries d) END AS delivery_job_ids,
       CASE WHEN m.n = 1 THEN (SELECT count(*) FROM jobs) END AS jobs_inserted
FROM messages m
ORDER BY m.n;

-- name: messageByKey
-- params: $1 tenant, $2 key
SELECT * FROM mailroom_message WHERE tenant = $1 AND key = $2;

-- name: messageGet
-- params: $1 id
SELECT * FROM mailroom_message WHERE id = $1;

-- name: messageList
-- A page of messages in id order; $3 narrows by type (NULL: every type).
-- params: $1 after, $2 limit, $3 type
SELECT * FROM mailroom_message WHERE id > $1 AND ($3::text IS NULL OR type = $3) ORDER BY id LIMIT $2;

-- name: messageList.tenant
-- A page of one tenant's messages (mailroom_message_tenant_idx).
-- params: $1 after, $2 limit, $3 type, $4 tenant
SELECT * FROM mailroom_message
WHERE tenant = $4 AND id > $1 AND ($3::text IS NULL OR type = $3) ORDER BY id LIMIT $2;

-- name: deliveryInsert
-- The deliveries of one message or several, one per (message, endpoint), in one statement
-- (a round trip each was most of a publish's), ids in input order.
-- params: $1 message ids, $2 endpoint ids, $3 statuses, $4 now
INSERT INTO mailroom_delivery (message_id, endpoint_id, status, created_at, updated_at)
SELECT d.message_id, d.endpoint_id, d.status, $4, $4
FROM unnest($1::bigint[], $2::bigint[], $3::text[]) WITH ORDINALITY AS d(message_id, endpoint_id, status, n)
ORDER BY d.n
RETURNING id, endpoint_id, status;

-- name: deliverySetJob
-- Deliveries' (new) jobs; their status back to pending (publish, recover). One statement
-- for a publish's deliveries.
-- params: $1 ids, $2 job ids, $3 now
UPDATE mailroom_delivery d SET job_id = u.job_id, status = 'pending', updated_at = $3
FROM unnest($1::bigint[], $2::bigint[]) AS u(id, job_id)
WHERE d.id = u.id;

-- name: deliveryResumeReplayed
-- Replayed deliver jobs (a re-send from the portal, a replay from the dashboard or the
-- CLI) wait again, so their deliveries are pending again, counted in the backlog: the
-- mirror of the mailroom_job_delivery_settle trigger (migration 0013). job_id guards a
-- delivery that a recover gave a newer job; other job types match no row.
-- params: $1 job_ids, $2 now
WITH clock AS (SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now)
UPDATE mailroom_delivery d SET status = 'pending', updated_at = clock.now
FROM mailroom_job j, clock
WHERE j.id = ANY($1::bigint[]) AND j.type = 'deliver'
  AND d.id = (j.payload::json ->> 'deliveryId')::bigint AND d.job_id = j.id AND d.status <> 'pending';

-- name: deliveryRecord
-- A batch's deliveries' statuses after their attempts, and the health rows of the
-- endpoints they count for, locked, for the breaker and counters that follow
-- (endpointHealth.write), at the store's now: one round trip for the batch. The health
-- rows are locked in endpoint id order (the sort runs below the row locks), so two
-- batches that share endpoints never wait on each other in a circle. No row for an
-- endpoint that is gone; the statuses are written either way. The WHERE reads
-- `recorded`, so the deliveries' rows are written (and locked) before the health rows are
-- locked, in the order the separate statements took them: an unreferenced CTE runs after
-- the main query, which held the health rows while it waited on the deliveries'.
-- params: $1 delivery ids, $2 statuses, $3 now (null: the server's), $4 endpoint ids
WITH clock AS (SELECT coalesce($3::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS now),
recorded AS (
  UPDATE mailroom_delivery d SET status = r.status, updated_at = clock.now
  FROM clock, unnest($1::bigint[], $2::text[]) AS r(id, status)
  WHERE d.id = r.id
  RETURNING 1
)
SELECT h.*, clock.now AS record_now
FROM clock, mailroom_endpoint_health h
WHERE h.endpoint_id = ANY($4::bigint[]) AND (SELECT count(*) FROM recorded) >= 0
ORDER BY h.endpoint_id
FOR UPDATE OF h;

-- name: deliveryGet
-- One delivery as listings show it (mailroom_delivery_state).
-- params: $1 id
SELECT * FROM mailroom_delivery_state WHERE id = $1;

-- name: deliveryList.endpoint
-- A page of one endpoint's deliveries (mailroom_delivery_endpoint_idx); $3 narrows by status.
-- params: $1 after, $2 limit, $3 status, $4 endpoint id
SELECT * FROM mailroom_delivery_state
WHERE endpoint_id = $4 AND id > $1 AND ($3::text IS NULL OR status = $3)
ORDER BY id LIMIT $2;

-- name: deliveryList.message
-- A page of one message's deliveries (mailroom_delivery_message_idx); $3 narrows by status.
-- params: $1 after, $2 limit, $3 status, $4 message id
SELECT * FROM mailroom_delivery_state
WHERE message_id = $4 AND id > $1 AND ($3::text IS NULL OR status = $3)
ORDER BY id LIMIT $2;

-- name: deliveryRecoverable
-- An endpoint's failed and skipped deliveries since a time (a pending one whose job died
-- counts as failed), with the job each had, if it is still there (retention may have
-- deleted it), and whether a running job has recorded its attempt already (it is only
-- finishing: a failure's record commits just before the job's outcome; a success's
-- commits with it).
-- params: $1 endpoint id, $2 since
SELECT d.id, d.message_id, j.id AS job_id, j.status AS job_status,
       (j.status = 'running' AND d.updated_at >= j.started_at) AS attempt_recorded
FROM mailroom_delivery d
LEFT JOIN mailroom_job j ON j.id = d.job_id
WHERE d.endpoint_id = $1 AND d.created_at >= $2
  AND (d.status IN ('failed', 'skipped') OR (d.status = 'pending' AND j.status = 'dead'))
ORDER BY d.id
FOR UPDATE OF d; -- a concurrent recovery waits, then finds these pending
