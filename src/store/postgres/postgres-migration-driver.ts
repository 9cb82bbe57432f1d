// The PostgreSQL side of the shared migrator (store/migrator.ts): a whole run on one
// pooled connection holding a session advisory lock keyed by the schema
// (migrationList.lock), each migration in its own transaction that also takes the same
// lock at transaction level (migrationList.createLedger; re-entrant in this session, and
// what guards a migrator of an older release, which takes only that one). So `serve` and
// `worker` can migrate one schema at the same moment: the second waits for the first's
// whole run, re-reads the ledger and finds nothing to do.

import { MailroomError, MigrationError } from '../../core/errors.js';
import type { ApplyOne, LedgerEntry, MigrationDriver } from '../migrator.js';
import type { Migration } from '../migrations.js';
import { interpretPgError, pgErrorCode } from './interpret-error.js';
import type pg from 'pg';
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

  async session<T>(fn: (applyOne: ApplyOne) => Promise<T>): Promise<T> {
    const sql = schemaSql(this.schema);
    const client = await this.pool.connect();
    const connection = { client, isBroken: false };
    try {
      await client.query(sqlBlock(sql, 'migrationList.lock'));
    } catch (error) {
      client.release(true);
      throw interpretPgError(error);
    }
    try {
      return await fn((migration, shouldApply, recordCompatibility) =>
        this.applyOne(connection, migration, shouldApply, recordCompatibility),
      );
    } finally {
      // Ending the session would release the lock too: a broken connection is destroyed.
      if (!connection.isBroken) {
        await client.query(sqlBlock(sql, 'migrationList.unlock')).catch(() => {
          connection.isBroken = true;
        });
      }
      client.release(connection.isBroken ? true : undefined);
    }
  }

  private async applyOne(
    connection: { readonly client: pg.PoolClient; isBroken: boolean },
    migration: Migration,
    shouldApply: (ledger: readonly LedgerEntry[]) => boolean,
    recordCompatibility: boolean,
  ): Promise<boolean> {
    if (!migration.isTransactional) {
      throw new MigrationError(migration.version, 'the PostgreSQL migrator does not run -- no-transaction migrations yet');
    }
    const sql = schemaSql(this.schema);
    const { client } = connection;
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
        connection.isBroken = true;
      });
      throw error instanceof MailroomError ? error : interpretPgError(error);
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
