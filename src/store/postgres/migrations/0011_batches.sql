-- PostgreSQL dialect of sqlite/migrations/0011: batches. The counts and the completion
-- job are kept by a row trigger whose WHEN is the only cost a job outside a batch pays
-- (one column test per updated row: no function call, no event queued; no measurable
-- difference on 100k-row updates), so every statement that makes a child terminal, on
-- any connection (the store's, a user's via fromClient), settles its batch in its own
-- transaction. Concurrent finishes of one batch's children queue on the batch row's lock;
-- the one that brings done + dead to total inserts the completion job, once. (SQLite
-- keeps them in the store's statements instead: a trigger costs there.) Code of 0010
-- would run on here, the trigger counting for it, but not on SQLite, and a rolling
-- deploy is refused the same way on both: no oldest-compatible-code header.
CREATE TABLE mailroom_batch (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  total              integer NOT NULL CHECK (total >= 0),
  done               integer NOT NULL DEFAULT 0,
  dead               integer NOT NULL DEFAULT 0,
  then_type          text NOT NULL,
  then_payload       text NOT NULL,
  then_queue         text NOT NULL,
  then_priority      integer NOT NULL,
  then_max_attempts  integer NOT NULL,
  then_limit_key     text,
  then_trace_context text,
  then_delay_ms      double precision NOT NULL DEFAULT 0,
  completion_job_id  bigint,
  created_at         timestamptz NOT NULL
);

-- Nullable columns without defaults: catalogue changes, no table rewrite.
ALTER TABLE mailroom_job ADD COLUMN batch_id bigint, ADD COLUMN completes_batch_id bigint;
CREATE INDEX mailroom_job_batch_idx ON mailroom_job (batch_id, id) WHERE batch_id IS NOT NULL;

CREATE FUNCTION mailroom_job_batch_settle() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
DECLARE
  b mailroom_batch%ROWTYPE;
  at timestamptz := coalesce(NEW.finished_at, NEW.run_at);
  completion bigint;
BEGIN
  -- The row lock taken here orders concurrent settles of one batch: a second one waits,
  -- then counts on top of the first's committed counts (READ COMMITTED re-reads the row).
  UPDATE mailroom_batch
  SET done = done + (NEW.status = 'done')::int - (OLD.status = 'done')::int,
      dead = dead + (NEW.status = 'dead')::int - (OLD.status = 'dead')::int
  WHERE id = NEW.batch_id
  RETURNING * INTO b;
  IF b.id IS NULL OR b.completion_job_id IS NOT NULL OR b.done + b.dead < b.total THEN
    RETURN NULL;
  END IF;
  INSERT INTO mailroom_job (queue, type, status, priority, payload, run_at, max_attempts,
                            trace_context, limit_key, completes_batch_id, created_at)
  VALUES (b.then_queue, b.then_type, 'pending', b.then_priority, b.then_payload,
          at + b.then_delay_ms * interval '1 millisecond', b.then_max_attempts,
          b.then_trace_context, b.then_limit_key, b.id, at)
  RETURNING id INTO completion;
  UPDATE mailroom_batch SET completion_job_id = completion WHERE id = b.id;
  RETURN NULL;
END $$;

CREATE TRIGGER mailroom_job_batch_settle AFTER UPDATE OF status ON mailroom_job
  FOR EACH ROW
  WHEN (NEW.batch_id IS NOT NULL AND OLD.status <> NEW.status
        AND (OLD.status IN ('done', 'dead') OR NEW.status IN ('done', 'dead')))
  EXECUTE FUNCTION mailroom_job_batch_settle();
