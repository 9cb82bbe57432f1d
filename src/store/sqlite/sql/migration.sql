-- The migration ledger for SQLite.

-- name: migrationList.createLedger
CREATE TABLE IF NOT EXISTS mailroom_migration (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at INTEGER NOT NULL
);

-- name: migrationList
SELECT version, name FROM mailroom_migration ORDER BY version;

-- name: migrationList.insert
INSERT INTO mailroom_migration (version, name, applied_at) VALUES (@version, @name, @now);
