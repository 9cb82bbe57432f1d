// A paused queue across processes: a worker in another process claims nothing from it
// (while it goes on claiming from other queues), and resume lets it drain. Run on every
// store.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { killAllWorkers, spawnWorker } from '../harness/processes.js';
import { waitFor } from '../harness/wait.js';

describe.each(storeHarnesses)('paused queue with a worker process on $name', (harness) => {
  afterEach(async () => {
    killAllWorkers();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('is not claimed from by the other process, and resume drains it', async () => {
    const { mr, url } = await openTestMailroom(harness);
    expect(await mr.pauseQueue('email', { reason: 'provider outage' })).toBe(true);
    const held = await Promise.all([1, 2, 3].map(() => mr.enqueue('quick', {}, { queue: 'email' })));
    const worker = spawnWorker({ url, leaseMs: 2_000 });
    await worker.waitForLine((line) => line === 'ready');
    // A job of another queue, enqueued after the paused ones, is claimed and done: the
    // worker has polled past them, so their still being pending is the pause at work.
    const other = await mr.enqueue('quick', {}, { queue: 'reports' });
    await waitFor(async () => (await mr.getJob(other.id))?.status === 'done', { timeoutMs: 10_000, description: 'the other queue to run' });
    for (const job of held) expect((await mr.getJob(job.id))!.status).toBe('pending');
    expect(worker.lines.filter((line) => line.startsWith('claimed '))).toEqual([`claimed ${other.id}`]);
    expect((await mr.stats()).paused).toEqual([{ queue: 'email', reason: 'provider outage', pausedAt: expect.any(Date) }]);

    expect(await mr.resumeQueue('email')).toBe(true);
    await waitFor(
      async () => (await Promise.all(held.map((job) => mr.getJob(job.id)))).every((job) => job?.status === 'done'),
      { timeoutMs: 10_000, description: 'the resumed queue to drain' },
    );
    expect((await mr.stats()).paused).toEqual([]);
  });
});
