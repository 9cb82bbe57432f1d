// A paused queue across processes: a worker in another process claims nothing from it
// (while it goes on claiming from other queues), and resume lets it drain; a worker that
// claimed jobs ahead of what it runs (its prefetch) before the pause starts none of them.
// Run on every store.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailroom } from '../../src/mailroom.js';
import type { ClaimedJob, Job } from '../../src/core/types.js';
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

  // One slow job runs, five more wait claimed in the worker's prefetch; then the queue is
  // paused, by this process or by another one (seen at the worker's next read of the pauses).
  for (const pausedBy of ['this process', 'another process'] as const) {
    it.runIf(harness.isAvailable)(`starts none of the jobs it claimed before a pause by ${pausedBy}, and hands them back uncharged`, async () => {
      const { mr, url } = await openTestMailroom(harness);
      const started: string[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      mr.task('slow_send', { queue: 'email', run: async (_payload, ctx) => {
        started.push(ctx.job.id);
        await gate;
      } });
      const jobs: Job[] = [];
      for (let i = 0; i < 6; i++) jobs.push(await mr.enqueue('slow_send', { i }));
      const worker = mr.work({ concurrency: 1, prefetch: 5, pollMs: 50 });
      const claimed: string[] = [];
      worker.on('claimed', (batch: ClaimedJob[]) => claimed.push(...batch.map((job) => job.id)));
      await waitFor(() => started.length === 1 && claimed.length === 6, { timeoutMs: 10_000, description: 'one job running, five claimed behind it' });

      if (pausedBy === 'this process') {
        await mr.pauseQueue('email', { reason: 'provider down' });
      } else {
        const other = await Mailroom.open({ db: url, logger: pino({ level: 'silent' }), migrate: false });
        try {
          await other.pauseQueue('email', { reason: 'provider down' });
        } finally {
          await other.close();
        }
      }
      const waiting = jobs.filter((job) => job.id !== started[0]);
      await waitFor(async () => (await Promise.all(waiting.map((job) => mr.getJob(job.id)))).every((job) => job?.status === 'pending'), {
        timeoutMs: 10_000,
        description: 'the five claimed jobs to be handed back',
      });
      release();
      await waitFor(async () => (await mr.getJob(started[0]!))?.status === 'done', { timeoutMs: 10_000, description: 'the running job to finish' });
      expect(started).toHaveLength(1);
      for (const job of waiting) expect(await mr.getJob(job.id)).toMatchObject({ status: 'pending', attempts: 0 });

      await mr.resumeQueue('email');
      await waitFor(async () => (await Promise.all(jobs.map((job) => mr.getJob(job.id)))).every((job) => job?.status === 'done'), {
        timeoutMs: 10_000,
        description: 'the resumed queue to drain',
      });
      expect(started.sort()).toEqual(jobs.map((job) => job.id).sort());
      for (const job of jobs) expect((await mr.getJob(job.id))!.attempts).toBe(1);
    });
  }

  it.runIf(harness.isAvailable)('takes a claim of a queue it knew paused as the news of a resume elsewhere, not as jobs to hand back', async () => {
    const { mr, url } = await openTestMailroom(harness);
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let started = 0;
    mr.task('quick_send', { queue: 'email', run: async () => {
      if (started++ === 0) await gate;
    } });
    const jobs: Job[] = [];
    for (let i = 0; i < 4; i++) jobs.push(await mr.enqueue('quick_send', { i }));
    const worker = mr.work({ concurrency: 1, prefetch: 3, pollMs: 50 });
    const handedBack: string[] = [];
    worker.on('handedBack', (ids: string[]) => handedBack.push(...ids));
    const claimed: string[] = [];
    worker.on('claimed', (batch: ClaimedJob[]) => claimed.push(...batch.map((job) => job.id)));
    await waitFor(() => started === 1 && claimed.length === 4, { timeoutMs: 10_000, description: 'one job running, three claimed behind it' });
    // The worker knows the pause: the three it held go back.
    await mr.pauseQueue('email');
    await waitFor(() => handedBack.length === 3, { timeoutMs: 10_000, description: 'the three held jobs to be handed back' });
    release();
    for (let i = 0; i < 50; i++) jobs.push(await mr.enqueue('quick_send', { i: 4 + i }));
    const other = await Mailroom.open({ db: url, logger: pino({ level: 'silent' }), migrate: false });
    try {
      await other.resumeQueue('email');
    } finally {
      await other.close();
    }
    await waitFor(async () => (await Promise.all(jobs.map((job) => mr.getJob(job.id)))).every((job) => job?.status === 'done'), {
      timeoutMs: 10_000,
      description: 'the queue resumed elsewhere to drain',
    });
    // Its first claim after the resume told it; a worker that waited for its next read of
    // the pauses handed the jobs back and claimed them again for up to a second.
    expect(handedBack).toHaveLength(3);
  });
});
