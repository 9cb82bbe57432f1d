// PostgreSQL-only: the table of node-postgres error codes that interpret-error.ts turns
// into store-neutral errors (SQLite has its own codes and its own table). Pure: no server.
import { describe, it, expect } from 'vitest';
import { RetryableStoreError, StoreUnavailableError, UniqueViolationError } from '../../src/store/errors.js';
import { interpretPgError } from '../../src/store/postgres/interpret-error.js';

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

  it('passes other errors through unchanged', () => {
    const error = pgError('42601');
    expect(interpretPgError(error)).toBe(error);
  });
});
