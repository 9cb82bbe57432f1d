// Claim: one call leases up to `limit` due jobs, charges the attempt, honours types,
// queues, priority/run_at/id order, delays and strict group order; jobClaimable answers
// the same predicate without claiming.

import { describe, expect, it } from 'vitest';
import { insertJob, jobInsert } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, SECOND_MS, T0, at, claim, claimOne, enqueue, enqueueIds, idsOf, statusOf, useStore } from './context.js';
import { asDone, asFailed } from '../harness/finishes.js';
import type { TypeLimits } from '../../src/store/limits.js';

/** A claim of one type four ways: plain and limited, in every queue and in one named queue. */
const WALKED_CLAIMS = (limits: TypeLimits[]) =>
  [
    ['test_job', { queues: null }],
    ['limited_job', { queues: null, limits, limitedLimit: 10 }],
    ['lane_job', { queues: ['default'] }],
    ['limited_lane_job', { queues: ['default'], limits, limitedLimit: 10 }],
  ] as const;

export function claimConformance(harness: StoreHarness): void {
  describe('claim', () => {
    const ctx = useStore(harness);

    it('leases due jobs up to the limit in one call and marks them running', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}, {}]);
      const claimed = await claim(ctx.store, { limit: 3, workerId: 'w1', leaseMs: 45 * SECOND_MS, now: at(SECOND_MS) });
      expect(idsOf(claimed)).toEqual(ids.slice(0, 3));
      for (const job of claimed) {
        expect(job.status).toBe('running');
        expect(job.leaseOwner).toBe('w1');
        expect(job.leaseToken).toEqual(expect.any(String));
        expect(job.leaseToken.length).toBeGreaterThan(0);
        expect(job.leaseExpiresAt).toEqual(at(46 * SECOND_MS));
        expect(job.startedAt).toEqual(at(SECOND_MS));
      }
      expect(await Promise.all(ids.map((id) => statusOf(ctx.store, id)))).toEqual([
        'running',
        'running',
        'running',
        'pending',
        'pending',
      ]);
    });

    it('hands out claimed jobs that read the same as the stored rows, on the store clock too', async () => {
      await enqueue(ctx.store, { type: 'test_job', payload: { a: 1 }, key: 'k1', group: 'g1', priority: 3 }, at(-SECOND_MS));
      // The second job and its claim run on the store's own clock (no `now` at all).
      await ctx.store.jobInsertMany({ jobs: [jobInsert({ type: 'test_job', payload: { b: [2] } })] });
      for (const now of [at(SECOND_MS), undefined]) {
        const [claimed] = await claim(ctx.store, { limit: 1, workerId: 'w9', leaseMs: 30 * SECOND_MS, now });
        expect(claimed).toBeDefined();
        const stored = (await ctx.store.jobGet({ id: claimed!.id }))!;
        const { attemptsLog: _attempts, replays: _replays, ...row } = stored;
        const { leaseToken, ...job } = claimed!;
        expect(leaseToken).toEqual(expect.any(String));
        expect(job).toEqual(row);
        expect(job.leaseExpiresAt!.getTime() - job.startedAt!.getTime()).toBe(30 * SECOND_MS);
      }
    });

    it('charges the attempt at claim time, before any outcome', async () => {
      const { job } = await enqueue(ctx.store);
      const claimed = await claimOne(ctx.store);
      expect(claimed.attempts).toBe(1);
      expect((await ctx.store.jobGet({ id: job.id }))!.attempts).toBe(1);
    });

    it('claims nothing when there is nothing due, the types list is empty or the limit is 0', async () => {
      expect(await claim(ctx.store)).toEqual([]);
      await enqueue(ctx.store);
      expect(await claim(ctx.store, { types: [] })).toEqual([]);
      expect(await claim(ctx.store, { limit: 0 })).toEqual([]);
      expect(await claim(ctx.store, { queues: [] })).toEqual([]);
      expect((await ctx.store.jobList({}))[0]!.status).toBe('pending');
    });

    it('claims only the types it is given', async () => {
      const [a, , c] = await enqueueIds(ctx.store, [{ type: 'a' }, { type: 'b' }, { type: 'c' }]);
      const claimed = await claim(ctx.store, { types: ['a', 'c', 'not_there'] });
      expect(idsOf(claimed).sort()).toEqual([a, c].sort());
    });

    it('claims only from the queues it is given, and from every queue when queues is null', async () => {
      const [email, reports, other] = await enqueueIds(ctx.store, [{ queue: 'email' }, { queue: 'reports' }, { queue: 'other' }]);
      expect(idsOf(await claim(ctx.store, { queues: ['email'] }))).toEqual([email]);
      expect(idsOf(await claim(ctx.store, { queues: ['reports', 'nope'] }))).toEqual([reports]);
      expect(idsOf(await claim(ctx.store, { queues: null }))).toEqual([other]);
    });

    it('claims in named queues in claim order, for one type and for several, never from a paused one', async () => {
      const [a1, , a2, b1, a3, b2] = await enqueueIds(ctx.store, [
        { type: 'a', queue: 'q1', priority: 0, runAt: at(-2 * SECOND_MS) },
        { type: 'a', queue: 'q2', priority: 9 },
        { type: 'a', queue: 'q1', priority: 5 },
        { type: 'b', queue: 'q1', priority: 0, runAt: at(-5 * SECOND_MS) },
        { type: 'a', queue: 'q1', priority: 0, runAt: at(-5 * SECOND_MS) },
        { type: 'b', queue: 'q1', priority: 0, runAt: at(-1 * SECOND_MS) },
        { type: 'b', queue: 'held', priority: 9 },
      ]);
      await ctx.store.queuePause({ queue: 'held' });
      // One type (SQLite walks that type's index in claim order, no sort): the best two only.
      expect(idsOf(await claim(ctx.store, { types: ['a'], queues: ['q1'], limit: 2 }))).toEqual([a2, a3]);
      // Several types, fewer than match: the best of them across types; neither q2's job
      // (not asked for) nor the paused queue's (asked for) is taken.
      expect(idsOf(await claim(ctx.store, { types: ['a', 'b'], queues: ['q1', 'held', 'nope'], limit: 2 }))).toEqual([b1, a1]);
      expect(idsOf(await claim(ctx.store, { types: ['a', 'b'], queues: ['q1', 'held'], limit: 10 }))).toEqual([b2]);
      expect((await ctx.store.jobList({ status: 'pending' })).map((job) => job.queue).sort()).toEqual(['held', 'q2']);
      // The best jobs spread over two named queues (PostgreSQL reads each from the queue index).
      const [x1, x2, x3, x4] = await enqueueIds(ctx.store, [
        { type: 'a', queue: 'q1', priority: 0, runAt: at(-3 * SECOND_MS) },
        { type: 'a', queue: 'q3', priority: 9 },
        { type: 'a', queue: 'q3', priority: 0, runAt: at(-4 * SECOND_MS) },
        { type: 'a', queue: 'q1', priority: 0, runAt: at(-1 * SECOND_MS) },
      ]);
      expect(await ctx.store.jobClaimable({ types: ['a'], queues: ['q1', 'q3'], now: T0 })).toMatchObject({ hasClaimable: true });
      expect(idsOf(await claim(ctx.store, { types: ['a'], queues: ['q1', 'q3'], limit: 2 }))).toEqual([x2, x3]);
      expect(idsOf(await claim(ctx.store, { types: ['a'], queues: ['q3', 'q1'], limit: 10 }))).toEqual([x1, x4]);
      expect(await ctx.store.jobClaimable({ types: ['a'], queues: ['q1', 'q3'], now: T0 })).toMatchObject({ hasClaimable: false });
    });

    it('hands out higher priority first, then earlier runAt, then lower id', async () => {
      const [lowLate, high, lowEarly1, lowEarly2] = await enqueueIds(ctx.store, [
        { priority: 0, runAt: at(-2 * SECOND_MS) },
        { priority: 5, runAt: at(0) },
        { priority: 0, runAt: at(-5 * SECOND_MS) },
        { priority: 0, runAt: at(-5 * SECOND_MS) },
      ]);
      const order: string[] = [];
      for (let i = 0; i < 4; i += 1) order.push((await claimOne(ctx.store)).id);
      expect(order).toEqual([high, lowEarly1, lowEarly2, lowLate]);
    });

    it('takes the due jobs of every priority past the jobs each priority holds for later, in claim order', async () => {
      // SQLite walks a type's priorities and seeks each one's due jobs, so that a backlog not
      // yet due (snoozed deliveries behind an open breaker) is never read; the walk must go
      // on past a priority with nothing due and keep claim order across priorities. Once
      // plain, once under a per-key limit (the limited pick), each in every queue and in one.
      const later = (type: string, minutes: number, priority: number) => ({ type, priority, delayMs: minutes * MINUTE_MS });
      const due = (type: string, seconds: number, priority: number) => ({ type, priority, runAt: at(-seconds * SECOND_MS) });
      const limits = ['limited_job', 'limited_lane_job'].map((type) => ({ type, perKey: { concurrency: 5 } }));
      for (const [type, params] of WALKED_CLAIMS(limits)) {
        const [, a, , , b, c, , d] = await enqueueIds(ctx.store, [
          later(type, 1, 9),
          due(type, 1, 9),
          later(type, 2, 9),
          later(type, 3, 5),
          due(type, 3, 3),
          due(type, 4, 3),
          later(type, 1, 3),
          due(type, 10, 0),
          later(type, 1, -2),
        ]);
        const ask = () => ctx.store.jobClaimable({ types: [type], now: T0, ...params });
        expect(await ask(), type).toMatchObject({ hasClaimable: true });
        expect(idsOf(await claim(ctx.store, { types: [type], limit: 3, ...params })), type).toEqual([a, c, b]);
        expect(idsOf(await claim(ctx.store, { types: [type], limit: 10, ...params })), type).toEqual([d]);
        expect(await ask(), type).toMatchObject({ hasClaimable: false, nextRunAt: at(MINUTE_MS) });
      }
    });

    it('goes on past the priorities such a walk takes, in claim order, and answers "nothing due" past them too', async () => {
      // The walk takes 16 priorities a claim, one index probe each (a type with thousands of
      // priorities would pay thousands); below them the claim reads in claim order as before.
      const limits = ['limited_job', 'limited_lane_job'].map((type) => ({ type, perKey: { concurrency: 5 } }));
      for (const [type, params] of WALKED_CLAIMS(limits)) {
        const ids = await enqueueIds(ctx.store, [
          ...Array.from({ length: 20 }, (_, i) => ({ type, priority: 100 - i, delayMs: MINUTE_MS })),
          { type, priority: 99, runAt: at(-SECOND_MS) }, // the 2nd priority
          { type, priority: 84, runAt: at(-2 * SECOND_MS) }, // the 17th: the first the walk leaves
          { type, priority: 83, runAt: at(-SECOND_MS) },
          { type, priority: 83, runAt: at(-3 * SECOND_MS) },
          { type, priority: 81, runAt: at(-SECOND_MS) }, // the 20th
        ]);
        const [p99, p84, p83Late, p83Early, p81] = ids.slice(20);
        const ask = () => ctx.store.jobClaimable({ types: [type], now: T0, ...params });
        expect(await ask(), type).toMatchObject({ hasClaimable: true });
        expect(idsOf(await claim(ctx.store, { types: [type], limit: 3, ...params })), type).toEqual([p99, p84, p83Early]);
        expect(idsOf(await claim(ctx.store, { types: [type], limit: 10, ...params })), type).toEqual([p83Late, p81]);
        expect(await ask(), type).toMatchObject({ hasClaimable: false, nextRunAt: at(MINUTE_MS) });
      }
    });

    it('claims several types, or in several queues, in claim order past the jobs each holds for later', async () => {
      // SQLite reads up to 8 lanes (a type, or a queue and type) one walk each and merges
      // them; more lanes are read merged in one statement. Both must give claim order
      // across lanes: priority, then runAt, then id, ties between lanes included.
      const fillers = Array.from({ length: 9 }, (_, i) => `filler_${i}`); // 2 + 9 types: past 8 lanes
      // Each also under per-key limits (the limited pick, lane by lane on SQLite too). The
      // limited ways name types of their own: the jobs claimed before still run, and hold
      // their key's slots.
      const limited = (types: readonly string[]) => ({ limits: types.map((type) => ({ type, perKey: { concurrency: 5 } })), limitedLimit: 10 });
      const inTwoQueues = (type: string) => (type.startsWith('a') ? 'q1' : 'q2');
      const ways = [
        { name: 'several types', a: 'a', b: 'b', types: ['a', 'b'], queueOf: () => 'default', queues: null },
        { name: 'many types', a: 'a', b: 'b', types: ['a', 'b', ...fillers], queueOf: () => 'default', queues: null },
        { name: 'several queues', a: 'a', b: 'b', types: ['a', 'b'], queueOf: inTwoQueues, queues: ['q1', 'q2'] },
        { name: 'several limited types', a: 'a1', b: 'b1', types: ['a1', 'b1'], queueOf: () => 'default', queues: null, ...limited(['a1', 'b1']) },
        { name: 'limited types in several queues', a: 'a2', b: 'b2', types: ['a2', 'b2'], queueOf: inTwoQueues, queues: ['q1', 'q2'], ...limited(['a2', 'b2']) },
        { name: 'many limited types', a: 'a3', b: 'b3', types: ['a3', 'b3', ...fillers], queueOf: () => 'default', queues: null, ...limited(['a3', 'b3', ...fillers]) },
      ] as const;
      for (const way of ways) {
        const job = (lane: 'a' | 'b', priority: number, when: { runAt?: Date; delayMs?: number }) => ({ type: way[lane], queue: way.queueOf(way[lane]), priority, ...when });
        const later = (lane: 'a' | 'b', priority: number) => job(lane, priority, { delayMs: MINUTE_MS });
        const due = (lane: 'a' | 'b', priority: number, seconds: number) => job(lane, priority, { runAt: at(-seconds * SECOND_MS) });
        const [, a9, , b5, a5Tie, b5Tie, , , b0, a0, ,] = await enqueueIds(ctx.store, [
          later('a', 9),
          due('a', 9, 1),
          later('b', 9),
          due('b', 5, 3),
          due('a', 5, 2), // the same runAt as the next, of another lane: the lower id first
          due('b', 5, 2),
          later('a', 5),
          later('b', 3),
          due('b', 0, 1),
          due('a', 0, 1),
          later('a', 0),
        ]);
        const asked = { types: way.types, queues: way.queues, ...('limits' in way ? { limits: way.limits, limitedLimit: way.limitedLimit } : {}) };
        expect(await ctx.store.jobClaimable({ ...asked, now: T0 }), way.name).toMatchObject({ hasClaimable: true });
        expect(idsOf(await claim(ctx.store, { ...asked, limit: 3 })), way.name).toEqual([a9, b5, a5Tie]);
        expect(idsOf(await claim(ctx.store, { ...asked, limit: 10 })), way.name).toEqual([b5Tie, b0, a0]);
        expect(await ctx.store.jobClaimable({ ...asked, now: T0 }), way.name).toMatchObject({ hasClaimable: false, nextRunAt: at(MINUTE_MS) });
        // A due job in the last lane alone: the probe asks every lane.
        const [bLast] = await enqueueIds(ctx.store, [due('b', 0, 1)]);
        expect(await ctx.store.jobClaimable({ ...asked, now: T0 }), way.name).toMatchObject({ hasClaimable: true });
        expect(idsOf(await claim(ctx.store, { ...asked, limit: 10 })), way.name).toEqual([bLast]);
        for (const pending of await ctx.store.jobList({ status: 'pending' })) await ctx.store.jobCancel({ id: pending.id });
      }
    });

    it('claims each job once when a type or a queue is named twice', async () => {
      const [a1, b1, a2] = await enqueueIds(ctx.store, [
        { type: 'a', queue: 'q1', runAt: at(-3 * SECOND_MS) },
        { type: 'b', queue: 'q1', runAt: at(-2 * SECOND_MS) },
        { type: 'a', queue: 'q1', runAt: at(-1 * SECOND_MS) },
      ]);
      expect(idsOf(await claim(ctx.store, { types: ['a', 'b', 'a'], queues: ['q1', 'q1'], limit: 2 }))).toEqual([a1, b1]);
      expect(idsOf(await claim(ctx.store, { types: ['a', 'a'], queues: ['q1', 'q1'], limit: 10 }))).toEqual([a2]);
    });

    it('returns a batch in claim order: priority, then runAt, then id', async () => {
      const [lowLate, high, lowEarly1, lowEarly2] = await enqueueIds(ctx.store, [
        { priority: 0, runAt: at(-2 * SECOND_MS) },
        { priority: 5, runAt: at(0) },
        { priority: 0, runAt: at(-5 * SECOND_MS) },
        { priority: 0, runAt: at(-5 * SECOND_MS) },
      ]);
      expect(idsOf(await claim(ctx.store, { limit: 10 }))).toEqual([high, lowEarly1, lowEarly2, lowLate]);
    });

    it('never leases one job to two claimers racing on two connections', async () => {
      const ids = await enqueueIds(ctx.store, Array.from({ length: 40 }, () => ({})));
      const other = await ctx.opened.openAnother();
      const batches = await Promise.all(
        Array.from({ length: 20 }, (_, i) => claim(i % 2 === 0 ? ctx.store : other, { workerId: `w${i}`, limit: 3 })),
      );
      const claimed = batches.flat().map((job) => job.id);
      expect(new Set(claimed).size).toBe(claimed.length);
      expect(claimed.length).toBe(ids.length);
      for (const job of batches.flat()) expect(job.attempts).toBe(1);
    });

    it('takes the best jobs of the whole queue when a batch is smaller than the backlog', async () => {
      const [, mid, top] = await enqueueIds(ctx.store, [{ priority: 1 }, { priority: 2 }, { priority: 3 }]);
      expect(idsOf(await claim(ctx.store, { limit: 2 })).sort()).toEqual([mid, top].sort());
    });

    it('does not claim a delayed job before its runAt, and claims it from then on', async () => {
      const { job } = await enqueue(ctx.store, { delayMs: MINUTE_MS }, T0);
      expect(await claim(ctx.store, { now: at(MINUTE_MS - 1) })).toEqual([]);
      expect(idsOf(await claim(ctx.store, { now: at(MINUTE_MS) }))).toEqual([job.id]);
    });

    it('does not claim running, done or dead jobs', async () => {
      await insertJob(ctx.store, { type: 'test_job', status: 'running', now: T0 });
      await insertJob(ctx.store, { type: 'test_job', status: 'done', now: T0 });
      await insertJob(ctx.store, { type: 'test_job', status: 'dead', now: T0 });
      await insertJob(ctx.store, { type: 'test_job', status: 'dead', deadReason: 'cancelled', now: T0 });
      expect(await claim(ctx.store, { now: at(SECOND_MS) })).toEqual([]);
    });

    it('runs one job of a group at a time, in id order', async () => {
      const [g1, g2, g3] = await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g' }, { group: 'g' }]);
      const first = await claim(ctx.store);
      expect(idsOf(first)).toEqual([g1]);
      expect(await claim(ctx.store)).toEqual([]);
      await ctx.store.jobFinishMany({ finishes: asDone(first), now: T0 });
      expect(idsOf(await claim(ctx.store))).toEqual([g2]);
      expect(await statusOf(ctx.store, g3!)).toBe('pending');
    });

    it('does not let one group block other groups or ungrouped jobs', async () => {
      const [a1, , b1, solo] = await enqueueIds(ctx.store, [{ group: 'a' }, { group: 'a' }, { group: 'b' }, {}]);
      expect(idsOf(await claim(ctx.store)).sort()).toEqual([a1, b1, solo].sort());
    });

    it('keeps group order ahead of priority', async () => {
      const [first] = await enqueueIds(ctx.store, [{ group: 'g', priority: 0 }, { group: 'g', priority: 100 }]);
      expect(idsOf(await claim(ctx.store))).toEqual([first]);
    });

    it('keeps the group turn with a head that waits for its retry', async () => {
      const [head, next] = await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g' }]);
      const claimed = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: head!, leaseToken: claimed.leaseToken, error: 'Error: flaky', outcome: 'failed', retryDelayMs: MINUTE_MS }]),
        now: T0,
      });
      expect(await claim(ctx.store, { now: at(MINUTE_MS - 1) })).toEqual([]);
      expect(await statusOf(ctx.store, next!)).toBe('pending');
      expect(idsOf(await claim(ctx.store, { now: at(MINUTE_MS) }))).toEqual([head]);
    });

    it('releases the group turn when its head dies', async () => {
      const [, next] = await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g' }]);
      const head = await claimOne(ctx.store);
      await ctx.store.jobFinishMany({
        finishes: asFailed([{ id: head.id, leaseToken: head.leaseToken, error: 'Permanent: no', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
        now: T0,
      });
      expect(idsOf(await claim(ctx.store))).toEqual([next]);
    });

    it('releases the group turn when its head is cancelled', async () => {
      const [head, next] = await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g' }]);
      await ctx.store.jobCancel({ id: head!, now: T0 });
      expect(idsOf(await claim(ctx.store))).toEqual([next]);
    });

    it('blocks a group behind a head of a type the claimer does not run', async () => {
      await enqueueIds(ctx.store, [{ group: 'g', type: 'other' }, { group: 'g' }]);
      expect(await claim(ctx.store, { types: ['test_job'] })).toEqual([]);
    });

    it('reports a claimable job by the same predicate as claim, without claiming it', async () => {
      const { job } = await enqueue(ctx.store, { queue: 'email' });
      const ask = (types: string[], queues: string[] | null) => ctx.store.jobClaimable({ types, queues, now: T0 });
      expect((await ask(['test_job'], null)).hasClaimable).toBe(true);
      expect((await ask(['test_job'], ['email'])).hasClaimable).toBe(true);
      expect((await ask(['test_job'], ['reports'])).hasClaimable).toBe(false);
      expect((await ask(['other'], null)).hasClaimable).toBe(false);
      expect((await ask([], null)).hasClaimable).toBe(false);
      expect(await statusOf(ctx.store, job.id)).toBe('pending');
    });

    it('reports no claimable job behind a busy group head, and one once the head is done', async () => {
      await enqueueIds(ctx.store, [{ group: 'g' }, { group: 'g' }]);
      const head = await claim(ctx.store, { limit: 1 });
      expect((await ctx.store.jobClaimable({ types: ['test_job'], queues: null, now: T0 })).hasClaimable).toBe(false);
      await ctx.store.jobFinishMany({ finishes: asDone(head), now: T0 });
      expect((await ctx.store.jobClaimable({ types: ['test_job'], queues: null, now: T0 })).hasClaimable).toBe(true);
    });

    it('reports the earliest future runAt as nextRunAt, and null when nothing is scheduled', async () => {
      const ask = () => ctx.store.jobClaimable({ types: ['test_job'], queues: null, now: T0 });
      expect(await ask()).toEqual({ hasClaimable: false, nextRunAt: null, nextRunInMs: null });
      await enqueueIds(ctx.store, [{ delayMs: 5 * MINUTE_MS }, { delayMs: 2 * MINUTE_MS }, { type: 'other', delayMs: MINUTE_MS }]);
      const answer = await ask();
      expect(answer.hasClaimable).toBe(false);
      expect(answer.nextRunAt).toEqual(at(2 * MINUTE_MS));
      // The wait measured on the store's clock, for a worker whose own clock may be off.
      expect(answer.nextRunInMs).toBe(2 * MINUTE_MS);
    });

    it('finds the earliest future runAt at any priority, in named queues, and among more priorities than a walk takes', async () => {
      // The stores walk the priorities in use rather than reading every pending job (SQLite
      // each type's, PostgreSQL every one), and read the rows past 32 (SQLite) or 64.
      const ask = (types: string[], queues: string[] | null) => ctx.store.jobClaimable({ types, queues, now: T0 });
      await enqueueIds(ctx.store, [
        { priority: 9, delayMs: 5 * MINUTE_MS },
        { priority: 9 }, // due: not a next run
        { priority: -4, delayMs: 3 * MINUTE_MS, queue: 'q1' },
        { priority: 2, delayMs: 4 * MINUTE_MS, queue: 'q1' },
        { type: 'other', priority: 0, delayMs: MINUTE_MS, queue: 'q1' },
        { priority: 0, delayMs: 2 * MINUTE_MS, queue: 'q2' },
      ]);
      expect((await ask(['test_job'], null)).nextRunAt).toEqual(at(2 * MINUTE_MS));
      expect((await ask(['test_job'], ['q1'])).nextRunAt).toEqual(at(3 * MINUTE_MS));
      expect((await ask(['test_job', 'other'], ['q1', 'nope'])).nextRunAt).toEqual(at(MINUTE_MS));
      expect((await ask(['test_job'], ['nope'])).nextRunAt).toBeNull();
      await enqueueIds(
        ctx.store,
        Array.from({ length: 70 }, (_, i) => ({ type: 'many', queue: 'q3', priority: 100 - i, delayMs: (80 - i) * SECOND_MS })),
      );
      // Past SQLite's 32 priorities and PostgreSQL's 64: the earliest is at the lowest.
      expect((await ask(['many'], null)).nextRunAt).toEqual(at(11 * SECOND_MS));
      expect((await ask(['many'], ['q3'])).nextRunAt).toEqual(at(11 * SECOND_MS));
      expect((await ask(['many', 'test_job'], ['q3', 'q1'])).nextRunAt).toEqual(at(11 * SECOND_MS));
    });
  });
}
