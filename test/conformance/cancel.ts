// Cancel: a pending job (due or waiting for a retry) becomes dead with reason `cancelled`;
// nothing else is touched.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, T0, at, claim, enqueue, useStore } from './context.js';

export function cancelConformance(harness: StoreHarness): void {
  describe('cancel', () => {
    const ctx = useStore(harness);

    it('cancels a pending job to dead with reason cancelled and returns it', async () => {
      const { job } = await enqueue(ctx.store, { payload: { keep: 'me' } });
      const cancelled = await ctx.store.jobCancel({ id: job.id, reason: 'customer left', now: at(MINUTE_MS) });
      expect(cancelled).toMatchObject({ id: job.id, status: 'dead', deadReason: 'cancelled', payload: { keep: 'me' } });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'dead', deadReason: 'cancelled' });
      expect(after.finishedAt).toEqual(at(MINUTE_MS));
      expect(await claim(ctx.store, { now: at(2 * MINUTE_MS) })).toEqual([]);
    });

    it('keeps the reason given as the job\'s last error, and says cancelled without one', async () => {
      const { job } = await enqueue(ctx.store);
      const cancelled = await ctx.store.jobCancel({ id: job.id, reason: 'customer left', now: at(MINUTE_MS) });
      expect(cancelled!.lastError).toBe('cancelled: customer left');
      expect((await ctx.store.jobGet({ id: job.id }))!.lastError).toBe('cancelled: customer left');
      // And findable by it, as `mailroom jobs --error` looks.
      expect((await ctx.store.jobList({ errorContains: 'CUSTOMER LEFT' })).map((j) => j.id)).toEqual([job.id]);
      // A retry's error gives way to the cancel: the last error says why the job stopped.
      const failed = await insertJob(ctx.store, { attempts: 1, retryDelayMs: 10 * MINUTE_MS, error: 'Error: timeout', now: T0 });
      await ctx.store.jobCancel({ id: failed.id, now: at(MINUTE_MS) });
      expect((await ctx.store.jobGet({ id: failed.id }))!.lastError).toBe('cancelled');
    });

    it('cancels a pending job that waits for its retry, keeping its history', async () => {
      const job = await insertJob(ctx.store, { attempts: 2, retryDelayMs: 10 * MINUTE_MS, now: T0 });
      const cancelled = await ctx.store.jobCancel({ id: job.id, now: at(MINUTE_MS) });
      expect(cancelled).toMatchObject({ status: 'dead', deadReason: 'cancelled', attempts: 2 });
      expect((await ctx.store.jobGet({ id: job.id }))!.attemptsLog).toHaveLength(2);
    });

    it('does not cancel running, done or dead jobs', async () => {
      const running = await insertJob(ctx.store, { status: 'running', now: T0 });
      const done = await insertJob(ctx.store, { status: 'done', now: T0 });
      const dead = await insertJob(ctx.store, { status: 'dead', deadReason: 'permanent', now: T0 });
      for (const job of [running, done, dead]) {
        expect(await ctx.store.jobCancel({ id: job.id, now: T0 })).toBeNull();
        const after = (await ctx.store.jobGet({ id: job.id }))!;
        expect(after.status).toBe(job.status);
        expect(after.deadReason).toBe(job.deadReason);
      }
    });

    it('returns null for an unknown or malformed id', async () => {
      await enqueue(ctx.store);
      expect(await ctx.store.jobCancel({ id: '987654321', now: T0 })).toBeNull();
      expect(await ctx.store.jobCancel({ id: 'not-an-id', now: T0 })).toBeNull();
      expect((await ctx.store.jobList({}))[0]!.status).toBe('pending');
    });
  });
}
