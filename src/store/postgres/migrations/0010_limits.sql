-- PostgreSQL dialect of sqlite/migrations/0010: a job's limit key, and the recent starts
-- of rate-limited types for the claim's sliding windows. Claims of limited types take an
-- advisory lock per type, so counting and claiming are one step across every worker.
-- Code that knows only 0009 would claim past the limits: no oldest-compatible-code header.
ALTER TABLE mailroom_job ADD COLUMN limit_key text;

CREATE TABLE mailroom_limit_start (
  type       text NOT NULL,
  limit_key  text NOT NULL,
  started_at timestamptz NOT NULL
);
CREATE INDEX mailroom_limit_start_idx ON mailroom_limit_start (type, started_at);
