// Listing and reading jobs: filters, limit, keyset pagination both ways, and jobGet of
// ids that do not exist or are not ids at all.

import { describe, expect, it } from 'vitest';
import { insertJob } from '../harness/factory.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { T0, enqueue, enqueueIds, idsOf, jobInsert, useStore } from './context.js';

export function listConformance(harness: StoreHarness): void {
  describe('list', () => {
    const ctx = useStore(harness);

    it('lists jobs in ascending id order by default', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}]);
      expect(idsOf(await ctx.store.jobList({}))).toEqual(ids);
    });

    it('reads one id range with after and until, in either order, and finds the same jobs whichever way it walks', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}, {}, {}]);
      // Newest first, strictly between the first and the last.
      expect(idsOf(await ctx.store.jobList({ descending: true, after: ids[5], until: ids[0] }))).toEqual([ids[4], ids[3], ids[2], ids[1]]);
      expect(idsOf(await ctx.store.jobList({ after: ids[0], until: ids[5] }))).toEqual([ids[1], ids[2], ids[3], ids[4]]);
      expect(idsOf(await ctx.store.jobList({ descending: true, until: ids[3], limit: 1 }))).toEqual([ids[5]]);
      expect(await ctx.store.jobList({ descending: true, after: ids[2], until: ids[1] })).toEqual([]);
      expect(await ctx.store.jobList({ until: 'nope' })).toEqual([]);
      // Many pending jobs of one queue among few others: a store may walk its index or the ids; the page is the same.
      const more = await enqueueIds(ctx.store, Array.from({ length: 30 }, (_, i) => ({ queue: i % 3 === 0 ? 'other' : 'email' })));
      const email = more.filter((_, i) => i % 3 !== 0).reverse();
      expect(idsOf(await ctx.store.jobList({ status: 'pending', queue: 'email', descending: true, limit: 5 }))).toEqual(email.slice(0, 5));
      expect(idsOf(await ctx.store.jobList({ status: 'pending', queue: 'email', descending: true, limit: 5, after: email[4] }))).toEqual(email.slice(5, 10));
    });

    it('filters by status', async () => {
      const dead = await insertJob(ctx.store, { status: 'dead', now: T0 });
      const done = await insertJob(ctx.store, { status: 'done', now: T0 });
      const pending = await insertJob(ctx.store, { now: T0 });
      expect(idsOf(await ctx.store.jobList({ status: 'dead' }))).toEqual([dead.id]);
      expect(idsOf(await ctx.store.jobList({ status: 'done' }))).toEqual([done.id]);
      expect(idsOf(await ctx.store.jobList({ status: 'pending' }))).toEqual([pending.id]);
      expect(await ctx.store.jobList({ status: 'running' })).toEqual([]);
    });

    it('filters by type and by queue, and combines filters', async () => {
      const [aEmail, bEmail, aReports] = await enqueueIds(ctx.store, [
        { type: 'a', queue: 'email' },
        { type: 'b', queue: 'email' },
        { type: 'a', queue: 'reports' },
      ]);
      expect(idsOf(await ctx.store.jobList({ type: 'a' }))).toEqual([aEmail, aReports]);
      expect(idsOf(await ctx.store.jobList({ queue: 'email' }))).toEqual([aEmail, bEmail]);
      expect(idsOf(await ctx.store.jobList({ type: 'a', queue: 'reports' }))).toEqual([aReports]);
      expect(await ctx.store.jobList({ type: 'b', queue: 'reports' })).toEqual([]);
    });

    it('filters by the source of the event a job came from', async () => {
      const stripe = await ctx.store.eventInsertWithJobs({
        event: { source: 'stripe', deliveryId: 'evt_1', type: null, headers: {}, rawBody: Buffer.from('{}') },
        jobs: [jobInsert({ type: 'fulfil' })],
        now: T0,
      });
      await ctx.store.eventInsertWithJobs({
        event: { source: 'github', deliveryId: 'gh_1', type: null, headers: {}, rawBody: Buffer.from('{}') },
        jobs: [jobInsert({ type: 'deploy' })],
        now: T0,
      });
      await enqueue(ctx.store);
      expect(idsOf(await ctx.store.jobList({ source: 'stripe' }))).toEqual(idsOf(stripe.jobs));
    });

    it('filters by a case-insensitive substring of the last error', async () => {
      const smtp = await insertJob(ctx.store, { status: 'dead', error: 'Error: SMTP 550 Mailbox Unavailable', now: T0 });
      await insertJob(ctx.store, { status: 'dead', error: 'Error: 404', now: T0 });
      await insertJob(ctx.store, { now: T0 });
      expect(idsOf(await ctx.store.jobList({ errorContains: 'mailbox unavailable' }))).toEqual([smtp.id]);
      expect(idsOf(await ctx.store.jobList({ errorContains: 'MAILBOX', status: 'dead' }))).toEqual([smtp.id]);
      expect(await ctx.store.jobList({ errorContains: 'mailbox', status: 'pending' })).toEqual([]);
    });

    it('returns at most limit jobs', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}, {}]);
      expect(idsOf(await ctx.store.jobList({ limit: 2 }))).toEqual(ids.slice(0, 2));
    });

    it('pages forward with after', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}, {}]);
      const first = await ctx.store.jobList({ limit: 2 });
      const second = await ctx.store.jobList({ limit: 2, after: first[1]!.id });
      const third = await ctx.store.jobList({ limit: 2, after: second[1]!.id });
      expect([...idsOf(first), ...idsOf(second), ...idsOf(third)]).toEqual(ids);
    });

    it('lists newest first when descending, and pages downward with after', async () => {
      const ids = await enqueueIds(ctx.store, [{}, {}, {}, {}]);
      const first = await ctx.store.jobList({ descending: true, limit: 2 });
      expect(idsOf(first)).toEqual([ids[3], ids[2]]);
      expect(idsOf(await ctx.store.jobList({ descending: true, limit: 2, after: first[1]!.id }))).toEqual([ids[1], ids[0]]);
    });

    it('returns null from jobGet for an unknown or malformed id', async () => {
      await enqueue(ctx.store);
      for (const id of ['987654321', '0', 'abc', '', ' 1', '-1', '1.5', '1e3', '99999999999999999999999999']) {
        expect(await ctx.store.jobGet({ id })).toBeNull();
      }
    });

    it('returns a job with an empty history and no replays before it has run', async () => {
      const { job } = await enqueue(ctx.store);
      expect(await ctx.store.jobGet({ id: job.id })).toMatchObject({ id: job.id, attemptsLog: [], replays: [] });
    });
  });
}
