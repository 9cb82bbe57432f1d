-- oldest-compatible-code: 15
-- PostgreSQL dialect of sqlite/migrations/0018: who added an endpoint ('operator' or
-- 'tenant'), which decides the SSRF allowlist its deliveries get; earlier rows and writes
-- of code that never names the column are the operator's.
ALTER TABLE mailroom_endpoint ADD COLUMN added_by TEXT NOT NULL DEFAULT 'operator' CHECK (added_by IN ('operator', 'tenant'));
