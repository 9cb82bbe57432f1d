// The job a claim hands to a worker, built by both stores from the same slim row: their
// claim statements return only what the worker cannot know (times as epoch ms), and the
// rest is what the claim itself just set. One builder, so both stores hand out the same
// shape (the conformance suite compares it with the stored row).

import type { ClaimedJob } from '../core/types.js';

/** The columns both stores' claim statements return; times are epoch milliseconds. */
export interface ClaimedRow {
  readonly id: number | string;
  readonly queue: string;
  readonly type: string;
  readonly priority: number;
  readonly payload: string;
  readonly attempts: number;
  readonly max_attempts: number;
  readonly last_error: string | null;
  readonly key: string | null;
  readonly group_key: string | null;
  readonly event_id: number | string | null;
  readonly source: string | null;
  readonly run_at: number;
  readonly created_at: number;
  readonly trace_context: string | null;
  readonly snoozes: number;
  readonly batch_id: number | string | null;
  readonly completes_batch_id: number | string | null;
}

/** What the claim set on every row it leased. */
export interface ClaimLease {
  readonly workerId: string;
  readonly leaseToken: string;
  readonly startedAtMs: number;
  readonly leaseExpiresAtMs: number;
}

export function claimedJob(row: ClaimedRow, lease: ClaimLease): ClaimedJob {
  return {
    id: String(row.id),
    queue: row.queue,
    type: row.type,
    status: 'running',
    priority: row.priority,
    payload: JSON.parse(row.payload),
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    lastError: row.last_error ?? null,
    deadReason: null,
    key: row.key ?? null,
    group: row.group_key ?? null,
    eventId: idOrNull(row.event_id),
    source: row.source ?? null,
    // new Date() truncates a sub-ms time as parsing a timestamp did.
    runAt: new Date(row.run_at),
    createdAt: new Date(row.created_at),
    startedAt: new Date(lease.startedAtMs),
    finishedAt: null,
    leaseOwner: lease.workerId,
    leaseExpiresAt: new Date(lease.leaseExpiresAtMs),
    leaseToken: lease.leaseToken,
    traceContext: row.trace_context ?? null,
    result: null,
    snoozes: row.snoozes,
    // A claim starts a run: the last run's progress (after a retry) is not this one's.
    progress: null,
    batchId: idOrNull(row.batch_id),
    completesBatchId: idOrNull(row.completes_batch_id),
  };
}

function idOrNull(value: number | string | null | undefined): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** What claim order is decided by (a claimed row, or a pick's row before its lease). */
export type ClaimOrderKeys = Pick<ClaimedRow, 'id' | 'priority' | 'run_at'>;

/** Claim order: priority first, then run time, then id (the order the statements pick in). */
export function compareClaimed(a: ClaimOrderKeys, b: ClaimOrderKeys): number {
  return b.priority - a.priority || a.run_at - b.run_at || compareJobIds(a.id, b.id);
}

/**
 * Job ids in numeric order: SQLite hands them out as numbers, PostgreSQL's bigints as text.
 * Text ids are canonical decimals (no sign, no leading zeros), so the shorter is the smaller
 * and equal lengths compare as text: no BigInt per comparison (a claim of 500 sorted with
 * two BigInts a comparison allocated ~9,000 of them).
 */
export function compareJobIds(a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  const x = String(a);
  const y = String(b);
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
}
