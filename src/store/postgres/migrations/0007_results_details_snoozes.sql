-- oldest-compatible-code: 6
-- PostgreSQL dialect of sqlite/migrations/0007: a done job's `result`, an attempt's
-- `details` (on the job row for the success it holds, on the history row otherwise), and
-- the `snoozed` outcome with its counter. Nullable columns and a constant default are
-- catalogue changes (no table rewrite); the widened CHECK is added NOT VALID, so no scan
-- of the history either (every existing row satisfies the narrower one it replaces).
-- Code of 0006 runs on against this: it never reads the new columns.
ALTER TABLE mailroom_job
  ADD COLUMN result text,
  ADD COLUMN details text,
  ADD COLUMN snoozes integer NOT NULL DEFAULT 0;
ALTER TABLE mailroom_attempt ADD COLUMN details text;
ALTER TABLE mailroom_attempt DROP CONSTRAINT mailroom_attempt_outcome_check;
ALTER TABLE mailroom_attempt ADD CONSTRAINT mailroom_attempt_outcome_check
  CHECK (outcome IN ('done', 'failed', 'timeout', 'lost', 'handed_back', 'snoozed')) NOT VALID;
