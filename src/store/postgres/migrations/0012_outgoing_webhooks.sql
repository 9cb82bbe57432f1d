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
