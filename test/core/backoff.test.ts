// Exponential backoff with jitter and the Standard Webhooks schedule (pure functions;
// randomness injected so every bound is checked exactly).

import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, STANDARD_WEBHOOKS_SCHEDULE_MS, computeBackoffMs, scheduleDelayMs } from '../../src/core/backoff.js';

const NONE = { baseMs: 1_000, capMs: 60_000, jitter: 'none' } as const;

describe('computeBackoffMs', () => {
  it('doubles the base delay with each failed attempt, starting at the base', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => computeBackoffMs(attempt, NONE))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000]);
  });

  it('never exceeds the cap, even for huge attempt numbers', () => {
    expect(computeBackoffMs(7, NONE)).toBe(60_000);
    expect(computeBackoffMs(10_000, NONE)).toBe(60_000);
    expect(computeBackoffMs(10_000, { ...NONE, jitter: 'equal' }, () => 0.999999)).toBeLessThanOrEqual(60_000);
  });

  it('treats attempt 0 or below like the first attempt', () => {
    expect(computeBackoffMs(0, NONE)).toBe(1_000);
    expect(computeBackoffMs(-3, NONE)).toBe(1_000);
  });

  it('spreads full jitter over [0, delay)', () => {
    const options = { ...NONE, jitter: 'full' } as const;
    expect(computeBackoffMs(3, options, () => 0)).toBe(0);
    expect(computeBackoffMs(3, options, () => 0.5)).toBe(2_000);
    expect(computeBackoffMs(3, options, () => 0.999999)).toBeLessThan(4_000);
  });

  it('keeps equal jitter within [delay/2, delay)', () => {
    const options = { ...NONE, jitter: 'equal' } as const;
    expect(computeBackoffMs(3, options, () => 0)).toBe(2_000);
    expect(computeBackoffMs(3, options, () => 0.999999)).toBeLessThan(4_000);
    expect(computeBackoffMs(3, options, () => 0.999999)).toBeGreaterThanOrEqual(3_999);
  });

  it('defaults to 2^attempt seconds with equal jitter, capped at 15 minutes', () => {
    expect(DEFAULT_BACKOFF).toEqual({ baseMs: 2_000, capMs: 900_000, jitter: 'equal' });
    expect(computeBackoffMs(1, { ...DEFAULT_BACKOFF, jitter: 'none' })).toBe(2_000);
    expect(computeBackoffMs(3, { ...DEFAULT_BACKOFF, jitter: 'none' })).toBe(8_000);
    expect(computeBackoffMs(30, { ...DEFAULT_BACKOFF, jitter: 'none' })).toBe(900_000);
  });

  it('returns whole milliseconds', () => {
    for (const r of [0.1, 0.33, 0.77]) {
      expect(Number.isInteger(computeBackoffMs(4, { baseMs: 333, capMs: 100_000, jitter: 'full' }, () => r))).toBe(true);
    }
  });
});

describe('scheduleDelayMs', () => {
  it('follows the Standard Webhooks schedule: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h', () => {
    expect(STANDARD_WEBHOOKS_SCHEDULE_MS).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
    const noJitter = (attempt: number) => scheduleDelayMs(attempt, STANDARD_WEBHOOKS_SCHEDULE_MS, 0);
    expect([1, 2, 3, 7].map(noJitter)).toEqual([5_000, 300_000, 1_800_000, 36_000_000]);
  });

  it('adds up to about a day over the whole schedule', () => {
    const total = STANDARD_WEBHOOKS_SCHEDULE_MS.reduce((sum, ms) => sum + ms, 0);
    expect(total).toBeGreaterThan(20 * 3_600_000);
    expect(total).toBeLessThan(30 * 3_600_000);
  });

  it('repeats the last step for attempts beyond the schedule', () => {
    expect(scheduleDelayMs(50, [1_000, 2_000], 0)).toBe(2_000);
  });

  it('jitters by at most ±20 % by default', () => {
    expect(scheduleDelayMs(2, [10_000], 0.2, () => 0)).toBe(8_000);
    expect(scheduleDelayMs(2, [10_000], 0.2, () => 0.5)).toBe(10_000);
    expect(scheduleDelayMs(2, [10_000], 0.2, () => 1)).toBe(12_000);
  });

  it('returns 0 for an empty schedule', () => {
    expect(scheduleDelayMs(1, [])).toBe(0);
  });
});
