// Batches (batchInsert, batchGet, the settle trigger of migration 0011): children and the
// batch record in one transaction; counts that follow every path that makes a child
// terminal (finish, cancel, rescue) and back (replay); the completion job inserted once,
// in the transaction of the last child's outcome, and never again; ctx.batch's keyset walk
// over the children through the store's job list.

import { describe, expect, it } from 'vitest';
import type { Batch } from '../../src/core/types.js';
import type { BatchInsertResult, Lease, StoreExecutor } from '../../src/store/store.js';
import { batchContext } from '../../src/worker/batch-context.js';
import { asDone, asFailed } from '../harness/finishes.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { DAY_MS, MINUTE_MS, SECOND_MS, T0, at, claim, jobInsert, queueCounts, rejectionOf, useStore } from './context.js';

/** A batch of `count` test_job children whose completion is an `assemble` job in queue `reports`. */
function insertBatch(store: StoreExecutor, count: number, then: Parameters<typeof jobInsert>[0] = {}): Promise<BatchInsertResult> {
  return store.batchInsert({
    children: Array.from({ length: count }, (_, page) => jobInsert({ payload: { page } })),
    then: jobInsert({ type: 'assemble', queue: 'reports', priority: 3, maxAttempts: 2, payload: { reportId: 'r-1' }, ...then }),
    now: T0,
  });
}

/** The completion jobs of every batch (type `assemble`), as stored. */
async function completions(store: StoreExecutor) {
  return store.jobList({ type: 'assemble' });
}

/** One failed attempt of a claimed job: retried after `retryDelayMs`, or dead when null. */
function failed(job: Lease, error: string, retryDelayMs: number | null, deadReason?: 'permanent') {
  return asFailed([{ id: job.id, leaseToken: job.leaseToken, error, outcome: 'failed', retryDelayMs, deadReason }]);
}

function counts(batch: Batch | null) {
  return batch && { total: batch.total, done: batch.done, dead: batch.dead, completionJobId: batch.completionJobId };
}

export function batchesConformance(harness: StoreHarness): void {
  describe('batches', () => {
    const ctx = useStore(harness);
    const sync = harness.capabilities.syncTransactions;
    const async = harness.capabilities.asyncTransactions;

    it('inserts the batch and its children together, the children carrying its id, and no completion yet', async () => {
      const { batch, jobs } = await insertBatch(ctx.store, 3);
      expect(batch).toMatchObject({ total: 3, done: 0, dead: 0, thenType: 'assemble', completionJobId: null, completionStatus: null, createdAt: T0 });
      expect(jobs.map((job) => [job.payload, job.batchId, job.completesBatchId])).toEqual([
        [{ page: 0 }, batch.id, null],
        [{ page: 1 }, batch.id, null],
        [{ page: 2 }, batch.id, null],
      ]);
      expect(await ctx.store.batchGet({ id: batch.id })).toEqual(batch);
      expect((await ctx.store.jobGet({ id: jobs[1]!.id }))!.batchId).toBe(batch.id);
      expect((await ctx.store.jobList({ batchId: batch.id })).map((job) => job.id)).toEqual(jobs.map((job) => job.id));
      expect((await queueCounts(ctx.store, 'default')).pending).toBe(3);
      expect(await completions(ctx.store)).toEqual([]);
    });

    it('answers null for an unknown or malformed batch id, and lists no children for one', async () => {
      await insertBatch(ctx.store, 1);
      expect(await ctx.store.batchGet({ id: '999999' })).toBeNull();
      expect(await ctx.store.batchGet({ id: 'x; drop table' })).toBeNull();
      expect(await ctx.store.jobList({ batchId: 'nope' })).toEqual([]);
    });

    it('counts children done and dead and enqueues the completion job with the last outcome, once', async () => {
      const { batch } = await insertBatch(ctx.store, 3);
      const [a, b, c] = await claim(ctx.store, { limit: 3 });
      await ctx.store.jobFinishMany({ finishes: asDone([a!]), now: at(SECOND_MS) });
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 3, done: 1, dead: 0, completionJobId: null });
      // A retry is not terminal: nothing moves.
      await ctx.store.jobFinishMany({ finishes: failed(b!, 'Error: 503', 0), now: at(SECOND_MS) });
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 3, done: 1, dead: 0, completionJobId: null });
      const [b2] = await claim(ctx.store, { now: at(2 * SECOND_MS) });
      expect(b2!.id).toBe(b!.id);
      // The last two in one jobFinishMany: one dead (Permanent), one done.
      await ctx.store.jobFinishMany({
        finishes: [...failed(b2!, 'Permanent: no page', null, 'permanent'), ...asDone([c!])],
        now: at(MINUTE_MS),
      });
      const settled = (await ctx.store.batchGet({ id: batch.id }))!;
      expect(settled).toMatchObject({ total: 3, done: 2, dead: 1, completionStatus: 'pending' });
      const [completion, ...more] = await completions(ctx.store);
      expect(more).toEqual([]);
      expect(settled.completionJobId).toBe(completion!.id);
      expect(completion).toMatchObject({
        status: 'pending',
        queue: 'reports',
        priority: 3,
        maxAttempts: 2,
        payload: { reportId: 'r-1' },
        batchId: null,
        completesBatchId: batch.id,
        attempts: 0,
      });
      // Due from the last child's outcome, on the store's clock of that write.
      expect(completion!.runAt).toEqual(at(MINUTE_MS));
      expect(completion!.createdAt).toEqual(at(MINUTE_MS));
      expect((await queueCounts(ctx.store, 'reports')).pending).toBe(1);
      const [claimed] = await claim(ctx.store, { types: ['assemble'], now: at(MINUTE_MS) });
      expect(claimed).toMatchObject({ id: completion!.id, completesBatchId: batch.id, batchId: null });
    });

    it('counts children dead by cancel and by a lease lost on their last attempt (the rescuer)', async () => {
      const { batch, jobs } = await store3WithOneAttempt();
      await ctx.store.jobCancel({ id: jobs[0]!.id, now: at(SECOND_MS) });
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toMatchObject({ done: 0, dead: 1 });
      const [b, c] = await claim(ctx.store, { limit: 2, leaseMs: 10 * SECOND_MS, now: at(SECOND_MS) });
      await ctx.store.jobFinishMany({ finishes: asDone([b!]), now: at(2 * SECOND_MS) });
      expect(await completions(ctx.store)).toEqual([]);
      const rescued = await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      expect(rescued.dead).toEqual([c!.id]);
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toMatchObject({ total: 3, done: 1, dead: 2 });
      const [completion] = await completions(ctx.store);
      expect(completion).toMatchObject({ completesBatchId: batch.id, runAt: at(MINUTE_MS) });
      expect((await ctx.store.batchGet({ id: batch.id }))!.completionJobId).toBe(completion!.id);

      async function store3WithOneAttempt() {
        return ctx.store.batchInsert({
          children: [0, 1, 2].map((page) => jobInsert({ payload: { page }, maxAttempts: 1 })),
          then: jobInsert({ type: 'assemble' }),
          now: T0,
        });
      }
    });

    it('completes a batch cancelled child by child', async () => {
      const { batch, jobs } = await insertBatch(ctx.store, 2);
      for (const job of jobs) await ctx.store.jobCancel({ id: job.id, now: at(SECOND_MS) });
      expect(await ctx.store.batchGet({ id: batch.id })).toMatchObject({ done: 0, dead: 2, completionStatus: 'pending' });
      expect(await completions(ctx.store)).toHaveLength(1);
    });

    it('enqueues the completion of a batch without children at once, due after its delay', async () => {
      const { batch, jobs } = await insertBatch(ctx.store, 0, { delayMs: 5 * SECOND_MS });
      expect(jobs).toEqual([]);
      const [completion] = await completions(ctx.store);
      expect(batch).toMatchObject({ total: 0, done: 0, dead: 0, completionJobId: completion!.id, completionStatus: 'pending' });
      expect(completion).toMatchObject({ completesBatchId: batch.id, runAt: at(5 * SECOND_MS) });
      expect((await queueCounts(ctx.store, 'reports')).pending).toBe(1);
    });

    it('delays the completion by then.delayMs from the last outcome', async () => {
      await insertBatch(ctx.store, 1, { delayMs: 30 * SECOND_MS });
      const [child] = await claim(ctx.store);
      await ctx.store.jobFinishMany({ finishes: asDone([child!]), now: at(MINUTE_MS) });
      expect((await completions(ctx.store))[0]!.runAt).toEqual(at(MINUTE_MS + 30 * SECOND_MS));
    });

    it('moves the counts back on a replay, and does not enqueue the completion a second time', async () => {
      const { batch } = await insertBatch(ctx.store, 2);
      const [a, b] = await claim(ctx.store, { limit: 2 });
      await ctx.store.jobFinishMany({
        finishes: [...asDone([a!]), ...failed(b!, 'Error: boom', null)],
        now: at(SECOND_MS),
      });
      const first = (await ctx.store.batchGet({ id: batch.id }))!;
      expect(first).toMatchObject({ done: 1, dead: 1 });
      expect(await ctx.store.jobReplay({ ids: [b!.id], reason: 'fixed', by: null, now: at(MINUTE_MS) })).toEqual([b!.id]);
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 2, done: 1, dead: 0, completionJobId: first.completionJobId });
      const [again] = await claim(ctx.store, { now: at(MINUTE_MS) });
      await ctx.store.jobFinishMany({ finishes: asDone([again!]), now: at(2 * MINUTE_MS) });
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 2, done: 2, dead: 0, completionJobId: first.completionJobId });
      expect(await completions(ctx.store)).toHaveLength(1);
      // A forced replay of a done child moves `done` back the same way.
      await ctx.store.jobReplay({ ids: [a!.id], reason: null, by: null, force: true, now: at(3 * MINUTE_MS) });
      expect(await ctx.store.batchGet({ id: batch.id })).toMatchObject({ done: 1, dead: 0 });
    });

    it('enqueues one completion when the last children finish at once on two connections', async () => {
      const { batch } = await insertBatch(ctx.store, 2);
      const other = await ctx.opened.openAnother();
      const [a, b] = await claim(ctx.store, { limit: 2 });
      await Promise.all([
        ctx.store.jobFinishMany({ finishes: asDone([a!]), now: at(SECOND_MS) }),
        other.jobFinishMany({ finishes: asDone([b!]), now: at(SECOND_MS) }),
      ]);
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toMatchObject({ total: 2, done: 2, dead: 0 });
      expect(await completions(ctx.store)).toHaveLength(1);
    });

    it('pages a batch’s children in id order with their outcomes (ctx.batch)', async () => {
      const { batch, jobs } = await insertBatch(ctx.store, 7);
      const claimed = await claim(ctx.store, { limit: 7 });
      await ctx.store.jobFinishMany({
        finishes: [
          ...claimed.slice(0, 6).map((job) => ({ kind: 'done' as const, id: job.id, leaseToken: job.leaseToken, resultJson: JSON.stringify({ page: job.payload }) })),
          ...failed(claimed[6]!, 'Error: bad page', null),
        ],
        now: at(SECOND_MS),
      });
      const seen = batchContext(ctx.store, (await ctx.store.batchGet({ id: batch.id }))!);
      expect({ total: seen.total, done: seen.done, dead: seen.dead }).toEqual({ total: 7, done: 6, dead: 1 });
      const walked: Array<[string, string, unknown, string | null]> = [];
      for await (const child of seen.children({ pageSize: 3 })) walked.push([child.id, child.status, child.result, child.lastError]);
      expect(walked.map(([id]) => id)).toEqual(jobs.map((job) => job.id));
      expect(walked[0]).toEqual([jobs[0]!.id, 'done', { page: { page: 0 } }, null]);
      expect(walked[6]).toEqual([jobs[6]!.id, 'dead', null, 'Error: bad page']);
      // The default iterator walks the same children.
      const ids: string[] = [];
      for await (const child of seen) ids.push(child.id);
      expect(ids).toEqual(jobs.map((job) => job.id));
    });

    it('keeps a batch’s finished children past retention until its completion job has run and is purged itself', async () => {
      const { batch, jobs } = await insertBatch(ctx.store, 2);
      const [first] = await claim(ctx.store, { limit: 1, now: T0 });
      await ctx.store.jobFinishMany({ finishes: asDone([first!]), now: T0 });
      // The other child still pending days later: the completion to come reads both.
      expect(await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(3 * DAY_MS) })).toMatchObject({ jobs: 0 });
      const [second] = await claim(ctx.store, { limit: 1, now: at(3 * DAY_MS) });
      await ctx.store.jobFinishMany({ finishes: asDone([second!]), now: at(3 * DAY_MS) });
      // The completion job waits in line (its worker is down): the children stay.
      expect(await ctx.store.jobPurge({ doneOlderThanMs: 0, now: at(5 * DAY_MS) })).toMatchObject({ jobs: 0 });
      const [completion] = await claim(ctx.store, { types: ['assemble'], now: at(5 * DAY_MS) });
      const seen = batchContext(ctx.store, (await ctx.store.batchGet({ id: batch.id }))!);
      const walked: string[] = [];
      for await (const child of seen) walked.push(child.id);
      expect(walked).toEqual(jobs.map((job) => job.id));
      await ctx.store.jobFinishMany({ finishes: asDone([completion!]), now: at(5 * DAY_MS) });
      // Past retention: the completion goes first, its children with the next purge.
      expect((await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(7 * DAY_MS) })).jobs).toBe(1);
      expect((await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(7 * DAY_MS) })).jobs).toBe(2);
      expect(await ctx.store.batchGet({ id: batch.id })).toBeNull();
    });

    it('purges a batch record once its completion job and children are purged, and keeps it while one is kept', async () => {
      const { batch } = await insertBatch(ctx.store, 2);
      const [a, b] = await claim(ctx.store, { limit: 2 });
      await ctx.store.jobFinishMany({ finishes: [...asDone([a!]), ...failed(b!, 'Error: boom', null)], now: T0 });
      const [completion] = await claim(ctx.store, { types: ['assemble'] });
      await ctx.store.jobFinishMany({ finishes: asDone([completion!]), now: T0 });
      const open = await insertBatch(ctx.store, 1);
      // Done jobs go; the dead child is kept, and with it its batch.
      await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, now: at(2 * DAY_MS) });
      expect(await ctx.store.batchGet({ id: batch.id })).toMatchObject({ done: 1, dead: 1, completionStatus: null });
      await ctx.store.jobPurge({ doneOlderThanMs: DAY_MS, deadOlderThanMs: DAY_MS, now: at(2 * DAY_MS) });
      expect(await ctx.store.batchGet({ id: batch.id })).toBeNull();
      // A batch still open stays, whatever its age.
      expect((await ctx.store.batchGet({ id: open.batch.id }))!.total).toBe(1);
    });

    it.skipIf(!sync)('leaves no completion when the finish of the last child rolls back (syncTransactions)', async () => {
      const { batch } = await insertBatch(ctx.store, 1);
      const [child] = await claim(ctx.store);
      expect(() =>
        ctx.store.transactionSync!((tx) => {
          expect(tx.jobFinishMany({ finishes: asDone([child!]), now: at(SECOND_MS) })).toEqual([child!.id]);
          throw new Error('the caller’s write failed');
        }),
      ).toThrow('the caller’s write failed');
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 1, done: 0, dead: 0, completionJobId: null });
      expect(await completions(ctx.store)).toEqual([]);
      expect((await ctx.store.jobGet({ id: child!.id }))!.status).toBe('running');
    });

    it.skipIf(!async)('leaves no completion when the finish of the last child rolls back (asyncTransactions)', async () => {
      const { batch } = await insertBatch(ctx.store, 1);
      const [child] = await claim(ctx.store);
      await rejectionOf(
        ctx.store.transaction!(async (tx) => {
          expect(await tx.jobFinishMany({ finishes: asDone([child!]), now: at(SECOND_MS) })).toEqual([child!.id]);
          expect(await tx.jobList({ type: 'assemble' })).toHaveLength(1);
          throw new Error('the caller’s write failed');
        }),
      );
      expect(counts(await ctx.store.batchGet({ id: batch.id }))).toEqual({ total: 1, done: 0, dead: 0, completionJobId: null });
      expect(await completions(ctx.store)).toEqual([]);
      expect((await ctx.store.jobGet({ id: child!.id }))!.status).toBe('running');
    });

    it.skipIf(!sync)('leaves no batch and no children when a transactionSync batchInsert rolls back (syncTransactions)', async () => {
      let batchId = '';
      expect(() =>
        ctx.store.transactionSync!((tx) => {
          batchId = tx.batchInsert({ children: [jobInsert(), jobInsert()], then: jobInsert({ type: 'assemble' }), now: T0 }).batch.id;
          throw new Error('roll it back');
        }),
      ).toThrow('roll it back');
      expect(await ctx.store.batchGet({ id: batchId })).toBeNull();
      expect(await ctx.store.jobList({})).toEqual([]);
      expect(await queueCounts(ctx.store, 'default')).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    });

    it.skipIf(!async)('leaves no batch and no children when a batchInsert in a transaction rolls back (asyncTransactions)', async () => {
      let batchId = '';
      await rejectionOf(
        ctx.store.transaction!(async (tx) => {
          batchId = (await tx.batchInsert({ children: [jobInsert(), jobInsert()], then: jobInsert({ type: 'assemble' }), now: T0 })).batch.id;
          throw new Error('roll it back');
        }),
      );
      expect(await ctx.store.batchGet({ id: batchId })).toBeNull();
      expect(await ctx.store.jobList({})).toEqual([]);
    });
  });
}
