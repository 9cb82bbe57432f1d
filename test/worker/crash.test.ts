// Crash tests with real worker processes: SIGKILL mid-job, a poison job that kills its own
// process every time, and SIGTERM's graceful hand-back. Run on every store.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { killAllWorkers, spawnWorker } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

describe.each(storeHarnesses)('worker processes on $name', (harness) => {
  afterEach(async () => {
    killAllWorkers();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('hands a SIGKILLed job to another worker once its lease expires, charging both attempts', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const job = await mr.enqueue('slow', {});
    const first = spawnWorker({ url, leaseMs: 1_000 });
    await first.waitForLine((line) => line === `started ${job.id} 1`);
    first.child.kill('SIGKILL');
    await first.exited;

    const second = spawnWorker({ url, leaseMs: 1_000 });
    await second.waitForLine((line) => line === `started ${job.id} 2`);
    const done = await waitFor(
      async () => {
        const j = await mr.getJob(job.id);
        return j?.status === 'done' && j;
      },
      { timeoutMs: 10_000, description: 'the job to finish on the second worker' },
    );
    expect(done.attempts).toBe(2);
    expect(done.attemptsLog.map((a) => a.outcome)).toEqual(['lost', 'done']);
    expect(done.attemptsLog[0]!.workerId).not.toBe(done.attemptsLog[1]!.workerId);
  });

  it.runIf(harness.isAvailable)('parks a poison job that kills its process after maxAttempts instead of looping', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const job = await mr.enqueue('poison', {}, { maxAttempts: 3 });
    let spawns = 0;
    // Restart the worker like a supervisor would, but bounded: a loop would exceed this.
    while (spawns < 6) {
      const detail = await mr.getJob(job.id);
      if (detail?.status === 'dead') break;
      spawns++;
      const worker = spawnWorker({ url, leaseMs: 1_000 });
      const result = await Promise.race([
        worker.exited,
        waitFor(async () => (await mr.getJob(job.id))?.status === 'dead', { timeoutMs: 15_000 }).then(() => 'dead' as const),
      ]);
      if (result === 'dead') {
        worker.child.kill('SIGKILL');
        await worker.exited;
        break;
      }
    }
    const dead = await waitFor(
      async () => {
        const j = await mr.getJob(job.id);
        return j?.status === 'dead' && j;
      },
      { timeoutMs: 10_000 },
    );
    expect(dead.attempts).toBe(3);
    expect(dead.deadReason).toBe('exhausted');
    expect(dead.attemptsLog.map((a) => a.outcome)).toEqual(['lost', 'lost', 'lost']);
    expect(spawns).toBeLessThanOrEqual(4);
  });

  it.runIf(harness.isAvailable)('hands back running and prefetched jobs uncharged on SIGTERM and exits 0', async () => {
    const { mr, url } = await openTestMailroom(harness);
    const jobs = [];
    for (let i = 0; i < 5; i++) jobs.push(await mr.enqueue('slow', { i }));
    const worker = spawnWorker({ url, leaseMs: 5_000, concurrency: 2, prefetch: 2, stopTimeoutMs: 1_000 });
    await worker.waitForLine((line) => line.startsWith('started '));
    await waitFor(() => worker.lines.filter((line) => line.startsWith('started ')).length === 2);
    const t0 = Date.now();
    worker.child.kill('SIGTERM');
    const exit = await worker.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(1_000 + 5_000);
    const after = await Promise.all(jobs.map((j) => mr.getJob(j.id)));
    if (process.env.DEBUG_CRASH) console.log(worker.lines, JSON.stringify(after, null, 1));
    for (const job of after) {
      expect(job!.status).toBe('pending');
      expect(job!.attempts).toBe(0);
    }
    // Two ran and honoured the abort, two were prefetched: all four handed back.
    const handedBack = after.filter((j) => j!.attemptsLog.some((a) => a.outcome === 'handed_back'));
    expect(handedBack).toHaveLength(4);
    // Claimable at once by the next worker.
    const next = await mr.store.jobClaim({ workerId: 'next', types: ['slow'], queues: null, limit: 10, leaseMs: 1_000 });
    expect(next).toHaveLength(5);
  });
});
