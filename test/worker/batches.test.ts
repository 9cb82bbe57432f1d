// Batches end to end through the facade and an in-process worker: mr.enqueueBatch, the
// completion job's ctx.batch (counts and a walk over the children's outcomes and
// results), tx.enqueueBatch inside mr.transaction (kept or rolled back with it), and the
// options a batch refuses, on every store in the harness list.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { rejectionOf } from '../conformance/context.js';
import type { BatchContext, EnqueuedBatch } from '../../src/index.js';
import type { Mailroom } from '../../src/mailroom.js';

interface Seen {
  readonly counts: Pick<BatchContext, 'id' | 'total' | 'done' | 'dead'>;
  readonly children: Array<{ id: string; status: string; result: unknown; lastError: string | null }>;
}

/** Registers `assemble`, which records what ctx.batch showed it, once per run. */
function recordCompletions(mr: Mailroom): Seen[] {
  const seen: Seen[] = [];
  mr.task('assemble', {
    async run(_payload, ctx) {
      const batch = ctx.batch!;
      const children: Seen['children'] = [];
      for await (const child of batch.children({ pageSize: 2 })) {
        children.push({ id: child.id, status: child.status, result: child.result, lastError: child.lastError });
      }
      seen.push({ counts: { id: batch.id, total: batch.total, done: batch.done, dead: batch.dead }, children });
    },
  });
  return seen;
}

async function completed(mr: Mailroom, batchId: string): Promise<void> {
  await waitFor(async () => (await mr.getBatch(batchId))?.completionStatus === 'done', { description: `batch ${batchId} to complete` });
}

describe.each(storeHarnesses)('batches on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('runs the completion once, after every child, with the counts and each child’s outcome', async () => {
    const { mr } = await openTestMailroom(harness);
    const seen = recordCompletions(mr);
    const batchOfChild: Array<string | null> = [];
    let batchOfPlainJob: unknown = 'unset';
    mr.task('render_page', {
      maxAttempts: 1,
      run(payload, ctx) {
        batchOfChild.push(ctx.job.batchId);
        const { page } = payload as { page: number };
        if (page === 3) throw new Error('page 3 has no data');
        return { rendered: page };
      },
    });
    mr.task('plain', {
      run(_payload, ctx) {
        batchOfPlainJob = ctx.batch;
      },
    });
    const batch = await mr.enqueueBatch(
      [1, 2, 3, 4, 5].map((page) => ({ type: 'render_page', payload: { page } })),
      { then: { type: 'assemble', payload: { reportId: 'r-9' }, queue: 'reports' } },
    );
    expect(batch).toMatchObject({ total: 5, done: 0, dead: 0, thenType: 'assemble', completionJobId: null });
    expect(batch.jobs.map((job) => job.batchId)).toEqual(Array(5).fill(batch.id));
    const plain = await mr.enqueue('plain', {});
    mr.work({ pollMs: 10, queues: ['default', 'reports'] });
    await completed(mr, batch.id);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.counts).toEqual({ id: batch.id, total: 5, done: 4, dead: 1 });
    expect(seen[0]!.children).toEqual(
      batch.jobs.map((job, i) =>
        i === 2
          ? { id: job.id, status: 'dead', result: null, lastError: 'Error: page 3 has no data' }
          : { id: job.id, status: 'done', result: { rendered: i + 1 }, lastError: null },
      ),
    );
    expect(batchOfChild).toEqual(Array(5).fill(batch.id));
    await waitFor(async () => (await mr.getJob(plain.id))?.status === 'done', { description: 'the plain job' });
    expect(batchOfPlainJob).toBeNull();
    const completion = (await mr.getJob((await mr.getBatch(batch.id))!.completionJobId!))!;
    expect(completion).toMatchObject({ type: 'assemble', queue: 'reports', payload: { reportId: 'r-9' }, completesBatchId: batch.id, attempts: 1 });
  });

  it.runIf(harness.isAvailable)('runs the completion of a batch without children at once, with nothing to walk', async () => {
    const { mr } = await openTestMailroom(harness);
    const seen = recordCompletions(mr);
    const batch = await mr.enqueueBatch([], { then: { type: 'assemble', payload: {} } });
    expect(batch).toMatchObject({ total: 0, completionStatus: 'pending' });
    mr.work({ pollMs: 10 });
    await completed(mr, batch.id);
    expect(seen).toEqual([{ counts: { id: batch.id, total: 0, done: 0, dead: 0 }, children: [] }]);
  });

  it.runIf(harness.isAvailable)('keeps a batch enqueued in mr.transaction, and none when the transaction throws', async () => {
    const { mr } = await openTestMailroom(harness);
    const children = [{ type: 'render_page', payload: { page: 1 } }];
    const then = { type: 'assemble', payload: {} };
    // SQLite's transaction is synchronous and PostgreSQL's async; `await` serves both.
    const kept = (await mr.transaction((tx) => tx.enqueueBatch(children, { then }))) as EnqueuedBatch;
    expect((await mr.getBatch(kept.id))!).toMatchObject({ total: 1, thenType: 'assemble' });
    expect((await mr.listJobs({ batchId: kept.id })).map((job) => job.id)).toEqual([kept.jobs[0]!.id]);
    let rolledBack: EnqueuedBatch | undefined;
    const error = await rejectionOf(
      (async () =>
        mr.transaction((tx) => {
          const enqueued = tx.enqueueBatch(children, { then });
          const fail = (batch: EnqueuedBatch) => {
            rolledBack = batch;
            throw new Error('the order was declined');
          };
          return enqueued instanceof Promise ? enqueued.then(fail) : fail(enqueued);
        }))(),
    );
    expect((error as Error).message).toBe('the order was declined');
    expect(await mr.getBatch(rolledBack!.id)).toBeNull();
    expect(await mr.listJobs({ batchId: rolledBack!.id })).toEqual([]);
    expect((await mr.stats()).byStatus.pending).toBe(1);
  });

  it.runIf(harness.isAvailable)('refuses a key on a child and a key, runAt or group on the completion, storing nothing', async () => {
    const { mr } = await openTestMailroom(harness);
    const then = { type: 'assemble', payload: {} };
    const refusals = [
      () => mr.enqueueBatch([{ type: 'render_page', payload: {}, options: { key: 'page-1' } }], { then }),
      () => mr.enqueueBatch([{ type: 'render_page', payload: {} }], { then: { ...then, key: 'report-1' } as never }),
      () => mr.enqueueBatch([{ type: 'render_page', payload: {} }], { then: { ...then, runAt: new Date() } as never }),
      () => mr.enqueueBatch([{ type: 'render_page', payload: {} }], { then: { ...then, group: 'reports' } as never }),
      () => mr.enqueueBatch([{ type: 'render_page', payload: {} }], {} as never),
      () => mr.enqueueBatch('pages' as never, { then }),
    ];
    for (const refuse of refusals) {
      const error = await rejectionOf(refuse());
      expect(error).toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    }
    expect((await rejectionOf(mr.enqueueBatch([{ type: 'render_page', payload: {}, options: { key: 'k' } }], { then }))).message).toMatch(
      /children\[0\]\.options\.key is not supported/,
    );
    expect((await mr.stats()).byStatus).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
    expect(await mr.getBatch('1')).toBeNull();
  });
});
