-- oldest-compatible-code: 16
-- Who disabled an endpoint: 'operator' (the API, CLI or dashboard), 'tenant' (the tenant
-- portal) or 'deliveries' (a 410, a failure streak); NULL while enabled. The portal lets a
-- tenant enable again only what they or their deliveries disabled; until now that was
-- read from the reason's text, which an operator's reason could match. Existing disabled
-- endpoints are classified by the reasons Mailroom itself wrote. Code of 0016 never reads
-- the column; its disables leave it NULL, which reads as the operator's (the safe side).
ALTER TABLE mailroom_endpoint ADD COLUMN disabled_by TEXT;
UPDATE mailroom_endpoint SET disabled_by = CASE
  WHEN disabled_reason = 'disabled by the tenant in the portal' THEN 'tenant'
  WHEN disabled_reason = 'the endpoint answered 410 Gone' OR disabled_reason LIKE 'failing without a success since %' THEN 'deliveries'
  ELSE 'operator' END
WHERE enabled = 0;
