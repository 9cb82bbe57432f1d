-- Batches (SPEC §3): a batch record, the batch each child belongs to, and the batch a
-- completion job completes. The store's own statements keep the counts and insert the
-- completion job in the transaction of the outcome that makes the last child terminal
-- (status-count-deltas.ts, as they keep the status counters: a row trigger here would
-- tax every claim and finish). Code that knows only 0010 would finish a child without
-- counting it, and its batch would never complete: no oldest-compatible-code header.
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
