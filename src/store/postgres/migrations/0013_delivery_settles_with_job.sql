-- PostgreSQL dialect of sqlite/migrations/0013: a delivery is `pending` only while its
-- deliver job waits or runs. A job can die without the deliver task recording it
-- (cancelled, its lease lost on the last attempt, a timeout on the last attempt); a row
-- trigger marks its delivery `failed` in the same transaction, on any connection. Its WHEN
-- is the only cost other jobs pay (two column tests per updated row, as 0011's).
--
-- So `pending` deliveries are exactly an endpoint's backlog, and it is kept as a counter
-- (mailroom_endpoint_backlog) moved by statement triggers on mailroom_delivery, sharded by
-- backend as mailroom_queue_count is, so concurrent publishers to one endpoint do not queue
-- on one row. Counting the pending index instead visits every pending row's heap page until
-- vacuum marks them all-visible: measured 6-10 ms an endpoint with 4,000 pending, 160 ms a
-- page of 50 endpoints, right after a burst. Code of 0012 would run on here, the triggers
-- doing the work for it, but not on SQLite (whose store settles deaths in its own
-- statements), and a rolling deploy is refused the same way on both: no
-- oldest-compatible-code header.

CREATE FUNCTION mailroom_job_delivery_settle() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  -- The payload is the store's own JSON ({ deliveryId, messageId, endpointId }); job_id
  -- guards a delivery that a recover gave a newer job.
  UPDATE mailroom_delivery
  SET status = 'failed', updated_at = coalesce(NEW.finished_at, date_trunc('milliseconds', statement_timestamp()))
  WHERE id = (NEW.payload::json ->> 'deliveryId')::bigint AND job_id = NEW.id AND status = 'pending';
  RETURN NULL;
END;
$$;

CREATE TRIGGER mailroom_job_delivery_settle AFTER UPDATE OF status ON mailroom_job
  FOR EACH ROW
  WHEN (NEW.status = 'dead' AND OLD.status <> 'dead' AND NEW.type = 'deliver')
  EXECUTE FUNCTION mailroom_job_delivery_settle();

-- Deliveries left pending by jobs that already ended: settled as the listings show them.
UPDATE mailroom_delivery d
SET status = CASE j.status WHEN 'dead' THEN 'failed' ELSE 'delivered' END,
    updated_at = coalesce(j.finished_at, d.updated_at)
FROM mailroom_job j
WHERE j.id = d.job_id AND d.status = 'pending' AND j.status IN ('dead', 'done');

-- Pending deliveries per endpoint: the sum of an endpoint's shards is its backlog.
CREATE TABLE mailroom_endpoint_backlog (
  endpoint_id bigint NOT NULL,
  shard       integer NOT NULL,
  n           bigint NOT NULL,
  PRIMARY KEY (endpoint_id, shard)
);

-- Every statement that inserts, updates or deletes deliveries moves the counters once:
-- -1 for each old pending row, +1 for each new one, per endpoint (in endpoint order, so
-- two transactions take the rows they share in the same order).
CREATE FUNCTION mailroom_delivery_backlog_move() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO mailroom_endpoint_backlog AS b (endpoint_id, shard, n)
    SELECT w.endpoint_id, pg_backend_pid() % 16, count(*) FROM new_rows w WHERE w.status = 'pending'
    GROUP BY w.endpoint_id ORDER BY w.endpoint_id
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET n = b.n + excluded.n;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO mailroom_endpoint_backlog AS b (endpoint_id, shard, n)
    SELECT d.endpoint_id, pg_backend_pid() % 16, sum(d.delta)
    FROM (
      SELECT o.endpoint_id, -1 AS delta FROM old_rows o WHERE o.status = 'pending'
      UNION ALL
      SELECT w.endpoint_id, 1 AS delta FROM new_rows w WHERE w.status = 'pending'
    ) d
    GROUP BY d.endpoint_id HAVING sum(d.delta) <> 0 ORDER BY d.endpoint_id
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET n = b.n + excluded.n;
  ELSE
    INSERT INTO mailroom_endpoint_backlog AS b (endpoint_id, shard, n)
    SELECT o.endpoint_id, pg_backend_pid() % 16, -count(*) FROM old_rows o WHERE o.status = 'pending'
    GROUP BY o.endpoint_id ORDER BY o.endpoint_id
    ON CONFLICT (endpoint_id, shard) DO UPDATE SET n = b.n + excluded.n;
  END IF;
  RETURN NULL;
END;
$$;

CREATE TRIGGER mailroom_delivery_backlog_insert AFTER INSERT ON mailroom_delivery
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mailroom_delivery_backlog_move();
CREATE TRIGGER mailroom_delivery_backlog_update AFTER UPDATE ON mailroom_delivery
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION mailroom_delivery_backlog_move();
CREATE TRIGGER mailroom_delivery_backlog_delete AFTER DELETE ON mailroom_delivery
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION mailroom_delivery_backlog_move();

INSERT INTO mailroom_endpoint_backlog (endpoint_id, shard, n)
SELECT endpoint_id, 0, count(*) FROM mailroom_delivery WHERE status = 'pending' GROUP BY endpoint_id;
