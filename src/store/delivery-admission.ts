// Whether one delivery may go to its endpoint now, the same rule in both stores, applied in
// deliveryStartMany's transaction: the endpoint's own rate (its `rateLimit`: at most N starts
// in any window, kept as starts in mailroom_limit_start under ENDPOINT_RATE_TYPE), then
// its circuit breaker (core/circuit-breaker.ts). A rate that is used up does not take the
// breaker's probe.

import { admitDelivery } from '../core/circuit-breaker.js';
import type { Admission, BreakerRow, BreakerSettings } from '../core/circuit-breaker.js';
import type { EndpointRateLimit } from '../core/outgoing-types.js';
import { rateSlotFreesInMs } from './limits.js';

/**
 * The `type` an endpoint's rate starts are kept under in mailroom_limit_start (the limit
 * key is the endpoint id). Not a job type: no claim prunes or counts these rows.
 */
export const ENDPOINT_RATE_TYPE = 'mailroom:endpoint_rate';

export function admitAtEndpoint(
  breaker: BreakerRow,
  rate: EndpointRateLimit | null,
  recentStartsMs: readonly number[],
  nowMs: number,
  settings: BreakerSettings,
): Admission {
  if (rate !== null) {
    const freesInMs = rateSlotFreesInMs(recentStartsMs, rate, nowMs);
    if (freesInMs !== null) return { kind: 'wait', waitMs: Math.max(1, freesInMs), reason: 'rate_limit' };
  }
  return admitDelivery(breaker, nowMs, settings);
}

/**
 * The delivery row's job is not the one starting it: recover() gave it a new job while
 * this one was finishing, and that job sends it. `jobId` undefined: the caller did not say.
 */
export function isHandedToAnotherJob(rowJobId: unknown, jobId: string | undefined): boolean {
  return jobId !== undefined && rowJobId !== null && rowJobId !== undefined && String(rowJobId) !== jobId;
}
