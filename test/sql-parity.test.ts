// Both dialects define the same SQL: the same .sql files, the same `-- name:` blocks in
// each, and the same migration version numbers, so a reviewer can diff one statement
// across stores and a feature never lands on one store only (STYLE §3).

import { readFileSync, readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TASK_BUDGET_MIGRATION, TASK_DIRECTORY_MIGRATION } from '../src/core/task-directory.js';
import { loadMigrations } from '../src/store/migrations.js';
import { parseSqlBlocks, parseSqlFile } from '../src/store/sql-file.js';

const SQLITE_SQL = new URL('../src/store/sqlite/sql/', import.meta.url);
const POSTGRES_SQL = new URL('../src/store/postgres/sql/', import.meta.url);
const SQLITE_MIGRATIONS = new URL('../src/store/sqlite/migrations/', import.meta.url);
const POSTGRES_MIGRATIONS = new URL('../src/store/postgres/migrations/', import.meta.url);

/**
 * Block names one dialect may lack, each with the reason. Empty today; an entry here is a
 * deliberate, reviewed difference, never a way to silence a missing statement.
 */
const ALLOWED_ONLY_IN: Record<'sqlite' | 'postgres', ReadonlySet<string>> = {
  sqlite: new Set<string>([
    // SQLite keeps its status counters from the store's own statements, once per batch:
    // a row trigger cost ~6 µs per status change, a third of a claim. PostgreSQL keeps
    // them with statement-level triggers over transition tables, which cost per statement.
    'queueCountAdd',
    // Replay reads the status it moves a job from, for those counters.
    'jobReplay.status',
    // Batch counts likewise, once per batch per transaction (status-count-deltas.ts): a row
    // trigger cost ~0.3 µs on every status change here. PostgreSQL keeps them with a row
    // trigger whose WHEN skips jobs outside a batch at no measurable cost (migration 0011).
    'batchSettle',
    // A deliver job that dies settles its pending delivery as failed: from the store's dead
    // paths here, for the same reason; a row trigger whose WHEN skips every other job on
    // PostgreSQL (migration 0013).
    'deliverySettleDeadJob',
    // SQLite's jobClaim is two statements, a pick and a lease, in one write transaction
    // (cheaper than one UPDATE with a subquery there); PostgreSQL's jobClaim is the whole
    // claim in one statement, since it must pick with SKIP LOCKED inside its UPDATE. The
    // names say so: a block named jobClaim is the whole claim, in either dialect.
    'jobClaim.pick',
    // A claim of one type names it (`type = @type`) rather than passing a list: SQLite then
    // walks the type index in claim order and stops at the limit, where the list costs a
    // json_each and a sorter per claim. PostgreSQL's `type = ANY(@types)` has no such cost.
    'jobClaim.pick.oneType',
    'jobClaim.pickLimited.oneType',
    'jobClaimable.oneType',
    // A claim in named queues reads the lane index (queue, type, …) that SQLite names in its
    // statements (migration 0019); PostgreSQL takes `queue = ANY(@queues)` in one statement
    // and plans the index from its statistics.
    'jobClaim.pick.inQueues',
    'jobClaim.pick.inQueues.oneType',
    'jobClaim.pickLimited.inQueues',
    'jobClaim.pickLimited.inQueues.oneType',
    'jobClaimable.inQueues.oneType',
    // One type in one named queue walks that lane's priorities (fragment laneLevels), as the
    // one-type claims walk the type's; PostgreSQL's `.oneQueue` forms do it for every type.
    'jobClaim.pick.oneQueue.oneType',
    'jobClaim.pickLimited.oneQueue.oneType',
    'jobClaimable.oneQueue.oneType',
    // A keyless batch is one INSERT over json_each with ids derived from the last rowid;
    // PostgreSQL's jobInsertMany is already one statement over unnest for every batch.
    'jobInsertMany.keyless',
    // SQLite reads a job's history in one read transaction (one snapshot); PostgreSQL folds
    // it into jobGet's single statement, since its separate statements see separate snapshots.
    'jobGet.attempts',
    'jobGet.replays',
    // Whether the ledger exists, asked of the catalogue; PostgreSQL reads the ledger and
    // takes "undefined table" (42P01) for "none yet".
    'migrationList.hasLedger',
    // SQLite plans without table statistics, so a status-filtered list reads the counters to
    // choose between a partial index and a walk in id order; PostgreSQL's planner has statistics.
    'jobList.matchEstimate',
    // A success written with its job's done: PostgreSQL writes it inside
    // jobFinishMany.doneDelivered, one statement with the finish.
    'deliveryRecord.delivered',
    // The oldest-pending walk of a queue with more types or priorities than it takes comes
    // back cut short, and the store reads that queue's rows in a second statement. SQLite's
    // walk goes by (queue, type) in the lane index; PostgreSQL's by queue, falling back in
    // its one statement.
    'jobStats.oldestPending.read',
    // Likewise the next run time: walked by priority in the type or the lane index (PostgreSQL
    // walks its claim or queue index), and read row by row past the walk's bound.
    'jobClaimable.nextRunAt.inQueues',
  ]),
  postgres: new Set<string>([
    // Deliver jobs' successes finished with their deliveries' records in one statement: on
    // PostgreSQL deliveryRecordMany's transaction is four round trips, and a success needs
    // no read before its write. SQLite runs deliveryRecordMany's body in the finish's write.
    'jobFinishMany.doneDelivered',
    // A keyless publish, or a group of them, as one statement: a round trip each was most
    // of a PostgreSQL publish. SQLite concurrent publishes share one commit already (each
    // its own savepoint in the write engine's acknowledgement), and a statement costs no
    // round trip.
    'messagePublish.keyless',
    // The whole claim in one statement (see jobClaim.pick above).
    'jobClaim',
    'jobClaim.inQueues',
    // A claim in one named queue compares its queue with `($n)[1]`, which PostgreSQL's generic
    // plan seeks the queue index by; with `= ANY($n)` it walked the claim index past every
    // other queue's backlog. SQLite names its lane index in the .inQueues forms instead.
    'jobClaim.oneQueue',
    'jobClaim.pickLimited.oneQueue',
    'jobClaimable.oneQueue',
    'jobClaimable.limited.oneQueue',
    // "May a limited job start?" is the claim's own pick without locks. On SQLite that is
    // the pick itself, for one job (nothing locks there); PostgreSQL's pick row-locks what
    // it reads, which a probe must not (jobClaimable.limited says why).
    'jobClaimable.limited',
    'jobClaimable.limited.byKey',
    'jobClaimable.nextRunAt.oneQueue',
    // A limited claim is several statements in one transaction (pick, lease, starts); they
    // share one instant of the server's clock. SQLite's clock is the process's.
    'claimClock',
    // Limited claims of one type are serialised by an advisory lock; SQLite has one writer.
    'limitLock',
    // PostgreSQL plans claims from table statistics; a freshly created table has none until
    // autovacuum's first analyse (a minute or more), so the store analyses it once itself.
    // SQLite's planner needs no statistics for the claim index.
    'tableStats.needsAnalyze',
    'tableStats.analyze',
    // The vacuum horizon and dead rows (capabilities.databaseHealth): SQLite has no
    // vacuum horizon, and a deleted row's pages are reused without one.
    'databaseHealth',
    // SQLite's clock is the process's (Date.now()); PostgreSQL's is the server's.
    'databaseNow',
    // A lock held across a whole migrate() run; SQLite's write lock cannot outlive one
    // transaction, so there each migration's own write lock serialises migrators.
    'migrationList.lock',
    'migrationList.unlock',
    // deliveryStartMany's unlocked first look as one joined statement, where each read is a
    // round trip; SQLite makes the same reads one by one in one read transaction.
    'deliveryStart.read',
  ]),
};

function sqlFiles(dir: URL): string[] {
  try {
    return readdirSync(dir).filter((name) => name.endsWith('.sql')).sort();
  } catch {
    return [];
  }
}

/** file name → block names, parsed the way the stores load them. */
function blocksByFile(dir: URL): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const file of sqlFiles(dir)) {
    result.set(file, [...parseSqlBlocks(readFileSync(new URL(file, dir), 'utf8')).keys()].sort());
  }
  return result;
}

function withoutAllowed(names: string[], dialect: 'sqlite' | 'postgres'): string[] {
  return names.filter((name) => !ALLOWED_ONLY_IN[dialect].has(name));
}

const hasPostgresSql = sqlFiles(POSTGRES_SQL).length > 0;

describe('SQL parity between the SQLite and PostgreSQL dialects', () => {
  it('has named SQLite blocks to compare', () => {
    const blocks = blocksByFile(SQLITE_SQL);
    expect(blocks.size).toBeGreaterThan(0);
    expect([...blocks.values()].flat()).toContain('jobClaim.pick');
  });

  it.skipIf(!hasPostgresSql)(
    `defines the same .sql files and block names in both dialects${hasPostgresSql ? '' : ' (SKIPPED: src/store/postgres/sql has no .sql files yet)'}`,
    () => {
      const sqlite = blocksByFile(SQLITE_SQL);
      const postgres = blocksByFile(POSTGRES_SQL);
      expect([...postgres.keys()]).toEqual([...sqlite.keys()]);
      for (const [file, names] of sqlite) {
        expect({ file, names: withoutAllowed(postgres.get(file) ?? [], 'postgres') }).toEqual({
          file,
          names: withoutAllowed(names, 'sqlite'),
        });
      }
    },
  );

  it.skipIf(!hasPostgresSql)(
    `numbers migrations the same in both dialects${hasPostgresSql ? '' : ' (SKIPPED: src/store/postgres/sql has no .sql files yet)'}`,
    () => {
      const versions = (dir: URL) => loadMigrations(dir).map((m) => `${String(m.version).padStart(4, '0')}_${m.name}`);
      expect(versions(POSTGRES_MIGRATIONS)).toEqual(versions(SQLITE_MIGRATIONS));
      expect(versions(SQLITE_MIGRATIONS).length).toBeGreaterThan(0);
    },
  );

  it('keeps the version the task directory reads from equal to the migration that creates its table', () => {
    // Mailroom.open skips the directory's read on an older schema by this number; a
    // renumbered migration would otherwise skip it silently on every database.
    for (const dir of [SQLITE_MIGRATIONS, POSTGRES_MIGRATIONS]) {
      expect(loadMigrations(dir).find((m) => m.name === 'task_directory')?.version).toBe(TASK_DIRECTORY_MIGRATION);
      expect(loadMigrations(dir).find((m) => m.name === 'task_max_attempts')?.version).toBe(TASK_BUDGET_MIGRATION);
    }
  });

  it('declares the same compatibility for each migration in both dialects, so a rolling deploy is refused the same way on both', () => {
    const compatibility = (dir: URL) => loadMigrations(dir).map((m) => [m.version, m.oldestCompatibleCode]);
    expect(compatibility(POSTGRES_MIGRATIONS)).toEqual(compatibility(SQLITE_MIGRATIONS));
  });

  it('defines the same shared fragments in both dialects and splices every one it uses', () => {
    const fragments = (dir: URL) =>
      new Map(sqlFiles(dir).map((file) => [file, [...parseSqlFile(readFileSync(new URL(file, dir), 'utf8')).fragments.keys()].sort()]));
    expect(fragments(POSTGRES_SQL)).toEqual(fragments(SQLITE_SQL));
    expect([...fragments(SQLITE_SQL).values()].flat()).toContain('claimable');
    for (const dir of [SQLITE_SQL, POSTGRES_SQL]) {
      for (const [file, names] of blocksByFile(dir)) {
        const blocks = parseSqlBlocks(readFileSync(new URL(file, dir), 'utf8'));
        for (const name of names) expect(blocks.get(name), `${file} ${name}`).not.toMatch(/\{\{(?!schema\}\})\w+\}\}/);
      }
    }
  });

  it('keeps every allow-listed difference real, so stale entries get removed', () => {
    const sqlite = [...blocksByFile(SQLITE_SQL).values()].flat();
    const postgres = [...blocksByFile(POSTGRES_SQL).values()].flat();
    for (const name of ALLOWED_ONLY_IN.sqlite) expect(postgres, `${name} is in both now`).not.toContain(name);
    for (const name of ALLOWED_ONLY_IN.postgres) expect(sqlite, `${name} is in both now`).not.toContain(name);
  });
});
