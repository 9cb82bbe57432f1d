-- A delivery is `pending` only while its deliver job waits or runs. The deliver task
-- records every outcome it sees, but a job can die without it (cancelled, its lease lost
-- on the last attempt, a timeout on the last attempt): from this version the store marks
-- that job's delivery `failed` in the same transaction (sqlite-executor.ts: the dead paths
-- call deliverySettleDeadJob; a trigger would tax every claim and finish here). So an
-- endpoint's backlog is a count of its pending deliveries on mailroom_delivery_pending_idx
-- alone, without reading each one's job (at 200,000 pending deliveries: 5 ms instead of
-- a second). Code of 0012 would leave such deliveries pending and the count too high: no
-- oldest-compatible-code header.

-- Deliveries left pending by jobs that already ended: settled as the listings show them.
UPDATE mailroom_delivery
SET status = CASE (SELECT j.status FROM mailroom_job j WHERE j.id = mailroom_delivery.job_id) WHEN 'dead' THEN 'failed' ELSE 'delivered' END,
    updated_at = coalesce((SELECT j.finished_at FROM mailroom_job j WHERE j.id = mailroom_delivery.job_id), updated_at)
WHERE status = 'pending'
  AND (SELECT j.status FROM mailroom_job j WHERE j.id = mailroom_delivery.job_id) IN ('dead', 'done');
