-- Limits per task type and per limit key (SPEC §3), enforced by the claim: a job's limit
-- key, computed from its payload at enqueue, and the recent starts of rate-limited types
-- (a sliding window: at most N starts in any interval, on the store's clock). Running
-- jobs are counted from their status, so nothing else is kept. Code that knows only 0009
-- would claim past the limits: no oldest-compatible-code header.
ALTER TABLE mailroom_job ADD COLUMN limit_key TEXT;

CREATE TABLE mailroom_limit_start (
  type       TEXT NOT NULL,
  limit_key  TEXT NOT NULL,
  started_at INTEGER NOT NULL
);
CREATE INDEX mailroom_limit_start_idx ON mailroom_limit_start (type, started_at);
