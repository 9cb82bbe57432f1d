// The rows of SQLite's jobClaim.lease and jobFinishMany.done as better-sqlite3 hands them
// in raw mode (arrays), turned into what the executor reads. An object per row built
// inside better-sqlite3 costs ~0.2 µs a column (3.4 µs for a claimed row of 16 columns);
// an array and the literal below cost 2.1 µs for 18 (measured: 100-row reads, node 20),
// so the claim carries the batch columns for less than it carried none before.

import type { ClaimedRow } from '../claimed-job.js';

/** jobClaim.lease's RETURNING list, in order; checked against the statement once (leaseColumnsMatch). */
const LEASE_COLUMNS = [
  'id', 'queue', 'type', 'priority', 'payload', 'run_at', 'attempts', 'max_attempts', 'last_error', 'key',
  'group_key', 'event_id', 'source', 'created_at', 'trace_context', 'snoozes', 'batch_id', 'completes_batch_id',
] as const;

/** One raw jobClaim.lease row as a ClaimedRow (LEASE_COLUMNS order). */
export function claimedRowFromArray(r: readonly any[]): ClaimedRow {
  return {
    id: r[0], queue: r[1], type: r[2], priority: r[3], payload: r[4], run_at: r[5], attempts: r[6], max_attempts: r[7],
    last_error: r[8], key: r[9], group_key: r[10], event_id: r[11], source: r[12], created_at: r[13],
    trace_context: r[14], snoozes: r[15], batch_id: r[16], completes_batch_id: r[17],
  };
}

/**
 * Whether a statement returns LEASE_COLUMNS in that order: the executor checks the lease
 * statement once, so an edit of its RETURNING list fails loudly instead of shifting fields.
 */
export function leaseColumnsMatch(columns: readonly { readonly name: string }[]): boolean {
  return columns.length === LEASE_COLUMNS.length && columns.every((column, i) => column.name === LEASE_COLUMNS[i]);
}

/** One raw jobFinishMany.done row: [id, queue, batch_id]. */
export type FinishedRow = readonly [id: number, queue: string, batchId: number | null];
