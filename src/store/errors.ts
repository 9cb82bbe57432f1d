// Store-neutral errors. Each store's interpret-error.ts maps its driver's errors onto
// these, so nothing above the seam ever sees a raw better-sqlite3 or pg error.

import { MailroomError, StoreUnavailableError } from '../core/errors.js';

export { StoreUnavailableError };

/** A transient failure worth retrying the whole transaction for (lock, serialization, failover). */
export class RetryableStoreError extends StoreUnavailableError {
  constructor(message: string, cause?: unknown) {
    super(message, { cause });
  }
}

/** A unique constraint fired where the store did not expect one. */
export class UniqueViolationError extends MailroomError {
  constructor(readonly constraint: string, cause?: unknown) {
    super('MR_ERR_INVALID_ARGUMENT', `unique constraint ${constraint} violated`, { cause, httpStatus: 409 });
  }
}
