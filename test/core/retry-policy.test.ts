// Retry policy resolution: the task's options over the library defaults, validated, and
// the delay it implies (exponential or a fixed schedule).

import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../src/core/errors.js';
import { DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT_MS, resolveRetryPolicy, retryDelayMs } from '../../src/core/retry-policy.js';

describe('resolveRetryPolicy', () => {
  it('uses the library defaults: 5 attempts, 5 minute timeout, 2^attempt s equal jitter capped at 15 min', () => {
    expect(DEFAULT_MAX_ATTEMPTS).toBe(5);
    expect(DEFAULT_TIMEOUT_MS).toBe(300_000);
    expect(resolveRetryPolicy()).toEqual({
      maxAttempts: 5,
      timeoutMs: 300_000,
      backoff: { baseMs: 2_000, capMs: 900_000, jitter: 'equal' },
      retryScheduleMs: undefined,
      maxSnoozes: 100,
      maxResultBytes: 65_536,
    });
  });

  it('overrides only the backoff fields it is given', () => {
    const policy = resolveRetryPolicy({ maxAttempts: 8, timeoutMs: 20_000, backoff: { jitter: 'full' } });
    expect(policy).toMatchObject({ maxAttempts: 8, timeoutMs: 20_000, backoff: { baseMs: 2_000, capMs: 900_000, jitter: 'full' } });
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses maxAttempts %s', (maxAttempts) => {
    expect(() => resolveRetryPolicy({ maxAttempts })).toThrow(InvalidArgumentError);
  });

  it.each([0, -5, Number.NaN])('refuses timeoutMs %s', (timeoutMs) => {
    expect(() => resolveRetryPolicy({ timeoutMs })).toThrow(InvalidArgumentError);
  });

  it('refuses negative backoff times and unknown jitter', () => {
    expect(() => resolveRetryPolicy({ backoff: { baseMs: -1 } })).toThrow(InvalidArgumentError);
    expect(() => resolveRetryPolicy({ backoff: { capMs: -1 } })).toThrow(InvalidArgumentError);
    expect(() => resolveRetryPolicy({ backoff: { jitter: 'some' as never } })).toThrow(InvalidArgumentError);
  });
});

describe('retryDelayMs', () => {
  it('uses exponential backoff when no schedule is set', () => {
    const policy = resolveRetryPolicy({ backoff: { baseMs: 1_000, jitter: 'none' } });
    expect([1, 2, 3].map((attempt) => retryDelayMs(policy, attempt))).toEqual([1_000, 2_000, 4_000]);
  });

  it('uses the fixed schedule with jitter when one is set', () => {
    const policy = resolveRetryPolicy({ retryScheduleMs: [5_000, 60_000] });
    expect(retryDelayMs(policy, 1, () => 0.5)).toBe(5_000);
    expect(retryDelayMs(policy, 2, () => 0)).toBe(48_000);
    expect(retryDelayMs(policy, 9, () => 1)).toBe(72_000);
  });
});
