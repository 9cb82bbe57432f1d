-- Paused queues (mr.pauseQueue): one row per paused queue, read by the claim predicate
-- (sql/job.sql's claimable fragment), so no worker anywhere claims from one. Code that
-- knows only 0007 would ignore the pauses, so it must not run against this schema: no
-- oldest-compatible-code header.
CREATE TABLE mailroom_queue_pause (
  queue     TEXT PRIMARY KEY,
  reason    TEXT,
  paused_at INTEGER NOT NULL
) WITHOUT ROWID;
