// Batches across real worker processes (issue 14): a batch of 1,000 children fanned out
// from a handler (ctx.enqueueBatch) over 4 processes, some children dying, completes
// exactly once with the right counts; then the process running a batch's last child is
// SIGKILLed mid-run, its lease expires, another process finishes the child, and the
// completion still runs exactly once. The completion handler (fault-worker's `assemble`)
// records what ctx.batch showed it in a ledger file. Run on every store.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { cleanupFaults, startFaultWorker, tempDir } from './kit.js';
import type { Mailroom } from '../../src/mailroom.js';

interface CompletionRun {
  readonly batchId: string;
  readonly jobId: string;
  readonly pid: number;
  readonly attempt: number;
  readonly total: number;
  readonly done: number;
  readonly dead: number;
  readonly walked: number;
  readonly walkedDone: number;
  readonly walkedDead: number;
  /** Done children whose result was their own `{ page: id }`. */
  readonly results: number;
}

function readCompletions(path: string): CompletionRun[] {
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('complete '))
    .map((line) => {
      const [, batchId, jobId, ...numbers] = line.split(' ');
      const [pid, attempt, total, done, dead, walked, walkedDone, walkedDead, results] = numbers.map(Number) as number[];
      return { batchId: batchId!, jobId: jobId!, pid: pid!, attempt: attempt!, total: total!, done: done!, dead: dead!, walked: walked!, walkedDone: walkedDone!, walkedDead: walkedDead!, results: results! };
    });
}

/** Every job settled (nothing pending or running): no late completion can still come. */
async function allSettled(mr: Mailroom, timeoutMs: number): Promise<void> {
  await waitFor(
    async () => {
      const { byStatus } = await mr.stats();
      return byStatus.pending === 0 && byStatus.running === 0;
    },
    { timeoutMs, description: 'every job to settle' },
  );
}

describe.each(storeHarnesses)('batches across worker processes on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('completes a batch of 1,000 over 4 processes once, and once again after the last child’s process is killed', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const dir = tempDir();
    const completions = join(dir, 'completions.txt');
    const env = { FAULT_BATCH_LEDGER: completions, FAULT_POLL_MS: '100' };
    const workers = await Promise.all([1, 2, 3, 4].map(() => startFaultWorker({ db: url, ledger: join(dir, 'ledger.txt'), concurrency: 10, leaseMs: 2_000, env })));
    const started = Date.now();

    // 1. Fanned out from a handler: 1,000 pages, every 20th dies after its 2 attempts.
    await mr.enqueue('fanout', { n: 1_000, dieEvery: 20 });
    const fanned = await Promise.any(workers.map((worker) => worker.waitForLine((line) => line.startsWith('fanned '), 30_000)));
    const first = fanned.split(' ')[2]!;
    // The handler writes its line before its job is done: wait for both.
    await waitFor(async () => readCompletions(completions).some((run) => run.batchId === first) && (await mr.getBatch(first))?.completionStatus === 'done', {
      timeoutMs: 60_000,
      description: 'the first batch to complete',
    });
    const firstBatch = (await mr.getBatch(first))!;
    expect(firstBatch).toMatchObject({ total: 1_000, done: 950, dead: 50, completionStatus: 'done' });
    const ran = new Set((await mr.listJobs({ batchId: first, limit: 1_000 })).map((job) => job.leaseOwner));
    console.log(`[batches] ${harness.name}: 1,000 children over ${ran.size} workers, completed in ${Date.now() - started} ms`);
    expect(ran.size).toBeGreaterThan(1);

    // 2. The last child blocks in its first attempt; its process is killed once every
    //    other child has ended, and another process takes the child over.
    const second = await mr.enqueueBatch(
      Array.from({ length: 200 }, (_, i) => ({ type: 'page', payload: { block: i === 150, die: i % 50 === 49 } })),
      { then: { type: 'assemble', payload: {} } },
    );
    const blocker = second.jobs[150]!.id;
    const holder = await Promise.any(workers.map(async (worker) => (await worker.waitForLine((line) => line.startsWith('blocking ') && line.endsWith(` ${blocker}`), 30_000), worker)));
    await waitFor(async () => {
      const batch = (await mr.getBatch(second.id))!;
      return batch.done + batch.dead === batch.total - 1;
    }, { timeoutMs: 30_000, description: 'every child but the blocked one to end' });
    expect((await mr.getBatch(second.id))!.completionJobId).toBeNull();
    holder.kill('SIGKILL');
    await waitFor(() => readCompletions(completions).some((run) => run.batchId === second.id), { timeoutMs: 30_000, description: 'the second batch to complete after the kill' });
    await allSettled(mr, 30_000);

    const runs = readCompletions(completions);
    expect(runs.filter((run) => run.batchId === first)).toEqual([
      expect.objectContaining({ total: 1_000, done: 950, dead: 50, walked: 1_000, walkedDone: 950, walkedDead: 50, results: 950, attempt: 1 }),
    ]);
    expect(runs.filter((run) => run.batchId === second.id)).toEqual([
      expect.objectContaining({ total: 200, done: 196, dead: 4, walked: 200, walkedDone: 196, walkedDead: 4, results: 196, attempt: 1 }),
    ]);
    expect(runs).toHaveLength(2);
    // One completion job per batch in the store, and the blocked child finished by another process on its second attempt.
    expect((await mr.listJobs({ type: 'assemble' })).map((job) => job.completesBatchId).sort()).toEqual([first, second.id].sort());
    const child = (await mr.getJob(blocker))!;
    expect(child).toMatchObject({ status: 'done', attempts: 2 });
    expect(child.attemptsLog.map((a) => a.outcome)).toEqual(['lost', 'done']);
    expect((await mr.getBatch(second.id))!).toMatchObject({ total: 200, done: 196, dead: 4, completionStatus: 'done' });
    for (const worker of workers) if (worker !== holder) worker.kill('SIGTERM');
  }, 120_000);
});
