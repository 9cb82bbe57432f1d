// The worker under a concurrency limit: a finished job's slot is claimed again as soon as
// its outcome is written, not at the next poll; and a limited job is never held in the
// buffer, where it would keep its slot from other workers; and while every job is over
// its limit, workers do not spin on the store.

import { afterEach, describe, expect, it } from 'vitest';
import type { StoreExecutor } from '../../src/store/store.js';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';

/** Longer than the whole test may take: a claim that waited for the poll would show. */
const POLL_MS = 60_000;

/**
 * Counts the claim statements (jobClaim, and the jobClaimable look that follows an empty
 * claim) every worker of `mr` sends, by wrapping the methods on the store object the
 * workers share. Each call is one statement on both stores.
 */
function countClaims(store: StoreExecutor): { claims: number; claimables: number } {
  const seen = { claims: 0, claimables: 0 };
  const claim = store.jobClaim.bind(store);
  const claimable = store.jobClaimable.bind(store);
  store.jobClaim = (params) => (seen.claims++, claim(params));
  store.jobClaimable = (params) => (seen.claimables++, claimable(params));
  return seen;
}

describe.each(storeHarnesses)('worker with limits on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('claims the next job of a full key when the running one finishes, not at the next poll', async () => {
    const { mr } = await openTestMailroom(harness);
    const ran: number[] = [];
    mr.task('sync', {
      limits: { key: (p) => (p as { customer: string }).customer, perKey: { concurrency: 1 } },
      run(payload) {
        ran.push((payload as { i: number }).i);
      },
    });
    await mr.enqueueMany(Array.from({ length: 20 }, (_, i) => ({ type: 'sync', payload: { customer: 'acme', i } })));
    const worker = mr.work({ concurrency: 5, pollMs: POLL_MS });
    const claims: number[] = [];
    worker.on('claimed', (jobs) => claims.push(jobs.length));
    // Not worker.drained(): it pokes the claim loop itself, which would hide a missing wake-up.
    await waitFor(() => ran.length === 20, { timeoutMs: 20_000, description: 'all 20 jobs, one after another' });
    expect(ran).toEqual(Array.from({ length: 20 }, (_, i) => i));
    // One key, one at a time: each claim took the one job that could start.
    expect(claims.every((n) => n === 1)).toBe(true);
  });

  it.runIf(harness.isAvailable)('claims the next job of a full key beside long-running jobs that hold most slots, not at the next poll', async () => {
    const { mr } = await openTestMailroom(harness);
    const ran: number[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    mr.task('slow', () => released);
    mr.task('sync', {
      limits: { key: (p) => (p as { customer: string }).customer, perKey: { concurrency: 1 } },
      run(payload) {
        ran.push((payload as { i: number }).i);
      },
    });
    await mr.enqueueMany(Array.from({ length: 3 }, () => ({ type: 'slow', payload: {} })));
    const worker = mr.work({ concurrency: 5, pollMs: POLL_MS });
    try {
      await waitFor(() => worker.activeCount === 3, { timeoutMs: 10_000, description: 'three slow jobs holding three of five slots' });
      await mr.enqueueMany(Array.from({ length: 5 }, (_, i) => ({ type: 'sync', payload: { customer: 'acme', i } })));
      // Each freed slot is one of two startable (not half of five) while the slow jobs run.
      await waitFor(() => ran.length === 5, { timeoutMs: 10_000, description: 'all five jobs of the key, one after another' });
      expect(ran).toEqual([0, 1, 2, 3, 4]);
    } finally {
      release(); // a failure must not leave the slow handlers to the stop's timeout
    }
  });

  it.runIf(harness.isAvailable)('sends no claim while every slot of a worker of limited types only is busy', async () => {
    const { mr } = await openTestMailroom(harness);
    let done = 0;
    mr.task('deliverish', {
      limits: { key: (p) => (p as { endpoint: string }).endpoint, perKey: { concurrency: 10 } },
      // A short I/O wait, as a delivery's: the slots are busy while the claim loop runs.
      run: () => new Promise<void>((resolve) => setTimeout(() => (done++, resolve()), 2)),
    });
    await mr.enqueueMany(Array.from({ length: 60 }, (_, i) => ({ type: 'deliverish', payload: { endpoint: String(i % 3) } })));
    const pointless = { claims: 0 };
    const claim = mr.store.jobClaim.bind(mr.store);
    mr.store.jobClaim = (params) => {
      // limitedLimit: how many limited jobs the claim may start; at 0 it can only come back empty.
      if (params.limitedLimit === 0) pointless.claims++;
      return claim(params);
    };
    const worker = mr.work({ concurrency: 4, pollMs: POLL_MS });
    await waitFor(() => done === 60, { timeoutMs: 20_000, description: 'all 60 jobs' });
    await worker.stop();
    expect(pointless.claims).toBe(0);
  });

  it.runIf(harness.isAvailable)('sends only a few claims a second while every job is over its limit, charging nothing', async () => {
    const { mr } = await openTestMailroom(harness);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const started: string[] = [];
    mr.task('limited', {
      limits: { concurrency: 1 },
      run: (_payload, ctx) => {
        started.push(ctx.job.id);
        return released;
      },
    });
    const holder = await mr.enqueue('limited', {});
    const waiting = await mr.enqueueMany(Array.from({ length: 5 }, () => ({ type: 'limited', payload: {} })));
    const seen = countClaims(mr.store);
    // Two workers in one process: an idle one must not wake the other into a ping-pong.
    const workers = [mr.work({ concurrency: 10, pollMs: 500 }), mr.work({ concurrency: 10, pollMs: 500 })];
    try {
      await waitFor(() => started.includes(holder.id), { description: 'the holder to take the only slot' });
      const from = { at: performance.now(), ...seen };
      // Time for 8 claims: a spinning loop takes a few ms, polling at 500 ms about 2 s.
      await waitFor(() => seen.claims - from.claims >= 8, { timeoutMs: 10_000, description: 'eight more claims' });
      const elapsedS = (performance.now() - from.at) / 1_000;
      const claimsPerS = (seen.claims - from.claims) / elapsedS;
      const claimablesPerS = (seen.claimables - from.claimables) / elapsedS;
      console.log(`[limits] ${harness.name} all over the limit, 2 workers: ${claimsPerS.toFixed(1)} claims/s, ${claimablesPerS.toFixed(1)} claimable looks/s`);
      // Per worker at most 5 a second of each (the fault suite's bound across processes).
      expect(claimsPerS).toBeLessThanOrEqual(2 * 5);
      expect(claimablesPerS).toBeLessThanOrEqual(2 * 5);
      expect(started).toEqual([holder.id]);
      for (const job of waiting) expect((await mr.getJob(job.id))!).toMatchObject({ status: 'pending', attempts: 0 });
    } finally {
      release(); // a failure must not leave the holder to the stop's timeout
    }
    await Promise.all(workers.map((worker) => worker.stop()));
  });
});
