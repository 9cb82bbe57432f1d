-- oldest-compatible-code: 16
-- PostgreSQL dialect of sqlite/migrations/0017: who disabled an endpoint ('operator',
-- 'tenant', 'deliveries'; NULL while enabled), existing ones classified by the reasons
-- Mailroom wrote. Code of 0016 never reads it; its disables leave it NULL (the operator's).
ALTER TABLE mailroom_endpoint ADD COLUMN disabled_by text;
UPDATE mailroom_endpoint SET disabled_by = CASE
  WHEN disabled_reason = 'disabled by the tenant in the portal' THEN 'tenant'
  WHEN disabled_reason = 'the endpoint answered 410 Gone' OR disabled_reason LIKE 'failing without a success since %' THEN 'deliveries'
  ELSE 'operator' END
WHERE NOT enabled;
