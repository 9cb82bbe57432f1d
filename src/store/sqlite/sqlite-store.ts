// The SQLite store: better-sqlite3 12 on one connection. Built in layers, as the
// PostgreSQL store is:
//   sqlite-connection.ts    opening the file, pragmas, the two durability classes
//   write-engine.ts         statement cache, BEGIN IMMEDIATE writes, group commit, lock retries
//   sqlite-executor.ts      every Store data method (this class inherits them)
//   sqlite-migration-driver.ts + ../migrator.ts   migrations (one runner for both stores)
//   ../rows.ts              rows → Job, Attempt, InboundEvent (shared with PostgreSQL)
// What is left here is the lifecycle (migrate, ping, close) and the caller's own
// synchronous transaction (the outbox).

import type Database from 'better-sqlite3';
import { loadSqlDir } from '../sql-file.js';
import { loadMigrations } from '../migrations.js';
import { Migrator } from '../migrator.js';
import { StoreUnavailableError, TransactionAsyncError } from '../errors.js';
import type { MigrateParams, MigrateResult, Store, StoreCapabilities, SyncStoreTransaction } from '../store.js';
import { interpretSqliteError } from './interpret-error.js';
import { openSqliteConnection } from './sqlite-connection.js';
import type { SqliteConnectionOptions } from './sqlite-connection.js';
import { SqliteExecutor } from './sqlite-executor.js';
import { SqliteMigrationDriver } from './sqlite-migration-driver.js';
import { SqliteWriteEngine } from './write-engine.js';

export type { SqliteSynchronous } from './sqlite-connection.js';

export interface SqliteStoreOptions extends SqliteConnectionOptions {
  /** How long a write keeps retrying a held lock before StoreUnavailableError. @default 5000 */
  readonly lockDeadlineMs?: number;
}

const SQL = loadSqlDir(new URL('./sql/', import.meta.url));
const MIGRATIONS = loadMigrations(new URL('./migrations/', import.meta.url));

export class SqliteStore extends SqliteExecutor implements Store {
  readonly capabilities: StoreCapabilities = {
    listenNotify: false,
    skipLocked: false,
    multiProcess: false,
    syncTransactions: true,
    asyncTransactions: false,
    // No vacuum horizon to watch: one process holds the file, and freed pages are reused.
    databaseHealth: false,
    roundTrips: false,
  };
  readonly description: string;
  readonly durability: Record<string, string>;

  private readonly migrator: Migrator;

  constructor(options: SqliteStoreOptions) {
    const connection = openSqliteConnection(options);
    super((mergedWrite) => new SqliteWriteEngine(connection, SQL, mergedWrite, options.lockDeadlineMs));
    this.description = connection.description;
    this.durability = connection.durability;
    this.migrator = new Migrator(new SqliteMigrationDriver(this.engine), MIGRATIONS);
  }

  /** The better-sqlite3 handle, for the outbox and for tests that inspect pragmas. */
  get database(): Database.Database {
    return this.engine.db;
  }

  // ---- lifecycle ----

  migrate(params?: MigrateParams): Promise<MigrateResult> {
    return this.migrator.migrate(params);
  }

  schemaVersion(): Promise<{ database: number; code: number }> {
    return this.migrator.schemaVersion();
  }

  async ping(): Promise<void> {
    this.engine.assertOpen();
    this.engine.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    await this.engine.close();
  }

  transactionSync<T>(fn: (tx: SyncStoreTransaction) => T): T {
    const tx: SyncStoreTransaction = {
      db: this.engine.db,
      batchInsert: (params) => this.insertBatchSync(params),
      jobInsertMany: (params) => this.insertJobsSync(params.jobs, params.now, null),
      jobFinishMany: (params) => this.finishManySync(params),
      messagePublish: (params) => this.messagePublishSync(params),
    };
    try {
      return this.engine.writeSync('ack', () => {
        const result = fn(tx);
        // Rolling back here is the only safe answer: the promise would run outside the transaction.
        if (result && typeof (result as { then?: unknown }).then === 'function') throw new TransactionAsyncError();
        return result;
      });
    } catch (error) {
      // A held lock or a failing disk is the store's problem, not the caller's SQL: surface it
      // as StoreUnavailableError like every async method (it cannot retry: this call is
      // synchronous). The caller's own errors, constraint violations included, pass through.
      const interpreted = interpretSqliteError(error);
      throw interpreted instanceof StoreUnavailableError ? interpreted : error;
    }
  }
}
