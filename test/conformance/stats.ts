// Stats: byQueue counts per status stay exact through every transition (they are kept
// incrementally, so every write path must keep them), and the oldest due pending job.

import { describe, expect, it } from 'vitest';
import type { StatusCounts } from '../../src/core/types.js';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import {
  DAY_MS,
  MINUTE_MS,
  SECOND_MS,
  T0,
  at,
  claim,
  claimOne,
  countedFromList,
  enqueue,
  enqueueIds,
  jobInsert,
  nonZeroByQueue,
  queueCounts,
  rejectionOf,
  useStore,
} from './context.js';
import { asDone, asFailed, asHandedBack } from '../harness/finishes.js';

function counts(pending: number, running: number, done: number, dead: number): StatusCounts {
  return { pending, running, done, dead };
}

export function statsConformance(harness: StoreHarness): void {
  describe('stats', () => {
    const ctx = useStore(harness);

    /** Stats equal the jobs themselves, and queue q holds exactly `expected`. */
    async function expectCounts(queue: string, expected: StatusCounts, now: Date = T0): Promise<void> {
      expect(await queueCounts(ctx.store, queue, now)).toEqual(expected);
      expect(await nonZeroByQueue(ctx.store, now)).toEqual(await countedFromList(ctx.store));
    }

    it('keeps byQueue counts exact through insert, claim, retry, hand-back, rescue, completion and death', async () => {
      const q = 'email';
      await expectCounts(q, counts(0, 0, 0, 0));
      await enqueueIds(ctx.store, [{ queue: q, maxAttempts: 2 }, { queue: q, maxAttempts: 2 }, { queue: q, maxAttempts: 2 }]);
      await expectCounts(q, counts(3, 0, 0, 0));

      const [a, b, c] = await claim(ctx.store, { queues: [q], leaseMs: 30 * SECOND_MS });
      await expectCounts(q, counts(0, 3, 0, 0));

      await ctx.store.jobFinishMany({ finishes: asFailed([{ id: a!.id, leaseToken: a!.leaseToken, error: 'Error: x', outcome: 'failed', retryDelayMs: 0 }]), now: T0 });
      await expectCounts(q, counts(1, 2, 0, 0));

      await ctx.store.jobFinishMany({ finishes: asHandedBack([b!]), now: T0 });
      await expectCounts(q, counts(2, 1, 0, 0));

      await ctx.store.jobFinishMany({ finishes: asDone([c!]), now: T0 });
      await expectCounts(q, counts(2, 0, 1, 0));

      // a (1 attempt charged) and b (0) run again; their leases expire: a dies, b retries.
      const again = await claim(ctx.store, { queues: [q], leaseMs: 30 * SECOND_MS, now: at(SECOND_MS) });
      expect(again).toHaveLength(2);
      await expectCounts(q, counts(0, 2, 1, 0));
      const rescued = await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      expect(rescued.dead).toEqual([a!.id]);
      expect(rescued.requeued).toEqual([b!.id]);
      await expectCounts(q, counts(1, 0, 1, 1));

      const last = await claimOne(ctx.store, { queues: [q], now: at(MINUTE_MS) });
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: last.id, leaseToken: last.leaseToken, error: 'Permanent: no', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
        now: at(MINUTE_MS),
      });
      await expectCounts(q, counts(0, 0, 1, 2));
    });

    it('keeps byQueue counts exact through cancel, replay and purge', async () => {
      const q = 'reports';
      const [toCancel] = await enqueueIds(ctx.store, [{ queue: q }]);
      await ctx.store.jobCancel({ id: toCancel!, now: T0 });
      await expectCounts(q, counts(0, 0, 0, 1));

      await ctx.store.jobReplay({ ids: [toCancel!], reason: null, by: null, now: T0 });
      await expectCounts(q, counts(1, 0, 0, 0));

      await insertJob(ctx.store, { queue: q, status: 'done', now: T0 });
      await insertJob(ctx.store, { queue: q, status: 'done', now: T0 });
      const dead = await insertJob(ctx.store, { queue: q, status: 'dead', now: T0 });
      await expectCounts(q, counts(1, 0, 2, 1));

      await ctx.store.jobReplay({ filter: { status: 'done' }, reason: null, by: null, force: true, now: T0 });
      await expectCounts(q, counts(3, 0, 0, 1));

      const finished = await claim(ctx.store, { types: ['test_job'], queues: [q] });
      await ctx.store.jobFinishMany({ finishes: asDone(finished), now: T0 });
      await expectCounts(q, counts(2, 0, 1, 1));

      const purged = await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, deadOlderThanMs: DAY_MS, now: at(2 * DAY_MS) });
      expect(purged.jobs).toBe(2);
      expect(await ctx.store.jobGet({ id: dead.id })).toBeNull();
      await expectCounts(q, counts(2, 0, 0, 0), at(2 * DAY_MS));
    });

    it('counts neither a duplicate enqueue, a refused key conflict nor a fenced late outcome', async () => {
      const q = 'default';
      await enqueue(ctx.store, { key: 'k', payload: { a: 1 } });
      await enqueue(ctx.store, { key: 'k', payload: { a: 1 } });
      await rejectionOf(ctx.store.jobInsertMany({ jobs: [jobInsert({}), jobInsert({ key: 'k', payload: { a: 2 } })], now: T0 }));
      await expectCounts(q, counts(1, 0, 0, 0));
      const stale = await claimOne(ctx.store, { leaseMs: 10 * SECOND_MS });
      await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      await ctx.store.jobFinishMany({ finishes: asDone([stale]), now: at(MINUTE_MS) });
      await expectCounts(q, counts(1, 0, 0, 0));
    });

    it('keeps counts per queue apart', async () => {
      await enqueueIds(ctx.store, [{ queue: 'a' }, { queue: 'a' }, { queue: 'b' }]);
      await claim(ctx.store, { queues: ['b'] });
      const stats = await ctx.store.jobStats({ now: T0 });
      expect(stats.byQueue.a).toMatchObject({ pending: 2, running: 0 });
      expect(stats.byQueue.b).toMatchObject({ pending: 0, running: 1 });
    });

    it('reports the oldest due pending runAt per queue, leaving out queues with nothing due', async () => {
      await enqueueIds(ctx.store, [
        { queue: 'a', runAt: at(-5 * MINUTE_MS) },
        { queue: 'a', runAt: at(-MINUTE_MS) },
        { queue: 'b', runAt: at(-2 * MINUTE_MS) },
        { queue: 'later', runAt: at(MINUTE_MS) },
      ]);
      await insertJob(ctx.store, { queue: 'finished', status: 'done', now: at(-DAY_MS) });
      const stats = await ctx.store.jobStats({ now: T0 });
      expect(stats.oldestDuePendingAt).toEqual({ a: at(-5 * MINUTE_MS), b: at(-2 * MINUTE_MS) });
      expect(stats.now).toEqual(T0);
      expect((await ctx.store.jobStats({ now: at(MINUTE_MS) })).oldestDuePendingAt.later).toEqual(at(MINUTE_MS));
    });

    it('finds the oldest due job whatever its priority, past newer higher-priority, future and running jobs', async () => {
      // The stores walk each queue's priorities in the claim index instead of reading
      // every pending row; the oldest due job can sit at any priority level.
      await enqueueIds(ctx.store, [{ queue: 'a', priority: 9, runAt: at(-10 * MINUTE_MS) }]);
      await claim(ctx.store, { queues: ['a'] }); // running: no longer pending
      await enqueueIds(ctx.store, [
        { queue: 'a', priority: 9, runAt: at(MINUTE_MS) }, // highest, not due
        { queue: 'a', priority: 5, runAt: at(-MINUTE_MS) },
        { queue: 'a', priority: -3, runAt: at(-7 * MINUTE_MS) }, // the oldest due one
        { queue: 'a', priority: -3, runAt: at(-2 * MINUTE_MS) },
        { queue: 'a', priority: 0, runAt: at(-3 * MINUTE_MS) },
        { queue: 'b', priority: 1, runAt: at(MINUTE_MS) }, // nothing due in b
      ]);
      const stats = await ctx.store.jobStats({ now: T0 });
      expect(stats.oldestDuePendingAt).toEqual({ a: at(-7 * MINUTE_MS) });
      expect((await ctx.store.jobStats({ now: at(2 * MINUTE_MS) })).oldestDuePendingAt).toEqual({ a: at(-7 * MINUTE_MS), b: at(MINUTE_MS) });
    });

    it('still finds the oldest due job in a queue with more priorities than the walk takes', async () => {
      // Past the walk's bounds a queue is read row by row instead (PostgreSQL: 64 priorities;
      // SQLite: 32 types, or 32 priorities of one type); the answer must not change.
      await enqueueIds(
        ctx.store,
        Array.from({ length: 70 }, (_, i) => ({ queue: 'many', priority: 100 - i, runAt: at(-(i + 1) * SECOND_MS) })),
      );
      await enqueueIds(ctx.store, [{ queue: 'few', priority: 2, runAt: at(-SECOND_MS) }, { queue: 'few', priority: 1, runAt: at(-9 * SECOND_MS) }]);
      const stats = await ctx.store.jobStats({ now: T0 });
      expect(stats.oldestDuePendingAt).toEqual({ many: at(-70 * SECOND_MS), few: at(-9 * SECOND_MS) });
    });

    it('finds the oldest due job among many types of a queue, and among the priorities of each type', async () => {
      // SQLite walks each queue's types, then each type's priorities; the oldest due job
      // may be of any type, at any priority, and a queue may hold more types than the walk takes.
      await enqueueIds(ctx.store, [
        ...Array.from({ length: 40 }, (_, i) => ({ queue: 'wide', type: `t${String(i).padStart(2, '0')}`, runAt: at(-(i + 1) * SECOND_MS) })),
        { queue: 'mixed', type: 'a', priority: 5, runAt: at(-SECOND_MS) },
        { queue: 'mixed', type: 'a', priority: 1, runAt: at(-4 * SECOND_MS) },
        { queue: 'mixed', type: 'b', priority: 9, runAt: at(-2 * SECOND_MS) },
        { queue: 'mixed', type: 'b', priority: -1, runAt: at(-6 * SECOND_MS) }, // the oldest due one
        { queue: 'mixed', type: 'b', priority: -2, runAt: at(MINUTE_MS) }, // not due
        { queue: 'mixed', type: 'c', priority: 0, runAt: at(-3 * SECOND_MS) },
      ]);
      const stats = await ctx.store.jobStats({ now: T0 });
      expect(stats.oldestDuePendingAt).toEqual({ wide: at(-40 * SECOND_MS), mixed: at(-6 * SECOND_MS) });
    });
  });
}
