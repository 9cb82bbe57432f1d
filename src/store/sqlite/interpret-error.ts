// Maps better-sqlite3 errors onto store-neutral ones. SQLITE_BUSY/LOCKED mean another
// connection holds the write lock past the busy timeout: retryable, and at the edge a 503.
// SQLITE_FULL (disk or max_page_count) is also "unavailable": nothing was written.
// Any other SqliteError becomes StoreError (its cause the driver's error), so nothing
// above the seam sees a raw driver error; errors that are not SQLite's pass through.

import Database from 'better-sqlite3';
import { RetryableStoreError, StoreError, StoreUnavailableError, UniqueViolationError, UnstorableValueError } from '../errors.js';

const RETRYABLE_CODES = new Set([
  'SQLITE_BUSY', // another connection holds the lock (busy_timeout elapsed)
  'SQLITE_BUSY_SNAPSHOT', // WAL read snapshot went stale when upgrading to write
  'SQLITE_LOCKED', // same-process lock conflict
]);

const UNAVAILABLE_CODES = new Set([
  'SQLITE_FULL', // disk full or max_page_count reached: the transaction rolled back
  'SQLITE_IOERR', // I/O failure under the database
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY',
]);

export function isSqliteRetryable(error: unknown): boolean {
  return RETRYABLE_CODES.has(codeOf(error));
}

export function interpretSqliteError(error: unknown): unknown {
  const code = codeOf(error);
  if (RETRYABLE_CODES.has(code)) return new RetryableStoreError(`SQLite is locked by another connection (${code})`, error);
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('SQLITE_IOERR')) {
    return new StoreUnavailableError(`SQLite cannot write (${code})`, { cause: error, retryAfterMs: 5_000 });
  }
  if (code === 'SQLITE_CONSTRAINT_UNIQUE') return new UniqueViolationError(String((error as Error).message), error);
  // A string or blob past SQLite's length limit: the same value will never fit.
  if (code === 'SQLITE_TOOBIG') return new UnstorableValueError(`SQLite cannot store a value this large (${code})`, error);
  if (error instanceof Database.SqliteError) return new StoreError(`SQLite refused a statement (${code}): ${error.message}`, code, error);
  return error;
}

function codeOf(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}
