// Shorthands for the store's one outcome writer (jobFinishMany) in tests: each builds the
// finishes of one kind for a list of leases (a ClaimedJob is one).

import type { JobFinish, Lease } from '../../src/store/store.js';

type Fence = Pick<Lease, 'id' | 'leaseToken'>;

/** A failed attempt as tests spell it: its history outcome, and a retry delay or null for dead. */
export interface FailureSpec extends Fence {
  readonly error: string;
  readonly stack?: string | null;
  readonly outcome: 'failed' | 'timeout';
  readonly retryDelayMs: number | null;
  readonly deadReason?: 'exhausted' | 'permanent';
  readonly detailsJson?: string | null;
}

export function asDone(leases: readonly Fence[]): JobFinish[] {
  return leases.map((lease) => ({ kind: 'done', id: lease.id, leaseToken: lease.leaseToken }));
}

export function asHandedBack(leases: readonly Fence[]): JobFinish[] {
  return leases.map((lease) => ({ kind: 'handedBack', id: lease.id, leaseToken: lease.leaseToken }));
}

export function asFailed(failures: readonly FailureSpec[]): JobFinish[] {
  return failures.map(({ outcome, ...failure }) => ({ ...failure, kind: 'failed', attemptOutcome: outcome }));
}
