-- The update trigger of 0001 joined its transition tables (old_rows to new_rows on id).
-- Transition tables have no statistics and the trigger's cached plan nested those joins,
-- so a statement touching n jobs cost O(n²): measured 0.3 s for 1,400 completions in one
-- batch and 4.5 s for the next, which made batches larger and slower still. Counters need
-- no join: every old row counts -1 in its (queue, status) and every new row +1, and an
-- update that keeps a job's status (a heartbeat) nets to zero and is skipped.
CREATE OR REPLACE FUNCTION mailroom_job_count_update() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO mailroom_queue_count AS c (queue, status, shard, n)
  SELECT d.queue, d.status, pg_backend_pid() % 16, sum(d.delta)
  FROM (
    SELECT o.queue, o.status, -1 AS delta FROM old_rows o
    UNION ALL
    SELECT w.queue, w.status, 1 AS delta FROM new_rows w
  ) d
  GROUP BY d.queue, d.status
  HAVING sum(d.delta) <> 0
  ORDER BY d.queue, d.status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  -- A queue that gained due pending jobs (replay, hand-back, rescue, retry now) wakes
  -- workers. No statement both adds and removes pending jobs of one queue, so "more
  -- pending rows after than before" is "some job became pending". Queues are few; each
  -- count is a scan of a transition table.
  PERFORM pg_notify(mailroom_channel(), q.queue)
  FROM (SELECT DISTINCT w.queue FROM new_rows w WHERE w.status = 'pending' AND w.run_at <= now()) q
  WHERE (SELECT count(*) FROM new_rows w WHERE w.queue = q.queue AND w.status = 'pending')
      > (SELECT count(*) FROM old_rows o WHERE o.queue = q.queue AND o.status = 'pending');
  RETURN NULL;
END $$;
