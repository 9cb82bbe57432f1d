// Inbound events: stored byte-exact with the jobs they fan out to, in one transaction;
// deduped on (source, deliveryId), including under concurrent redeliveries.

import { describe, expect, it } from 'vitest';
import { KeyConflictError } from '../../src/core/errors.js';
import type { EventInsert, StoreExecutor } from '../../src/store/store.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { MINUTE_MS, T0, at, enqueue, idsOf, jobInsert, rejectionOf, useStore } from './context.js';

/** Not valid UTF-8 (0xff, 0xfe, a lone continuation byte, a truncated sequence) plus NUL and CR/LF. */
const BINARY_BODY = Buffer.from([0x7b, 0x00, 0xff, 0xfe, 0x80, 0x0d, 0x0a, 0xe2, 0x82, 0x7d, 0xc3]);

function event(overrides: Partial<EventInsert> = {}): EventInsert {
  return {
    source: 'github',
    deliveryId: 'delivery-1',
    type: 'push',
    headers: { 'x-github-event': 'push', 'content-type': 'application/octet-stream' },
    rawBody: BINARY_BODY,
    ...overrides,
  };
}

function deliver(store: StoreExecutor, overrides: Partial<EventInsert> = {}, jobTypes: string[] = ['deploy'], now = T0) {
  return store.eventInsertWithJobs({
    event: event(overrides),
    jobs: jobTypes.map((type) => jobInsert({ type, payload: { type } })),
    now,
  });
}

export function eventsConformance(harness: StoreHarness): void {
  describe('events', () => {
    const ctx = useStore(harness);

    it('stores an event with its headers and byte-exact body and links the jobs it fans out to', async () => {
      const result = await deliver(ctx.store, {}, ['deploy', 'notify']);
      expect(result.isDuplicate).toBe(false);
      expect(result.event).toMatchObject({
        source: 'github',
        deliveryId: 'delivery-1',
        type: 'push',
        headers: { 'x-github-event': 'push', 'content-type': 'application/octet-stream' },
      });
      expect(result.event.id).toMatch(/^[1-9][0-9]*$/);
      expect(result.event.receivedAt).toEqual(T0);
      expect(Buffer.compare(result.event.rawBody, BINARY_BODY)).toBe(0);

      const stored = (await ctx.store.eventGet({ id: result.event.id }))!;
      expect(Buffer.isBuffer(stored.rawBody)).toBe(true);
      expect(stored.rawBody.equals(BINARY_BODY)).toBe(true);
      expect(stored.headers).toEqual(result.event.headers);

      expect(result.jobs.map((job) => job.type)).toEqual(['deploy', 'notify']);
      for (const job of result.jobs) {
        expect(job).toMatchObject({ eventId: result.event.id, source: 'github', status: 'pending' });
        expect((await ctx.store.jobGet({ id: job.id }))!).toMatchObject({ eventId: result.event.id, source: 'github' });
      }
      expect(idsOf(await ctx.store.jobList({ eventId: result.event.id }))).toEqual(idsOf(result.jobs));
    });

    it('stores an empty body and an event without a type', async () => {
      const result = await deliver(ctx.store, { rawBody: Buffer.alloc(0), type: null, headers: {} }, []);
      const stored = (await ctx.store.eventGet({ id: result.event.id }))!;
      expect(stored.rawBody.length).toBe(0);
      expect(stored.type).toBeNull();
      expect(stored.headers).toEqual({});
      expect(result.jobs).toEqual([]);
    });

    it('answers a redelivery with the original event and jobs and creates nothing', async () => {
      const first = await deliver(ctx.store, {}, ['deploy']);
      const again = await deliver(ctx.store, { rawBody: Buffer.from('different'), type: 'other' }, ['deploy', 'extra'], at(MINUTE_MS));
      expect(again.isDuplicate).toBe(true);
      expect(again.event.id).toBe(first.event.id);
      expect(again.event.rawBody.equals(BINARY_BODY)).toBe(true);
      expect(again.event.type).toBe('push');
      expect(idsOf(again.jobs)).toEqual(idsOf(first.jobs));
      expect(await ctx.store.jobList({})).toHaveLength(1);
    });

    it('dedupes delivery ids within a source, not across sources', async () => {
      const github = await deliver(ctx.store, { source: 'github', deliveryId: 'same' });
      const stripe = await deliver(ctx.store, { source: 'stripe', deliveryId: 'same' });
      expect(stripe.isDuplicate).toBe(false);
      expect(stripe.event.id).not.toBe(github.event.id);
    });

    it('never dedupes events without a delivery id', async () => {
      const first = await deliver(ctx.store, { deliveryId: null });
      const second = await deliver(ctx.store, { deliveryId: null });
      expect(second.isDuplicate).toBe(false);
      expect(second.event.id).not.toBe(first.event.id);
      expect(second.event.deliveryId).toBeNull();
      expect(await ctx.store.jobList({})).toHaveLength(2);
    });

    it('stores exactly one event for 50 concurrent redeliveries over two connections', async () => {
      const other = await ctx.opened.openAnother();
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) => deliver(i % 2 === 0 ? ctx.store : other, { deliveryId: 'storm' }, ['deploy'])),
      );
      expect(results.filter((result) => !result.isDuplicate)).toHaveLength(1);
      expect(new Set(results.map((result) => result.event.id)).size).toBe(1);
      expect(new Set(results.flatMap((result) => idsOf(result.jobs))).size).toBe(1);
      expect(await ctx.store.jobList({})).toHaveLength(1);
    });

    it('keeps 40 concurrent deliveries apart, a redelivery among them answered with the first copy\'s jobs', async () => {
      // No `now`: the store's own clock, so a store may batch these into one commit.
      const send = (i: number) =>
        ctx.store.eventInsertWithJobs({
          event: event({ deliveryId: `d-${i}`, rawBody: Buffer.from(`{"n":${i}}`) }),
          jobs: [jobInsert({ type: 'a', payload: { n: i } }), jobInsert({ type: 'b', payload: { n: i } })],
        });
      const sent = await Promise.all([...Array.from({ length: 40 }, (_, i) => send(i)), send(7)]);
      // The two copies of d-7 race; on a store with several connections either may commit
      // first, so the one that stored the event is the original and the other its duplicate.
      const copies = [sent[7]!, sent[40]!];
      const first = copies.find((result) => !result.isDuplicate)!;
      const again = copies.find((result) => result.isDuplicate)!;
      expect(first).toBeDefined();
      expect(again).toBeDefined();
      expect(again.event.id).toBe(first.event.id);
      expect(idsOf(again.jobs)).toEqual(idsOf(first.jobs));
      const results = sent.slice(0, 40).map((result, i) => (i === 7 ? first : result));
      for (const [i, result] of results.entries()) {
        expect(result.isDuplicate).toBe(false);
        expect(result.event.rawBody.toString()).toBe(`{"n":${i}}`);
        expect(result.jobs.map((job) => [job.type, job.payload, job.eventId])).toEqual([
          ['a', { n: i }, result.event.id],
          ['b', { n: i }, result.event.id],
        ]);
        for (const job of result.jobs) expect((await ctx.store.jobGet({ id: job.id }))!).toMatchObject({ eventId: result.event.id, source: 'github', payload: { n: i } });
        expect((await ctx.store.eventGet({ id: result.event.id }))!.deliveryId).toBe(`d-${i}`);
      }
      expect(new Set(results.flatMap((result) => idsOf(result.jobs))).size).toBe(80);
    });

    it('stores neither the event nor any job when one of its jobs has a key conflict', async () => {
      await enqueue(ctx.store, { key: 'order:1', payload: { v: 1 } });
      const error = await rejectionOf(
        ctx.store.eventInsertWithJobs({
          event: event({ deliveryId: 'conflicted' }),
          jobs: [jobInsert({ type: 'fine' }), jobInsert({ key: 'order:1', payload: { v: 2 } })],
          now: T0,
        }),
      );
      expect(error).toBeInstanceOf(KeyConflictError);
      expect(await ctx.store.jobList({})).toHaveLength(1);
      // The delivery id was not consumed: the provider's retry is stored as new.
      const retry = await deliver(ctx.store, { deliveryId: 'conflicted' });
      expect(retry.isDuplicate).toBe(false);
    });

    it('lists events with their body size and job count, one that fanned out to nothing included', async () => {
      const push = await deliver(ctx.store, { deliveryId: 'd-push' }, ['deploy', 'notify']);
      const ping = await deliver(ctx.store, { deliveryId: 'd-ping', type: 'ping', rawBody: Buffer.from('{"zen":"hi"}') }, [], at(MINUTE_MS));
      const listed = await ctx.store.eventList({});
      expect(listed).toEqual([
        { id: push.event.id, source: 'github', deliveryId: 'd-push', type: 'push', receivedAt: T0, bodyBytes: BINARY_BODY.length, jobCount: 2 },
        { id: ping.event.id, source: 'github', deliveryId: 'd-ping', type: 'ping', receivedAt: at(MINUTE_MS), bodyBytes: 12, jobCount: 0 },
      ]);
      expect(idsOf(await ctx.store.eventList({ descending: true }))).toEqual([ping.event.id, push.event.id]);
    });

    it('lists events of one source and type, a page at a time', async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await deliver(ctx.store, { deliveryId: `gh-${i}`, type: i % 2 === 0 ? 'push' : 'ping' }, [])).event.id);
      const stripe = await deliver(ctx.store, { source: 'stripe', deliveryId: 'evt_1', type: 'push' }, []);
      expect(idsOf(await ctx.store.eventList({ source: 'github', type: 'push' }))).toEqual([ids[0], ids[2], ids[4]]);
      expect(idsOf(await ctx.store.eventList({ type: 'push', descending: true, limit: 2 }))).toEqual([stripe.event.id, ids[4]]);
      expect(idsOf(await ctx.store.eventList({ type: 'push', descending: true, after: ids[4] }))).toEqual([ids[2], ids[0]]);
      expect(idsOf(await ctx.store.eventList({ source: 'github', after: ids[1], limit: 2 }))).toEqual([ids[2], ids[3]]);
      expect(await ctx.store.eventList({ source: 'nowhere' })).toEqual([]);
      expect(await ctx.store.eventList({ after: 'not-an-id' })).toEqual([]);
    });

    it('returns null from eventGet for an unknown or malformed id', async () => {
      await deliver(ctx.store);
      for (const id of ['987654321', 'abc', '', '-1', '1.5']) expect(await ctx.store.eventGet({ id })).toBeNull();
    });
  });
}
