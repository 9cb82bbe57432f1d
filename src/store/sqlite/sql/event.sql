-- Inbound event statements for SQLite; the event row is also the dedupe receipt.

-- name: eventInsertWithJobs
-- Stores one event; a redelivery (same source and delivery id) inserts nothing. Nothing
-- comes back: the caller holds every column and reads the id from last_insert_rowid()
-- (RETURNING cost a third of the insert).
INSERT INTO mailroom_event (source, delivery_id, type, headers, body, received_at)
VALUES (@source, @deliveryId, @type, @headers, @body, @now)
ON CONFLICT (source, delivery_id) WHERE delivery_id IS NOT NULL DO NOTHING;

-- name: eventInsertWithJobs.existing
SELECT * FROM mailroom_event WHERE source = @source AND delivery_id = @deliveryId;

-- name: eventInsertWithJobs.jobs
SELECT * FROM mailroom_job WHERE event_id = @eventId ORDER BY id;

-- name: eventGet
SELECT * FROM mailroom_event WHERE id = @id;
