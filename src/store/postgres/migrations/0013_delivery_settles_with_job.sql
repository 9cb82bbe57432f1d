-- PostgreSQL dialect of sqlite/migrations/0013: a delivery is `pending` only while its
-- deliver job waits or runs. A job can die without the deliver task recording it
-- (cancelled, its lease lost on the last attempt, a timeout on the last attempt); a row
-- trigger marks its delivery `failed` in the same transaction, on any connection. Its WHEN
-- is the only cost other jobs pay (two column tests per updated row, as 0011's). So an
-- endpoint's backlog is a count of its pending deliveries on mailroom_delivery_pending_idx
-- alone, without reading each one's job. Code of 0012 would run on here, the trigger
-- settling for it, but not on SQLite (whose store settles in its own statements), and a
-- rolling deploy is refused the same way on both: no oldest-compatible-code header.

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
