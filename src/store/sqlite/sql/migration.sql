-- The migration ledger for SQLite.

-- name: migrationList.createLedger
CREATE TABLE IF NOT EXISTS mailroom_migration (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);

-- name: migrationList.hasLedger
-- Whether the ledger exists yet (schemaVersion on a fresh file must not create it).
SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'mailroom_migration';

-- name: migrationList
-- The applied migrations. `*`: oldest_compatible_code exists only from migration 0006 on.
SELECT * FROM mailroom_migration ORDER BY version;

-- name: migrationList.insert
INSERT INTO mailroom_migration (version, name, applied_at) VALUES (@version, @name, @now);

-- name: migrationList.recordCompatibility
-- After a migration's own SQL (0006 adds the column this writes): the oldest code
-- version that still runs against it.
UPDATE mailroom_migration SET oldest_compatible_code = @oldestCompatibleCode WHERE version = @version;
