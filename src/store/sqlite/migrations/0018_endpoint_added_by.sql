-- oldest-compatible-code: 15
-- Who added an endpoint: 'operator' (the API, CLI or dashboard) or 'tenant' (the tenant
-- portal). The SSRF guard's `endpoints.allowlist` is the operator's trust in their own
-- targets; a tenant's endpoints get `endpoints.tenantAllowlist` instead, so a tenant
-- cannot point deliveries at an internal range the operator allowed for themselves.
-- Endpoints added before this, and by code that never names the column, are the
-- operator's (the portal of that code added them as its operator would).
ALTER TABLE mailroom_endpoint ADD COLUMN added_by TEXT NOT NULL DEFAULT 'operator' CHECK (added_by IN ('operator', 'tenant'));
