// Limits across real worker processes (issue 14): a concurrency limit per type and per
// limit key never exceeded by three processes (an effect ledger with start and end
// times), a rate limit reached and held by two processes over any 5 s window, and
// workers that do not spin while everything is over its limit. Run on every store.

import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { cleanupFaults, readLedger, startFaultWorker, tempDir } from './kit.js';
import type { Execution } from './kit.js';
import type { Mailroom } from '../../src/mailroom.js';

/** The most executions of these jobs that overlapped at any instant (ledger start/end). */
function maxOverlap(executions: readonly Execution[]): number {
  const edges = executions.flatMap((e) => [
    { at: e.startMs, by: 1 },
    { at: e.endMs ?? Number.POSITIVE_INFINITY, by: -1 },
  ]);
  // Ends before starts at the same millisecond: the ledger's times are whole ms.
  edges.sort((a, b) => a.at - b.at || a.by - b.by);
  let now = 0;
  let most = 0;
  for (const edge of edges) most = Math.max(most, (now += edge.by));
  return most;
}

/**
 * The same limits as the worker processes have, registered where the test enqueues: a
 * job's limit key is computed at enqueue, by the enqueuing process's task.
 */
function registerLimits(mr: Mailroom, limits: Record<string, object>): void {
  for (const [type, set] of Object.entries(limits)) {
    mr.task(type, { limits: { ...set, key: (payload) => String((payload as { key?: string }).key ?? '') }, run: () => undefined });
  }
}

async function allDone(mr: Mailroom, ids: readonly string[], timeoutMs: number): Promise<void> {
  await waitFor(async () => (await mr.listJobs({ status: 'done', limit: 10_000 })).length >= ids.length, {
    timeoutMs,
    description: `${ids.length} jobs to be done`,
  });
}

describe.each(storeHarnesses)('limits across worker processes on $name', (harness) => {
  afterEach(async () => {
    cleanupFaults();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('never runs more than 2 of a type, or more than 1 per key over 20 keys, across 3 processes', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const ledger = join(tempDir(), 'ledger.txt');
    const limits = { limited: { concurrency: 2 }, keyed: { perKey: { concurrency: 1 } } };
    registerLimits(mr, limits);
    // Every process is up before the work exists: on a loaded machine one process can
    // start a second before the others and would otherwise drain it all alone.
    const workers = await Promise.all(
      [1, 2, 3].map(() => startFaultWorker({ db: url, ledger, concurrency: 10, env: { FAULT_LIMITS: JSON.stringify(limits), FAULT_POLL_MS: '100' } })),
    );
    const limited = await mr.enqueueMany(Array.from({ length: 30 }, () => ({ type: 'limited', payload: { ms: 40 } })));
    const keyOf = new Map<string, string>();
    const keyed = await mr.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ type: 'keyed', payload: { ms: 40, key: `customer-${i % 20}` } })));
    keyed.forEach((job, i) => keyOf.set(job.id, `customer-${i % 20}`));
    await allDone(mr, [...limited, ...keyed].map((job) => job.id), 60_000);
    const runs = readLedger(ledger);
    const limitedIds = new Set(limited.map((job) => job.id));
    const limitedRuns = runs.filter((e) => limitedIds.has(e.jobId));
    expect(limitedRuns).toHaveLength(30);
    expect(new Set(runs.map((e) => e.pid)).size).toBeGreaterThan(1);
    expect(maxOverlap(limitedRuns)).toBe(2);
    const byKey = new Map<string, Execution[]>();
    for (const e of runs) if (keyOf.has(e.jobId)) byKey.set(keyOf.get(e.jobId)!, [...(byKey.get(keyOf.get(e.jobId)!) ?? []), e]);
    expect(byKey.size).toBe(20);
    for (const [key, executions] of byKey) expect(maxOverlap(executions), key).toBe(1);
    // Keys do not wait for each other: several ran at once.
    const keyedOverlap = maxOverlap(runs.filter((e) => keyOf.has(e.jobId)));
    console.log(`[limits] ${harness.name} 3 processes: most limited at once ${maxOverlap(limitedRuns)} (limit 2), most keyed at once ${keyedOverlap} over 20 keys (1 per key)`);
    expect(keyedOverlap).toBeGreaterThan(1);
    for (const worker of workers) worker.kill('SIGTERM');
  }, 90_000);

  it.runIf(harness.isAvailable)('holds a rate of 50/s across 2 processes within 10 % over any 5 s window', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const limits = { rated: { rate: { limit: 50, intervalMs: 1_000 } } };
    registerLimits(mr, limits);
    const jobs = await mr.enqueueMany(Array.from({ length: 400 }, () => ({ type: 'rated', payload: { ms: 1 } })));
    const ledger = join(tempDir(), 'ledger.txt');
    await Promise.all([1, 2].map(() => startFaultWorker({ db: url, ledger, concurrency: 10, env: { FAULT_LIMITS: JSON.stringify(limits) } })));
    await allDone(mr, jobs.map((job) => job.id), 60_000);
    // The limit is on starts as the store records them (each job's claim time, on the
    // store's clock), not on when a buffered handler got its turn.
    const starts = (await mr.listJobs({ status: 'done', limit: 1_000 }))
      .map((job) => job.startedAt!.getTime())
      .sort((a, b) => a - b);
    expect(starts).toHaveLength(400);
    // Every 5 s window that lies wholly inside the run (work was waiting throughout).
    const windows: number[] = [];
    for (let from = starts[0]!; from + 5_000 <= starts.at(-1)!; from += 100) {
      windows.push(starts.filter((t) => t >= from && t < from + 5_000).length);
    }
    expect(windows.length).toBeGreaterThan(10);
    const perSecond: number[] = [];
    for (const t of starts) perSecond[Math.floor((t - starts[0]!) / 1_000)] = (perSecond[Math.floor((t - starts[0]!) / 1_000)] ?? 0) + 1;
    console.log(`[limits] ${harness.name} starts per second ${JSON.stringify(perSecond)}`);
    console.log(`[limits] ${harness.name} rate 50/s, 2 processes: starts per 5 s window min=${Math.min(...windows)} max=${Math.max(...windows)} (allowed 250)`);
    expect(Math.max(...windows)).toBeLessThanOrEqual(275);
    expect(Math.min(...windows)).toBeGreaterThanOrEqual(225);
  }, 90_000);

  it.runIf(harness.isAvailable)('claims only a few times a second while every job is over its limit, charging nothing', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const ledger = join(tempDir(), 'ledger.txt');
    const limits = { limited: { concurrency: 1 } };
    registerLimits(mr, limits);
    const holder = await mr.enqueue('limited', { ms: 60_000 });
    const waiting = await mr.enqueueMany(Array.from({ length: 5 }, () => ({ type: 'limited', payload: { ms: 1 } })));
    const env = { FAULT_LIMITS: JSON.stringify(limits), FAULT_POLL_MS: '500', FAULT_REPORT_IDLE: '1' };
    const workers = await Promise.all([1, 2].map(() => startFaultWorker({ db: url, ledger, concurrency: 10, env })));
    await waitFor(() => readLedger(ledger).some((e) => e.jobId === holder.id), { description: 'the holder to start' });
    // Three one-second reports from each worker after the holder took the only slot.
    const reports = await Promise.all(
      workers.map(async (worker) => {
        const seen: number[] = [];
        await waitFor(() => {
          seen.splice(0, seen.length, ...worker.lines.filter((line) => line.startsWith('idleClaims ')).map((line) => Number(line.split(' ')[2])));
          return seen.length >= 4;
        }, { timeoutMs: 10_000, description: 'idle claim reports' });
        return seen.slice(1);
      }),
    );
    console.log(`[limits] ${harness.name} all over the limit: empty claims per second per worker ${JSON.stringify(reports)}`);
    for (const counts of reports) for (const count of counts) expect(count).toBeLessThanOrEqual(5);
    for (const job of waiting) expect((await mr.getJob(job.id))!).toMatchObject({ status: 'pending', attempts: 0 });
  }, 60_000);
});
