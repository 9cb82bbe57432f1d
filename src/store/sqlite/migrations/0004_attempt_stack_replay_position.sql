-- History an operator can read without the logs: a failed attempt keeps a bounded stack
-- beside its message (the worker cuts it to a few KiB), and a replay records how many
-- attempt rows the job had when it was replayed, so `mailroom job` can show where each
-- replay falls in the history (attempt numbers start again after one). Both columns are
-- NULL for rows written before this migration.
ALTER TABLE mailroom_attempt ADD COLUMN stack TEXT;
ALTER TABLE mailroom_replay ADD COLUMN attempts_before INTEGER;
