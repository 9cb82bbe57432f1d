-- PostgreSQL dialect of sqlite/migrations/0004: a failed attempt keeps a bounded stack
-- beside its message (the worker cuts it to a few KiB), and a replay records how many
-- attempt rows the job had when it was replayed, so `mailroom job` can show where each
-- replay falls in the history (attempt numbers start again after one). Both columns are
-- NULL for rows written before this migration; adding a nullable column without a default
-- rewrites nothing, so this is quick on a large history.
ALTER TABLE mailroom_attempt ADD COLUMN stack text;
ALTER TABLE mailroom_replay ADD COLUMN attempts_before integer;
