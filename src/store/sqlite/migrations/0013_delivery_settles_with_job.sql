-- A delivery is `pending` only while its deliver job waits or runs. The deliver task
-- records every outcome it sees, but a job can die without it (cancelled, its lease lost
-- on the last attempt, a timeout on the last attempt): from this version the store marks
-- that job's delivery `failed` in the same transaction (sqlite-executor.ts: the dead paths
-- call deliverySettleDeadJob; a trigger would tax every claim and finish here).
--
-- So `pending` deliveries are exactly an endpoint's backlog, kept as a counter
-- (mailroom_endpoint_backlog) by row triggers on mailroom_delivery: one upsert per
-- delivery that enters or leaves `pending`, on a path that writes that delivery anyway.
-- An endpoint's health reads one row instead of joining every pending delivery to its job
-- (at 200,000 pending deliveries: a second for a page of 50 endpoints). Code of 0012 would
-- leave such deliveries pending and the count too high: no oldest-compatible-code header.

-- Deliveries left pending by jobs that already ended: settled as the listings show them.
UPDATE mailroom_delivery
SET status = CASE j.status WHEN 'dead' THEN 'failed' ELSE 'delivered' END,
    updated_at = coalesce(j.finished_at, mailroom_delivery.updated_at)
FROM mailroom_job j
WHERE j.id = mailroom_delivery.job_id AND mailroom_delivery.status = 'pending' AND j.status IN ('dead', 'done');

-- Pending deliveries per endpoint (one writer at a time here: no shards).
CREATE TABLE mailroom_endpoint_backlog (
  endpoint_id INTEGER PRIMARY KEY,
  n           INTEGER NOT NULL
);

CREATE TRIGGER mailroom_delivery_backlog_insert AFTER INSERT ON mailroom_delivery
WHEN NEW.status = 'pending'
BEGIN
  INSERT INTO mailroom_endpoint_backlog (endpoint_id, n) VALUES (NEW.endpoint_id, 1)
  ON CONFLICT (endpoint_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER mailroom_delivery_backlog_update AFTER UPDATE OF status ON mailroom_delivery
WHEN (OLD.status = 'pending') <> (NEW.status = 'pending')
BEGIN
  INSERT INTO mailroom_endpoint_backlog (endpoint_id, n) VALUES (NEW.endpoint_id, CASE WHEN NEW.status = 'pending' THEN 1 ELSE -1 END)
  ON CONFLICT (endpoint_id) DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER mailroom_delivery_backlog_delete AFTER DELETE ON mailroom_delivery
WHEN OLD.status = 'pending'
BEGIN
  UPDATE mailroom_endpoint_backlog SET n = n - 1 WHERE endpoint_id = OLD.endpoint_id;
END;

INSERT INTO mailroom_endpoint_backlog (endpoint_id, n)
SELECT endpoint_id, count(*) FROM mailroom_delivery WHERE status = 'pending' GROUP BY endpoint_id;
