-- oldest-compatible-code: 15
-- Who disabled an endpoint: 'operator' (the API, CLI or dashboard), 'tenant' (the tenant
-- portal) or 'deliveries' (a 410, a failure streak); NULL while enabled. The portal lets a
-- tenant enable again only what they or their deliveries disabled; until now that was
-- read from the reason's text, which an operator's reason could match.
ALTER TABLE mailroom_endpoint ADD COLUMN disabled_by TEXT;

-- Existing disabled endpoints, by the reasons Mailroom itself wrote (exactly: a streak
-- reason ends in the ISO time it was written with); any other is the operator's.
UPDATE mailroom_endpoint SET disabled_by = CASE
  WHEN disabled_reason = 'disabled by the tenant in the portal' THEN 'tenant'
  WHEN disabled_reason = 'the endpoint answered 410 Gone'
    OR disabled_reason GLOB 'failing without a success since [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9].[0-9][0-9][0-9]Z'
    THEN 'deliveries'
  ELSE 'operator' END
WHERE enabled = 0;

-- Code of 0015 and 0016 runs against this schema but never writes the column: an enable
-- or disable of theirs would leave the last one's `disabled_by` behind (a tenant's, on an
-- endpoint their operator has since disabled). A change of `enabled` or the reason that
-- leaves `disabled_by` as it was is such a write: enabled, NULL; disabled, the operator's.
CREATE TRIGGER mailroom_endpoint_disabled_by_kept AFTER UPDATE OF enabled, disabled_reason ON mailroom_endpoint
WHEN NEW.disabled_by IS OLD.disabled_by
  AND (NEW.enabled IS NOT OLD.enabled OR NEW.disabled_reason IS NOT OLD.disabled_reason)
  AND NEW.disabled_by IS NOT (CASE WHEN NEW.enabled = 1 THEN NULL ELSE 'operator' END)
BEGIN
  UPDATE mailroom_endpoint SET disabled_by = CASE WHEN NEW.enabled = 1 THEN NULL ELSE 'operator' END WHERE id = NEW.id;
END;
