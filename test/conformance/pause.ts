// Paused queues: the claim predicate passes over a paused queue's jobs (claims, "is
// anything claimable"), other queues are untouched, enqueue goes on, and resume makes the
// waiting jobs claimable again. The pause is stored, so a second connection (another
// process) sees it too.

import { describe, expect, it } from 'vitest';
import { SECOND_MS, T0, at, claim, enqueueIds, useStore } from './context.js';
import type { StoreHarness } from '../harness/store-harness.js';

export function pauseConformance(harness: StoreHarness): void {
  describe('pause', () => {
    const ctx = useStore(harness);

    it('claims nothing from a paused queue, on any connection, until it is resumed', async () => {
      const [email] = await enqueueIds(ctx.store, [{ queue: 'email' }]);
      const [other] = await enqueueIds(ctx.store, [{ queue: 'reports' }]);
      expect(await ctx.store.queuePause({ queue: 'email', reason: 'provider outage', now: T0 })).toBe(true);
      const elsewhere = await ctx.opened.openAnother();
      expect((await claim(elsewhere, { now: at(SECOND_MS) })).map((job) => job.id)).toEqual([other]);
      expect(await claim(ctx.store, { queues: ['email'], now: at(SECOND_MS) })).toEqual([]);
      expect((await ctx.store.jobClaimable({ types: ['test_job'], queues: ['email'], now: at(SECOND_MS) })).hasClaimable).toBe(false);
      // Enqueue goes on while paused.
      const [later] = await enqueueIds(ctx.store, [{ queue: 'email' }], at(SECOND_MS));
      expect((await ctx.store.jobStats({ now: at(SECOND_MS) })).byQueue.email).toMatchObject({ pending: 2, running: 0 });

      expect(await ctx.store.queueResume({ queue: 'email' })).toBe(true);
      expect(await ctx.store.queueResume({ queue: 'email' })).toBe(false);
      expect((await ctx.store.jobClaimable({ types: ['test_job'], queues: ['email'], now: at(SECOND_MS) })).hasClaimable).toBe(true);
      expect((await claim(elsewhere, { now: at(SECOND_MS) })).map((job) => job.id)).toEqual([email, later]);
    });

    it('claims around a paused queue, in claim order across the others, with limits, and still says when the next job is due', async () => {
      // Both stores read the other queues by name while one is paused (not past its backlog).
      const [a1, held, b1, a2] = await enqueueIds(ctx.store, [
        { queue: 'a', priority: 1 },
        { queue: 'held', priority: 9 },
        { queue: 'b', priority: 5 },
        { queue: 'a', type: 'other', limitKey: 'k' },
        { queue: 'held', type: 'other', limitKey: 'k' },
        { queue: 'held', delayMs: 30 * SECOND_MS },
      ]);
      await ctx.store.queuePause({ queue: 'held', now: T0 });
      const types = ['test_job', 'other'];
      const limits = [{ type: 'other', perKey: { concurrency: 1 } }];
      expect((await ctx.store.jobClaimable({ types: ['other'], queues: null, limits, now: at(SECOND_MS) })).hasClaimable).toBe(true);
      expect((await claim(ctx.store, { types, limits, limit: 10, now: at(SECOND_MS) })).map((job) => job.id)).toEqual([b1, a1, a2]);
      expect(await claim(ctx.store, { types, queues: ['held', 'nope'], now: at(SECOND_MS) })).toEqual([]);
      const probe = await ctx.store.jobClaimable({ types, queues: null, limits, now: at(SECOND_MS) });
      // The paused queue's delayed job still sets the next wake-up, as the queue may resume.
      expect(probe).toMatchObject({ hasClaimable: false, nextRunAt: at(30 * SECOND_MS) });
      expect((await ctx.store.jobClaimable({ types, queues: ['held'], now: at(SECOND_MS) })).nextRunAt).toEqual(at(30 * SECOND_MS));
      await ctx.store.queueResume({ queue: 'held' });
      expect((await claim(ctx.store, { types, limits, limit: 10, now: at(SECOND_MS) })).map((job) => job.id)).toEqual([held]);
    });

    it('claims around a paused queue among more queues than are worth naming', async () => {
      // Past 64 queues with pending jobs the stores walk as usual (store/unpaused-queues.ts); the same answer.
      const ids = await enqueueIds(ctx.store, Array.from({ length: 70 }, (_, i) => ({ queue: `q${i}`, priority: i % 3 })));
      await enqueueIds(ctx.store, [{ queue: 'held', priority: 9 }]);
      await ctx.store.queuePause({ queue: 'held', now: T0 });
      // Claim order: priority 2 first, then 1, then 0, each in enqueue (id) order.
      const expected = [2, 1, 0].flatMap((priority) => ids.filter((_, i) => i % 3 === priority));
      expect((await claim(ctx.store, { limit: 100, now: at(SECOND_MS) })).map((job) => job.id)).toEqual(expected);
    });

    it('lists paused queues in stats with reason and time; pausing again keeps the time and takes the new reason, or keeps the old without one', async () => {
      expect((await ctx.store.jobStats({ now: T0 })).paused).toEqual([]);
      expect(await ctx.store.queuePause({ queue: 'webhooks', now: T0 })).toBe(true);
      expect(await ctx.store.queuePause({ queue: 'email', reason: 'first', now: T0 })).toBe(true);
      expect(await ctx.store.queuePause({ queue: 'email', reason: 'second', now: at(SECOND_MS) })).toBe(false);
      expect(await ctx.store.queuePause({ queue: 'email', now: at(SECOND_MS) })).toBe(false);
      expect((await ctx.store.jobStats({ now: at(SECOND_MS) })).paused).toEqual([
        { queue: 'email', reason: 'second', pausedAt: T0 },
        { queue: 'webhooks', reason: null, pausedAt: T0 },
      ]);
      // The list a worker reads for the jobs it holds: the same rows, without the counts.
      expect(await ctx.store.queuePausedList()).toEqual((await ctx.store.jobStats({ now: at(SECOND_MS) })).paused);
      expect(await ctx.store.queueResume({ queue: 'email' })).toBe(true);
      expect((await ctx.store.queuePausedList()).map((row) => row.queue)).toEqual(['webhooks']);
    });

    it('lets a job that was running when its queue was paused finish', async () => {
      await enqueueIds(ctx.store, [{ queue: 'email' }]);
      const [job] = await claim(ctx.store, { now: T0 });
      await ctx.store.queuePause({ queue: 'email', now: T0 });
      expect(await ctx.store.jobFinishMany({ finishes: [{ kind: 'done', id: job!.id, leaseToken: job!.leaseToken }], now: at(SECOND_MS) })).toEqual([job!.id]);
      expect((await ctx.store.jobStats({ now: at(SECOND_MS) })).byQueue.email).toMatchObject({ done: 1 });
    });
  });
}
