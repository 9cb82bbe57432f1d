// The SQLite side of the shared migrator (store/migrator.ts): each migration in its own
// BEGIN IMMEDIATE transaction on the write engine, so the single write lock is what
// serialises concurrent migrators (another process's migrate waits for it, re-reads the
// ledger and finds nothing to do).

import { MigrationError } from '../../core/errors.js';
import type { ApplyOne, LedgerEntry, MigrationDriver } from '../migrator.js';
import type { Migration } from '../migrations.js';
import type { Row } from '../rows.js';
import type { SqliteWriteEngine } from './write-engine.js';

export class SqliteMigrationDriver<M> implements MigrationDriver {
  constructor(private readonly engine: SqliteWriteEngine<M>) {}

  async readLedger(): Promise<LedgerEntry[]> {
    return this.engine.read(() => {
      const hasLedger = this.engine.stmt('migrationList.hasLedger').get() !== undefined;
      return hasLedger ? this.ledger() : [];
    });
  }

  /** No lock across the run: each migration's write lock serialises concurrent migrators. */
  session<T>(fn: (applyOne: ApplyOne) => Promise<T>): Promise<T> {
    return fn((migration, shouldApply, recordCompatibility) => this.applyOne(migration, shouldApply, recordCompatibility));
  }

  private async applyOne(
    migration: Migration,
    shouldApply: (ledger: readonly LedgerEntry[]) => boolean,
    recordCompatibility: boolean,
  ): Promise<boolean> {
    return this.engine.write('ack', () => {
      this.engine.stmt('migrationList.createLedger').run();
      // Read under the write lock: a concurrent migrator may have applied it meanwhile.
      if (!shouldApply(this.ledger())) return false;
      this.engine.stmt('migrationList.insert').run({ version: migration.version, name: migration.name, now: Date.now() });
      try {
        this.engine.db.exec(migration.sql);
      } catch (cause) {
        throw new MigrationError(migration.version, (cause as Error).message, cause);
      }
      if (recordCompatibility) {
        this.engine
          .stmt('migrationList.recordCompatibility')
          .run({ version: migration.version, oldestCompatibleCode: migration.oldestCompatibleCode });
      }
      return true;
    });
  }

  private ledger(): LedgerEntry[] {
    return (this.engine.stmt('migrationList').all() as Row[]).map((row) => ({
      version: row.version as number,
      oldestCompatibleCode: (row.oldest_compatible_code ?? null) as number | null,
    }));
  }
}
