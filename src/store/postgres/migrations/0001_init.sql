-- The first schema, PostgreSQL dialect of sqlite/migrations/0001_init.sql: jobs, their
-- attempt history and replays, inbound events (also the dedupe receipts), and per-queue
-- status counters kept by statement-level triggers so stats() never scans done rows.
-- The migrator runs this with `SET LOCAL search_path` to Mailroom's schema, so the
-- unqualified names below land there; the trigger functions pin that search_path
-- (`SET search_path FROM CURRENT`) because they also fire from a user's own connection
-- (fromClient), whose search_path may not include Mailroom's schema.
-- Ids are bigint identities (node-postgres hands int8 back as a decimal string, which is
-- what the API promises); times are timestamptz truncated to milliseconds by the writers.

CREATE TABLE mailroom_event (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source      text NOT NULL,
  delivery_id text,
  type        text,
  headers     jsonb NOT NULL,
  body        bytea NOT NULL,
  received_at timestamptz NOT NULL
);
-- Dedupe: one event per (source, provider delivery id).
CREATE UNIQUE INDEX mailroom_event_delivery_idx ON mailroom_event (source, delivery_id)
  WHERE delivery_id IS NOT NULL;
CREATE INDEX mailroom_event_received_idx ON mailroom_event (received_at);

CREATE TABLE mailroom_job (
  -- An identity never reuses a value, so id order stays enqueue order after purges.
  id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  queue            text NOT NULL,
  type             text NOT NULL,
  status           text NOT NULL CHECK (status IN ('pending', 'running', 'done', 'dead')),
  priority         integer NOT NULL DEFAULT 0,
  -- text, not jsonb: the payload comes back byte for byte as the caller serialised it.
  payload          text NOT NULL,
  run_at           timestamptz NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  max_attempts     integer NOT NULL CHECK (max_attempts >= 1),
  lease_owner      text,
  lease_token      text,
  lease_expires_at timestamptz,
  last_error       text,
  dead_reason      text CHECK (dead_reason IN ('exhausted', 'permanent', 'cancelled')),
  key              text UNIQUE,
  group_key        text,
  event_id         bigint,
  source           text,
  created_at       timestamptz NOT NULL,
  started_at       timestamptz,
  finished_at      timestamptz
);
-- Claim order within named queues, and across all queues; partial so done/dead history
-- never enters the claim path.
CREATE INDEX mailroom_job_claim_queue_idx ON mailroom_job (queue, priority DESC, run_at, id)
  WHERE status = 'pending';
CREATE INDEX mailroom_job_claim_idx ON mailroom_job (priority DESC, run_at, id)
  WHERE status = 'pending';
-- Group heads: the lowest id among a group's unfinished jobs.
CREATE INDEX mailroom_job_group_idx ON mailroom_job (group_key, id)
  WHERE group_key IS NOT NULL AND status IN ('pending', 'running');
-- Rescue sweep of expired leases.
CREATE INDEX mailroom_job_lease_idx ON mailroom_job (lease_expires_at) WHERE status = 'running';
-- Retention and the dead-letter list.
CREATE INDEX mailroom_job_finished_idx ON mailroom_job (status, finished_at)
  WHERE status IN ('done', 'dead');
CREATE INDEX mailroom_job_event_idx ON mailroom_job (event_id) WHERE event_id IS NOT NULL;

CREATE TABLE mailroom_attempt (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id      bigint NOT NULL,
  attempt     integer NOT NULL,
  started_at  timestamptz,
  finished_at timestamptz,
  outcome     text NOT NULL CHECK (outcome IN ('done', 'failed', 'timeout', 'lost', 'handed_back')),
  error       text,
  worker_id   text
);
CREATE INDEX mailroom_attempt_job_idx ON mailroom_attempt (job_id, id);

CREATE TABLE mailroom_replay (
  id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  job_id bigint NOT NULL,
  at     timestamptz NOT NULL,
  reason text,
  "by"   text -- quoted: BY is a reserved word in PostgreSQL
);
CREATE INDEX mailroom_replay_job_idx ON mailroom_replay (job_id, id);

-- Status counters, sharded by backend: SQLite's one row per (queue, status) would be a
-- hot row here that every claimer and completer in every process must lock in turn.
-- Each connection adds its deltas to its own shard (pg_backend_pid() % 16); stats() sums
-- the shards. A shard's n may go negative (a job counted in by one connection and out
-- by another); only the sum means anything.
CREATE TABLE mailroom_queue_count (
  queue  text NOT NULL,
  status text NOT NULL,
  shard  smallint NOT NULL,
  n      bigint NOT NULL,
  PRIMARY KEY (queue, status, shard)
);

-- The NOTIFY channel of this schema's jobs: 'mailroom.' || schema, or an md5 of a schema
-- name too long for a 63-byte channel. listener.ts computes the same name.
CREATE FUNCTION mailroom_channel() RETURNS text
LANGUAGE sql STABLE
SET search_path FROM CURRENT
AS $$
  SELECT CASE WHEN octet_length('mailroom.' || current_schema()) <= 63
              THEN 'mailroom.' || current_schema()
              ELSE 'mailroom.' || md5(current_schema()) END
$$;

-- Statement-level triggers with transition tables: one counter upsert (and at most one
-- NOTIFY per queue) per statement however many rows it touched. The upserts lock counter
-- rows in (queue, status) order, so two statements on one shard cannot deadlock on them.
CREATE FUNCTION mailroom_job_count_insert() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO mailroom_queue_count AS c (queue, status, shard, n)
  SELECT queue, status, pg_backend_pid() % 16, count(*)
  FROM new_rows GROUP BY queue, status ORDER BY queue, status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  -- Wake idle workers; delivered at commit, dropped on rollback, deduplicated per transaction.
  PERFORM pg_notify(mailroom_channel(), q.queue)
  FROM (SELECT DISTINCT queue FROM new_rows WHERE status = 'pending') q;
  RETURN NULL;
END $$;

CREATE FUNCTION mailroom_job_count_update() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  -- Heartbeats and other updates that keep the status cost one empty join here.
  INSERT INTO mailroom_queue_count AS c (queue, status, shard, n)
  SELECT d.queue, d.status, pg_backend_pid() % 16, sum(d.delta)
  FROM (
    SELECT o.queue, o.status, -1 AS delta
    FROM old_rows o JOIN new_rows w ON w.id = o.id
    WHERE o.status <> w.status OR o.queue <> w.queue
    UNION ALL
    SELECT w.queue, w.status, 1 AS delta
    FROM old_rows o JOIN new_rows w ON w.id = o.id
    WHERE o.status <> w.status OR o.queue <> w.queue
  ) d
  GROUP BY d.queue, d.status
  HAVING sum(d.delta) <> 0
  ORDER BY d.queue, d.status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  -- A job that became due pending again (replay, hand-back, rescue) wakes workers too.
  PERFORM pg_notify(mailroom_channel(), q.queue)
  FROM (SELECT DISTINCT w.queue FROM old_rows o JOIN new_rows w ON w.id = o.id
        WHERE w.status = 'pending' AND o.status <> 'pending' AND w.run_at <= now()) q;
  RETURN NULL;
END $$;

CREATE FUNCTION mailroom_job_count_delete() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  INSERT INTO mailroom_queue_count AS c (queue, status, shard, n)
  SELECT queue, status, pg_backend_pid() % 16, -count(*)
  FROM old_rows GROUP BY queue, status ORDER BY queue, status
  ON CONFLICT (queue, status, shard) DO UPDATE SET n = c.n + excluded.n;
  RETURN NULL;
END $$;

-- PostgreSQL allows transition tables only on single-event triggers: hence three.
CREATE TRIGGER mailroom_job_count_insert AFTER INSERT ON mailroom_job
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mailroom_job_count_insert();
CREATE TRIGGER mailroom_job_count_update AFTER UPDATE ON mailroom_job
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mailroom_job_count_update();
CREATE TRIGGER mailroom_job_count_delete AFTER DELETE ON mailroom_job
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION mailroom_job_count_delete();
