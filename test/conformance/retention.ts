// Retention: purge removes `done` jobs past the window (and `dead` ones only with their
// own window) with their history; events go only once no job references them.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import type { StoreExecutor } from '../../src/store/store.js';
import { DAY_MS, T0, at, jobInsert, rawSql, statusOf, useStore } from './context.js';
import { asDone } from '../harness/finishes.js';

const WEEK_MS = 7 * DAY_MS;

async function storeEvent(store: StoreExecutor, deliveryId: string, jobTypes: string[], now: Date) {
  return store.eventInsertWithJobs({
    event: { source: 'stripe', deliveryId, type: 'charge.succeeded', headers: {}, rawBody: Buffer.from('{}') },
    jobs: jobTypes.map((type) => jobInsert({ type })),
    now,
  });
}

export function retentionConformance(harness: StoreHarness): void {
  describe('retention', () => {
    const ctx = useStore(harness);

    it('purges done jobs finished before the window and keeps newer ones', async () => {
      const old = await insertJob(ctx.store, { status: 'done', now: T0 });
      const recent = await insertJob(ctx.store, { status: 'done', now: at(2 * DAY_MS) });
      const result = await ctx.store.jobPurge({ doneOlderThanMs: WEEK_MS, now: at(WEEK_MS + DAY_MS) });
      expect(result.jobs).toBe(1);
      expect(await ctx.store.jobGet({ id: old.id })).toBeNull();
      expect(await statusOf(ctx.store, recent.id)).toBe('done');
    });

    it('keeps pending, running and dead jobs however old they are', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const running = await insertJob(ctx.store, { status: 'running', now: T0 });
      const pending = await insertJob(ctx.store, { attempts: 1, now: T0 });
      const result = await ctx.store.jobPurge({ doneOlderThanMs: 0, now: at(100 * WEEK_MS) });
      expect(result.jobs).toBe(0);
      for (const job of [dead, running, pending]) expect(await statusOf(ctx.store, job.id)).toBe(job.status);
    });

    it('purges dead jobs only past their own window when one is given', async () => {
      const oldDead = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const newDead = await insertJob(ctx.store, { status: 'dead', now: at(25 * DAY_MS) });
      const result = await ctx.store.jobPurge({ doneOlderThanMs: WEEK_MS, deadOlderThanMs: 4 * WEEK_MS, now: at(30 * DAY_MS) });
      expect(result.jobs).toBe(1);
      expect(await ctx.store.jobGet({ id: oldDead.id })).toBeNull();
      expect(await statusOf(ctx.store, newDead.id)).toBe('dead');
    });

    it('removes the attempt history of the jobs it purges and keeps the rest', async () => {
      const { query } = rawSql(harness, ctx.opened);
      const purged = await insertJob(ctx.store, { status: 'done', attempts: 3, now: T0 });
      const kept = await insertJob(ctx.store, { status: 'dead', maxAttempts: 2, now: T0 });
      const count = async (id: string) =>
        Number((await query(`SELECT count(*) AS n FROM mailroom_attempt WHERE job_id = ${Number(id)}`))[0]!.n);
      expect(await count(purged.id)).toBeGreaterThanOrEqual(2);
      await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(2 * DAY_MS) });
      expect(await count(purged.id)).toBe(0);
      expect(await count(kept.id)).toBe(2);
    });

    it('purges an old event only once none of its jobs remain, and frees its delivery id', async () => {
      const withDoneJob = await storeEvent(ctx.store, 'evt_done', ['fulfil'], T0);
      const withPendingJob = await storeEvent(ctx.store, 'evt_pending', ['other'], T0);
      const withoutJobs = await storeEvent(ctx.store, 'evt_empty', [], T0);
      const [claimed] = await ctx.store.jobClaim({ workerId: 'w', types: ['fulfil'], queues: null, limit: 1, leaseMs: 30_000, now: T0 });
      await ctx.store.jobFinishMany({ finishes: asDone([claimed!]), now: T0 });

      const result = await ctx.store.jobPurge({ doneOlderThanMs: WEEK_MS, eventsOlderThanMs: WEEK_MS, now: at(2 * WEEK_MS) });
      expect(result).toEqual({ jobs: 1, events: 2 });
      expect(await ctx.store.eventGet({ id: withDoneJob.event.id })).toBeNull();
      expect(await ctx.store.eventGet({ id: withoutJobs.event.id })).toBeNull();
      expect(await ctx.store.eventGet({ id: withPendingJob.event.id })).not.toBeNull();
      // The dedupe receipt went with the event: the same delivery is new again.
      expect((await storeEvent(ctx.store, 'evt_done', [], at(2 * WEEK_MS))).isDuplicate).toBe(false);
      expect((await storeEvent(ctx.store, 'evt_pending', [], at(2 * WEEK_MS))).isDuplicate).toBe(true);
    });

    it('keeps events younger than their window even without jobs, and all events without a window', async () => {
      const young = await storeEvent(ctx.store, 'evt_young', [], at(10 * DAY_MS));
      const old = await storeEvent(ctx.store, 'evt_old', [], T0);
      expect((await ctx.store.jobPurge({ doneOlderThanMs: WEEK_MS, now: at(12 * DAY_MS) })).events).toBe(0);
      expect(await ctx.store.eventGet({ id: old.event.id })).not.toBeNull();
      const result = await ctx.store.jobPurge({ doneOlderThanMs: WEEK_MS, eventsOlderThanMs: WEEK_MS, now: at(12 * DAY_MS) });
      expect(result.events).toBe(1);
      expect(await ctx.store.eventGet({ id: young.event.id })).not.toBeNull();
    });

    it('purges more done jobs than one internal batch in a single call', async () => {
      const jobs = Array.from({ length: 1_205 }, () => jobInsert({ type: 'bulk' }));
      await ctx.store.jobInsertMany({ jobs, now: T0 });
      for (;;) {
        const claimed = await ctx.store.jobClaim({ workerId: 'w', types: ['bulk'], queues: null, limit: 500, leaseMs: 30_000, now: T0 });
        if (claimed.length === 0) break;
        await ctx.store.jobFinishMany({ finishes: asDone(claimed), now: T0 });
      }
      expect((await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(2 * DAY_MS) })).jobs).toBe(1_205);
      expect(await ctx.store.jobList({ limit: 10 })).toEqual([]);
    });
  });
}
