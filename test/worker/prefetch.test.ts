// The default prefetch adapts to the completion rate (SPEC §3, "Claim"): fast jobs are
// claimed in large batches, capped per slot; slow ones a few at a time; a prefetch the
// user sets stays as set. Observed through the worker's `claimed` events on real stores.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';

/** The old fixed default at c=1 held at most 1 running + 8 prefetched. */
const FIXED_DEFAULT_HOLD_AT_C1 = 9;
/** The adaptive prefetch's cap at c=1: 50 per slot, plus the running one. */
const ADAPTIVE_HOLD_CAP_AT_C1 = 51;

describe.each(storeHarnesses)('prefetch on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('claims fast jobs in batches larger than the fixed default, within the per-slot cap', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('quick', { async run() {} });
    const N = 4_000;
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
});
