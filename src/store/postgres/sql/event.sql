-- Inbound event statements for PostgreSQL; the event row is also the dedupe receipt.
-- mailroom_* names are qualified with the store's schema when loaded (schema-sql.ts).

-- name: eventInsertWithJobs
-- Stores one event; a redelivery (same source and delivery id) inserts nothing. Two
-- concurrent inserts of one delivery: the second waits on the first's unique-index entry,
-- then does nothing once it commits, so exactly one event exists.
-- params: $1 source, $2 delivery_id, $3 type, $4 headers (jsonb), $5 body (bytea), $6 now (null: database clock)
INSERT INTO mailroom_event (source, delivery_id, type, headers, body, received_at)
VALUES ($1, $2, $3, $4::jsonb, $5, coalesce($6::timestamptz, date_trunc('milliseconds', statement_timestamp())))
ON CONFLICT (source, delivery_id) WHERE delivery_id IS NOT NULL DO NOTHING
RETURNING *;

-- name: eventInsertWithJobs.existing
-- The event already holding a delivery id (committed: the insert above waited for it).
-- params: $1 source, $2 delivery_id
SELECT * FROM mailroom_event WHERE source = $1 AND delivery_id = $2;

-- name: eventInsertWithJobs.jobs
-- The jobs an existing event fanned out to, in enqueue order.
-- params: $1 event_id
SELECT * FROM mailroom_job WHERE event_id = $1 ORDER BY id;

-- name: eventGet
-- One event by id (read-only).
-- params: $1 id
SELECT * FROM mailroom_event WHERE id = $1;
