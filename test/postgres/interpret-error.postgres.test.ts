// PostgreSQL-only: the table of node-postgres error codes that interpret-error.ts turns
// into store-neutral errors (SQLite has its own codes and its own table). Mostly pure; the
// last cases run the real server's errors through a store.
import { describe, it, expect, afterEach } from 'vitest';
import pg from 'pg';
import {
  RetryableStoreError,
  StoreError,
  StoreUnavailableError,
  TransactionAbortedError,
  UniqueViolationError,
  UnstorableValueError,
} from '../../src/store/errors.js';
import { interpretPgError } from '../../src/store/postgres/interpret-error.js';
import { jobInsert } from '../harness/factory.js';
import { postgresHarness } from '../harness/postgres.js';

function pgError(code: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`pg ${code}`), { code, ...extra });
}

describe('interpretPgError', () => {
  it.each(['40001', '40P01', '55P03'])('makes %s (rolled back, safe to rerun) a RetryableStoreError', (code) => {
    const error = interpretPgError(pgError(code));
    expect(error).toBeInstanceOf(RetryableStoreError);
    expect((error as Error).cause).toMatchObject({ code });
  });

  it.each(['57P01', '57P03', '08006', '08001', '53300', 'ECONNREFUSED', 'ECONNRESET'])(
    'makes %s a StoreUnavailableError that is not a retryable one',
    (code) => {
      const error = interpretPgError(pgError(code));
      expect(error).toBeInstanceOf(StoreUnavailableError);
      expect(error).not.toBeInstanceOf(RetryableStoreError);
      expect(error).toMatchObject({ code: 'MR_ERR_STORE_UNAVAILABLE', retryAfterMs: 1_000 });
    },
  );

  it('recognises node-postgres’s code-less connection errors by their fixed messages', () => {
    expect(interpretPgError(new Error('Connection terminated unexpectedly'))).toBeInstanceOf(StoreUnavailableError);
    expect(interpretPgError(new Error('timeout exceeded when trying to connect'))).toBeInstanceOf(StoreUnavailableError);
  });

  it('names the constraint of a unique violation', () => {
    const error = interpretPgError(pgError('23505', { constraint: 'mailroom_job_key_key' }));
    expect(error).toBeInstanceOf(UniqueViolationError);
    expect((error as UniqueViolationError).constraint).toBe('mailroom_job_key_key');
  });

  it.each(['22021', '54000'])('makes %s (a value the server can never store) an UnstorableValueError, a 400 and not a 503', (code) => {
    const error = interpretPgError(pgError(code));
    expect(error).toBeInstanceOf(UnstorableValueError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect(error).toMatchObject({ code: 'MR_ERR_VALUE_UNSTORABLE', httpStatus: 400 });
  });

  it('makes a unique violation MR_ERR_UNIQUE_VIOLATION, not an invalid argument', () => {
    expect(interpretPgError(pgError('23505'))).toMatchObject({ code: 'MR_ERR_UNIQUE_VIOLATION' });
  });

  it('makes a statement in an aborted transaction (25P02) a TransactionAbortedError', () => {
    expect(interpretPgError(pgError('25P02'))).toBeInstanceOf(TransactionAbortedError);
  });

  it('wraps a server error no table names in StoreError, keeping the server error as its cause', () => {
    const raw = Object.assign(new pg.DatabaseError('syntax error at or near "SELEC"', 0, 'error'), { code: '42601' });
    const error = interpretPgError(raw);
    expect(error).toBeInstanceOf(StoreError);
    expect(error).toMatchObject({ code: 'MR_ERR_STORE_FAILED', driverCode: '42601' });
    expect((error as Error).cause).toBe(raw);
  });

  it('passes other errors through unchanged', () => {
    const error = pgError('42601');
    expect(interpretPgError(error)).toBe(error);
  });
});

describe.skipIf(!postgresHarness.isAvailable)('postgres errors from the server, through the store', () => {
  afterEach(() => postgresHarness.cleanup());

  it('refuses a job type holding a NUL with MR_ERR_VALUE_UNSTORABLE', async () => {
    const { store } = await postgresHarness.open();
    await expect(store.jobInsertMany({ jobs: [jobInsert({ type: 'nul\u0000type' })] })).rejects.toMatchObject({
      code: 'MR_ERR_VALUE_UNSTORABLE',
    });
  });

  it('answers a transaction whose failed statement was caught with MR_ERR_TRANSACTION_ABORTED', async () => {
    const { store } = await postgresHarness.open();
    const attempt = store.transaction!(async (tx) => {
      await (tx.client as pg.ClientBase).query('SELECT 1/0').catch(() => undefined);
    });
    await expect(attempt).rejects.toMatchObject({ code: 'MR_ERR_TRANSACTION_ABORTED' });
  });
});
