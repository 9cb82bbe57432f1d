-- oldest-compatible-code: 6
-- One outcome writer (jobFinishMany) stores what an attempt leaves behind besides its
-- status: a done job's `result` (the handler's return value as JSON), an attempt's
-- `details` (ctx.setDetails, JSON) — on the job row for the success it holds, on the
-- history row otherwise — and a `snoozed` outcome that does not charge the attempt but is
-- counted in `snoozes`, so maxSnoozes bounds a job that is never ready.
-- Code of 0006 runs on against this: it never reads the new columns and writes none of
-- them (their defaults are right for what it writes).
ALTER TABLE mailroom_job ADD COLUMN result TEXT;
ALTER TABLE mailroom_job ADD COLUMN details TEXT;
ALTER TABLE mailroom_job ADD COLUMN snoozes INTEGER NOT NULL DEFAULT 0;

-- SQLite cannot alter a CHECK constraint: the history table is rebuilt to admit
-- 'snoozed', with the same ids, rows and index, inside this migration's transaction.
CREATE TABLE mailroom_attempt_next (
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  started_at  INTEGER,
  finished_at INTEGER,
  outcome     TEXT NOT NULL CHECK (outcome IN ('done', 'failed', 'timeout', 'lost', 'handed_back', 'snoozed')),
  error       TEXT,
  worker_id   TEXT,
  stack       TEXT,
  details     TEXT
);
INSERT INTO mailroom_attempt_next (id, job_id, attempt, started_at, finished_at, outcome, error, worker_id, stack)
SELECT id, job_id, attempt, started_at, finished_at, outcome, error, worker_id, stack FROM mailroom_attempt;
DROP TABLE mailroom_attempt;
ALTER TABLE mailroom_attempt_next RENAME TO mailroom_attempt;
CREATE INDEX mailroom_attempt_job_idx ON mailroom_attempt (job_id, id);
