-- oldest-compatible-code: 8
-- ctx.progress(fraction, note): a running job's progress, kept on its row (fenced by the
-- lease token like every write a worker makes) and shown by getJob, `mailroom job` and the
-- dashboard. Code of 0008 runs on against this: it never reads the columns.
ALTER TABLE mailroom_job ADD COLUMN progress REAL;
ALTER TABLE mailroom_job ADD COLUMN progress_note TEXT;
