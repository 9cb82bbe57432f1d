// The one outcome writer, jobFinishMany, beyond the plain outcomes of outcome.ts: a done
// job's stored result, attempt details on every kind of outcome, snoozes (uncharged,
// counted, waiting their delay), a batch that mixes kinds with one finish fenced off, and
// the status counters moved with it. What a replay does to results and snoozes is here too.

import { describe, expect, it } from 'vitest';
import { MINUTE_MS, SECOND_MS, T0, at, claim, claimOne, enqueue, useStore } from './context.js';
import type { StoreHarness } from '../harness/store-harness.js';

export function finishConformance(harness: StoreHarness): void {
  describe('finish (jobFinishMany)', () => {
    const ctx = useStore(harness);

    it('keeps a done job its result and its attempt its details', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { workerId: 'worker-7', now: T0 });
      const written = await ctx.store.jobFinishMany({
        finishes: [{ kind: 'done', id: job.id, leaseToken: job.leaseToken, resultJson: '{"messageId":"m-1","n":[1,2]}', detailsJson: '{"status":202}' }],
        now: at(SECOND_MS),
      });
      expect(written).toEqual([job.id]);
      const done = (await ctx.store.jobGet({ id: job.id }))!;
      expect(done.result).toEqual({ messageId: 'm-1', n: [1, 2] });
      expect(done.attemptsLog).toEqual([
        { attempt: 1, startedAt: T0, finishedAt: at(SECOND_MS), outcome: 'done', error: null, stack: null, workerId: 'worker-7', details: { status: 202 } },
      ]);
      expect((await ctx.store.jobList({ status: 'done' }))[0]!.result).toEqual({ messageId: 'm-1', n: [1, 2] });
    });

    it('stores a result that is a bare JSON value, and none when none is given', async () => {
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      await enqueue(ctx.store);
      const [a, b, c] = await claim(ctx.store, { limit: 3 });
      await ctx.store.jobFinishMany({
        finishes: [
          { kind: 'done', id: a!.id, leaseToken: a!.leaseToken, resultJson: '"sent"' },
          { kind: 'done', id: b!.id, leaseToken: b!.leaseToken, resultJson: '0' },
          { kind: 'done', id: c!.id, leaseToken: c!.leaseToken },
        ],
        now: T0,
      });
      expect((await ctx.store.jobGet({ id: a!.id }))!.result).toBe('sent');
      expect((await ctx.store.jobGet({ id: b!.id }))!.result).toBe(0);
      const plain = (await ctx.store.jobGet({ id: c!.id }))!;
      expect(plain.result).toBeNull();
      expect(plain.attemptsLog.at(-1)!.details).toBeNull();
    });

    it('keeps details on failed, handed-back and snoozed attempts', async () => {
      for (let i = 0; i < 3; i++) await enqueue(ctx.store);
      const [a, b, c] = await claim(ctx.store, { limit: 3, workerId: 'worker-9' });
      await ctx.store.jobFinishMany({
        finishes: [
          { kind: 'failed', id: a!.id, leaseToken: a!.leaseToken, error: 'Error: 500', attemptOutcome: 'failed', retryDelayMs: 0, detailsJson: '{"status":500}' },
          { kind: 'handedBack', id: b!.id, leaseToken: b!.leaseToken, detailsJson: '{"step":"render"}' },
          { kind: 'snoozed', id: c!.id, leaseToken: c!.leaseToken, delayMs: MINUTE_MS, reason: 'not ready', detailsJson: '{"poll":1}' },
        ],
        now: at(SECOND_MS),
      });
      const history = async (id: string) => (await ctx.store.jobGet({ id }))!.attemptsLog.map((x) => [x.attempt, x.outcome, x.error, x.details]);
      expect(await history(a!.id)).toEqual([[1, 'failed', 'Error: 500', { status: 500 }]]);
      expect(await history(b!.id)).toEqual([[1, 'handed_back', null, { step: 'render' }]]);
      expect(await history(c!.id)).toEqual([[1, 'snoozed', 'not ready', { poll: 1 }]]);
    });

    it('snoozes uncharged: back to pending for its delay, counted, the group turn kept', async () => {
      await enqueue(ctx.store, { group: 'customer-1' });
      await enqueue(ctx.store, { group: 'customer-1' });
      const job = await claimOne(ctx.store, { now: T0 });
      expect(job.snoozes).toBe(0);
      const written = await ctx.store.jobFinishMany({
        finishes: [{ kind: 'snoozed', id: job.id, leaseToken: job.leaseToken, delayMs: 10 * SECOND_MS, reason: 'waiting for the export' }],
        now: at(SECOND_MS),
      });
      expect(written).toEqual([job.id]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'pending', attempts: 0, snoozes: 1, lastError: null, leaseExpiresAt: null });
      expect(after.runAt).toEqual(at(11 * SECOND_MS));
      // Not due yet, and the group's next job waits behind it.
      expect(await claim(ctx.store, { now: at(10 * SECOND_MS) })).toEqual([]);
      const again = await claimOne(ctx.store, { now: at(11 * SECOND_MS) });
      expect(again).toMatchObject({ id: job.id, attempts: 1, snoozes: 1 });
    });

    it('writes a batch that mixes every kind in one call, leaving out a fenced-off finish', async () => {
      for (let i = 0; i < 5; i++) await enqueue(ctx.store, { queue: 'mixed' });
      const [a, b, c, d, e] = await claim(ctx.store, { limit: 5 });
      const written = await ctx.store.jobFinishMany({
        finishes: [
          { kind: 'snoozed', id: d!.id, leaseToken: d!.leaseToken, delayMs: 0 },
          { kind: 'done', id: a!.id, leaseToken: a!.leaseToken, resultJson: '1' },
          { kind: 'done', id: e!.id, leaseToken: 'stale', resultJson: '2' },
          { kind: 'failed', id: b!.id, leaseToken: b!.leaseToken, error: 'Permanent: no', attemptOutcome: 'failed', retryDelayMs: null, deadReason: 'permanent' },
          { kind: 'handedBack', id: c!.id, leaseToken: c!.leaseToken },
        ],
        now: at(SECOND_MS),
      });
      // The caller's order, without the stale one.
      expect(written).toEqual([d!.id, a!.id, b!.id, c!.id]);
      const statuses = await Promise.all([a, b, c, d, e].map(async (job) => (await ctx.store.jobGet({ id: job!.id }))!.status));
      expect(statuses).toEqual(['done', 'dead', 'pending', 'pending', 'running']);
      expect((await ctx.store.jobGet({ id: e!.id }))!.result).toBeNull();
      const stats = await ctx.store.jobStats({ now: at(SECOND_MS) });
      expect(stats.byQueue.mixed).toEqual({ pending: 2, running: 1, done: 1, dead: 1 });
    });

    it('refuses a second finish of the same run, whatever its kind', async () => {
      await enqueue(ctx.store);
      const job = await claimOne(ctx.store, { now: T0 });
      await ctx.store.jobFinishMany({ finishes: [{ kind: 'snoozed', id: job.id, leaseToken: job.leaseToken, delayMs: 0 }], now: T0 });
      for (const kind of ['done', 'handedBack'] as const) {
        expect(await ctx.store.jobFinishMany({ finishes: [{ kind, id: job.id, leaseToken: job.leaseToken }], now: T0 })).toEqual([]);
      }
      expect(
        await ctx.store.jobFinishMany({ finishes: [{ kind: 'snoozed', id: job.id, leaseToken: job.leaseToken, delayMs: 0 }], now: T0 }),
      ).toEqual([]);
      expect((await ctx.store.jobGet({ id: job.id }))!).toMatchObject({ status: 'pending', snoozes: 1 });
    });

    it('holds the lease token on a job done in its handler\'s transaction until its result is written', async () => {
      await enqueue(ctx.store, { queue: 'held' });
      const job = await claimOne(ctx.store, { workerId: 'worker-7', now: T0 });
      const fence = { id: job.id, leaseToken: job.leaseToken };
      expect(
        await ctx.store.jobFinishMany({ finishes: [{ ...fence, kind: 'done', holdLease: true, detailsJson: '{"step":1}' }], now: at(SECOND_MS) }),
      ).toEqual([job.id]);
      const done = (await ctx.store.jobGet({ id: job.id }))!;
      expect(done).toMatchObject({ status: 'done', result: null, leaseExpiresAt: null });
      expect(done.finishedAt).toEqual(at(SECOND_MS));
      expect((await ctx.store.jobStats({ now: at(SECOND_MS) })).byQueue.held).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
      // Nothing moves a done job back, even with its token: not a failure, a hand-back or a snooze.
      const back = await ctx.store.jobFinishMany({
        finishes: [{ ...fence, kind: 'failed', error: 'Error: late', attemptOutcome: 'failed', retryDelayMs: 0 }],
        now: at(2 * SECOND_MS),
      });
      expect(back).toEqual([]);
      expect(await ctx.store.jobFinishMany({ finishes: [{ ...fence, kind: 'handedBack' }] })).toEqual([]);
      expect(await ctx.store.jobExtendLease({ leases: [fence], leaseMs: MINUTE_MS, now: at(2 * SECOND_MS) })).toEqual([]);
      // The result, under the held token, which it clears: a second one is fenced off.
      expect(await ctx.store.jobFinishMany({ finishes: [{ ...fence, kind: 'result', resultJson: '{"paid":true}' }], now: at(3 * SECOND_MS) })).toEqual([
        job.id,
      ]);
      expect(await ctx.store.jobFinishMany({ finishes: [{ ...fence, kind: 'result', resultJson: '2' }], now: at(3 * SECOND_MS) })).toEqual([]);
      const after = (await ctx.store.jobGet({ id: job.id }))!;
      expect(after).toMatchObject({ status: 'done', result: { paid: true } });
      expect(after.finishedAt).toEqual(at(SECOND_MS));
      expect(after.attemptsLog.map((a) => [a.outcome, a.details, a.workerId])).toEqual([['done', { step: 1 }, 'worker-7']]);
      expect((await ctx.store.jobStats({ now: at(3 * SECOND_MS) })).byQueue.held).toEqual({ pending: 0, running: 0, done: 1, dead: 0 });
    });

    it('refuses a held success and its result to a lease that was taken over', async () => {
      await enqueue(ctx.store);
      const stale = await claimOne(ctx.store, { workerId: 'worker-old', leaseMs: 30 * SECOND_MS, now: T0 });
      await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      const fresh = await claimOne(ctx.store, { workerId: 'worker-new', now: at(MINUTE_MS) });
      const staleFence = { id: stale.id, leaseToken: stale.leaseToken };
      expect(await ctx.store.jobFinishMany({ finishes: [{ ...staleFence, kind: 'done', holdLease: true }], now: at(MINUTE_MS) })).toEqual([]);
      expect(await ctx.store.jobFinishMany({ finishes: [{ ...staleFence, kind: 'result', resultJson: '1' }], now: at(MINUTE_MS) })).toEqual([]);
      expect((await ctx.store.jobGet({ id: stale.id }))!).toMatchObject({ status: 'running', leaseOwner: 'worker-new', result: null });
      expect(fresh.id).toBe(stale.id);
    });

    it('keeps the progress a running job reports, refuses a stale worker\'s, and keeps it after the job settles', async () => {
      await enqueue(ctx.store);
      const stale = await claimOne(ctx.store, { workerId: 'worker-old', leaseMs: 30 * SECOND_MS, now: T0 });
      expect(await ctx.store.jobProgressMany({ updates: [{ id: stale.id, leaseToken: stale.leaseToken, fraction: 0.25, note: 'page 1 of 4' }] })).toEqual([
        stale.id,
      ]);
      expect((await ctx.store.jobGet({ id: stale.id }))!.progress).toEqual({ fraction: 0.25, note: 'page 1 of 4' });
      await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      const fresh = await claimOne(ctx.store, { workerId: 'worker-new', now: at(MINUTE_MS) });
      expect(fresh.progress).toBeNull();
      expect(await ctx.store.jobProgressMany({ updates: [{ id: stale.id, leaseToken: stale.leaseToken, fraction: 0.9, note: null }] })).toEqual([]);
      expect(await ctx.store.jobProgressMany({ updates: [{ id: fresh.id, leaseToken: fresh.leaseToken, fraction: 1, note: null }] })).toEqual([fresh.id]);
      await ctx.store.jobFinishMany({ finishes: [{ kind: 'done', id: fresh.id, leaseToken: fresh.leaseToken }], now: at(MINUTE_MS) });
      expect((await ctx.store.jobGet({ id: fresh.id }))!.progress).toEqual({ fraction: 1, note: null });
      expect(await ctx.store.jobProgressMany({ updates: [{ id: fresh.id, leaseToken: fresh.leaseToken, fraction: 0.5, note: null }] })).toEqual([]);
      await ctx.store.jobReplay({ ids: [fresh.id], force: true, reason: null, by: null, now: at(2 * MINUTE_MS) });
      expect((await ctx.store.jobGet({ id: fresh.id }))!.progress).toBeNull();
    });

    it('clears the result and the snooze count on replay, and a forced replay keeps the details in the history', async () => {
      await enqueue(ctx.store);
      const first = await claimOne(ctx.store, { now: T0 });
      await ctx.store.jobFinishMany({ finishes: [{ kind: 'snoozed', id: first.id, leaseToken: first.leaseToken, delayMs: 0 }], now: T0 });
      const second = await claimOne(ctx.store, { now: at(SECOND_MS) });
      await ctx.store.jobFinishMany({
        finishes: [{ kind: 'done', id: second.id, leaseToken: second.leaseToken, resultJson: '{"v":1}', detailsJson: '{"took":5}' }],
        now: at(2 * SECOND_MS),
      });
      expect(await ctx.store.jobReplay({ ids: [first.id], force: true, reason: 'again', by: null, now: at(MINUTE_MS) })).toEqual([first.id]);
      const replayed = (await ctx.store.jobGet({ id: first.id }))!;
      expect(replayed).toMatchObject({ status: 'pending', attempts: 0, snoozes: 0, result: null });
      expect(replayed.attemptsLog.map((a) => [a.attempt, a.outcome, a.details])).toEqual([
        [1, 'snoozed', null],
        [1, 'done', { took: 5 }],
      ]);
    });
  });
}
