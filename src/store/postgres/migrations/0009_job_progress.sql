-- oldest-compatible-code: 8
-- PostgreSQL dialect of sqlite/migrations/0009: a running job's progress (ctx.progress),
-- fenced by the lease token. Nullable columns: a catalogue change, no table rewrite. Code
-- of 0008 runs on against this: it never reads the columns.
ALTER TABLE mailroom_job ADD COLUMN progress double precision, ADD COLUMN progress_note text;
