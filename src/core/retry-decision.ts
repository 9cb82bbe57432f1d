// What an attempt that did not succeed leaves behind: the job retries after a delay, goes
// dead with a reason, goes back to pending uncharged, or snoozes (uncharged, counted).
// Pure (no store, no clock but the jitter's random): the worker asks it and the completer
// writes the answer, so the rules for Permanent, RetryAfter, Snooze, timeouts and the
// attempt budget are tested on their own.

import { retryDelayMs } from './retry-policy.js';
import type { RetryPolicy } from './retry-policy.js';

/** How an attempt ended without success, as the executor (or the stopping worker) saw it. */
export type AttemptFailure =
  /** The handler threw; the executor read Permanent and RetryAfter off the error by code. */
  | { readonly kind: 'failed'; readonly isPermanent: boolean; readonly retryAfterMs: number | null; readonly isRetryAfterFloor?: boolean }
  /** The handler outlived its timeout (a transient failure). */
  | { readonly kind: 'timeout' }
  /** The worker aborted the handler's signal and the handler stopped. */
  | { readonly kind: 'aborted' }
  /** The handler ignored the shutdown abort past the stop deadline: the worker lets the job go, charged. */
  | { readonly kind: 'abandoned' }
  /** The handler threw `Snooze`: not yet, rather than failed. */
  | { readonly kind: 'snoozed'; readonly delayMs: number };

/** What to write for the attempt. `attemptOutcome` is the attempt history row's outcome. */
export type RetryDecision =
  | { readonly kind: 'retry'; readonly delayMs: number; readonly attemptOutcome: 'failed' | 'timeout' }
  | { readonly kind: 'dead'; readonly reason: 'permanent' | 'exhausted'; readonly attemptOutcome: 'failed' | 'timeout' }
  /** Back to pending, the attempt not charged: the handler honoured a shutdown. */
  | { readonly kind: 'handBack' }
  /** Back to pending after a delay, the attempt not charged: the handler snoozed within its allowance. */
  | { readonly kind: 'snooze'; readonly delayMs: number };

const HAND_BACK: RetryDecision = Object.freeze({ kind: 'handBack' });

/**
 * Decide a failed attempt's fate. A Permanent error is dead at once, even with attempts
 * left; on the last attempt anything is dead ('exhausted'); otherwise the job retries after
 * the handler's RetryAfter delay or else the policy's backoff (the longer of the two for a
 * RetryAfter that is only a floor: a receiver's Retry-After, say). An abort the worker asked
 * for while shutting down hands the job back; a handler that ignored it retries at once
 * (the attempt counts: it may have done its work). A snooze within the task's maxSnoozes
 * snoozes; past it, it is a failure.
 * @example decideRetry({ kind: 'timeout' }, { attempts: 2, maxAttempts: 5, snoozes: 0 }, task.policy)
 *          // { kind: 'retry', delayMs: <backoff after attempt 2>, attemptOutcome: 'timeout' }
 */
export function decideRetry(
  failure: AttemptFailure,
  job: { readonly attempts: number; readonly maxAttempts: number; readonly snoozes?: number },
  policy: RetryPolicy,
  isShuttingDown = false,
  random: () => number = Math.random,
): RetryDecision {
  if (failure.kind === 'aborted' && isShuttingDown) return HAND_BACK;
  // Past its allowance a snooze is a failure like any other (charged, retried or dead).
  if (failure.kind === 'snoozed' && (job.snoozes ?? 0) < policy.maxSnoozes) return { kind: 'snooze', delayMs: failure.delayMs };
  const attemptOutcome = failure.kind === 'timeout' ? 'timeout' : 'failed';
  if (failure.kind === 'failed' && failure.isPermanent) return { kind: 'dead', reason: 'permanent', attemptOutcome };
  if (job.attempts >= job.maxAttempts) return { kind: 'dead', reason: 'exhausted', attemptOutcome };
  if (failure.kind === 'abandoned') return { kind: 'retry', delayMs: 0, attemptOutcome };
  const requestedMs = failure.kind === 'failed' ? failure.retryAfterMs : null;
  if (requestedMs === null) return { kind: 'retry', delayMs: retryDelayMs(policy, job.attempts, random), attemptOutcome };
  const isFloor = failure.kind === 'failed' && failure.isRetryAfterFloor === true;
  return { kind: 'retry', delayMs: isFloor ? Math.max(requestedMs, retryDelayMs(policy, job.attempts, random)) : requestedMs, attemptOutcome };
}
