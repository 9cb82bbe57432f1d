// Store-neutral errors. Each store's interpret-error.ts maps its driver's errors onto
// these, so nothing above the seam ever sees a raw better-sqlite3 or pg error: a driver
// error no table names becomes StoreError, with the driver's error as its cause.

import { MailroomError, StoreUnavailableError } from '../core/errors.js';

/**
 * How long a write waits for a lock another connection holds before it fails with
 * StoreUnavailableError (ingress: 503), unless `lockDeadlineMs` says otherwise: every write
 * on SQLite, ingress's on PostgreSQL.
 */
export const DEFAULT_LOCK_DEADLINE_MS = 5_000;

export { StoreUnavailableError };

/** A transient failure worth retrying the whole transaction for (lock, serialization, failover). */
export class RetryableStoreError extends StoreUnavailableError {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** A unique constraint fired where the store did not expect one (not a key conflict: that is KeyConflictError). */
export class UniqueViolationError extends MailroomError {
  constructor(readonly constraint: string, cause?: unknown) {
    super('MR_ERR_UNIQUE_VIOLATION', `unique constraint ${constraint} violated`, { cause, httpStatus: 409 });
  }
}

/**
 * The database cannot keep a value as given, and never will: PostgreSQL text cannot hold
 * NUL (22021), and an index entry has a size limit (54000). Not retryable; at the
 * ingress a 400, not a 503 that would make the sender retry the same bytes forever.
 */
export class UnstorableValueError extends MailroomError {
  constructor(message: string, cause?: unknown) {
    super('MR_ERR_VALUE_UNSTORABLE', message, { cause, httpStatus: 400 });
  }
}

/** Every call on a store after close(), on either store. */
export class StoreClosedError extends MailroomError {
  constructor(readonly store: 'sqlite' | 'postgres') {
    super('MR_ERR_CLOSED', `The ${store === 'sqlite' ? 'SQLite' : 'PostgreSQL'} store is closed.`);
  }
}

/**
 * A transaction whose COMMIT the database answered with ROLLBACK: a statement in it
 * failed and the caller caught the error, so nothing in it was written.
 */
export class TransactionAbortedError extends MailroomError {
  constructor(message = 'The transaction was rolled back: a statement in it failed earlier and the error was caught.', cause?: unknown) {
    super('MR_ERR_TRANSACTION_ABORTED', message, { cause });
  }
}

/** A driver error no table in interpret-error.ts classifies; `cause` is the driver's error. */
export class StoreError extends MailroomError {
  /** The driver's own code (`SQLITE_ERROR`, `42601`), for logs and bug reports. */
  readonly driverCode: string;
  constructor(message: string, driverCode: string, cause: unknown) {
    super('MR_ERR_STORE_FAILED', message, { cause });
    this.driverCode = driverCode;
  }
}

/** A SQLite transactionSync callback returned a promise; the transaction was rolled back. */
export class TransactionAsyncError extends MailroomError {
  constructor() {
    super(
      'MR_ERR_TRANSACTION_ASYNC',
      'The SQLite transaction callback returned a promise; it must be synchronous (better-sqlite3 transactions cannot span an await).',
    );
  }
}
