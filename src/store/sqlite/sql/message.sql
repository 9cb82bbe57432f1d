-- Outgoing messages and their deliveries (one per message × endpoint). Listings read the
-- view mailroom_delivery_state (migration 0012), which folds a delivery's status with its
-- job's end.

-- name: messageInsert
-- A new message; nothing when (tenant, key) is already published.
INSERT INTO mailroom_message (tenant, type, payload, key, created_at)
VALUES (@tenant, @type, @payload, @key, @now)
ON CONFLICT (tenant, key) WHERE key IS NOT NULL DO NOTHING
RETURNING *;

-- name: messageByKey
SELECT * FROM mailroom_message WHERE tenant = @tenant AND key = @key;

-- name: messageGet
SELECT * FROM mailroom_message WHERE id = @id;

-- name: messageList
-- A page of messages in id order; @type narrows (NULL: every type).
SELECT * FROM mailroom_message WHERE id > @after AND (@type IS NULL OR type = @type) ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: messageList.tenant
-- A page of one tenant's messages (mailroom_message_tenant_idx).
SELECT * FROM mailroom_message
WHERE tenant = @tenant AND id > @after AND (@type IS NULL OR type = @type) ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: deliveryInsert
INSERT INTO mailroom_delivery (message_id, endpoint_id, status, created_at, updated_at)
VALUES (@messageId, @endpointId, @status, @now, @now)
RETURNING id;

-- name: deliverySetJob
-- A delivery's (new) job; its status back to pending (publish, recover).
UPDATE mailroom_delivery SET job_id = @jobId, status = 'pending', updated_at = @now WHERE id = @id;

-- name: deliverySettleDeadJob
-- A job that died without the deliver task recording it (cancelled, lease lost or timed
-- out on its last attempt): its delivery is failed, so `pending` always means "its job
-- waits or runs" and the backlog counters (migration 0013) count only those. Run for
-- every job that dies (two primary-key reads); a job of another type matches no row.
UPDATE mailroom_delivery SET status = 'failed', updated_at = @now
WHERE status = 'pending' AND job_id = @jobId
  AND id = (SELECT CAST(json_extract(j.payload, '$.deliveryId') AS INTEGER) FROM mailroom_job j WHERE j.id = @jobId AND j.type = 'deliver');

-- name: deliveryResumeReplayed
-- A replayed deliver job (a re-send from the portal, a replay from the dashboard or the
-- CLI) waits again, so its delivery is pending again, counted in the backlog: the mirror
-- of deliverySettleDeadJob. Run for every replayed job; other types match no row.
UPDATE mailroom_delivery SET status = 'pending', updated_at = @now
WHERE status <> 'pending' AND job_id = @jobId
  AND id = (SELECT CAST(json_extract(j.payload, '$.deliveryId') AS INTEGER) FROM mailroom_job j WHERE j.id = @jobId AND j.type = 'deliver');

-- name: deliveryRecord
-- The delivery's status after an attempt.
UPDATE mailroom_delivery SET status = @status, updated_at = @now WHERE id = @id;

-- name: deliveryRecord.delivered
-- A success written with its job's done (JobFinish `delivered`): the delivery becomes
-- delivered unless it is already, and its endpoint comes back for the health fold. The
-- same success written again (a finish retried) changes and counts nothing.
UPDATE mailroom_delivery SET status = 'delivered', updated_at = @now
WHERE id = @id AND status <> 'delivered'
RETURNING endpoint_id;

-- name: deliveryGet
-- One delivery as listings show it (mailroom_delivery_state).
SELECT * FROM mailroom_delivery_state WHERE id = @id;

-- name: deliveryList.endpoint
-- A page of one endpoint's deliveries (mailroom_delivery_endpoint_idx); @status narrows.
SELECT * FROM mailroom_delivery_state
WHERE endpoint_id = @endpointId AND id > @after AND (@status IS NULL OR status = @status)
ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: deliveryList.message
-- A page of one message's deliveries (mailroom_delivery_message_idx); @status narrows.
-- Every publish reads its deliveries here: parameters wrapped as in endpointsOfTenant
-- (after an ANALYZE, 67 µs a run bare, 25 wrapped).
SELECT * FROM mailroom_delivery_state
WHERE message_id = +@messageId AND id > +@after AND (@status IS NULL OR status = @status)
ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: deliveryRecoverable
-- An endpoint's failed and skipped deliveries since a time (a pending one whose job died
-- counts as failed), with the job each had, if it is still there (retention may have
-- deleted it), and whether a running job has recorded its attempt already (it is only
-- finishing: a failure's record commits just before the job's outcome; a success's
-- commits with it).
SELECT d.id, d.message_id, j.id AS job_id, j.status AS job_status,
       (j.status = 'running' AND d.updated_at >= j.started_at) AS attempt_recorded
FROM mailroom_delivery d
LEFT JOIN mailroom_job j ON j.id = d.job_id
WHERE d.endpoint_id = @endpointId AND d.created_at >= @since
  AND (d.status IN ('failed', 'skipped') OR (d.status = 'pending' AND j.status = 'dead'))
ORDER BY d.id;
