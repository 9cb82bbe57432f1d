// The dashboard chart's read: jobs done and dead, and failed attempts, per minute of the
// store's clock over a recent window. Jobs finished outside the window, pending jobs and
// uncharged outcomes are not counted; minutes are aligned to the UTC minute.

import { describe, expect, it } from 'vitest';
import { asDone, asFailed } from '../harness/finishes.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, SECOND_MS, T0, at, claim, enqueueIds, useStore } from './context.js';

export function finishedPerMinuteConformance(harness: StoreHarness): void {
  describe('jobFinishedPerMinute', () => {
    const ctx = useStore(harness);

    it('counts done and dead jobs and failed attempts per minute within the window only', async () => {
      const store = ctx.store;
      await enqueueIds(store, [{}, {}, {}, {}, { maxAttempts: 1 }], at(-2 * 3_600_000));
      // Two hours ago: one job done, outside a one-hour window.
      const [old] = await claim(store, { limit: 1, now: at(-2 * 3_600_000) });
      await store.jobFinishMany({ finishes: asDone([old!]), now: at(-2 * 3_600_000 + SECOND_MS) });
      // In the minute starting T0 - 10 min: two done and one failed attempt (retried).
      const [a, b, c] = await claim(store, { limit: 3, now: at(-10 * MINUTE_MS) });
      await store.jobFinishMany({ finishes: asDone([a!, b!]), now: at(-10 * MINUTE_MS + 5 * SECOND_MS) });
      await store.jobFinishMany({
        finishes: asFailed([{ id: c!.id, leaseToken: c!.leaseToken, error: 'Error: flaky', outcome: 'failed', retryDelayMs: 0 }]),
        now: at(-10 * MINUTE_MS + 30 * SECOND_MS),
      });
      // In the minute starting T0 - 3 min: the last job (one attempt allowed) times out and dies.
      const [d] = await claim(store, { limit: 2, now: at(-3 * MINUTE_MS) }).then((jobs) => jobs.filter((job) => job.maxAttempts === 1));
      await store.jobFinishMany({
        finishes: asFailed([{ id: d!.id, leaseToken: d!.leaseToken, error: 'Error: slow', outcome: 'timeout', retryDelayMs: null }]),
        now: at(-3 * MINUTE_MS + SECOND_MS),
      });

      const result = await store.jobFinishedPerMinute({ now: T0 });
      expect(result.now.getTime()).toBe(T0.getTime());
      expect(result.failedAttemptsTruncated).toBe(false);
      expect(result.minutes.map((m) => ({ ...m, minute: m.minute.toISOString() }))).toEqual([
        { minute: at(-10 * MINUTE_MS).toISOString(), done: 2, dead: 0, failedAttempts: 1 },
        { minute: at(-3 * MINUTE_MS).toISOString(), done: 0, dead: 1, failedAttempts: 1 },
      ]);

      // A three-hour window also sees the job done two hours ago.
      const wider = await store.jobFinishedPerMinute({ now: T0, windowMs: 3 * 3_600_000 });
      expect(wider.minutes.reduce((sum, m) => sum + m.done, 0)).toBe(3);
    });

    it('answers no minutes for a store where nothing finished', async () => {
      await enqueueIds(ctx.store, [{}, {}]);
      expect((await ctx.store.jobFinishedPerMinute({ now: T0 })).minutes).toEqual([]);
    });
  });
}
