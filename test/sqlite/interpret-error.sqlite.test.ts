// SQLite-only: the table of better-sqlite3 error codes that interpret-error.ts turns into
// store-neutral errors (PostgreSQL has its own codes and its own table). Pure: no file.
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { KeyConflictError } from '../../src/core/errors.js';
import { RetryableStoreError, StoreError, StoreUnavailableError, UniqueViolationError, UnstorableValueError } from '../../src/store/errors.js';
import { interpretSqliteError } from '../../src/store/sqlite/interpret-error.js';

function sqliteError(code: string): Error {
  return new Database.SqliteError(`sqlite ${code}`, code);
}

describe('interpretSqliteError', () => {
  it('makes a held lock a RetryableStoreError and a full disk a StoreUnavailableError', () => {
    expect(interpretSqliteError(sqliteError('SQLITE_BUSY'))).toBeInstanceOf(RetryableStoreError);
    expect(interpretSqliteError(sqliteError('SQLITE_FULL'))).toBeInstanceOf(StoreUnavailableError);
  });

  it('makes a unique violation MR_ERR_UNIQUE_VIOLATION, not an invalid argument', () => {
    const error = interpretSqliteError(sqliteError('SQLITE_CONSTRAINT_UNIQUE'));
    expect(error).toBeInstanceOf(UniqueViolationError);
    expect(error).toMatchObject({ code: 'MR_ERR_UNIQUE_VIOLATION' });
  });

  it('makes a value past SQLite’s length limit an UnstorableValueError', () => {
    expect(interpretSqliteError(sqliteError('SQLITE_TOOBIG'))).toBeInstanceOf(UnstorableValueError);
  });

  it('wraps a driver error no table names in StoreError, keeping it as the cause', () => {
    const raw = sqliteError('SQLITE_ERROR');
    const error = interpretSqliteError(raw);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'MR_ERR_STORE_FAILED', driverCode: 'SQLITE_ERROR' });
    expect((error as Error).cause).toBe(raw);
  });

  it('passes errors that are not the driver’s through unchanged', () => {
    const conflict = new KeyConflictError('k', '1');
    expect(interpretSqliteError(conflict)).toBe(conflict);
    const plain = new Error('not sqlite');
    expect(interpretSqliteError(plain)).toBe(plain);
  });
});
