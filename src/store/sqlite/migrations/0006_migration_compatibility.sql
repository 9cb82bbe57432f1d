-- oldest-compatible-code: 5
-- The ledger records, per migration, the oldest code version that still runs against the
-- schema with it applied (its `-- oldest-compatible-code:` header; NULL: its own
-- version), so a process refuses a newer schema only when it must (store/migrator.ts).
-- A nullable column nothing older reads: code that knows only 0005 runs on unharmed.
ALTER TABLE mailroom_migration ADD COLUMN oldest_compatible_code INTEGER;
