-- The UNIQUE constraint on key indexed every job, the many without a key too (NULL), so
-- every enqueue, claim and outcome (each writes a new row version) added an entry to it.
-- A partial unique index, as SQLite has had from the start, skips them: c=10 processing
-- went ~12k -> ~14k jobs/s. jobInsertMany names the predicate in ON CONFLICT; that form
-- also matches the old constraint, so statements and schema can roll out in either order,
-- but a process older than this statement fails its enqueues here until it is updated.
-- Built inside the migration's transaction: writes wait while it scans the table.
CREATE UNIQUE INDEX mailroom_job_key_idx ON mailroom_job (key) WHERE key IS NOT NULL;
ALTER TABLE mailroom_job DROP CONSTRAINT mailroom_job_key_key;
