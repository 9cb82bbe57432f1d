-- PostgreSQL dialect of sqlite/migrations/0012: customers' endpoints per tenant, messages
-- published once, one delivery per message × endpoint, and each endpoint's health and
-- circuit breaker in the store, so every worker on every machine sees one breaker.
-- Version 0011 is left to another change (batches). No oldest-compatible-code header.
CREATE TABLE mailroom_endpoint (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant          text NOT NULL,
  url             text NOT NULL,
  description     text,
  event_types     text,
  enabled         boolean NOT NULL DEFAULT true,
  disabled_reason text,
  rate_limit      text,
  metadata        text,
  secret          text NOT NULL,
  previous_secret       text,
  previous_secret_until timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL
);
CREATE INDEX mailroom_endpoint_tenant_idx ON mailroom_endpoint (tenant, id);

CREATE TABLE mailroom_endpoint_health (
  endpoint_id       bigint PRIMARY KEY,
  breaker_state     text NOT NULL DEFAULT 'closed' CHECK (breaker_state IN ('closed', 'open', 'half_open')),
  opened_at         timestamptz,
  open_ms           bigint,
  probe_until       timestamptz,
  window_started_at timestamptz,
  window_successes  integer NOT NULL DEFAULT 0,
  window_failures   integer NOT NULL DEFAULT 0,
  successes         bigint NOT NULL DEFAULT 0,
  failures          bigint NOT NULL DEFAULT 0,
  last_success_at   timestamptz,
  last_failure_at   timestamptz,
  failing_since     timestamptz
);

CREATE TABLE mailroom_message (
  id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant     text NOT NULL,
  type       text NOT NULL,
  payload    text NOT NULL,
  key        text,
  created_at timestamptz NOT NULL
);
CREATE INDEX mailroom_message_tenant_idx ON mailroom_message (tenant, id);
CREATE UNIQUE INDEX mailroom_message_key_idx ON mailroom_message (tenant, key) WHERE key IS NOT NULL;

CREATE TABLE mailroom_delivery (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  message_id  bigint NOT NULL,
  endpoint_id bigint NOT NULL,
  job_id      bigint,
  status      text NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'skipped')),
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX mailroom_delivery_endpoint_idx ON mailroom_delivery (endpoint_id, id);
CREATE INDEX mailroom_delivery_message_idx ON mailroom_delivery (message_id, id);
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
