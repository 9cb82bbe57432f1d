-- The migration ledger for PostgreSQL. `{{schema}}` is Mailroom's schema name (validated
-- as a lower-case identifier before substitution); mailroom_* table names are qualified
-- with it when the file is loaded (schema-sql.ts).

-- name: migrationList.lock
-- Held by one connection for a whole migrate() run (session level, released by
-- migrationList.unlock or by the connection ending): a second migrator waits here for
-- the first's whole run instead of racing it migration by migration. Same key as the
-- transaction-level lock below, which this session then re-takes at once.
-- params: none
SELECT pg_advisory_lock(hashtextextended('mailroom.migrate.{{schema}}', 0));

-- name: migrationList.unlock
-- params: none
SELECT pg_advisory_unlock(hashtextextended('mailroom.migrate.{{schema}}', 0));

-- name: migrationList.createLedger
-- Runs first in every migration transaction. The transaction-scoped advisory lock, keyed
-- by the schema, makes a second migrator of the same schema wait here until the first
-- commits; it then re-reads the ledger and finds nothing to do. Creating the schema and
-- ledger is idempotent, and only ever done under the lock. The SET LOCAL points the
-- migration's unqualified DDL at the schema and ends with the transaction.
-- params: none (several statements: sent with the simple query protocol)
SELECT pg_advisory_xact_lock(hashtextextended('mailroom.migrate.{{schema}}', 0));
CREATE SCHEMA IF NOT EXISTS "{{schema}}";
CREATE TABLE IF NOT EXISTS mailroom_migration (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
);
SET LOCAL search_path TO "{{schema}}";

-- name: migrationList
-- The applied migrations; read under the lock by migrate(), without it by schemaVersion().
-- `*`: oldest_compatible_code exists only from migration 0006 on.
-- params: none
SELECT * FROM mailroom_migration ORDER BY version;

-- name: migrationList.insert
-- Inserted before the migration's own statements, in its transaction: both or neither.
-- params: $1 version, $2 name, $3 now (null: the database clock)
INSERT INTO mailroom_migration (version, name, applied_at)
VALUES ($1, $2, coalesce($3::timestamptz, now()));

-- name: migrationList.recordCompatibility
-- After a migration's own SQL (0006 adds the column this writes): the oldest code
-- version that still runs against it.
-- params: $1 version, $2 oldest_compatible_code
UPDATE mailroom_migration SET oldest_compatible_code = $2 WHERE version = $1;

-- name: tableStats.needsAnalyze
-- Whether the job table has never been analysed (reltuples < 0 on PostgreSQL 14+) or was
-- analysed while empty. Without statistics the planner sorts every pending row for each
-- claim instead of walking the claim index: 10x slower at a 5,000-job backlog.
-- params: none
SELECT reltuples <= 0 AS needs_analyze FROM pg_class WHERE oid = 'mailroom_job'::regclass;

-- name: tableStats.analyze
-- Gathers statistics; takes a lock that does not block reads or writes.
-- params: none
ANALYZE mailroom_job;

-- name: databaseHealth
-- Read-only, from the statistics views, one round trip per metrics refresh (a few
-- hundred backends at most; no table is read).
-- The oldest open transaction is the one that holds back vacuum in this database. What
-- holds it back is a backend's horizon: an assigned transaction id (backend_xid) or a
-- snapshot still in use (backend_xmin). So a session idle in a read-committed
-- transaction that never wrote holds nothing and is left out, as are backends with no
-- transaction at all; a long repeatable-read report, or an `idle in transaction` after
-- a write, counts. The age is measured from xact_start, an upper bound on how long its
-- horizon has been held (a read-committed transaction's snapshot may be younger).
-- Autovacuum workers are left out: vacuum ignores another vacuum's horizon, and an
-- autovacuum of a big table is routinely long. Prepared transactions hold a horizon
-- until committed or rolled back, with no session to show them: pg_prepared_xacts.
-- A role without pg_read_all_stats sees NULLs for other roles' sessions: those drop
-- out of min() and the figure covers what the role may see (never an error).
-- Dead tuples: pg_stat_user_tables, Mailroom's tables in this schema by oid (the names
-- are qualified like every table here); relname is the bare table name, the label.
-- params: $1 now (null: the server's)
WITH clock AS (SELECT coalesce($1::timestamptz, statement_timestamp()) AS now),
open_xacts AS (
  SELECT a.xact_start AS started_at
    FROM pg_stat_activity a
   WHERE a.datname = current_database()
     AND a.pid <> pg_backend_pid()
     AND a.xact_start IS NOT NULL
     AND (a.backend_xid IS NOT NULL OR a.backend_xmin IS NOT NULL)
     AND a.backend_type NOT IN ('autovacuum worker', 'autovacuum launcher')
  UNION ALL
  SELECT p.prepared FROM pg_prepared_xacts p WHERE p.database = current_database()
)
SELECT greatest(0, extract(epoch FROM (SELECT clock.now FROM clock) - (SELECT min(started_at) FROM open_xacts)))::float8 * 1000
         AS oldest_transaction_age_ms,
       (SELECT coalesce(json_object_agg(s.relname, s.n_dead_tup), '{}'::json)
          FROM pg_stat_user_tables s
         WHERE s.relid IN ('mailroom_job'::regclass, 'mailroom_attempt'::regclass, 'mailroom_event'::regclass,
                           'mailroom_queue_count'::regclass)) AS dead_tuples_by_table;
