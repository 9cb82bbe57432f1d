// The default prefetch adapts to the completion rate (SPEC §3, "Claim"): fast jobs are
// claimed in large batches, capped per slot; slow ones a few at a time; a prefetch the
// user sets stays as set; and what a worker buffered behind a handler that stopped
// finishing goes back for other workers. Observed through the worker's `claimed` events
// on real stores.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';

/** The old fixed default at c=1 held at most 1 running + 8 prefetched. */
const FIXED_DEFAULT_HOLD_AT_C1 = 9;
/** The adaptive prefetch's cap at c=1: 250 per slot, plus the running one. */
const ADAPTIVE_HOLD_CAP_AT_C1 = 251;

describe.each(storeHarnesses)('prefetch on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('claims fast jobs in batches larger than the fixed default, within the per-slot cap', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('quick', { async run() {} });
    const N = 6_000;
    for (let i = 0; i < N; i += 1_000) await mr.enqueueMany(Array.from({ length: 1_000 }, (_, k) => ({ type: 'quick', payload: { i: i + k } })));
    const worker = mr.work({ concurrency: 1, pollMs: 50 });
    const claims: number[] = [];
    worker.on('claimed', (jobs) => claims.push(jobs.length));
    await worker.drained();
    expect(claims.reduce((a, b) => a + b, 0)).toBe(N);
    expect(Math.max(...claims)).toBeGreaterThan(FIXED_DEFAULT_HOLD_AT_C1);
    expect(Math.max(...claims)).toBeLessThanOrEqual(ADAPTIVE_HOLD_CAP_AT_C1);
    expect(claims.length).toBeLessThan(N / 5); // the fixed default claimed 5 at a time
  });

  it.runIf(harness.isAvailable)('claims slow jobs a few at a time', async () => {
    const { mr } = await openTestMailroom(harness);
    // 10 jobs a second at most: a 250 ms window is 2–3 jobs, under the floor of 8.
    mr.task('slow', { run: () => new Promise<void>((resolve) => setTimeout(resolve, 100)) });
    await mr.enqueueMany(Array.from({ length: 25 }, (_, i) => ({ type: 'slow', payload: { i } })));
    const worker = mr.work({ concurrency: 1, pollMs: 50 });
    const claims: number[] = [];
    worker.on('claimed', (jobs) => claims.push(jobs.length));
    await worker.drained();
    expect(claims.reduce((a, b) => a + b, 0)).toBe(25);
    expect(Math.max(...claims)).toBeLessThanOrEqual(FIXED_DEFAULT_HOLD_AT_C1);
    expect(worker.prefetch).toBe(FIXED_DEFAULT_HOLD_AT_C1 - 1);
  });

  it.runIf(harness.isAvailable)('keeps a prefetch the user set, however fast the jobs', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('quick', { async run() {} });
    await mr.enqueueMany(Array.from({ length: 1_000 }, (_, i) => ({ type: 'quick', payload: { i } })));
    const worker = mr.work({ concurrency: 1, prefetch: 2, pollMs: 50 });
    const claims: number[] = [];
    worker.on('claimed', (jobs) => claims.push(jobs.length));
    await worker.drained();
    expect(claims.reduce((a, b) => a + b, 0)).toBe(1_000);
    expect(Math.max(...claims)).toBeLessThanOrEqual(3);
    expect(worker.prefetch).toBe(2);
  });

  it.runIf(harness.isAvailable)('hands back what it buffered behind a handler that stopped finishing, for another worker to run', async () => {
    const { mr } = await openTestMailroom(harness);
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const ranBy = new Map<string, number>();
    mr.task('mixed', {
      async run(payload, ctx) {
        if ((payload as { block?: boolean }).block) await released;
        ranBy.set(ctx.job.id, (ranBy.get(ctx.job.id) ?? 0) + 1);
      },
    });
    // Fast jobs grow the first worker's window, so it buffers far past the floor of 8 when
    // it reaches the one that blocks; the fast jobs after it wait in its buffer.
    const N = 3_000;
    await mr.enqueueMany(Array.from({ length: N }, (_, i) => ({ type: 'mixed', payload: { i } })));
    const blocking = await mr.enqueue('mixed', { block: true });
    const behind = await mr.enqueueMany(Array.from({ length: 400 }, (_, i) => ({ type: 'mixed', payload: { i: N + i } })));
    try {
      const first = mr.work({ concurrency: 1, pollMs: 50 });
      let startedBlocking = false;
      let heldBehind = 0;
      first.on('started', (job) => {
        if (job.id === blocking.id) startedBlocking = true;
      });
      first.on('claimed', (jobs) => {
        if (!startedBlocking) heldBehind = Math.max(heldBehind, jobs.length);
      });
      await waitFor(() => startedBlocking, { timeoutMs: 20_000, description: 'the first worker starts the blocking job' });
      const handedBack: string[] = [];
      first.on('handedBack', (ids) => handedBack.push(...ids));
      // A second worker gets what the first one handed back, while the blocking job still runs.
      mr.work({ concurrency: 1, pollMs: 50 });
      // All but the window's floor (8 at c=1, what the fixed default always held).
      const ranBehind = () => behind.filter((job) => ranBy.has(job.id)).length;
      await waitFor(() => ranBehind() >= behind.length - 8, { timeoutMs: 15_000, description: 'the jobs behind the blocking one run elsewhere' });
      expect(heldBehind).toBeGreaterThan(8); // it had buffered beyond the floor
      expect(handedBack.length).toBeGreaterThan(0);
      expect(ranBy.has(blocking.id)).toBe(false); // still blocked: nothing waited for it
      expect([...ranBy.values()].every((runs) => runs === 1)).toBe(true);
      const job = await mr.getJob(behind[behind.length - 1]!.id);
      expect(job?.attempts).toBe(1); // handed back uncharged, then run once
      expect(first.prefetch).toBe(8); // the window shrank to its floor while nothing finished
    } finally {
      release();
    }
  });
});
