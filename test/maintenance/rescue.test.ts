// The rescue sweep as a worker runs it, on every store: at start and then about every
// leaseMs/2, expired leases go back to pending (or dead on the last attempt) and the worker
// that swept says so and claims what it requeued.

import { afterEach, describe, expect, it } from 'vitest';
import { rescueIntervalMs } from '../../src/maintenance/rescue.js';
import { insertJob } from '../harness/factory.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor, waitForEvent } from '../harness/wait.js';

describe('rescue interval', () => {
  it('sweeps every half lease, but not more often than every 250 ms', () => {
    expect(rescueIntervalMs(60_000)).toBe(30_000);
    expect(rescueIntervalMs(1_001)).toBe(500);
    expect(rescueIntervalMs(400)).toBe(250);
  });
});

describe.each(storeHarnesses)('rescue sweep on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('requeues an expired lease when a worker starts, reports it, and runs the job', async () => {
    const { mr } = await openTestMailroom(harness);
    const hourAgo = new Date(Date.now() - 3_600_000);
    const stale = await insertJob(mr.store, { type: 'stale', status: 'running', leaseMs: 1_000, now: hourAgo });
    const last = await insertJob(mr.store, { type: 'stale', status: 'running', attempts: 5, maxAttempts: 5, leaseMs: 1_000, now: hourAgo });
    const ran: string[] = [];
    mr.task('stale', async (_payload, ctx) => void ran.push(ctx.job.id));
    const worker = mr.work({ pollMs: 50 });
    const result = await waitForEvent(worker, 'rescued');
    expect(result).toEqual({ requeued: [stale.id], dead: [last.id] });
    await waitFor(() => ran.includes(stale.id), { description: 'the rescued job to run' });
    expect((await mr.getJob(last.id))?.status).toBe('dead');
  });
});
