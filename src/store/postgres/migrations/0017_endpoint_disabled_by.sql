-- oldest-compatible-code: 15
-- PostgreSQL dialect of sqlite/migrations/0017: who disabled an endpoint ('operator',
-- 'tenant', 'deliveries'; NULL while enabled), existing ones classified by the reasons
-- Mailroom wrote, and a trigger that keeps writes by code of 0015/0016 (which never set
-- the column) from leaving an earlier `disabled_by` behind.
ALTER TABLE mailroom_endpoint ADD COLUMN disabled_by text;

UPDATE mailroom_endpoint SET disabled_by = CASE
  WHEN disabled_reason = 'disabled by the tenant in the portal' THEN 'tenant'
  WHEN disabled_reason = 'the endpoint answered 410 Gone'
    OR disabled_reason ~ '^failing without a success since [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$'
    THEN 'deliveries'
  ELSE 'operator' END
WHERE NOT enabled;

CREATE OR REPLACE FUNCTION mailroom_endpoint_disabled_by_kept() RETURNS trigger
LANGUAGE plpgsql
SET search_path FROM CURRENT
AS $$
BEGIN
  IF NEW.disabled_by IS NOT DISTINCT FROM OLD.disabled_by
     AND (NEW.enabled IS DISTINCT FROM OLD.enabled OR NEW.disabled_reason IS DISTINCT FROM OLD.disabled_reason) THEN
    NEW.disabled_by := CASE WHEN NEW.enabled THEN NULL ELSE 'operator' END;
  END IF;
  RETURN NEW;
END;
$$;

CREATE TRIGGER mailroom_endpoint_disabled_by_kept BEFORE UPDATE OF enabled, disabled_reason ON mailroom_endpoint
FOR EACH ROW EXECUTE FUNCTION mailroom_endpoint_disabled_by_kept();
