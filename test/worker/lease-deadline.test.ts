// The worker's own lease deadline (SPEC §1: "never concurrently twice"): a worker knows
// until when it can be sure of each lease it holds and acts on that, whether or not a
// heartbeat got through. Heartbeats that stall past the lease, and an event loop blocked
// past it, must not let a handler run on or a buffered job start while the job may
// already be another worker's.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor, waitForEvent } from '../harness/wait.js';
import { Mailroom } from '../../src/index.js';
import type { ClaimedJob, Store } from '../../src/index.js';

const LEASE_MS = 1_000;

/** The same store, except that every lease extension hangs until `release()`. */
function stallingExtensions(store: Store): { store: Store; stalled: () => number; release: () => void } {
  const waiting: Array<() => void> = [];
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === 'jobExtendLease') {
        return () => new Promise<string[]>((resolve) => waiting.push(() => resolve([])));
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, stalled: () => waiting.length, release: () => waiting.splice(0).forEach((resolve) => resolve()) };
}

/** The same store, except that the first `failures` lease extensions reject. */
function failingExtensions(store: Store, failures: number): { store: Store; calls: () => number } {
  let calls = 0;
  const wrapped = new Proxy(store, {
    get(target, property) {
      if (property === 'jobExtendLease') {
        return (params: Parameters<Store['jobExtendLease']>[0]) => {
          calls += 1;
          return calls <= failures ? Promise.reject(new Error('connection reset')) : target.jobExtendLease(params);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store: wrapped, calls: () => calls };
}

interface Run {
  readonly worker: string;
  readonly jobId: string;
  readonly token: string;
  readonly startAt: number;
  endAt?: number;
  aborted?: boolean;
}

describe.each(storeHarnesses)('lease deadline on $name', (harness) => {
  const extra: Mailroom[] = [];
  afterEach(async () => {
    for (const mr of extra.splice(0)) await mr.close({ timeoutMs: 2_000 });
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)(
    'aborts the handler before the lease expires when heartbeats stall, drops its buffered job, and the next worker starts only after',
    async () => {
      const { mr } = await openTestMailroom(harness);
      const stall = stallingExtensions(mr.store);
      const mrA = await Mailroom.open({ store: stall.store, logger: pino({ level: 'silent' }) });
      extra.push(mrA);
      const runs: Run[] = [];
      // Worker A's handler honours its signal and would otherwise run for 20 s.
      mrA.task('long', {
        run(_payload, ctx) {
          const run: Run = { worker: 'A', jobId: ctx.job.id, token: (ctx.job as ClaimedJob).leaseToken, startAt: Date.now() };
          runs.push(run);
          return new Promise((resolve, reject) => {
            const timer = setTimeout(resolve, 20_000);
            ctx.signal.addEventListener('abort', () => {
              clearTimeout(timer);
              Object.assign(run, { endAt: Date.now(), aborted: true });
              reject(ctx.signal.reason);
            });
          });
        },
      });
      mr.task('long', {
        async run(_payload, ctx) {
          const now = Date.now();
          runs.push({ worker: 'B', jobId: ctx.job.id, token: (ctx.job as ClaimedJob).leaseToken, startAt: now, endAt: now });
        },
      });
      const [running, buffered] = await mr.enqueueMany([
        { type: 'long', payload: { n: 1 }, options: { priority: 1 } },
        { type: 'long', payload: { n: 2 } },
      ]);

      const workerA = mrA.work({ concurrency: 1, prefetch: 1, leaseMs: LEASE_MS, pollMs: 50 });
      const lost: Array<[string, string]> = [];
      workerA.on('leaseLost', (job, reason) => lost.push([job.id, reason]));
      const claimed = await waitForEvent<ClaimedJob[]>(workerA, 'claimed');
      expect(claimed.map((job) => job.id)).toEqual([running!.id, buffered!.id]);
      await waitFor(() => runs.length === 1, { description: "worker A's handler to start" });
      // The claim's expiry, never extended: every extension hangs.
      const expiresAt = (await mr.getJob(running!.id))!.leaseExpiresAt!.getTime();

      // Worker B competes from now on; it can only take the jobs once the store says the
      // leases expired (its rescue sweep runs every leaseMs/2).
      const workerB = mr.work({ concurrency: 2, leaseMs: LEASE_MS, pollMs: 50 });
      await waitFor(() => lost.length === 2, { timeoutMs: 5_000, description: 'worker A to give up both leases' });
      await workerA.stop({ timeoutMs: 1_000 }); // A claims nothing more

      expect(stall.stalled()).toBeGreaterThan(0); // heartbeats were sent, and hung
      expect(lost).toEqual([
        [running!.id, 'expired'],
        [buffered!.id, 'expired'],
      ]);
      const runA = runs[0]!;
      expect(runA).toMatchObject({ worker: 'A', jobId: running!.id, aborted: true });
      expect(runA.endAt!).toBeLessThan(expiresAt);

      for (const job of [running!, buffered!]) {
        await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', { timeoutMs: 10_000, description: `job ${job.id} done by B` });
      }
      // The buffered job never started on the lease A claimed it with (A may have claimed it
      // again after handing it back, on a new lease, before it stopped).
      const bufferedToken = claimed[1]!.leaseToken;
      expect(runs.filter((run) => run.jobId === buffered!.id && run.token === bufferedToken)).toEqual([]);
      expect(runs.filter((run) => run.worker === 'A' && run.jobId === running!.id)).toHaveLength(1);
      const runB = runs.find((run) => run.worker === 'B' && run.jobId === running!.id)!;
      expect(runB.startAt).toBeGreaterThanOrEqual(runA.endAt!);
      expect(runB.token).not.toBe(runA.token);
      const detail = (await mr.getJob(running!.id))!;
      expect(detail.attemptsLog.map((a) => [a.outcome, a.workerId])).toEqual([
        ['lost', workerA.id],
        ['done', workerB.id],
      ]);
      stall.release();
    },
  );

  it.runIf(harness.isAvailable)('retries a failed heartbeat quickly and keeps the lease of a handler that outlives it', async () => {
    const { mr } = await openTestMailroom(harness);
    const failing = failingExtensions(mr.store, 3);
    const mrA = await Mailroom.open({ store: failing.store, logger: pino({ level: 'silent' }) });
    extra.push(mrA);
    let sawAborted: boolean | null = null;
    mrA.task('slow', {
      async run(_payload, ctx) {
        await new Promise((resolve) => setTimeout(resolve, LEASE_MS * 1.6));
        sawAborted = ctx.signal.aborted;
      },
    });
    const job = await mr.enqueue('slow', {});
    const worker = mrA.work({ concurrency: 1, leaseMs: LEASE_MS, pollMs: 50 });
    const lost: string[] = [];
    worker.on('leaseLost', (lostJob) => lost.push(lostJob.id));
    await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', { timeoutMs: 5_000, description: 'the slow job to be done' });
    // Three failed beats, then the ones that got through; the first run was the only one.
    expect(failing.calls()).toBeGreaterThan(3);
    expect(lost).toEqual([]);
    expect(sawAborted).toBe(false);
    expect((await mr.getJob(job.id))!.attemptsLog.map((a) => [a.outcome, a.workerId])).toEqual([['done', worker.id]]);
  });

  it.runIf(harness.isAvailable)(
    'after a handler blocks the event loop past the lease, its signal reads aborted and the buffered job is not started',
    async () => {
      const { mr } = await openTestMailroom(harness);
      let sawAborted: boolean | null = null;
      const victimTokens: string[] = [];
      mr.task('hog', {
        run(_payload, ctx) {
          if (ctx.attempt > 1) return; // the rescue's retry of this job finishes at once
          // Synchronous work longer than the lease: no timer, heartbeat or I/O runs meanwhile.
          const until = Date.now() + LEASE_MS * 1.3;
          while (Date.now() < until) {
            // spin
          }
          sawAborted = ctx.signal.aborted;
        },
      });
      mr.task('victim', {
        run(_payload, ctx) {
          victimTokens.push((ctx.job as ClaimedJob).leaseToken);
        },
      });
      const hog = await mr.enqueue('hog', {}, { priority: 1 });
      const victim = await mr.enqueue('victim', {});
      const worker = mr.work({ concurrency: 1, prefetch: 1, leaseMs: LEASE_MS, pollMs: 50 });
      const lost: Array<[string, string]> = [];
      worker.on('leaseLost', (job, reason) => lost.push([job.id, reason]));
      const claimed = await waitForEvent<ClaimedJob[]>(worker, 'claimed');
      expect(claimed.map((job) => job.id)).toEqual([hog.id, victim.id]);
      const firstVictimToken = claimed[1]!.leaseToken;

      await waitFor(() => lost.length === 2, { timeoutMs: 5_000, description: 'both leases to be given up' });
      expect(sawAborted).toBe(true);
      expect(lost).toEqual([
        [hog.id, 'expired'],
        [victim.id, 'expired'],
      ]);
      // The victim went back to pending (handed back uncharged, or rescued if the sweep came
      // first), then was claimed again with a new lease and run once.
      await waitFor(async () => (await mr.getJob(victim.id))?.status === 'done', { timeoutMs: 5_000, description: 'the victim to run on a new lease' });
      expect(victimTokens).toHaveLength(1);
      expect(victimTokens[0]).not.toBe(firstVictimToken);
    },
  );
});
