// The worker under a concurrency limit: a finished job's slot is claimed again as soon as
// its outcome is written, not at the next poll; and a limited job is never held in the
// buffer, where it would keep its slot from other workers.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';

/** Longer than the whole test may take: a claim that waited for the poll would show. */
const POLL_MS = 60_000;

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
});
