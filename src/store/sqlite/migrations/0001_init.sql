-- The first schema: jobs, their attempt history and replays, inbound events (which are
-- also the dedupe receipts), and per-queue status counters so stats() costs the same with
-- ten rows or ten million. The store's own statements keep the counters, once per batch
-- and in the same transaction: row triggers cost about 6 µs per status change here,
-- a third of a claim. Times are integer milliseconds since epoch.

CREATE TABLE mailroom_event (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  source      TEXT NOT NULL,
  delivery_id TEXT,
  type        TEXT,
  headers     TEXT NOT NULL,
  body        BLOB NOT NULL,
  received_at INTEGER NOT NULL
);
-- Dedupe: one event per (source, provider delivery id).
CREATE UNIQUE INDEX mailroom_event_delivery_idx ON mailroom_event (source, delivery_id)
  WHERE delivery_id IS NOT NULL;
CREATE INDEX mailroom_event_received_idx ON mailroom_event (received_at);

CREATE TABLE mailroom_job (
  id               INTEGER PRIMARY KEY AUTOINCREMENT, -- AUTOINCREMENT: ids never reused, so id order stays enqueue order after purges
  queue            TEXT NOT NULL,
  type             TEXT NOT NULL,
  status           TEXT NOT NULL CHECK (status IN ('pending', 'running', 'done', 'dead')),
  priority         INTEGER NOT NULL DEFAULT 0,
  payload          TEXT NOT NULL,
  run_at           INTEGER NOT NULL,
  attempts         INTEGER NOT NULL DEFAULT 0,
  max_attempts     INTEGER NOT NULL CHECK (max_attempts >= 1),
  lease_owner      TEXT,
  lease_token      TEXT,
  lease_expires_at INTEGER,
  last_error       TEXT,
  dead_reason      TEXT CHECK (dead_reason IN ('exhausted', 'permanent', 'cancelled')),
  key              TEXT,
  group_key        TEXT,
  event_id         INTEGER,
  source           TEXT,
  created_at       INTEGER NOT NULL,
  started_at       INTEGER,
  finished_at      INTEGER
);
-- Claim order within named queues, and across all queues; partial so done/dead history
-- never enters the claim path.
CREATE INDEX mailroom_job_claim_queue_idx ON mailroom_job (queue, priority DESC, run_at, id)
  WHERE status = 'pending';
CREATE INDEX mailroom_job_claim_idx ON mailroom_job (priority DESC, run_at, id)
  WHERE status = 'pending';
-- Idempotency keys; partial, so the many jobs without a key cost it nothing.
CREATE UNIQUE INDEX mailroom_job_key_idx ON mailroom_job (key) WHERE key IS NOT NULL;
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
  id          INTEGER PRIMARY KEY,
  job_id      INTEGER NOT NULL,
  attempt     INTEGER NOT NULL,
  started_at  INTEGER,
  finished_at INTEGER,
  outcome     TEXT NOT NULL CHECK (outcome IN ('done', 'failed', 'timeout', 'lost', 'handed_back')),
  error       TEXT,
  worker_id   TEXT
);
CREATE INDEX mailroom_attempt_job_idx ON mailroom_attempt (job_id, id);

CREATE TABLE mailroom_replay (
  id         INTEGER PRIMARY KEY,
  job_id     INTEGER NOT NULL,
  at         INTEGER NOT NULL,
  reason     TEXT,
  by         TEXT
);
CREATE INDEX mailroom_replay_job_idx ON mailroom_replay (job_id, id);

CREATE TABLE mailroom_queue_count (
  queue  TEXT NOT NULL,
  status TEXT NOT NULL,
  n      INTEGER NOT NULL,
  PRIMARY KEY (queue, status)
) WITHOUT ROWID;
