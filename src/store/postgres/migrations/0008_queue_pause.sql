-- PostgreSQL dialect of sqlite/migrations/0008: paused queues, read by the claim
-- predicate (sql/job.sql's claimable fragment), so no worker anywhere claims from one.
-- Code that knows only 0007 would ignore the pauses, so it must not run against this
-- schema: no oldest-compatible-code header.
CREATE TABLE mailroom_queue_pause (
  queue     text PRIMARY KEY,
  reason    text,
  paused_at timestamptz NOT NULL
);
