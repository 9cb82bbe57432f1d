// Enqueue: what jobInsertMany stores, id order, scheduling, and idempotency keys
// (same payload → the existing job; different payload → KeyConflictError; all-or-nothing).

import { describe, expect, it } from 'vitest';
import { KeyConflictError } from '../../src/core/errors.js';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, T0, at, enqueue, enqueueIds, jobInsert, rejectionOf, useStore } from './context.js';

export function enqueueConformance(harness: StoreHarness): void {
  describe('enqueue', () => {
    const ctx = useStore(harness);

    it('stores a pending job with every field it was given', async () => {
      const { job, isDuplicate } = await enqueue(ctx.store, {
        type: 'send_email',
        queue: 'email',
        priority: 7,
        maxAttempts: 3,
        key: 'welcome:42',
        group: 'user:42',
        payload: { userId: 42, tags: ['a', 'b'], nested: { ok: true, none: null } },
      });
      expect(isDuplicate).toBe(false);
      expect(job).toMatchObject({
        type: 'send_email',
        queue: 'email',
        status: 'pending',
        priority: 7,
        maxAttempts: 3,
        attempts: 0,
        key: 'welcome:42',
        group: 'user:42',
        payload: { userId: 42, tags: ['a', 'b'], nested: { ok: true, none: null } },
        lastError: null,
        deadReason: null,
        eventId: null,
        source: null,
        startedAt: null,
        finishedAt: null,
        leaseOwner: null,
        leaseExpiresAt: null,
      });
      expect(job.runAt).toEqual(T0);
      expect(await ctx.store.jobGet({ id: job.id })).toMatchObject({ id: job.id, type: 'send_email', key: 'welcome:42' });
    });

    it('round-trips unicode text and the JSON types in a payload', async () => {
      const payload = { text: 'Grüße 🙂 "quoted" \\ \n', n: 1.5, big: 9007199254740991, list: [null, false, 0, ''] };
      const { job } = await enqueue(ctx.store, { payload });
      expect(job.payload).toEqual(payload);
      expect((await ctx.store.jobGet({ id: job.id }))!.payload).toEqual(payload);
    });

    it('gives jobs increasing decimal-string ids in enqueue order', async () => {
      const first = await enqueueIds(ctx.store, [{}, {}, {}]);
      const [later] = await enqueueIds(ctx.store, [{}]);
      const ids = [...first, later!];
      for (const id of ids) expect(id).toMatch(/^[1-9][0-9]*$/);
      const asBigInts = ids.map((id) => BigInt(id));
      for (let i = 1; i < asBigInts.length; i += 1) expect(asBigInts[i]! > asBigInts[i - 1]!).toBe(true);
    });

    it('schedules a job at now plus delayMs when no runAt is given', async () => {
      const { job } = await enqueue(ctx.store, { delayMs: 90_000 }, T0);
      expect(job.runAt).toEqual(at(90_000));
    });

    it('schedules a job at its absolute runAt, ignoring delayMs', async () => {
      const { job } = await enqueue(ctx.store, { runAt: at(5 * MINUTE_MS), delayMs: 1_000 }, T0);
      expect(job.runAt).toEqual(at(5 * MINUTE_MS));
    });

    it('returns the existing job as a duplicate for the same key and payload', async () => {
      const first = await enqueue(ctx.store, { key: 'k1', payload: { a: 1 } });
      const second = await enqueue(ctx.store, { key: 'k1', payload: { a: 1 } }, at(MINUTE_MS));
      expect(second.isDuplicate).toBe(true);
      expect(second.job.id).toBe(first.job.id);
      expect(second.job.runAt).toEqual(T0);
      expect(await ctx.store.jobList({})).toHaveLength(1);
    });

    it('compares payloads under one key as canonical JSON, whatever their key order', async () => {
      const first = await ctx.store.jobInsertMany({
        jobs: [{ ...jobInsert({ key: 'k2' }), payloadJson: '{"a":1,"b":{"c":2,"d":[3,4]}}' }],
        now: T0,
      });
      const second = await ctx.store.jobInsertMany({
        jobs: [{ ...jobInsert({ key: 'k2' }), payloadJson: '{ "b": { "d": [3, 4], "c": 2 }, "a": 1 }' }],
        now: T0,
      });
      expect(second[0]!.isDuplicate).toBe(true);
      expect(second[0]!.job.id).toBe(first[0]!.job.id);
    });

    it('refuses the same key with a different payload with KeyConflictError naming the existing job', async () => {
      const { job } = await enqueue(ctx.store, { key: 'order:7', payload: { total: 10 } });
      const error = await rejectionOf(enqueue(ctx.store, { key: 'order:7', payload: { total: 11 } }));
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(error.code).toBe('MR_ERR_KEY_CONFLICT');
      expect(error.key).toBe('order:7');
      expect(error.existingJobId).toBe(job.id);
      const stored = await ctx.store.jobList({});
      expect(stored).toHaveLength(1);
      expect(stored[0]!.payload).toEqual({ total: 10 });
    });

    it('treats keys as global across types: another type with the same key conflicts', async () => {
      const { job } = await enqueue(ctx.store, { type: 'a', key: 'shared', payload: { x: 1 } });
      const error = await rejectionOf(enqueue(ctx.store, { type: 'b', key: 'shared', payload: { x: 2 } }));
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(error.existingJobId).toBe(job.id);
    });

    it("keeps a dead job's key: the same key and payload return that dead job", async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', key: 'once', payload: { p: 1 }, now: T0 });
      const again = await enqueue(ctx.store, { type: dead.type, key: 'once', payload: { p: 1 } }, at(MINUTE_MS));
      expect(again.isDuplicate).toBe(true);
      expect(again.job.id).toBe(dead.id);
      expect(again.job.status).toBe('dead');
    });

    it('inserts nothing from jobInsertMany when one of its keys conflicts', async () => {
      const { job: existing } = await enqueue(ctx.store, { key: 'taken', payload: { v: 1 } });
      const error = await rejectionOf(
        ctx.store.jobInsertMany({
          jobs: [
            jobInsert({ payload: { first: true } }),
            jobInsert({ key: 'fresh', payload: { v: 1 } }),
            jobInsert({ key: 'taken', payload: { v: 2 } }),
            jobInsert({ payload: { last: true } }),
          ],
          now: T0,
        }),
      );
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(error.existingJobId).toBe(existing.id);
      expect((await ctx.store.jobList({})).map((job) => job.id)).toEqual([existing.id]);
      // The rolled-back key is free again.
      const retry = await enqueue(ctx.store, { key: 'fresh', payload: { v: 9 } });
      expect(retry.isDuplicate).toBe(false);
    });

    it('returns one job for a key repeated within one jobInsertMany call', async () => {
      const results = await ctx.store.jobInsertMany({
        jobs: [jobInsert({ key: 'twice', payload: { a: 1 } }), jobInsert({ key: 'twice', payload: { a: 1 } })],
        now: T0,
      });
      expect(results.map((result) => result.isDuplicate)).toEqual([false, true]);
      expect(results[1]!.job.id).toBe(results[0]!.job.id);
      expect(await ctx.store.jobList({})).toHaveLength(1);
    });

    it('creates one job for 20 concurrent enqueues of one key over two connections', async () => {
      const other = await ctx.opened.openAnother();
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) => enqueue(i % 2 === 0 ? ctx.store : other, { key: 'race', payload: { same: true } })),
      );
      expect(new Set(results.map((result) => result.job.id)).size).toBe(1);
      expect(results.filter((result) => !result.isDuplicate)).toHaveLength(1);
      expect(await ctx.store.jobList({})).toHaveLength(1);
    });

    it('stores every job of a large mixed batch under the id it returned', async () => {
      const inserts = Array.from({ length: 600 }, (_, i) =>
        jobInsert({
          type: `t${i % 3}`,
          queue: `q${i % 2}`,
          priority: i % 5,
          maxAttempts: 1 + (i % 4),
          delayMs: (i % 7) * 1_000,
          group: i % 11 === 0 ? `g${i % 3}` : null,
          payload: { i, text: `job ${i} "é"` },
        }),
      );
      await enqueueIds(ctx.store, [{}]); // ids need not start at 1
      const results = await ctx.store.jobInsertMany({ jobs: inserts, now: T0 });
      const ids = results.map((result) => BigInt(result.job.id));
      for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
      for (const [i, result] of results.entries()) {
        const stored = await ctx.store.jobGet({ id: result.job.id });
        const expected = { type: `t${i % 3}`, queue: `q${i % 2}`, priority: i % 5, maxAttempts: 1 + (i % 4), group: i % 11 === 0 ? `g${i % 3}` : null, payload: { i, text: `job ${i} "é"` } };
        expect(result.job).toMatchObject(expected);
        expect(stored).toMatchObject({ ...expected, status: 'pending', runAt: at((i % 7) * 1_000) });
      }
      expect((await ctx.store.jobStats({ now: T0 })).byQueue.q0?.pending).toBe(300);
    });

    it('gives each of 100 concurrent callers its own jobs, and fails only the one whose key conflicts', async () => {
      await enqueue(ctx.store, { key: 'taken', payload: { v: 1 } });
      const outcomes = await Promise.allSettled(
        Array.from({ length: 100 }, (_, i) =>
          i === 50
            ? ctx.store.jobInsertMany({ jobs: [jobInsert({ key: 'taken', payload: { v: 2 } })] })
            : ctx.store.jobInsertMany({ jobs: [jobInsert({ payload: { caller: i, n: 0 } }), jobInsert({ payload: { caller: i, n: 1 } })] }),
        ),
      );
      expect(outcomes[50]).toMatchObject({ status: 'rejected', reason: expect.any(KeyConflictError) });
      const ids = new Set<string>();
      for (const [i, outcome] of outcomes.entries()) {
        if (i === 50) continue;
        expect(outcome.status).toBe('fulfilled');
        const results = (outcome as PromiseFulfilledResult<Awaited<ReturnType<typeof ctx.store.jobInsertMany>>>).value;
        expect(results.map((result) => result.job.payload)).toEqual([{ caller: i, n: 0 }, { caller: i, n: 1 }]);
        for (const result of results) {
          ids.add(result.job.id);
          expect((await ctx.store.jobGet({ id: result.job.id }))!.payload).toEqual(result.job.payload);
        }
      }
      expect(ids.size).toBe(198);
      expect((await ctx.store.jobStats({})).byQueue.default?.pending).toBe(199);
    });

    it('returns results in the order of the inserts', async () => {
      const results = await ctx.store.jobInsertMany({
        jobs: [jobInsert({ type: 'one' }), jobInsert({ type: 'two' }), jobInsert({ type: 'three' })],
        now: T0,
      });
      expect(results.map((result) => result.job.type)).toEqual(['one', 'two', 'three']);
    });
  });
}
