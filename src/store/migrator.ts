// The one migration runner both stores use: order, the ledger, and when to refuse a
// schema. Each store supplies a MigrationDriver (its lock and its transaction: SQLite's
// write lock, PostgreSQL's advisory lock) and its dialect's migration files; the policy
// lives here once.
//
// Refusing a newer schema: every ledger row carries the oldest code version that still
// runs against it (its migration's `-- oldest-compatible-code:` header, else its own
// version). A process refuses the database only when some applied migration needs newer
// code than it is, so a rolling deploy of a release whose migrations older code tolerates
// (a new nullable column, an extra index) is not refused on the way.

import { SchemaTooNewError } from '../core/errors.js';
import { latestVersion } from './migrations.js';
import type { Migration } from './migrations.js';
import type { MigrateParams, MigrateResult } from './store.js';

/** One row of the ledger, as the migrator reads it. */
export interface LedgerEntry {
  readonly version: number;
  /** Null in rows written before the ledger kept it, and for migrations without the header: their own version. */
  readonly oldestCompatibleCode: number | null;
}

/**
 * Applies one migration: in one transaction holding the store's migration lock (creating
 * the ledger if needed), read the ledger and pass it to `shouldApply`, which may throw to
 * refuse. When it returns true: insert the ledger row first, then run the migration's
 * SQL, then record its compatibility (`recordCompatibility`), all in that transaction.
 * Resolves whether the migration was applied; a failure of the migration's own SQL
 * rejects with MigrationError naming its version, and the transaction is rolled back.
 */
export type ApplyOne = (
  migration: Migration,
  shouldApply: (ledger: readonly LedgerEntry[]) => boolean,
  recordCompatibility: boolean,
) => Promise<boolean>;

/** What a store gives the migrator. */
export interface MigrationDriver {
  /** The ledger as it stands, without the lock; empty when it does not exist yet. */
  readLedger(): Promise<LedgerEntry[]>;
  /**
   * Runs a whole migrate() in `fn`, holding the store's migration lock across it where
   * the store has such a lock (PostgreSQL: a session advisory lock), so concurrent
   * migrators take turns by whole runs: the first applies everything, the others find
   * nothing to do. `fn` gets the ApplyOne to use inside (on the locked connection).
   */
  session<T>(fn: (applyOne: ApplyOne) => Promise<T>): Promise<T>;
}

/** Applies a store's migrations in order and decides when a schema is too new to use. */
export class Migrator {
  readonly codeVersion: number;

  constructor(
    private readonly driver: MigrationDriver,
    private readonly migrations: readonly Migration[],
  ) {
    this.codeVersion = latestVersion(migrations);
  }

  async migrate(params: MigrateParams = {}): Promise<MigrateResult> {
    const target = params.toVersion ?? this.codeVersion;
    const applied = await this.driver.session((applyOne) => this.applyUpTo(target, applyOne));
    const version = await this.schemaVersion();
    return { applied, version: version.database };
  }

  private async applyUpTo(target: number, applyOne: ApplyOne): Promise<number[]> {
    const applied: number[] = [];
    for (const migration of this.migrations) {
      if (migration.version > target) break;
      const shouldApply = (ledger: readonly LedgerEntry[]) => {
        // Re-read under the lock: a concurrent migrator may have applied it meanwhile.
        this.assertCompatible(ledger);
        return !ledger.some((entry) => entry.version === migration.version);
      };
      // Rows written before the ledger had the column (versions up to its migration) need
      // nothing recorded: null reads as "its own version", which is what they declare.
      const didApply = await applyOne(migration, shouldApply, migration.oldestCompatibleCode !== migration.version);
      if (didApply) applied.push(migration.version);
    }
    return applied;
  }

  /** How far the database is, and how far this code knows; throws when the code must not run against it. */
  async schemaVersion(): Promise<{ database: number; code: number }> {
    const ledger = await this.driver.readLedger();
    this.assertCompatible(ledger);
    return { database: Math.max(0, ...ledger.map((entry) => entry.version)), code: this.codeVersion };
  }

  /** Throws SchemaTooNewError when an applied migration needs newer code than this. */
  assertCompatible(ledger: readonly LedgerEntry[]): void {
    const needed = Math.max(0, ...ledger.map((entry) => entry.oldestCompatibleCode ?? entry.version));
    if (needed <= this.codeVersion) return;
    const newest = Math.max(0, ...ledger.map((entry) => entry.version));
    throw new SchemaTooNewError(newest, this.codeVersion, needed);
  }
}
