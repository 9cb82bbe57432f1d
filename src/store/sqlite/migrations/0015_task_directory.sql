-- oldest-compatible-code: 14
-- What workers say about their task types, so that a process which enqueues a type
-- without registering it (a web process beside separate workers, the CLI without
-- --config) still sends its jobs to the task's queue, and is refused rather than
-- storing a job without the limit key the task's per-key limits need. One row per type,
-- written by every mr.work(); the last worker to start wins. Code of 0014 never reads
-- the table and runs against this schema unchanged.
CREATE TABLE mailroom_task (
  type        TEXT PRIMARY KEY,
  queue       TEXT NOT NULL,
  keyed       INTEGER NOT NULL,
  recorded_at INTEGER NOT NULL
) WITHOUT ROWID;
