-- Outgoing webhooks' endpoints and their health (breaker) rows. Listings name their
-- columns: the signing secret is selected only by endpointSigning, for the deliver task.

-- name: endpointAdd
-- A new endpoint; its health row is endpointAdd.health, in the same transaction.
INSERT INTO mailroom_endpoint (tenant, url, description, event_types, rate_limit, metadata, secret, created_at, updated_at, added_by)
VALUES (@tenant, @url, @description, @eventTypes, @rateLimit, @metadata, @secret, @now, @now, @addedBy)
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointAdd.health
-- The endpoint's breaker starts closed with no history.
INSERT INTO mailroom_endpoint_health (endpoint_id) VALUES (@id);

-- name: endpointGet
-- One endpoint, without its secret.
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE id = @id;

-- name: endpointList
-- A page of every tenant's endpoints in id order, without secrets.
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE id > @after ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: endpointList.tenant
-- A page of one tenant's endpoints (mailroom_endpoint_tenant_idx), without secrets.
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at
FROM mailroom_endpoint WHERE tenant = @tenant AND id > @after ORDER BY id LIMIT CAST(@limit AS INTEGER);

-- name: endpointUpdate.current
-- The endpoint an update merges into (the write transaction holds the only write lock).
SELECT id, url, description, event_types, rate_limit, metadata FROM mailroom_endpoint WHERE id = @id;

-- name: endpointUpdate
-- Writes every changeable field (the executor merged the update into the current row).
UPDATE mailroom_endpoint
SET url = @url, description = @description, event_types = @eventTypes, rate_limit = @rateLimit, metadata = @metadata, updated_at = @now
WHERE id = @id
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointSetEnabled
-- Enable (reason and who cleared) or disable (reason and who kept) an endpoint. For the
-- tenant (@asTenant = 1) only where the tenant may: disable an enabled one, enable one
-- that they or its deliveries disabled; no row back otherwise. In the UPDATE itself, so an
-- operator's disable between the portal's read and this write is never undone. With
-- @keepReason = 1 a disable keeps the reason of an endpoint disabled already (an
-- operator's disable without words), decided here for the same reason.
UPDATE mailroom_endpoint
SET enabled = @enabled, disabled_by = @disabledBy, updated_at = @now,
    disabled_reason = CASE WHEN @keepReason = 1 AND enabled = 0 THEN coalesce(disabled_reason, @reason) ELSE @reason END
WHERE id = @id
  AND (@asTenant = 0 OR CASE WHEN @enabled = 1 THEN enabled = 0 AND disabled_by IN ('tenant', 'deliveries') ELSE enabled = 1 END)
RETURNING id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at;

-- name: endpointSetEnabled.before
-- Whether the endpoint is enabled now, read before endpointSetEnabled in its transaction.
SELECT enabled FROM mailroom_endpoint WHERE id = @id;

-- name: endpointHealth.fresh
-- An endpoint enabled again, or sent to a new URL, starts with a closed breaker and no
-- failure streak: the one it was disabled for (or an open breaker) would disable it, or
-- hold its deliveries, again on its first failure after the fix. Its counts and last
-- success and failure stay.
UPDATE mailroom_endpoint_health
SET breaker_state = 'closed', opened_at = NULL, open_ms = NULL, probe_until = NULL,
    window_started_at = NULL, window_successes = 0, window_failures = 0, failing_since = NULL
WHERE endpoint_id = @id;

-- name: endpointDisableIfEnabled
-- Disables an enabled endpoint (a 410, a failure streak); returns it only when this call did.
UPDATE mailroom_endpoint SET enabled = 0, disabled_reason = @reason, disabled_by = 'deliveries', updated_at = @now
WHERE id = @id AND enabled = 1
RETURNING id;

-- name: endpointRemove
-- Deletes the endpoint; its deliveries stay as history (their jobs find it gone and skip).
DELETE FROM mailroom_endpoint WHERE id = @id RETURNING id;

-- name: endpointRemove.health
DELETE FROM mailroom_endpoint_health WHERE endpoint_id = @id;

-- name: endpointRotateSecret.overlap
-- Until when an earlier rotation's old secret signs: rotating again before then would drop it.
SELECT previous_secret, previous_secret_until FROM mailroom_endpoint WHERE id = @id;

-- name: endpointRotateSecret
-- The new secret signs from now; the old one beside it until @until.
UPDATE mailroom_endpoint
SET previous_secret = secret, previous_secret_until = @until, secret = @secret, updated_at = @now
WHERE id = @id;

-- name: endpointSigning
-- The endpoint with its secrets: only the deliver task's deliveryStart reads this.
SELECT id, tenant, url, description, event_types, enabled, disabled_reason, disabled_by, added_by, rate_limit, metadata, created_at, updated_at,
       secret, previous_secret, previous_secret_until
FROM mailroom_endpoint WHERE id = @id;

-- name: endpointsOfTenant
-- Every endpoint of a tenant, for publish to match on event types. `+@tenant`: once an
-- ANALYZE has written STAT4 statistics, a bare parameter compared with an indexed column is
-- compiled again at every run (job.sql, fragment claimable): 22 µs a publish, 11 wrapped.
SELECT id, event_types, enabled FROM mailroom_endpoint WHERE tenant = +@tenant ORDER BY id;

-- name: endpointHealth
-- An endpoint's health row and its backlog: its pending deliveries, whose jobs wait or run
-- (a job that dies settles its delivery), kept as a counter (migration 0013).
SELECT h.*,
       (SELECT coalesce(sum(b.n), 0) FROM mailroom_endpoint_backlog b WHERE b.endpoint_id = h.endpoint_id) AS backlog
FROM mailroom_endpoint_health h WHERE h.endpoint_id = @id;

-- name: endpointHealth.row
-- The health row alone: deliveryStartMany's first look, and read again inside the write
-- transaction that updates it. (PostgreSQL's reads the row FOR UPDATE; here the write
-- transaction holds the whole database, so one statement serves both.)
SELECT * FROM mailroom_endpoint_health WHERE endpoint_id = @id;

-- name: endpointHealth.write
-- The breaker and counters after an attempt (computed by core/circuit-breaker.ts).
UPDATE mailroom_endpoint_health
SET breaker_state = @state, opened_at = @openedAt, open_ms = @openMs, probe_until = @probeUntil,
    window_started_at = @windowStartedAt, window_successes = @windowSuccesses, window_failures = @windowFailures,
    successes = @successes, failures = @failures, last_success_at = @lastSuccessAt,
    last_failure_at = @lastFailureAt, failing_since = @failingSince
WHERE endpoint_id = @id;

-- name: endpointStats.counts
-- Endpoints by enabled and breaker state (metrics; bounded label sets).
SELECT e.enabled, h.breaker_state, count(*) AS n
FROM mailroom_endpoint e JOIN mailroom_endpoint_health h ON h.endpoint_id = e.id
GROUP BY e.enabled, h.breaker_state;

-- name: endpointStats.backlog
-- Pending deliveries (their jobs wait or run), per endpoint, most first (the counters of migration 0013).
SELECT b.endpoint_id, sum(b.n) AS backlog
FROM mailroom_endpoint_backlog b
GROUP BY b.endpoint_id HAVING sum(b.n) > 0 ORDER BY backlog DESC, b.endpoint_id LIMIT CAST(@topN AS INTEGER);

-- name: endpointStats.totalBacklog
-- Pending deliveries (their jobs wait or run), across every endpoint.
SELECT coalesce(sum(b.n), 0) AS backlog
FROM mailroom_endpoint_backlog b;

-- name: endpointRate.prune
-- Drops an endpoint's rate starts that left its window (kept under the endpoint-rate type).
-- Parameters wrapped (`+@type`) as in limit.sql's limitStarts.
DELETE FROM mailroom_limit_start WHERE type = +@type AND limit_key = +@id AND started_at <= +@since;

-- name: endpointRate.starts
-- An endpoint's rate starts still in its window.
SELECT started_at FROM mailroom_limit_start WHERE type = +@type AND limit_key = +@id ORDER BY started_at;

-- name: endpointRate.start
-- One more start of a delivery to a rate-limited endpoint.
INSERT INTO mailroom_limit_start (type, limit_key, started_at) VALUES (@type, @id, @now);
