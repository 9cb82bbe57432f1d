-- Outgoing webhooks' endpoints and their health (breaker) rows. Listings name their
-- columns: the signing secret is selected only by endpointSigning, for the deliver task.
-- Times come in as $n: the executor reads the store's now once (claimClock) per call.

-- name: endpointAdd
-- A new endpoint; its health row is endpointAdd.health, in the same transaction.
-- params: $1 tenant, $2 url, $3 description, $4 event_types, $5 rate_limit, $6 metadata, $7 secret, $8 now, $9 added_by
INSERT INTO mailroom_endpoint (tenant, url, description, event_types, rate_limit, metadata, secret, created_at, updated_at, added_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8, $9)
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointAdd.health
-- The endpoint's breaker starts closed with no history.
-- params: $1 endpoint id
INSERT INTO mailroom_endpoint_health (endpoint_id) VALUES ($1);

-- name: endpointGet
-- One endpoint, without its secret.
-- params: $1 id
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE id = $1;

-- name: endpointList
-- A page of every tenant's endpoints in id order, without secrets.
-- params: $1 after, $2 limit
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE id > $1 ORDER BY id LIMIT $2;

-- name: endpointList.tenant
-- A page of one tenant's endpoints (mailroom_endpoint_tenant_idx), without secrets.
-- params: $1 after, $2 limit, $3 tenant
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE tenant = $3 AND id > $1 ORDER BY id LIMIT $2;

-- name: endpointUpdate.current
-- The endpoint an update merges into, locked until the update commits.
-- params: $1 id
SELECT id, url, description, event_types, rate_limit, metadata FROM mailroom_endpoint WHERE id = $1 FOR UPDATE;

-- name: endpointUpdate
-- Writes every changeable field (the executor merged the update into the current row).
-- params: $1 id, $2 url, $3 description, $4 event_types, $5 rate_limit, $6 metadata, $7 now
UPDATE mailroom_endpoint
SET url = $2, description = $3, event_types = $4, rate_limit = $5, metadata = $6, updated_at = $7
WHERE id = $1
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointSetEnabled
-- Enable (reason and who cleared) or disable (reason and who kept) an endpoint. For the
-- tenant ($6) only where the tenant may: disable an enabled one, enable one that they or
-- its deliveries disabled; no row back otherwise. In the UPDATE itself, so an operator's
-- disable between the portal's read and this write is never undone. With $7 a disable
-- keeps the reason of an endpoint disabled already (an operator's disable without words),
-- decided here for the same reason.
-- params: $1 id, $2 enabled, $3 reason, $4 now, $5 disabled_by, $6 as tenant, $7 keep reason
UPDATE mailroom_endpoint
SET enabled = $2, disabled_by = $5, updated_at = $4,
    disabled_reason = CASE WHEN $7::boolean AND NOT enabled THEN coalesce(disabled_reason, $3) ELSE $3 END
WHERE id = $1
  AND (NOT $6::boolean OR CASE WHEN $2::boolean THEN NOT enabled AND disabled_by IN ('tenant', 'deliveries') ELSE enabled END)
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointSetEnabled.before
-- Whether the endpoint is enabled now, read before endpointSetEnabled in its transaction.
-- params: $1 id
SELECT enabled FROM mailroom_endpoint WHERE id = $1 FOR UPDATE;

-- name: endpointHealth.fresh
-- An endpoint enabled again, or sent to a new URL, starts with a closed breaker and no
-- failure streak: the one it was disabled for (or an open breaker) would disable it, or
-- hold its deliveries, again on its first failure after the fix. Its counts and last
-- success and failure stay.
-- params: $1 id
UPDATE mailroom_endpoint_health
SET breaker_state = 'closed', opened_at = NULL, open_ms = NULL, probe_until = NULL,
    window_started_at = NULL, window_successes = 0, window_failures = 0, failing_since = NULL
WHERE endpoint_id = $1;

-- name: endpointDisableIfEnabled
-- Disables an enabled endpoint (a 410, a failure streak); returns it only when this call did.
-- The application is told at once (the endpointDisabled event, a log line), so the commit
-- waits for the WAL flush (`durable`, as jobClaim's) though deliveryRecordMany runs on the
-- asynchronous bookkeeping pool: a crash must not undo a disable already announced.
-- params: $1 id, $2 reason, $3 now
WITH durable AS (SELECT set_config('synchronous_commit', 'on', true) AS durable)
UPDATE mailroom_endpoint SET enabled = false, disabled_reason = $2, disabled_by = 'deliveries', updated_at = $3
FROM durable
WHERE id = $1 AND enabled
RETURNING id;

-- name: endpointRemove
-- Deletes the endpoint; its deliveries stay as history (their jobs find it gone and skip).
-- params: $1 id
DELETE FROM mailroom_endpoint WHERE id = $1 RETURNING id;

-- name: endpointRemove.health
-- params: $1 id
DELETE FROM mailroom_endpoint_health WHERE endpoint_id = $1;

-- name: endpointRotateSecret.overlap
-- Until when an earlier rotation's old secret signs: rotating again before then would drop
-- it. The row lock keeps two rotations at once from both passing this check.
-- params: $1 id
SELECT previous_secret, previous_secret_until FROM mailroom_endpoint WHERE id = $1 FOR UPDATE;

-- name: endpointRotateSecret
-- The new secret signs from now; the old one beside it until $3.
-- params: $1 id, $2 secret, $3 until, $4 now
UPDATE mailroom_endpoint
SET previous_secret = secret, previous_secret_until = $3, secret = $2, updated_at = $4
WHERE id = $1;

-- name: endpointSigning
-- The endpoint with its secrets: only the deliver task's deliveryStart reads this.
-- params: $1 id
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at,
       secret, previous_secret, previous_secret_until
FROM mailroom_endpoint WHERE id = $1;

-- name: endpointsOfTenant
-- Every endpoint of some tenants (one publish's, or a group's), for publish to match on
-- event types.
-- params: $1 tenants
SELECT id, tenant, event_types, enabled FROM mailroom_endpoint WHERE tenant = ANY($1::text[]) ORDER BY id;

-- name: endpointHealth
-- An endpoint's health row and its backlog: its pending deliveries, whose jobs wait or run
-- (a job that dies settles its delivery), kept as a counter (migration 0013).
-- params: $1 id
SELECT h.*,
       (SELECT coalesce(sum(b.n), 0) FROM mailroom_endpoint_backlog b WHERE b.endpoint_id = h.endpoint_id) AS backlog
FROM mailroom_endpoint_health h WHERE h.endpoint_id = $1;

-- name: endpointHealth.row
-- The health row, locked: every worker's attempts on one endpoint update it in turn.
-- params: $1 id
SELECT * FROM mailroom_endpoint_health WHERE endpoint_id = $1 FOR UPDATE;

-- name: endpointHealth.write
-- Endpoints' breakers and counters after attempts (computed by store/delivery-health.ts),
-- one row per endpoint, in one statement.
-- params: $1 ids, $2 states, $3 opened_at, $4 open_ms, $5 probe_until, $6 window_started_at,
--   $7 window_successes, $8 window_failures, $9 successes, $10 failures, $11 last_success_at,
--   $12 last_failure_at, $13 failing_since (each an array, one element per endpoint)
UPDATE mailroom_endpoint_health h
SET breaker_state = w.state, opened_at = w.opened_at, open_ms = w.open_ms, probe_until = w.probe_until,
    window_started_at = w.window_started_at, window_successes = w.window_successes,
    window_failures = w.window_failures, successes = w.successes, failures = w.failures,
    last_success_at = w.last_success_at, last_failure_at = w.last_failure_at, failing_since = w.failing_since
FROM unnest($1::bigint[], $2::text[], $3::timestamptz[], $4::bigint[], $5::timestamptz[], $6::timestamptz[],
            $7::integer[], $8::integer[], $9::bigint[], $10::bigint[], $11::timestamptz[], $12::timestamptz[],
            $13::timestamptz[])
  AS w(endpoint_id, state, opened_at, open_ms, probe_until, window_started_at, window_successes, window_failures,
       successes, failures, last_success_at, last_failure_at, failing_since)
WHERE h.endpoint_id = w.endpoint_id;

-- name: endpointStats.counts
-- Endpoints by enabled and breaker state (metrics; bounded label sets).
-- params: (none)
SELECT e.enabled, h.breaker_state, count(*) AS n
FROM mailroom_endpoint e JOIN mailroom_endpoint_health h ON h.endpoint_id = e.id
GROUP BY e.enabled, h.breaker_state;

-- name: endpointStats.backlog
-- Pending deliveries (their jobs wait or run), per endpoint, most first (the counters of migration 0013).
-- params: $1 top n
SELECT b.endpoint_id, sum(b.n) AS backlog
FROM mailroom_endpoint_backlog b
GROUP BY b.endpoint_id HAVING sum(b.n) > 0 ORDER BY backlog DESC, b.endpoint_id LIMIT $1;

-- name: endpointStats.totalBacklog
-- Pending deliveries (their jobs wait or run), across every endpoint.
-- params: (none)
SELECT coalesce(sum(b.n), 0) AS backlog
FROM mailroom_endpoint_backlog b;

-- name: endpointRate.prune
-- Drops an endpoint's rate starts that left its window (kept under the endpoint-rate type).
-- params: $1 type, $2 endpoint id, $3 since
DELETE FROM mailroom_limit_start WHERE type = $1 AND limit_key = $2 AND started_at <= $3;

-- name: endpointRate.starts
-- An endpoint's rate starts still in its window.
-- params: $1 type, $2 endpoint id
SELECT started_at FROM mailroom_limit_start WHERE type = $1 AND limit_key = $2 ORDER BY started_at;

-- name: endpointRate.start
-- One more start of a delivery to a rate-limited endpoint. Its commit waits for the WAL
-- flush (`durable`, as the limited claim's starts in jobClaim.lease's transaction): a start
-- a crash lost would let the endpoint receive more than its rate once the server is back.
-- params: $1 type, $2 endpoint id, $3 now
INSERT INTO mailroom_limit_start (type, limit_key, started_at)
SELECT $1, $2, $3 FROM (SELECT set_config('synchronous_commit', 'on', true)) AS durable;

-- name: deliveryStart.read
-- deliveryStartMany's first look, one round trip for a batch: each delivery (as deliveryGet), its message
-- (m_), its endpoint with its secrets (e_, as endpointSigning) and the endpoint's breaker,
-- unlocked (h_), at the store's now. Most deliveries find the breaker closed and no rate
-- to count and are answered from this row; the rest read again, locked, in a transaction.
-- As five statements a delivery it was five of a delivery's thirteen round trips.
-- params: $1 delivery ids, $2 now (null: the server's)
SELECT coalesce($2::timestamptz, date_trunc('milliseconds', statement_timestamp())) AS start_now,
       d.*,
       m.id AS m_id, m.tenant AS m_tenant, m.type AS m_type, m.payload AS m_payload, m.key AS m_key,
       m.created_at AS m_created_at,
       e.id AS e_id, e.tenant AS e_tenant, e.url AS e_url, e.description AS e_description,
       e.event_types AS e_event_types, e.enabled AS e_enabled, e.disabled_reason AS e_disabled_reason, e.disabled_by AS e_disabled_by,
       e.added_by AS e_added_by,
       e.rate_limit AS e_rate_limit, e.metadata AS e_metadata, e.created_at AS e_created_at,
       e.updated_at AS e_updated_at, e.secret AS e_secret, e.previous_secret AS e_previous_secret,
       e.previous_secret_until AS e_previous_secret_until,
       h.endpoint_id AS h_endpoint_id, h.breaker_state AS h_breaker_state, h.opened_at AS h_opened_at,
       h.open_ms AS h_open_ms, h.probe_until AS h_probe_until, h.window_started_at AS h_window_started_at,
       h.window_successes AS h_window_successes, h.window_failures AS h_window_failures,
       h.failing_since AS h_failing_since
FROM mailroom_delivery_state d
JOIN mailroom_message m ON m.id = d.message_id
LEFT JOIN mailroom_endpoint e ON e.id = d.endpoint_id
LEFT JOIN mailroom_endpoint_health h ON h.endpoint_id = d.endpoint_id
WHERE d.id = ANY($1::bigint[]);
