// Maps node-postgres errors onto store-neutral ones, so nothing above the seam sees a raw
// pg error. The tables below are the whole policy: what is worth retrying the whole
// transaction for, and what means "the database is not there right now" (ingress turns
// StoreUnavailableError into 503 + Retry-After).

import pg from 'pg';
import {
  RetryableStoreError,
  StoreError,
  StoreUnavailableError,
  TransactionAbortedError,
  UniqueViolationError,
  UnstorableValueError,
} from '../errors.js';

/** The transaction was rolled back and nothing was written: run it again as it was. */
const RETRYABLE_CODES: ReadonlyMap<string, string> = new Map([
  ['40001', 'serialization_failure: a concurrent transaction won; rerun'],
  ['40P01', 'deadlock_detected: the server killed one side; rerun'],
  ['55P03', 'lock_not_available: a lock timeout fired; rerun'],
]);

/** The server or the connection is gone or refusing; a later attempt may succeed. */
const UNAVAILABLE_CODES: ReadonlyMap<string, string> = new Map([
  ['57P01', 'admin_shutdown: the server is shutting down or our backend was terminated'],
  ['57P02', 'crash_shutdown: another backend crashed and the server is restarting'],
  ['57P03', 'cannot_connect_now: the server is starting up or in recovery'],
  ['53300', 'too_many_connections'],
  ['53100', 'disk_full: nothing was written'],
  ['53200', 'out_of_memory'],
  ['25006', 'read_only_sql_transaction: connected to a standby (failover in progress)'],
  // The server refused the connection itself: the URL names a database, role or password
  // it does not know (or not yet: the database may be created, the role granted).
  ['3D000', 'invalid_catalog_name: no such database'],
  ['28000', 'invalid_authorization_specification: the server refused this role or host'],
  ['28P01', 'invalid_password: wrong password'],
  // Class 08 (connection_exception) is matched by prefix below: 08000, 08003, 08006, 08001, 08004, …
]);

/**
 * The value can never be stored as given: rerunning sends the same value again, so these
 * are neither retryable nor "unavailable" (a 503 would have a webhook sender retry the
 * same bytes forever); they are UnstorableValueError, a 400 at the ingress.
 */
const UNSTORABLE_CODES: ReadonlyMap<string, string> = new Map([
  ['22021', 'character_not_in_repertoire: text cannot hold a NUL character'],
  ['54000', 'program_limit_exceeded: e.g. an index row larger than an index page allows'],
]);

/** Socket errors from Node: the TCP connection failed or broke. */
const NETWORK_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED', // nothing listening (server down or restarting)
  'ECONNRESET', // connection dropped mid-conversation
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND', // DNS: host unknown
  'EAI_AGAIN', // DNS: temporary failure
]);

/**
 * node-postgres reports a connection that ended under a query, and a pool that timed out
 * waiting for a connection, with plain Errors that carry no code; these messages are its
 * own fixed strings (pg/lib/client.js, pg-pool/index.js), so matching them is the only way.
 */
const DRIVER_MESSAGES: readonly RegExp[] = [
  /^Connection terminated/,
  /^timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
  /^Cannot use a pool after calling end on the pool/,
];

export function pgErrorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/**
 * Whether `is` holds for the error or for its cause: our own statements arrive already
 * interpreted (a MailroomError), with the pg error as their cause.
 */
export function isOrCausedBy(error: unknown, is: (error: unknown) => boolean): boolean {
  return is(error) || is((error as { cause?: unknown } | null)?.cause);
}

/** Rolled back and safe to rerun as a whole (serialization failure, deadlock, lock timeout). */
export function isPgRetryable(error: unknown): boolean {
  return RETRYABLE_CODES.has(pgErrorCode(error)) || error instanceof RetryableStoreError;
}

/**
 * A prepared statement whose result columns changed under it: another process migrated a
 * table this connection's statement reads `*` from (a compatible migration that adds a
 * column). The statement did not run; a fresh connection prepares it again.
 */
export function isPgStalePlan(error: unknown): boolean {
  return pgErrorCode(error) === '0A000' && error instanceof Error && /cached plan must not change result type/.test(error.message);
}

/** A lock_timeout fired (lock_not_available): the statement waited past the transaction's own bound. */
export function isPgLockTimeout(error: unknown): boolean {
  return pgErrorCode(error) === '55P03';
}

/** The connection or server is gone: an outcome may or may not have committed. */
export function isPgUnavailable(error: unknown): boolean {
  const code = pgErrorCode(error);
  if (UNAVAILABLE_CODES.has(code) || code.startsWith('08') || NETWORK_CODES.has(code)) return true;
  const message = error instanceof Error ? error.message : '';
  return DRIVER_MESSAGES.some((pattern) => pattern.test(message));
}

/**
 * A store-neutral error for `error`; errors that are already Mailroom's, and errors that
 * are not the driver's, pass through. A server error no table names is wrapped in
 * StoreError with the server's error as its cause.
 */
export function interpretPgError(error: unknown): unknown {
  if (error instanceof StoreUnavailableError) return error;
  const code = pgErrorCode(error);
  const retryable = RETRYABLE_CODES.get(code);
  if (retryable) return new RetryableStoreError(`PostgreSQL ${code} (${retryable})`, error);
  if (isPgUnavailable(error)) {
    const why = UNAVAILABLE_CODES.get(code) ?? (code.startsWith('08') ? 'connection_exception' : code || (error as Error).message);
    // A refused connection says which database or role; the server's text never holds the password.
    const detail = code === '3D000' || code.startsWith('28') ? `: ${(error as Error).message}` : '';
    return new StoreUnavailableError(`PostgreSQL is unavailable (${why})${detail}`, { cause: error, retryAfterMs: 1_000 });
  }
  if (code === '23505') {
    const constraint = (error as { constraint?: unknown }).constraint;
    return new UniqueViolationError(typeof constraint === 'string' ? constraint : 'unknown', error);
  }
  const unstorable = UNSTORABLE_CODES.get(code);
  if (unstorable) return new UnstorableValueError(`PostgreSQL cannot store a value as given (${code} ${unstorable})`, error);
  // in_failed_sql_transaction: an earlier statement failed and the caller carried on.
  if (code === '25P02') return new TransactionAbortedError(undefined, error);
  if (error instanceof pg.DatabaseError) return new StoreError(`PostgreSQL refused a statement (${code}): ${error.message}`, code, error);
  return error;
}
