-- oldest-compatible-code: 15
-- mailroom_delivery_pending_idx (0012) indexed each endpoint's pending deliveries so its
-- health could count the backlog. Since 0013 the backlog is a counter kept by triggers
-- (mailroom_endpoint_backlog), and no statement reads the index any more; every delivery
-- still paid for it, an entry written at publish and removed at its record, the record's
-- pages one per endpoint of its batch. No code names the index: older code runs as before.
DROP INDEX IF EXISTS mailroom_delivery_pending_idx;
