// Limits in the claim (store/limits.ts): per type and per limit key, concurrency (running
// jobs, buffered ones included) and rate (starts in a sliding window on the store's
// clock). A job over a limit stays pending and uncharged, jobClaimable says nothing can
// start and when a rate window frees, and a slot frees when a job settles or its lease is
// lost. The same rules on a second connection: the usage is the store's, not a worker's.

import { describe, expect, it } from 'vitest';
import { LIMITED_PICK_SCAN } from '../../src/store/limits.js';
import type { TypeLimits } from '../../src/store/limits.js';
import { MINUTE_MS, SECOND_MS, T0, at, claim, enqueueIds, idsOf, statusOf, useStore } from './context.js';
import { asDone } from '../harness/finishes.js';
import type { StoreHarness } from '../harness/store-harness.js';

const claimable = (store: Parameters<typeof claim>[0], limits: TypeLimits[], now: Date) =>
  store.jobClaimable({ types: ['test_job'], queues: null, limits, now });

export function limitsConformance(harness: StoreHarness): void {
  describe('limits', () => {
    const ctx = useStore(harness);

    it('runs at most `concurrency` of a type anywhere, and a settled job frees its slot', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}]);
      const limits: TypeLimits[] = [{ type: 'test_job', concurrency: 2 }];
      const first = await claim(ctx.store, { limits, now: T0 });
      expect(idsOf(first)).toEqual(ids.slice(0, 2));
      const elsewhere = await ctx.opened.openAnother();
      expect(await claim(elsewhere, { limits, now: at(SECOND_MS) })).toEqual([]);
      expect(await claimable(elsewhere, limits, at(SECOND_MS))).toMatchObject({ hasClaimable: false });
      // Over the limit: still pending and uncharged.
      expect((await ctx.store.jobGet({ id: ids[2]! }))!).toMatchObject({ status: 'pending', attempts: 0 });
      await ctx.store.jobFinishMany({ finishes: asDone(first.slice(0, 1)), now: at(SECOND_MS) });
      expect(idsOf(await claim(elsewhere, { limits, now: at(SECOND_MS) }))).toEqual([ids[2]]);
      // Without limits the same worker would have taken everything.
      expect(idsOf(await claim(ctx.store, { now: at(SECOND_MS) }))).toEqual([ids[3]]);
    });

    it('runs at most `perKey.concurrency` per limit key, taking other keys in the same claim', async () => {
      const ids = await enqueueIds(ctx.store, [{ limitKey: 'a' }, { limitKey: 'a' }, { limitKey: 'b' }, { limitKey: 'a' }, { limitKey: 'c' }]);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      const first = await claim(ctx.store, { limits, now: T0 });
      expect(idsOf(first)).toEqual([ids[0], ids[2], ids[4]]);
      expect(await claim(ctx.store, { limits, now: T0 })).toEqual([]);
      await ctx.store.jobFinishMany({ finishes: asDone(first.slice(0, 1)), now: at(SECOND_MS) });
      expect(idsOf(await claim(ctx.store, { limits, now: at(SECOND_MS) }))).toEqual([ids[1]]);
    });

    it('applies limits to a claim in named queues, for one limited type and for several, and answers jobClaimable there', async () => {
      // The limits count a type's jobs in every queue; the claim takes only the named ones.
      const ids = await enqueueIds(ctx.store, [
        { queue: 'q1', limitKey: 'a' },
        { queue: 'q2', limitKey: 'a' },
        { queue: 'q1', limitKey: 'a' },
        { queue: 'q1', limitKey: 'b' },
        { queue: 'q1', type: 'other_job', limitKey: 'a' },
        { queue: 'q2', type: 'other_job', limitKey: 'b' },
      ]);
      const perKey = { concurrency: 1 };
      const oneType: TypeLimits[] = [{ type: 'test_job', perKey }];
      const ask = (types: string[], queues: string[], limits: TypeLimits[]) => ctx.store.jobClaimable({ types, queues, limits, now: T0 });
      expect(idsOf(await claim(ctx.store, { queues: ['q2'], limits: oneType, now: T0 }))).toEqual([ids[1]]);
      // Key a is held by q2's job: q1 can start only key b.
      expect(await ask(['test_job'], ['q1'], oneType)).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { queues: ['q1', 'nope'], limits: oneType, now: T0 }))).toEqual([ids[3]]);
      expect(await ask(['test_job'], ['q1'], oneType)).toMatchObject({ hasClaimable: false });
      // Two limited types: other_job's keys are its own.
      const both: TypeLimits[] = [...oneType, { type: 'other_job', perKey }];
      expect(await ask(['test_job', 'other_job'], ['q1'], both)).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { types: ['test_job', 'other_job'], queues: ['q1'], limits: both, now: T0 }))).toEqual([ids[4]]);
      expect(await ask(['test_job', 'other_job'], ['q1'], both)).toMatchObject({ hasClaimable: false });
      expect(idsOf(await claim(ctx.store, { types: ['test_job', 'other_job'], queues: ['q2'], limits: both, now: T0 }))).toEqual([ids[5]]);
    });

    it('reaches a key with room behind more jobs of full keys than a pick reads, in every queue and in a named one', async () => {
      // A slow endpoint's backlog: 2 × LIMITED_PICK_SCAN + 100 jobs of keys a and b, each at
      // its limit once their first jobs run, then key c's. The pick reads a bounded stretch
      // of the backlog, then goes on by key; reading the whole backlog at every claim was the
      // cost this replaces (56 ms a claim past 100,000 jobs).
      const behind = 2 * LIMITED_PICK_SCAN + 100;
      const ids = await enqueueIds(ctx.store, [
        ...Array.from({ length: behind }, (_, i) => ({ limitKey: i % 2 === 0 ? 'a' : 'b' })),
        { limitKey: 'c' },
        { limitKey: 'c' },
        { limitKey: 'c', queue: 'elsewhere' },
        { limitKey: 'd', queue: 'elsewhere' },
      ]);
      const [c1, c2, c3, d1] = ids.slice(behind);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      // One claim: a's and b's heads from the stretch, then c's head by key (d's is in another queue).
      const first = await claim(ctx.store, { queues: ['default'], limits, now: T0 });
      expect(idsOf(first)).toEqual([ids[0], ids[1], c1]);
      expect(await claim(ctx.store, { queues: ['default'], limits, now: T0 })).toEqual([]);
      expect(await ctx.store.jobClaimable({ types: ['test_job'], queues: ['default'], limits, now: T0 })).toMatchObject({ hasClaimable: false });
      // Every queue: c is full too, d has room.
      expect(await claimable(ctx.store, limits, T0)).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { limits, now: T0 }))).toEqual([d1]);
      expect(await claimable(ctx.store, limits, T0)).toMatchObject({ hasClaimable: false });
      // c's slot frees: its next job, still behind the backlog, is found by the probe and the claim.
      await ctx.store.jobFinishMany({ finishes: asDone(first.slice(2)), now: at(SECOND_MS) });
      expect(await claimable(ctx.store, limits, at(SECOND_MS))).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { limits, now: at(SECOND_MS) }))).toEqual([c2]);
      // Several limited types in one claim: each type's keys are walked.
      const both: TypeLimits[] = [...limits, { type: 'other_job', perKey: { concurrency: 1 } }];
      const [other] = await enqueueIds(ctx.store, [{ type: 'other_job', limitKey: 'a' }]);
      expect(await ctx.store.jobClaimable({ types: ['test_job', 'other_job'], queues: null, limits: both, now: at(SECOND_MS) })).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { types: ['test_job', 'other_job'], limits: both, now: at(SECOND_MS) }))).toEqual([other]);
      expect(await statusOf(ctx.store, c3!)).toBe('pending');
    });

    it('takes a higher-priority job of a key with room behind a full key before a lower type’s jobs', async () => {
      // Claim order holds across limited types even when the first stretch a pick reads is
      // all jobs of a full key: a claim that filled itself from the lower-priority type
      // (reading each type's stretch on its own) inverted priorities.
      const limits: TypeLimits[] = ['high_job', 'low_job'].map((type) => ({ type, perKey: { concurrency: 1 } }));
      const [running] = await enqueueIds(ctx.store, [{ type: 'high_job', priority: 5, limitKey: 'full', runAt: at(-10 * SECOND_MS) }]);
      expect(idsOf(await claim(ctx.store, { types: ['high_job'], limits, now: T0 }))).toEqual([running]);
      await enqueueIds(ctx.store, Array.from({ length: LIMITED_PICK_SCAN + 44 }, () => ({ type: 'high_job', priority: 5, limitKey: 'full', runAt: at(-5 * SECOND_MS) })));
      const [roomy] = await enqueueIds(ctx.store, [{ type: 'high_job', priority: 5, limitKey: 'roomy' }]);
      await enqueueIds(ctx.store, [0, 1, 2].map((i) => ({ type: 'low_job', priority: 0, limitKey: `low${i}`, runAt: at(-9 * SECOND_MS) })));
      expect(idsOf(await claim(ctx.store, { types: ['high_job', 'low_job'], limits, limit: 1, now: T0 }))).toEqual([roomy]);
    });

    it('reaches, by key, a due job below the priorities where its key holds jobs for later', async () => {
      // An endpoint whose deliveries wait behind its open breaker is a key with room: its head
      // is looked for priority by priority (keyLevels), past the ones with nothing due, and
      // past the 16 the walk takes. Keys a and b are full, ahead in claim order with more
      // jobs than a pick reads.
      const behind = 2 * LIMITED_PICK_SCAN + 100;
      const later = (priority: number) => ({ limitKey: 'late', priority, delayMs: MINUTE_MS });
      const ids = await enqueueIds(ctx.store, [
        ...Array.from({ length: behind }, (_, i) => ({ limitKey: i % 2 === 0 ? 'a' : 'b', priority: 50 })),
        ...Array.from({ length: 18 }, (_, i) => later(i)),
        { limitKey: 'late', priority: 5, runAt: at(-SECOND_MS) },
        { limitKey: 'late', priority: -30 },
      ]);
      const [due5, due30] = ids.slice(behind + 18);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      // a's and b's heads from the pick, then late's due job at priority 5, its 13th priority from the top.
      const first = await claim(ctx.store, { limits, now: T0 });
      expect(idsOf(first)).toEqual([ids[0], ids[1], due5]);
      expect(await claimable(ctx.store, limits, T0)).toMatchObject({ hasClaimable: false });
      // Its slot freed: late's next due job is below all 19 of its priorities, past the walk's 16.
      await ctx.store.jobFinishMany({ finishes: asDone(first.slice(2)), now: T0 });
      expect(await claimable(ctx.store, limits, T0)).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { limits, now: T0 }))).toEqual([due30]);
    });

    it('counts only slot holders against `limitedLimit` when it goes on by key past a backlog of full keys', async () => {
      // Unlimited jobs at the front fill part of the claim; they hold no slot, so the key
      // with room behind the backlog still gets the third slot.
      const behind = 2 * LIMITED_PICK_SCAN + 10;
      const ids = await enqueueIds(ctx.store, [
        ...Array.from({ length: 3 }, () => ({ type: 'other_job' })),
        ...Array.from({ length: behind }, (_, i) => ({ limitKey: i % 2 === 0 ? 'a' : 'b' })),
        { limitKey: 'c' },
      ]);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      const claimed = await claim(ctx.store, { types: ['test_job', 'other_job'], limits, limit: 10, limitedLimit: 3, now: T0 });
      expect(idsOf(claimed).sort()).toEqual([...ids.slice(0, 5), ids[3 + behind]!].sort());
    });

    it('merges a limited and an unlimited type in claim order in one named queue, leaving other queues alone', async () => {
      const ids = await enqueueIds(ctx.store, [
        { queue: 'q1', limitKey: 'a', priority: 1 },
        { queue: 'q1', type: 'other_job' },
        { queue: 'q1', limitKey: 'a', priority: 2 },
        { queue: 'q2', type: 'other_job', priority: 9 },
        { queue: 'q1', limitKey: 'b' },
      ]);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      const claimed = await claim(ctx.store, { types: ['test_job', 'other_job'], queues: ['q1'], limits, now: T0 });
      // Key a's second job waits for its slot; q2's job is not asked for.
      expect(idsOf(claimed)).toEqual([ids[2], ids[1], ids[4]]);
      expect((await ctx.store.jobClaimable({ types: ['test_job', 'other_job'], queues: ['q1'], limits, now: T0 })).hasClaimable).toBe(false);
    });

    it('takes at most `limitedLimit` jobs under a concurrency limit and fills the rest of the claim with others', async () => {
      // A worker passes the jobs it can start now: a limited job waiting in its buffer would
      // hold its limit's slot idle.
      const ids = await enqueueIds(ctx.store, [{ limitKey: 'a' }, { limitKey: 'b' }, { type: 'other_job' }, { limitKey: 'c' }, { type: 'other_job' }]);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { concurrency: 1 } }];
      const types = ['test_job', 'other_job'];
      const first = await claim(ctx.store, { types, limits, limit: 4, limitedLimit: 1, now: T0 });
      expect(idsOf(first)).toEqual([ids[0], ids[2], ids[4]]);
      expect(idsOf(await claim(ctx.store, { types, limits, limit: 4, limitedLimit: 0, now: T0 }))).toEqual([]);
      expect(idsOf(await claim(ctx.store, { types, limits, limit: 4, now: T0 }))).toEqual([ids[1], ids[3]]);
    });

    it('does not cap a rate-only type by `limitedLimit`: its jobs hold no slot', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}]);
      const limits: TypeLimits[] = [{ type: 'test_job', rate: { limit: 10, intervalMs: SECOND_MS } }];
      expect(idsOf(await claim(ctx.store, { limits, limit: 3, limitedLimit: 1, now: T0 }))).toEqual(ids);
    });

    it('frees the slot of a job whose lease was lost', async () => {
      const [id] = await enqueueIds(ctx.store, [{}, {}]);
      const limits: TypeLimits[] = [{ type: 'test_job', concurrency: 1 }];
      expect(idsOf(await claim(ctx.store, { limits, leaseMs: 30 * SECOND_MS, now: T0 }))).toEqual([id]);
      expect(await claim(ctx.store, { limits, now: at(SECOND_MS) })).toEqual([]);
      await ctx.store.jobRescue({ now: at(MINUTE_MS) });
      expect(await claim(ctx.store, { limits, now: at(MINUTE_MS) })).toHaveLength(1);
    });

    it('starts at most `rate.limit` in any window of intervalMs, and says when the window frees', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}, {}]);
      const limits: TypeLimits[] = [{ type: 'test_job', rate: { limit: 2, intervalMs: SECOND_MS } }];
      const first = await claim(ctx.store, { limits, now: T0 });
      expect(idsOf(first)).toEqual(ids.slice(0, 2));
      // Finishing does not give a rate slot back: starts count, not running jobs.
      await ctx.store.jobFinishMany({ finishes: asDone(first), now: at(100) });
      expect(await claim(ctx.store, { limits, now: at(400) })).toEqual([]);
      expect(await claimable(ctx.store, limits, at(400))).toMatchObject({ hasClaimable: false, nextRunInMs: 600 });
      expect(idsOf(await claim(ctx.store, { limits, limit: 1, now: at(600) }))).toEqual([]);
      // Sliding: at T0 + 1 s both starts have left the window; one more start at 1.2 s
      // leaves room for exactly one until 2 s.
      expect(idsOf(await claim(ctx.store, { limits, limit: 1, now: at(SECOND_MS) }))).toEqual([ids[2]]);
      expect(idsOf(await claim(ctx.store, { limits, now: at(1_200) }))).toEqual([ids[3]]);
      expect(await claim(ctx.store, { limits, now: at(1_900) })).toEqual([]);
      expect(await claimable(ctx.store, limits, at(1_900))).toMatchObject({ hasClaimable: false, nextRunInMs: 100 });
      expect(idsOf(await claim(ctx.store, { limits, now: at(2_000) }))).toEqual([ids[4]]);
    });

    it('paces a rate of 20 or more: evenly spaced starts, at most a tenth of the window ahead', async () => {
      // 20 a second is one every 50 ms; a tenth of the window (100 ms) ahead of that
      // spacing allows 3 at once, then one per 50 ms, never a whole second's 20 together.
      const ids = await enqueueIds(ctx.store, Array.from({ length: 30 }, () => ({})));
      const limits: TypeLimits[] = [{ type: 'test_job', rate: { limit: 20, intervalMs: SECOND_MS } }];
      expect(idsOf(await claim(ctx.store, { limits, limit: 30, now: T0 }))).toEqual(ids.slice(0, 3));
      expect(await claim(ctx.store, { limits, limit: 30, now: at(10) })).toEqual([]);
      expect(await claimable(ctx.store, limits, at(10))).toMatchObject({ hasClaimable: false, nextRunInMs: 40 });
      expect(idsOf(await claim(ctx.store, { limits, limit: 30, now: at(50) }))).toEqual([ids[3]]);
      // A claim that comes late catches up on what it missed, up to the tolerance: 3 at
      // once again, as at the start (starts were due at 100, 150, 200 and 250).
      expect(idsOf(await claim(ctx.store, { limits, limit: 30, now: at(250) }))).toEqual(ids.slice(4, 7));
    });

    it('keeps a rate per key apart from other keys', async () => {
      const ids = await enqueueIds(ctx.store, [{ limitKey: 'smtp' }, { limitKey: 'smtp' }, { limitKey: 'sms' }, { limitKey: 'sms' }]);
      const limits: TypeLimits[] = [{ type: 'test_job', perKey: { rate: { limit: 1, intervalMs: MINUTE_MS } } }];
      expect(idsOf(await claim(ctx.store, { limits, now: T0 }))).toEqual([ids[0], ids[2]]);
      expect(await claim(ctx.store, { limits, now: at(SECOND_MS) })).toEqual([]);
      expect(idsOf(await claim(ctx.store, { limits, now: at(MINUTE_MS) }))).toEqual([ids[1], ids[3]]);
    });

    it('leaves types without limits to the plain claim in the same call', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, { type: 'other' }, { type: 'other' }]);
      const limits: TypeLimits[] = [{ type: 'test_job', concurrency: 1 }];
      const claimed = await claim(ctx.store, { types: ['test_job', 'other'], limits, now: T0 });
      expect(idsOf(claimed)).toEqual([ids[0], ids[2], ids[3]]);
    });

    it('takes limited and unlimited types in one claim order, and counts a rate start only for a job it took', async () => {
      const ids = await enqueueIds(ctx.store, [{ type: 'other', priority: 5 }, { priority: 1 }, { type: 'other', priority: 3 }, { priority: 4 }]);
      const limits: TypeLimits[] = [{ type: 'test_job', rate: { limit: 2, intervalMs: MINUTE_MS } }];
      const types = ['test_job', 'other'];
      expect(idsOf(await claim(ctx.store, { types, limits, limit: 2, now: T0 }))).toEqual([ids[0], ids[3]]);
      // One start counted (ids[3]), not two: the window still has room for ids[1].
      expect(idsOf(await claim(ctx.store, { types: ['test_job'], limits, limit: 2, now: at(SECOND_MS) }))).toEqual([ids[1]]);
      expect(idsOf(await claim(ctx.store, { types, limits, now: at(SECOND_MS) }))).toEqual([ids[2]]);
    });
  });
}
