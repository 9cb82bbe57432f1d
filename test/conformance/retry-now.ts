// Run now: a pending job that waits for its retry or its delay becomes due at once, its
// attempts and history untouched and its group's order kept; nothing else is touched.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { waitFor } from '../harness/wait.js';
import { MINUTE_MS, SECOND_MS, T0, at, claim, claimOne, enqueue, enqueueIds, idsOf, useStore } from './context.js';
import { asFailed } from '../harness/finishes.js';

export function retryNowConformance(harness: StoreHarness): void {
  describe('retry now', () => {
    const ctx = useStore(harness);

    it('makes a job waiting for its retry due now, keeping its attempts and history', async () => {
      const waiting = await insertJob(ctx.store, { attempts: 2, retryDelayMs: 10 * MINUTE_MS, error: 'Error: ECONNREFUSED', now: T0 });
      expect(await claim(ctx.store, { types: [waiting.type], now: at(MINUTE_MS) })).toEqual([]);
      expect(await ctx.store.jobRetryNow({ ids: [waiting.id], now: at(MINUTE_MS) })).toEqual([waiting.id]);
      const after = (await ctx.store.jobGet({ id: waiting.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 2, lastError: 'Error: ECONNREFUSED' });
      expect(after.runAt).toEqual(at(MINUTE_MS));
      expect(after.attemptsLog).toEqual(waiting.attemptsLog);
      expect(after.replays).toEqual([]);
      expect((await claimOne(ctx.store, { types: [waiting.type], now: at(MINUTE_MS) })).attempts).toBe(3);
    });

    it('makes a delayed job due now', async () => {
      const { job } = await enqueue(ctx.store, { delayMs: 60 * MINUTE_MS });
      expect(await ctx.store.jobRetryNow({ ids: [job.id], now: at(SECOND_MS) })).toEqual([job.id]);
      expect(idsOf(await claim(ctx.store, { now: at(SECOND_MS) }))).toEqual([job.id]);
    });

    it('leaves due, running, done and dead jobs alone, and ignores unknown and malformed ids', async () => {
      const due = await insertJob(ctx.store, { now: T0 });
      const running = await insertJob(ctx.store, { status: 'running', now: T0 });
      const done = await insertJob(ctx.store, { status: 'done', now: T0 });
      const dead = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const moved = await ctx.store.jobRetryNow({ ids: [due.id, running.id, done.id, dead.id, '987654321', 'abc', '-1'], now: at(MINUTE_MS) });
      expect(moved).toEqual([]);
      // A due job keeps its place: its run_at does not move later.
      expect((await ctx.store.jobGet({ id: due.id }))!.runAt).toEqual(T0);
      for (const job of [running, done, dead]) {
        expect((await ctx.store.jobGet({ id: job.id }))!).toMatchObject({ status: job.status, attempts: job.attempts, runAt: job.runAt });
      }
    });

    it('by filter makes every matching waiting job due, in id order, and no other', async () => {
      const refusedA = await insertJob(ctx.store, { type: 'forward', attempts: 1, retryDelayMs: MINUTE_MS, error: 'Error: connect ECONNREFUSED', now: T0 });
      const other = await insertJob(ctx.store, { type: 'forward', attempts: 1, retryDelayMs: MINUTE_MS, error: 'Error: 500 from app', now: T0 });
      const refusedB = await insertJob(ctx.store, { type: 'forward', attempts: 1, retryDelayMs: MINUTE_MS, error: 'Error: connect econnrefused', now: T0 });
      const otherType = await insertJob(ctx.store, { type: 'email', attempts: 1, retryDelayMs: MINUTE_MS, error: 'Error: connect ECONNREFUSED', now: T0 });
      const moved = await ctx.store.jobRetryNow({ filter: { type: 'forward', errorContains: 'ECONNREFUSED' }, now: at(SECOND_MS) });
      expect(moved).toEqual([refusedA.id, refusedB.id]);
      for (const job of [other, otherType]) expect((await ctx.store.jobGet({ id: job.id }))!.runAt).toEqual(job.runAt);
      expect(await ctx.store.jobRetryNow({ filter: {}, now: at(SECOND_MS) })).toEqual([other.id, otherType.id]);
    });

    it('by filter leaves jobs that only wait for their delay, unless asked to take them too', async () => {
      const failed = await insertJob(ctx.store, { type: 'email', attempts: 1, retryDelayMs: MINUTE_MS, error: 'Error: 421', now: T0 });
      const { job: tomorrow } = await enqueue(ctx.store, { type: 'email', delayMs: 24 * 60 * MINUTE_MS });
      expect(await ctx.store.jobRetryNow({ filter: { type: 'email' }, now: at(SECOND_MS) })).toEqual([failed.id]);
      expect((await ctx.store.jobGet({ id: tomorrow.id }))!.runAt).toEqual(tomorrow.runAt);
      expect(await ctx.store.jobRetryNow({ filter: { type: 'email' }, includeDelayed: true, now: at(SECOND_MS) })).toEqual([tomorrow.id]);
    });

    it('keeps group order: a later job made due waits for its head, and the head made due runs first', async () => {
      const [head, next] = await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g', delayMs: 30 * MINUTE_MS }]);
      const claimed = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: head!, leaseToken: claimed.leaseToken, error: 'Error: flaky', outcome: 'failed', retryDelayMs: 10 * MINUTE_MS }]),
        now: T0,
      });
      expect(await ctx.store.jobRetryNow({ ids: [next!], now: at(SECOND_MS) })).toEqual([next]);
      expect(await claim(ctx.store, { now: at(SECOND_MS) })).toEqual([]);
      expect(await ctx.store.jobRetryNow({ ids: [head!], now: at(SECOND_MS) })).toEqual([head]);
      expect(idsOf(await claim(ctx.store, { now: at(SECOND_MS) }))).toEqual([head]);
    });

    it.skipIf(!harness.capabilities.listenNotify)('wakes listening workers of the queue, since no status changes (listenNotify)', async () => {
      const { job } = await enqueue(ctx.store, { queue: 'hooks', delayMs: 60 * MINUTE_MS });
      const queues: Array<string | null> = [];
      const unsubscribe = await ctx.store.subscribe!((queue) => queues.push(queue));
      try {
        await ctx.store.jobRetryNow({ ids: [job.id] });
        await waitFor(() => queues.includes('hooks'), { timeoutMs: 5_000, description: 'a NOTIFY for the queue' });
      } finally {
        await unsubscribe();
      }
    });
  });
}
