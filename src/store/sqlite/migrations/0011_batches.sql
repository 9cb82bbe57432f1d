-- oldest-compatible-code: 10
-- Batches (SPEC §3): a batch record, the batch each child belongs to, and the batch a
-- completion job completes. The counts and the completion are kept by a trigger, so
-- every statement that makes a child terminal (a finish, ctx.complete, a cancel, the
-- rescuer, one written later) moves them in its own transaction, and a replay moves them
-- back. The trigger's WHEN is the only cost a job outside a batch pays: one column test
-- per updated row, no statement. Code of 0010 runs on against this: it creates no
-- batches, and the trigger settles any it meets.
CREATE TABLE mailroom_batch (
  id                 INTEGER PRIMARY KEY AUTOINCREMENT,
  total              INTEGER NOT NULL CHECK (total >= 0),
  done               INTEGER NOT NULL DEFAULT 0,
  dead               INTEGER NOT NULL DEFAULT 0,
  -- The completion job, resolved at enqueueBatch (type, payload and policy), inserted
  -- when done + dead first reaches total.
  then_type          TEXT NOT NULL,
  then_payload       TEXT NOT NULL,
  then_queue         TEXT NOT NULL,
  then_priority      INTEGER NOT NULL,
  then_max_attempts  INTEGER NOT NULL,
  then_limit_key     TEXT,
  then_trace_context TEXT,
  then_delay_ms      INTEGER NOT NULL DEFAULT 0,
  -- Set once, in the transaction that inserts the completion job: never enqueued twice.
  completion_job_id  INTEGER,
  created_at         INTEGER NOT NULL
);

ALTER TABLE mailroom_job ADD COLUMN batch_id INTEGER;
ALTER TABLE mailroom_job ADD COLUMN completes_batch_id INTEGER;
-- A batch's children in id order (ctx.batch, `mailroom batch`); partial, so jobs outside
-- a batch cost it nothing.
CREATE INDEX mailroom_job_batch_idx ON mailroom_job (batch_id, id) WHERE batch_id IS NOT NULL;

-- A child became terminal (done, dead) or stopped being so (a replay): move the counts;
-- when done + dead first reaches total, insert the completion job (run at the child's
-- finish time, the store's clock of that write, plus the batch's delay), count it in
-- its queue's pending counter, and record it on the batch. The three statements after
-- the count share one test (no completion yet, all terminal), which only the last one
-- changes. Row triggers here cost what SQLite's counters avoid (0001), but only for
-- children: the WHEN is read per row before anything runs.
CREATE TRIGGER mailroom_job_batch_settle AFTER UPDATE OF status ON mailroom_job
WHEN NEW.batch_id IS NOT NULL AND OLD.status <> NEW.status
 AND (OLD.status IN ('done', 'dead') OR NEW.status IN ('done', 'dead'))
BEGIN
  UPDATE mailroom_batch
  SET done = done + (NEW.status = 'done') - (OLD.status = 'done'),
      dead = dead + (NEW.status = 'dead') - (OLD.status = 'dead')
  WHERE id = NEW.batch_id;

  INSERT INTO mailroom_queue_count (queue, status, n)
  SELECT b.then_queue, 'pending', 1 FROM mailroom_batch b
  WHERE b.id = NEW.batch_id AND b.completion_job_id IS NULL AND b.done + b.dead >= b.total
  ON CONFLICT (queue, status) DO UPDATE SET n = n + excluded.n;

  INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                            trace_context, limit_key, completes_batch_id, created_at)
  SELECT b.then_queue, b.then_type, 'pending', b.then_priority, b.then_payload,
         coalesce(NEW.finished_at, NEW.run_at) + b.then_delay_ms, b.then_max_attempts,
         b.then_trace_context, b.then_limit_key, b.id,
         coalesce(NEW.finished_at, NEW.run_at)
  FROM mailroom_batch b
  WHERE b.id = NEW.batch_id AND b.completion_job_id IS NULL AND b.done + b.dead >= b.total;

  -- last_insert_rowid() is the completion job inserted just above: inside a trigger it
  -- reports the trigger's own inserts, and this runs only when that one inserted.
  UPDATE mailroom_batch SET completion_job_id = last_insert_rowid()
  WHERE id = NEW.batch_id AND completion_job_id IS NULL AND done + dead >= total;
END;
