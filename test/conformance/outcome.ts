// Outcomes a worker records through the one outcome writer (jobFinishMany): done,
// failed/timeout with a retry or dead, and hand-back (uncharged), each with the attempt
// history the API promises. Results, details and snoozes are in finish.ts.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, SECOND_MS, T0, at, claim, claimOne, enqueue, useStore } from './context.js';
import { asDone, asFailed, asHandedBack } from '../harness/finishes.js';

export function outcomeConformance(harness: StoreHarness): void {
  describe('outcome', () => {
    const ctx = useStore(harness);

    it('completes a running job to done with a done entry built from the row', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { workerId: 'worker-7', now: T0 });
      expect(await ctx.store.jobFinishMany({ finishes: asDone([job]), now: at(5 * SECOND_MS) })).toEqual([job.id]);
      const done = (await ctx.store.jobGet({ id: job.id }))!;
      expect(done).toMatchObject({ status: 'done', attempts: 1, lastError: null, deadReason: null });
      expect(done.finishedAt).toEqual(at(5 * SECOND_MS));
      expect(done.attemptsLog).toEqual([
        { attempt: 1, startedAt: T0, finishedAt: at(5 * SECOND_MS), outcome: 'done', error: null, stack: null, workerId: 'worker-7', details: null },
      ]);
    });

    it('completes after earlier failures with every attempt in order', async () => {
      const job = await insertJob(ctx.store, { status: 'done', attempts: 3, error: 'Error: flaky', now: T0 });
      expect(job.attemptsLog.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
        [1, 'failed', 'Error: flaky'],
        [2, 'failed', 'Error: flaky'],
        [3, 'done', null],
      ]);
      expect(job.lastError).toBeNull();
    });

    it('fails with a retry delay back to pending, not due before now plus the delay', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { workerId: 'worker-7', now: T0 });
      const failedAt = at(2 * SECOND_MS);
      const failed = await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'Error: smtp 421', outcome: 'failed', retryDelayMs: MINUTE_MS }]),
        now: failedAt,
      });
      expect(failed).toEqual([job.id]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 1, lastError: 'Error: smtp 421', deadReason: null, leaseExpiresAt: null });
      expect(after.runAt.getTime()).toBeGreaterThanOrEqual(failedAt.getTime() + MINUTE_MS);
      expect(after.attemptsLog).toEqual([
        { attempt: 1, startedAt: T0, finishedAt: failedAt, outcome: 'failed', error: 'Error: smtp 421', stack: null, workerId: 'worker-7', details: null },
      ]);
      expect(await claim(ctx.store, { now: new Date(after.runAt.getTime() - 1) })).toEqual([]);
      expect((await claim(ctx.store, { now: after.runAt }))[0]!.attempts).toBe(2);
    });

    it('keeps the stack given with each failure on its attempt, in a batch of failures', async () => {
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      const [first, second] = await claim(ctx.store, { limit: 2 });
      const stack = 'Error: smtp 421\n    at send (/app/mail.js:12:7)\n    at run (/app/task.js:3:9)';
      await ctx.store.jobFinishMany({
        finishes: asFailed([
          { id: first!.id, leaseToken: first!.leaseToken, error: 'Error: smtp 421', stack, outcome: 'failed', retryDelayMs: MINUTE_MS },
          { id: second!.id, leaseToken: second!.leaseToken, error: 'Error: no stack', outcome: 'failed', retryDelayMs: null },
        ]),
        now: at(SECOND_MS),
      });
      expect((await ctx.store.jobGet({ id: first!.id }))!.attemptsLog.map((a) => [a.error, a.stack])).toEqual([['Error: smtp 421', stack]]);
      expect((await ctx.store.jobGet({ id: second!.id }))!.attemptsLog.map((a) => [a.error, a.stack])).toEqual([['Error: no stack', null]]);
    });

    it('logs a timed-out attempt with the timeout outcome', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'TimeoutError: after 20000 ms', outcome: 'timeout', retryDelayMs: 0 }]),
        now: at(20 * SECOND_MS),
      });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after.attemptsLog.map((a) => [a.outcome, a.error])).toEqual([['timeout', 'TimeoutError: after 20000 ms']]);
    });

    it('parks a job as dead with its reason when a failure has no retry', async () => {
      await enqueue(ctx.store, { maxAttempts: 5 });
      const job = await claimOne(ctx.store, { workerId: 'worker-7' });
      const failed = await ctx.store.jobFinishMany({
        finishes: asFailed([
          { id: job.id, leaseToken: job.leaseToken, error: 'Permanent: no such order', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' },
        ]),
        now: at(SECOND_MS),
      });
      expect(failed).toEqual([job.id]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'dead', deadReason: 'permanent', attempts: 1, lastError: 'Permanent: no such order' });
      expect(after.finishedAt).toEqual(at(SECOND_MS));
      expect(after.attemptsLog.map((a) => [a.attempt, a.outcome, a.workerId])).toEqual([[1, 'failed', 'worker-7']]);
      expect(await claim(ctx.store, { now: at(MINUTE_MS) })).toEqual([]);
    });

    it('parks an exhausted job as dead and keeps the error of every attempt', async () => {
      const job = await insertJob(ctx.store, { status: 'dead', maxAttempts: 3, error: 'Error: 500 from upstream', now: T0 });
      expect(job).toMatchObject({ status: 'dead', deadReason: 'exhausted', attempts: 3, lastError: 'Error: 500 from upstream' });
      expect(job.attemptsLog.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
        [1, 'failed', 'Error: 500 from upstream'],
        [2, 'failed', 'Error: 500 from upstream'],
        [3, 'failed', 'Error: 500 from upstream'],
      ]);
      expect(job.payload).toEqual(expect.anything());
    });

    it('fails a batch of leases and reports only the ones it held', async () => {
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      const [a, b] = await claim(ctx.store);
      const failed = await ctx.store.jobFinishMany({
        finishes: asFailed([
          { id: a!.id, leaseToken: a!.leaseToken, error: 'Error: a', outcome: 'failed', retryDelayMs: 0 },
          { id: b!.id, leaseToken: 'stale', error: 'Error: b', outcome: 'failed', retryDelayMs: 0 },
        ]),
        now: T0,
      });
      expect(failed).toEqual([a!.id]);
      expect((await ctx.store.jobGet({ id: b!.id }))!.attemptsLog).toEqual([]);
    });

    it('hands a job back to pending uncharged with a handed_back attempt row', async () => {
      const { job } = await enqueue(ctx.store);
      const claimed = await claimOne(ctx.store, { workerId: 'worker-stopping' });
      expect(await ctx.store.jobFinishMany({ finishes: asHandedBack([claimed]), now: at(SECOND_MS) })).toEqual([job.id]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 0, leaseExpiresAt: null, lastError: null });
      expect(after.attemptsLog).toHaveLength(1);
      expect(after.attemptsLog[0]).toMatchObject({ attempt: 1, outcome: 'handed_back', workerId: 'worker-stopping' });
      expect(after.attemptsLog[0]!.finishedAt).toEqual(at(SECOND_MS));
      expect((await claimOne(ctx.store, { now: at(SECOND_MS) })).attempts).toBe(1);
    });

    it('hands back a retried job to the attempts it had already been charged', async () => {
      const job = await insertJob(ctx.store, { type: 'test_job', attempts: 2, now: T0 });
      const claimed = await claimOne(ctx.store);
      expect(claimed.attempts).toBe(3);
      await ctx.store.jobFinishMany({ finishes: asHandedBack([claimed]), now: T0 });
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after.attempts).toBe(2);
      expect(after.attemptsLog.map((a) => [a.attempt, a.outcome])).toEqual([
        [1, 'failed'],
        [2, 'failed'],
        [3, 'handed_back'],
      ]);
    });

    it('refuses a second outcome for the same lease', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({ finishes: asDone([job]), now: T0 });
      expect(
        await ctx.store.jobFinishMany({
          finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'Error: twice', outcome: 'failed', retryDelayMs: 0 }]),
          now: T0,
        }),
      ).toEqual([]);
      expect(await ctx.store.jobFinishMany({ finishes: asHandedBack([job]), now: T0 })).toEqual([]);
      expect(await ctx.store.jobFinishMany({ finishes: asDone([job]), now: T0 })).toEqual([]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after.status).toBe('done');
      expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
    });
  });
}
