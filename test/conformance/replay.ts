// Replay: dead jobs back to pending with a fresh budget and their history kept; done jobs
// only with force; cancelled ones only when asked; filters; and once under concurrency.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, T0, at, claimOne, statusOf, useStore } from './context.js';
import { asFailed } from '../harness/finishes.js';

export function replayConformance(harness: StoreHarness): void {
  describe('replay', () => {
    const ctx = useStore(harness);

    it('replays a dead job to pending with attempts 0, no error, history kept and the replay recorded', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', maxAttempts: 3, error: 'Error: template missing', now: T0 });
      const replayed = await ctx.store.jobReplay({ ids: [dead.id], reason: 'fixed template', by: 'ops@example.com', now: at(MINUTE_MS) });
      expect(replayed).toEqual([dead.id]);
      const after = (await ctx.store.jobGet({ id: dead.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 0, maxAttempts: 3, lastError: null, deadReason: null, finishedAt: null });
      expect(after.runAt).toEqual(at(MINUTE_MS));
      expect(after.attemptsLog).toEqual(dead.attemptsLog);
      expect(after.replays).toEqual([{ at: at(MINUTE_MS), reason: 'fixed template', by: 'ops@example.com', attemptsBefore: 3 }]);
      expect((await claimOne(ctx.store, { types: [dead.type], now: at(MINUTE_MS) })).attempts).toBe(1);
    });

    it('clears the previous run\'s start time and worker from a replayed job; its history keeps them', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', maxAttempts: 1, workerId: 'worker-old', now: T0 });
      expect(dead).toMatchObject({ startedAt: T0, leaseOwner: 'worker-old' });
      await ctx.store.jobReplay({ ids: [dead.id], reason: null, by: null, now: at(MINUTE_MS) });
      const after = (await ctx.store.jobGet({ id: dead.id }))!;
      expect(after).toMatchObject({ startedAt: null, leaseOwner: null, leaseExpiresAt: null });
      expect(after.attemptsLog).toMatchObject([{ attempt: 1, startedAt: T0, workerId: 'worker-old' }]);
    });

    it('gives a replayed job a new attempt budget only when one is asked for', async () => {
      const kept = await insertJob(ctx.store, { status: 'dead', maxAttempts: 2, now: T0 });
      const raised = await insertJob(ctx.store, { status: 'dead', maxAttempts: 2, now: T0 });
      await ctx.store.jobReplay({ ids: [kept.id], reason: null, by: null, now: T0 });
      await ctx.store.jobReplay({ ids: [raised.id], reason: null, by: null, maxAttempts: 9, now: T0 });
      expect((await ctx.store.jobGet({ id: kept.id }))!.maxAttempts).toBe(2);
      expect((await ctx.store.jobGet({ id: raised.id }))!.maxAttempts).toBe(9);
    });

    it('records every replay of a job and keeps every attempt across them', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', deadReason: 'permanent', now: T0 });
      await ctx.store.jobReplay({ ids: [dead.id], reason: 'first', by: 'a', now: at(MINUTE_MS) });
      const job = await claimOne(ctx.store, { types: [dead.type], now: at(MINUTE_MS) });
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'Permanent: again', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
        now: at(MINUTE_MS),
      });
      await ctx.store.jobReplay({ ids: [dead.id], reason: 'second', by: null, now: at(2 * MINUTE_MS) });
      const after = (await ctx.store.jobGet({ id: dead.id }))!;
      expect(after.replays.map((r) => r.reason)).toEqual(['first', 'second']);
      expect(after.attemptsLog.map((a) => [a.attempt, a.error])).toEqual([
        [1, 'Error: boom'],
        [1, 'Permanent: again'],
      ]);
    });

    it('records where each replay falls in the history, a forced replay counting the success it moved there', async () => {
      const done = await insertJob(ctx.store, { status: 'done', attempts: 2, now: T0 });
      await ctx.store.jobReplay({ ids: [done.id], reason: 'resend', by: null, force: true, now: at(MINUTE_MS) });
      const job = await claimOne(ctx.store, { types: [done.type], now: at(MINUTE_MS) });
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: job.id, leaseToken: job.leaseToken, error: 'Permanent: gone', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
        now: at(MINUTE_MS),
      });
      await ctx.store.jobReplay({ ids: [done.id], reason: 'again', by: null, now: at(MINUTE_MS) });
      const after = (await ctx.store.jobGet({ id: done.id }))!;
      expect(after.attemptsLog.map((a) => [a.attempt, a.outcome])).toEqual([
        [1, 'failed'],
        [2, 'done'],
        [1, 'failed'],
      ]);
      expect(after.replays.map((r) => [r.reason, r.attemptsBefore])).toEqual([
        ['resend', 2],
        ['again', 3],
      ]);
    });

    it('leaves a done job alone unless the replay is forced', async () => {
      const done = await insertJob(ctx.store, { status: 'done', now: T0 });
      expect(await ctx.store.jobReplay({ ids: [done.id], reason: null, by: null, now: T0 })).toEqual([]);
      expect(await statusOf(ctx.store, done.id)).toBe('done');
      expect((await ctx.store.jobGet({ id: done.id }))!.replays).toEqual([]);
    });

    it('replays a done job with force and moves its success into the history', async () => {
      const done = await insertJob(ctx.store, { status: 'done', attempts: 2, workerId: 'worker-9', now: T0 });
      const replayed = await ctx.store.jobReplay({ ids: [done.id], reason: 'resend', by: null, force: true, now: at(MINUTE_MS) });
      expect(replayed).toEqual([done.id]);
      const after = (await ctx.store.jobGet({ id: done.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 0, finishedAt: null });
      expect(after.attemptsLog.map((a) => [a.attempt, a.outcome, a.workerId])).toEqual([
        [1, 'failed', 'worker-9'],
        [2, 'done', 'worker-9'],
      ]);
    });

    it('replays done jobs by filter only with force', async () => {
      const done = await insertJob(ctx.store, { status: 'done', now: T0 });
      expect(await ctx.store.jobReplay({ filter: { status: 'done' }, reason: null, by: null, now: T0 })).toEqual([]);
      expect(await ctx.store.jobReplay({ filter: { status: 'done' }, reason: null, by: null, force: true, now: T0 })).toEqual([done.id]);
    });

    it('skips cancelled jobs in a filtered replay unless includeCancelled is set', async () => {
      const exhausted = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const cancelled = await insertJob(ctx.store, { status: 'dead', deadReason: 'cancelled', now: T0 });
      expect(await ctx.store.jobReplay({ filter: { status: 'dead' }, reason: null, by: null, now: T0 })).toEqual([exhausted.id]);
      expect(await statusOf(ctx.store, cancelled.id)).toBe('dead');
      expect(
        await ctx.store.jobReplay({ filter: { status: 'dead' }, reason: null, by: null, includeCancelled: true, now: T0 }),
      ).toEqual([cancelled.id]);
      expect(await statusOf(ctx.store, cancelled.id)).toBe('pending');
    });

    it('replays a cancelled job named by its id', async () => {
      const cancelled = await insertJob(ctx.store, { status: 'dead', deadReason: 'cancelled', now: T0 });
      expect(await ctx.store.jobReplay({ ids: [cancelled.id], reason: 'changed my mind', by: null, now: T0 })).toEqual([cancelled.id]);
      expect((await ctx.store.jobGet({ id: cancelled.id }))!).toMatchObject({ status: 'pending', deadReason: null });
    });

    it('replays every dead job of a type when filtered by type', async () => {
      const a1 = await insertJob(ctx.store, { type: 'a', status: 'dead', now: T0 });
      const a2 = await insertJob(ctx.store, { type: 'a', status: 'dead', now: T0 });
      const b = await insertJob(ctx.store, { type: 'b', status: 'dead', now: T0 });
      const replayed = await ctx.store.jobReplay({ filter: { type: 'a' }, reason: null, by: null, now: T0 });
      expect([...replayed].sort()).toEqual([a1.id, a2.id].sort());
      expect(await statusOf(ctx.store, b.id)).toBe('dead');
    });

    it('replays dead jobs whose error contains the text, ignoring case', async () => {
      const smtp = await insertJob(ctx.store, { status: 'dead', error: 'Error: SMTP 550 mailbox unavailable', now: T0 });
      const other = await insertJob(ctx.store, { status: 'dead', error: 'Error: 404 not found', now: T0 });
      const replayed = await ctx.store.jobReplay({ filter: { status: 'dead', errorContains: 'smtp 550' }, reason: null, by: null, now: T0 });
      expect(replayed).toEqual([smtp.id]);
      expect(await statusOf(ctx.store, other.id)).toBe('dead');
    });

    it('treats errorContains as plain text, not a pattern', async () => {
      const literal = await insertJob(ctx.store, { status: 'dead', error: 'Error: 100% failed_now', now: T0 });
      const lookalike = await insertJob(ctx.store, { status: 'dead', error: 'Error: 100 percent failedXnow', now: T0 });
      const replayed = await ctx.store.jobReplay({ filter: { errorContains: '100% failed_' }, reason: null, by: null, now: T0 });
      expect(replayed).toEqual([literal.id]);
      expect(await statusOf(ctx.store, lookalike.id)).toBe('dead');
    });

    it('does not replay pending or running jobs, or unknown and malformed ids', async () => {
      const pending = await insertJob(ctx.store, { status: 'pending', now: T0 });
      const running = await insertJob(ctx.store, { status: 'running', now: T0 });
      const replayed = await ctx.store.jobReplay({
        ids: [pending.id, running.id, '987654321', 'abc', '-1'],
        reason: null,
        by: null,
        now: T0,
      });
      expect(replayed).toEqual([]);
      expect((await ctx.store.jobGet({ id: running.id }))!).toMatchObject({ status: 'running', attempts: 1 });
    });

    it('replays a job once when two connections replay it at the same time', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const other = await ctx.opened.openAnother();
      const results = await Promise.all([
        ctx.store.jobReplay({ ids: [dead.id], reason: 'one', by: 'a', now: at(MINUTE_MS) }),
        other.jobReplay({ ids: [dead.id], reason: 'two', by: 'b', now: at(MINUTE_MS) }),
      ]);
      expect(results.flat()).toEqual([dead.id]);
      const after = (await ctx.store.jobGet({ id: dead.id }))!;
      expect(after.replays).toHaveLength(1);
      expect(after.status).toBe('pending');
    });
  });
}
