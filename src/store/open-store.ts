// Turns a store URL (or an open better-sqlite3 Database) into a Store. The only module
// that knows both implementations; everything else sees the Store interface.

import { parseStoreUrl } from './store-url.js';
import type { SqliteSynchronous } from './store-url.js';
import type { Store } from './store.js';
import { StoreUrlError } from '../core/errors.js';

export interface OpenStoreOptions {
  /** A store URL, or an open better-sqlite3 Database to share with the app. */
  readonly db: string | object;
  /** SQLite durability; the URL's `?synchronous=` wins over this. @default 'full' */
  readonly synchronous?: SqliteSynchronous;
  /** PostgreSQL schema for Mailroom's tables; the URL's `?schema=` wins over this. */
  readonly schema?: string;
  /** PostgreSQL pool size. @default 10 */
  readonly poolSize?: number;
  /** SQLite: how long a write retries a lock held by another process. @default 5000 */
  readonly lockDeadlineMs?: number;
}

export async function openStore(options: OpenStoreOptions): Promise<Store> {
  if (typeof options.db === 'object' && options.db !== null) {
    if (typeof (options.db as { prepare?: unknown }).prepare !== 'function') {
      throw new StoreUrlError('db must be a store URL string or an open better-sqlite3 Database');
    }
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    return new SqliteStore({ database: options.db as never, synchronous: options.synchronous, lockDeadlineMs: options.lockDeadlineMs });
  }
  const parsed = parseStoreUrl(options.db);
  if (parsed.kind === 'sqlite') {
    const { SqliteStore } = await import('./sqlite/sqlite-store.js');
    return new SqliteStore({
      path: parsed.path,
      synchronous: parsed.synchronous ?? options.synchronous,
      lockDeadlineMs: options.lockDeadlineMs,
    });
  }
  // Each store is loaded when it is opened: SQLite-only users never load the PostgreSQL
  // driver, and a PostgreSQL worker does not load better-sqlite3 and the SQLite store.
  const { PostgresStore } = await import('./postgres/postgres-store.js');
  return PostgresStore.open({ url: parsed.url, schema: parsed.schema ?? options.schema, poolSize: options.poolSize, lockDeadlineMs: options.lockDeadlineMs });
}
