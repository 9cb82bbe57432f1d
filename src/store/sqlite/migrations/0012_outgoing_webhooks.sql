-- Outgoing webhooks (SPEC §6a): customers' endpoints per tenant, messages published once,
-- one delivery per message × endpoint, and each endpoint's health and circuit breaker,
-- kept in the store so every worker on every machine sees the same breaker. Version 0011
-- is left to another change (batches); the runner applies versions in order by ledger.
-- Code that knows only older migrations never reads these tables, but publish needs them:
-- no oldest-compatible-code header.
CREATE TABLE mailroom_endpoint (
  id              INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant          TEXT NOT NULL,
  url             TEXT NOT NULL,
  description     TEXT,
  -- JSON array of event types; NULL receives every type.
  event_types     TEXT,
  enabled         INTEGER NOT NULL DEFAULT 1 CHECK (enabled IN (0, 1)),
  disabled_reason TEXT,
  -- JSON { limit, intervalMs } or NULL.
  rate_limit      TEXT,
  -- JSON object of the user's own, or NULL.
  metadata        TEXT,
  -- The signing secret (whsec_…). Read only by the deliver task's deliveryStart; never by a listing.
  secret          TEXT NOT NULL,
  -- During a rotation's overlap the old secret signs too, until previous_secret_until.
  previous_secret       TEXT,
  previous_secret_until INTEGER,
  created_at      INTEGER NOT NULL,
  updated_at      INTEGER NOT NULL
);
CREATE INDEX mailroom_endpoint_tenant_idx ON mailroom_endpoint (tenant, id);

-- One row per endpoint, written after every attempt: the breaker and the health figures.
CREATE TABLE mailroom_endpoint_health (
  endpoint_id       INTEGER PRIMARY KEY,
  breaker_state     TEXT NOT NULL DEFAULT 'closed' CHECK (breaker_state IN ('closed', 'open', 'half_open')),
  -- When the breaker last opened, and how long it stays open this time (grows per failed probe).
  opened_at         INTEGER,
  open_ms           INTEGER,
  -- A half-open probe in flight holds the breaker until then (a crashed probe frees it).
  probe_until       INTEGER,
  window_started_at INTEGER,
  window_successes  INTEGER NOT NULL DEFAULT 0,
  window_failures   INTEGER NOT NULL DEFAULT 0,
  successes         INTEGER NOT NULL DEFAULT 0,
  failures          INTEGER NOT NULL DEFAULT 0,
  last_success_at   INTEGER,
  last_failure_at   INTEGER,
  -- First failure since the last success: the streak auto-disable measures.
  failing_since     INTEGER
) WITHOUT ROWID;

CREATE TABLE mailroom_message (
  id         INTEGER PRIMARY KEY AUTOINCREMENT,
  tenant     TEXT NOT NULL,
  type       TEXT NOT NULL,
  -- Text, as the caller serialised it: the body every endpoint receives, byte for byte.
  payload    TEXT NOT NULL,
  key        TEXT,
  created_at INTEGER NOT NULL
);
CREATE INDEX mailroom_message_tenant_idx ON mailroom_message (tenant, id);
CREATE UNIQUE INDEX mailroom_message_key_idx ON mailroom_message (tenant, key) WHERE key IS NOT NULL;

CREATE TABLE mailroom_delivery (
  id          INTEGER PRIMARY KEY AUTOINCREMENT,
  message_id  INTEGER NOT NULL,
  endpoint_id INTEGER NOT NULL,
  -- The deliver job; NULL for a delivery recorded as skipped (endpoint disabled at publish).
  job_id      INTEGER,
  status      TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL
);
CREATE INDEX mailroom_delivery_endpoint_idx ON mailroom_delivery (endpoint_id, id);
CREATE INDEX mailroom_delivery_message_idx ON mailroom_delivery (message_id, id);
-- An endpoint's backlog (its health) counts pending deliveries without reading its history.
CREATE INDEX mailroom_delivery_pending_idx ON mailroom_delivery (endpoint_id) WHERE status = 'pending';

-- A delivery as listings show it: with its message's tenant and type, its job's attempts
-- and last error, and its status folded with its job's end (the deliver task records the
-- status; a job that died without recording it, a lease lost on the last attempt, still
-- shows `failed`).
CREATE VIEW mailroom_delivery_state AS
SELECT d.id, d.message_id, d.endpoint_id, d.job_id, d.created_at, d.updated_at, m.tenant, m.type, j.attempts, j.last_error,
       CASE WHEN d.status = 'pending' AND j.status = 'dead' THEN 'failed'
            WHEN d.status = 'pending' AND j.status = 'done' THEN 'delivered'
            ELSE d.status END AS status
FROM mailroom_delivery d
JOIN mailroom_message m ON m.id = d.message_id
LEFT JOIN mailroom_job j ON j.id = d.job_id;
