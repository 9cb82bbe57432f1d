// The retry-or-dead decision on its own: what a failed attempt leaves behind for every way
// an attempt can fail (a throw, Permanent, RetryAfter, a timeout, an abort, an ignored
// shutdown), with attempts left and on the last one.

import { describe, expect, it } from 'vitest';
import { Permanent, RetryAfter, isPermanent, isRetryAfterFloor, retryAfterDelayMs } from '../../src/core/errors.js';
import { decideRetry } from '../../src/core/retry-decision.js';
import type { AttemptFailure } from '../../src/core/retry-decision.js';
import { resolveRetryPolicy, retryDelayMs } from '../../src/core/retry-policy.js';

const policy = resolveRetryPolicy({ backoff: { baseMs: 1_000, capMs: 60_000, jitter: 'none' } });
const secondOfFive = { attempts: 2, maxAttempts: 5 };
const lastOfFive = { attempts: 5, maxAttempts: 5 };

/** A thrown error as the executor classifies it (by code, so a second package copy works). */
function thrown(error: unknown): AttemptFailure {
  return { kind: 'failed', isPermanent: isPermanent(error), retryAfterMs: retryAfterDelayMs(error), isRetryAfterFloor: isRetryAfterFloor(error) };
}

describe('decideRetry', () => {
  it('retries a plain throw after the policy backoff for that attempt', () => {
    expect(decideRetry(thrown(new Error('boom')), secondOfFive, policy)).toEqual({
      kind: 'retry',
      delayMs: retryDelayMs(policy, 2),
      attemptOutcome: 'failed',
    });
  });

  it('passes the random source to the backoff jitter', () => {
    const jittered = resolveRetryPolicy({ backoff: { baseMs: 1_000, capMs: 60_000, jitter: 'full' } });
    expect(decideRetry(thrown(new Error('boom')), secondOfFive, jittered, false, () => 0.5)).toMatchObject({
      delayMs: retryDelayMs(jittered, 2, () => 0.5),
    });
  });

  it('parks a Permanent error as dead at once, even with attempts left', () => {
    expect(decideRetry(thrown(new Permanent('bad input')), { attempts: 1, maxAttempts: 5 }, policy)).toEqual({
      kind: 'dead',
      reason: 'permanent',
      attemptOutcome: 'failed',
    });
  });

  it('names a Permanent error on the last attempt permanent, not exhausted', () => {
    expect(decideRetry(thrown(new Permanent()), lastOfFive, policy)).toMatchObject({ kind: 'dead', reason: 'permanent' });
  });

  it('retries a RetryAfter after the delay the handler asked for instead of the backoff', () => {
    expect(decideRetry(thrown(new RetryAfter(12_345)), secondOfFive, policy)).toEqual({ kind: 'retry', delayMs: 12_345, attemptOutcome: 'failed' });
  });

  it('takes a floor RetryAfter (a receiver\'s Retry-After) only when it is longer than the backoff', () => {
    const backoff = retryDelayMs(policy, 2);
    expect(decideRetry(thrown(new RetryAfter(1_000, 'x', { atLeastBackoff: true })), secondOfFive, policy)).toEqual({ kind: 'retry', delayMs: backoff, attemptOutcome: 'failed' });
    expect(decideRetry(thrown(new RetryAfter(0, 'x', { atLeastBackoff: true })), secondOfFive, policy)).toEqual({ kind: 'retry', delayMs: backoff, attemptOutcome: 'failed' });
    expect(decideRetry(thrown(new RetryAfter(backoff + 5, 'x', { atLeastBackoff: true })), secondOfFive, policy)).toEqual({ kind: 'retry', delayMs: backoff + 5, attemptOutcome: 'failed' });
  });

  it('parks a RetryAfter on the last attempt as exhausted', () => {
    expect(decideRetry(thrown(new RetryAfter(10)), lastOfFive, policy)).toEqual({ kind: 'dead', reason: 'exhausted', attemptOutcome: 'failed' });
  });

  it('retries a timeout as a transient failure and records the attempt as a timeout', () => {
    expect(decideRetry({ kind: 'timeout' }, secondOfFive, policy)).toEqual({ kind: 'retry', delayMs: retryDelayMs(policy, 2), attemptOutcome: 'timeout' });
  });

  it('parks a timeout on the last attempt as exhausted, recorded as a timeout', () => {
    expect(decideRetry({ kind: 'timeout' }, lastOfFive, policy)).toEqual({ kind: 'dead', reason: 'exhausted', attemptOutcome: 'timeout' });
  });

  it('parks any failure past the attempt budget as exhausted', () => {
    expect(decideRetry(thrown(new Error('boom')), { attempts: 6, maxAttempts: 5 }, policy)).toMatchObject({ kind: 'dead', reason: 'exhausted' });
  });

  it('hands back uncharged a handler that stopped on the shutdown abort, even on its last attempt', () => {
    expect(decideRetry({ kind: 'aborted' }, lastOfFive, policy, true)).toEqual({ kind: 'handBack' });
  });

  it('treats an abort outside a shutdown as a failure', () => {
    expect(decideRetry({ kind: 'aborted' }, secondOfFive, policy, false)).toEqual({ kind: 'retry', delayMs: retryDelayMs(policy, 2), attemptOutcome: 'failed' });
  });

  it('retries at once a job whose handler ignored the shutdown abort, or parks it on its last attempt', () => {
    expect(decideRetry({ kind: 'abandoned' }, secondOfFive, policy, true)).toEqual({ kind: 'retry', delayMs: 0, attemptOutcome: 'failed' });
    expect(decideRetry({ kind: 'abandoned' }, lastOfFive, policy, true)).toEqual({ kind: 'dead', reason: 'exhausted', attemptOutcome: 'failed' });
  });
});
