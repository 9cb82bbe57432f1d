// The PostgreSQL side of the shared migrator (store/migrator.ts): each migration in its
// own transaction on one pooled connection, under a transaction-scoped advisory lock keyed
// by the schema (migrationList.createLedger), so `serve` and `worker` can migrate one
// schema at the same moment: the second waits, re-reads the ledger and finds nothing to do.

import { MailroomError, MigrationError } from '../../core/errors.js';
import type { LedgerEntry, MigrationDriver } from '../migrator.js';
import type { Migration } from '../migrations.js';
import { interpretPgError, pgErrorCode } from './interpret-error.js';
import { ClientRunner } from './query-runner.js';
import type { PoolRunner, QueryRunner } from './query-runner.js';
import { schemaSql, sqlBlock } from './schema-sql.js';

export class PostgresMigrationDriver implements MigrationDriver {
  constructor(
    private readonly pool: PoolRunner,
    private readonly schema: string,
  ) {}

  readLedger(): Promise<LedgerEntry[]> {
    return this.ledger(this.pool);
  }

  async applyOne(
    migration: Migration,
    shouldApply: (ledger: readonly LedgerEntry[]) => boolean,
    recordCompatibility: boolean,
  ): Promise<boolean> {
    if (!migration.isTransactional) {
      throw new MigrationError(migration.version, 'the PostgreSQL migrator does not run -- no-transaction migrations yet');
    }
    const sql = schemaSql(this.schema);
    const client = await this.pool.connect();
    let isBroken = false;
    try {
      await client.query('BEGIN');
      // Lock, schema, ledger, search_path (several statements, no parameters).
      await client.query(sqlBlock(sql, 'migrationList.createLedger'));
      const runner = new ClientRunner(client, 'transaction');
      if (!shouldApply(await this.ledger(runner))) {
        await client.query('COMMIT');
        return false;
      }
      await runner.run(sqlBlock(sql, 'migrationList.insert'), [migration.version, migration.name, null]);
      try {
        await client.query(migration.sql);
      } catch (cause) {
        throw new MigrationError(migration.version, (cause as Error).message, cause);
      }
      if (recordCompatibility) {
        await runner.run(sqlBlock(sql, 'migrationList.recordCompatibility'), [migration.version, migration.oldestCompatibleCode]);
      }
      await client.query('COMMIT');
      return true;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        isBroken = true;
      });
      throw error instanceof MailroomError ? error : interpretPgError(error);
    } finally {
      client.release(isBroken ? true : undefined);
    }
  }

  private async ledger(runner: QueryRunner): Promise<LedgerEntry[]> {
    try {
      const rows = await runner.run(sqlBlock(schemaSql(this.schema), 'migrationList'));
      return rows.map((row) => ({
        version: Number(row.version),
        oldestCompatibleCode: row.oldest_compatible_code === null || row.oldest_compatible_code === undefined ? null : Number(row.oldest_compatible_code),
      }));
    } catch (error) {
      // No ledger yet (42P01 undefined_table; 3F000 if the schema itself is missing).
      const code = pgErrorCode((error as { cause?: unknown }).cause ?? error);
      if (code === '42P01' || code === '3F000') return [];
      throw error;
    }
  }
}
