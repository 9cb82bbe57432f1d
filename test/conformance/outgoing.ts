// Outgoing webhooks in the store (SPEC §6a): endpoints that never hand out their secret,
// messages published once per (tenant, key) with one deliver job per matching enabled
// endpoint and `skipped` for disabled ones, in one transaction (the caller's too), and the
// per-endpoint breaker, health and auto-disable kept by deliveryStartMany/deliveryRecordMany on a
// pinned clock, so every worker on every connection sees the same state.

import { describe, expect, it } from 'vitest';
import { DEFAULT_BREAKER_SETTINGS } from '../../src/core/circuit-breaker.js';
import type { DeliveryRecord, EndpointAddParams, MessagePublishParams } from '../../src/store/outgoing-store.js';
import type { Store, StoreExecutor } from '../../src/store/store.js';
import type { StoreHarness } from '../harness/store-harness.js';
import { asDone, asFailed } from '../harness/finishes.js';
import { DAY_MS, MINUTE_MS, SECOND_MS, T0, at, claim, jobInsert, rawSql, rejectionOf, sqlLiterals, useStore } from './context.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const NEW_SECRET = 'whsec_QWxsIHRoZSB3b3JsZCdzIGEgc3RhZ2UsIGFuZA==';
const BREAKER = DEFAULT_BREAKER_SETTINGS;
const FIVE_DAYS_MS = 5 * DAY_MS;

function endpoint(overrides: Partial<EndpointAddParams> = {}): EndpointAddParams {
  return { tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: SECRET, addedBy: 'operator', now: T0, ...overrides };
}

function publish(overrides: Partial<Omit<MessagePublishParams, 'payloadJson'>> & { payload?: unknown } = {}): MessagePublishParams {
  const { payload, ...rest } = overrides;
  return { tenant: 'acme', type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver', maxAttempts: 9 }), now: T0, ...rest, payloadJson: JSON.stringify(payload ?? { invoice: 1 }) };
}

/** An attempt's outcome as the deliver task records it. */
function record(store: StoreExecutor, deliveryId: string, endpointId: string, attempt: 'success' | 'failure' | 'outage', now: Date, extra: { disableReason?: string } = {}) {
  const status = attempt === 'success' ? 'delivered' : 'pending';
  return one(recordTogether(store, deliveryId, endpointId, [{ status, attempt, ...extra }], now));
}

/** Attempts of one delivery recorded together, in this order, as one turn's records are. */
function recordTogether(store: StoreExecutor, deliveryId: string, endpointId: string, attempts: ReadonlyArray<Pick<DeliveryRecord, 'status' | 'attempt' | 'disableReason'>>, now: Date) {
  return store.deliveryRecordMany({ records: attempts.map((attempt) => ({ deliveryId, endpointId, ...attempt })), disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now });
}

/** One delivery's start, as the deliver task asks for it (in a batch of one). */
function startOne(store: StoreExecutor, deliveryId: string, now: Date) {
  return one(store.deliveryStartMany({ deliveryIds: [deliveryId], breaker: BREAKER, now }));
}

/**
 * A fresh store migrated to `version` only, with raw SQL on its data, for the upgrade cases:
 * `fn` writes rows as that version's code did, then migrates on. Cleaned up after.
 */
async function atSchemaVersion(harness: StoreHarness, version: number, fn: (opened: { store: Store } & ReturnType<typeof rawSql>) => Promise<void>): Promise<void> {
  const opened = await harness.openUnmigrated();
  try {
    await opened.store.migrate({ toVersion: version });
    await fn({ store: opened.store, ...rawSql(harness, opened) });
  } finally {
    await harness.cleanup();
  }
}

/** An endpoint row as code before 0017 wrote it: only the columns it knew, created at T0. */
function oldCodeEndpointInsert(harness: StoreHarness, url: string, disabled?: { readonly reason: string | null }): string {
  const sql = sqlLiterals(harness);
  const t0 = sql.time(T0);
  const state = disabled ? `${sql.bool(false)}, ${disabled.reason === null ? 'NULL' : `'${disabled.reason}'`}` : `${sql.bool(true)}, NULL`;
  return `INSERT INTO mailroom_endpoint (tenant, url, enabled, disabled_reason, secret, created_at, updated_at) VALUES ('acme', '${url}', ${state}, '${SECRET}', ${t0}, ${t0})`;
}

async function one<T>(batch: Promise<T[]>): Promise<T> {
  const results = await batch;
  expect(results).toHaveLength(1);
  return results[0]!;
}

export function outgoingConformance(harness: StoreHarness): void {
  describe('outgoing webhooks', () => {
    const ctx = useStore(harness);

    it('keeps an endpoint’s secret out of add, get, list and update', async () => {
      const added = await ctx.store.endpointAdd(endpoint({ eventTypes: ['invoice.paid'], metadata: { plan: 'pro' }, description: 'billing' }));
      expect(added).toMatchObject({ tenant: 'acme', url: 'https://hooks.example.com/in', enabled: true, eventTypes: ['invoice.paid'], metadata: { plan: 'pro' } });
      await ctx.store.endpointAdd(endpoint({ tenant: 'globex' }));
      const updated = await ctx.store.endpointUpdate({ id: added.id, description: null, rateLimit: { limit: 5, intervalMs: SECOND_MS }, now: at(SECOND_MS) });
      expect(updated).toMatchObject({ description: null, rateLimit: { limit: 5, intervalMs: SECOND_MS }, eventTypes: ['invoice.paid'], metadata: { plan: 'pro' } });
      const everything = [added, updated, await ctx.store.endpointGet({ id: added.id }), await ctx.store.endpointList({}), await ctx.store.endpointList({ tenant: 'acme' })];
      expect(JSON.stringify(everything)).not.toContain(SECRET);
      expect((await ctx.store.endpointList({ tenant: 'acme' })).map((e) => e.id)).toEqual([added.id]);
      expect(await ctx.store.endpointList({})).toHaveLength(2);
      expect(await ctx.store.endpointGet({ id: '999999' })).toBeNull();
      expect(await ctx.store.endpointGet({ id: 'nope' })).toBeNull();
    });

    it('disables with a reason, enables again, and removes an endpoint', async () => {
      const { id } = await ctx.store.endpointAdd(endpoint());
      expect(await ctx.store.endpointSetEnabled({ id, enabled: false, reason: 'customer asked', now: at(SECOND_MS) })).toMatchObject({ enabled: false, disabledReason: 'customer asked' });
      expect(await ctx.store.endpointSetEnabled({ id, enabled: true, reason: null, now: at(2 * SECOND_MS) })).toMatchObject({ enabled: true, disabledReason: null });
      expect(await ctx.store.endpointRemove({ id })).toBe(true);
      expect(await ctx.store.endpointRemove({ id })).toBe(false);
      expect(await ctx.store.endpointGet({ id })).toBeNull();
    });

    it('keeps the reason of an endpoint disabled already when the operator disables it without words, deciding in the write', async () => {
      const { id } = await ctx.store.endpointAdd(endpoint());
      const wordless = { id, enabled: false, reason: 'disabled by hand', keepReason: true, by: 'operator' } as const;
      // Enabled: the generic reason.
      expect(await ctx.store.endpointSetEnabled(wordless)).toMatchObject({ enabled: false, disabledBy: 'operator', disabledReason: 'disabled by hand' });
      await ctx.store.endpointSetEnabled({ id, enabled: true, reason: null });
      // Disabled by the tenant: the operator takes it over with the tenant's reason.
      await ctx.store.endpointSetEnabled({ id, enabled: false, reason: 'disabled by the tenant in the portal', by: 'tenant' });
      expect(await ctx.store.endpointSetEnabled(wordless)).toMatchObject({ enabled: false, disabledBy: 'operator', disabledReason: 'disabled by the tenant in the portal' });
      // The tenant could not enable it in between; had it been enabled, its old words would be gone.
      expect(await ctx.store.endpointSetEnabled({ id, enabled: true, reason: null, by: 'tenant' })).toBeNull();
      await ctx.store.endpointSetEnabled({ id, enabled: true, reason: null });
      expect(await ctx.store.endpointSetEnabled(wordless)).toMatchObject({ disabledReason: 'disabled by hand' });
      // With words, they replace whatever it had.
      expect(await ctx.store.endpointSetEnabled({ id, enabled: false, reason: 'unpaid', keepReason: false })).toMatchObject({ disabledReason: 'unpaid', disabledBy: 'operator' });
    });

    it('publishes a message once with a deliver job per matching enabled endpoint and `skipped` for a disabled one', async () => {
      const all = await ctx.store.endpointAdd(endpoint());
      const paid = await ctx.store.endpointAdd(endpoint({ eventTypes: ['invoice.paid'] }));
      await ctx.store.endpointAdd(endpoint({ eventTypes: ['invoice.voided'] }));
      await ctx.store.endpointAdd(endpoint({ tenant: 'globex' }));
      const off = await ctx.store.endpointAdd(endpoint());
      await ctx.store.endpointSetEnabled({ id: off.id, enabled: false, reason: 'paused', now: T0 });

      const result = await ctx.store.messagePublish(publish({ payload: { invoice: 7 } }));
      expect(result.isDuplicate).toBe(false);
      expect(result.message).toMatchObject({ tenant: 'acme', type: 'invoice.paid', payload: { invoice: 7 } });
      expect(result.deliveries.map((d) => [d.endpointId, d.status])).toEqual([
        [all.id, 'pending'],
        [paid.id, 'pending'],
        [off.id, 'skipped'],
      ]);
      expect(result.deliveries[2]!.jobId).toBeNull();
      for (const delivery of result.deliveries.slice(0, 2)) {
        const job = (await ctx.store.jobGet({ id: delivery.jobId! }))!;
        expect(job).toMatchObject({ type: 'deliver', status: 'pending', maxAttempts: 9, runAt: T0, createdAt: T0 });
        expect(job.payload).toEqual({ deliveryId: delivery.id, messageId: result.message.id, endpointId: delivery.endpointId });
      }
      expect(result.message.createdAt).toEqual(T0);
      expect(await ctx.store.messageList({ tenant: 'acme' })).toEqual([result.message]);
      expect(await ctx.store.messageList({ tenant: 'globex' })).toEqual([]);
      expect((await ctx.store.deliveryList({ endpointId: off.id, status: 'skipped' })).map((d) => d.messageId)).toEqual([result.message.id]);
    });

    it('publishes many keyless messages at once, each with its own deliveries and deliver jobs', async () => {
      // Concurrent publishes on the store's clock may share a transaction (PostgreSQL groups
      // those of one turn of the event loop); each caller must still get its own message,
      // its own tenant's matching endpoints and jobs with its own options.
      const all = await ctx.store.endpointAdd(endpoint());
      const paid = await ctx.store.endpointAdd(endpoint({ eventTypes: ['invoice.paid'] }));
      const off = await ctx.store.endpointAdd(endpoint());
      await ctx.store.endpointSetEnabled({ id: off.id, enabled: false, reason: 'paused', now: T0 });
      const globex = await ctx.store.endpointAdd(endpoint({ tenant: 'globex' }));
      const asked = Array.from({ length: 30 }, (_, i) => ({
        tenant: i % 3 === 2 ? 'globex' : 'acme',
        type: i % 2 === 0 ? 'invoice.paid' : 'invoice.voided',
        priority: i % 4,
        payload: { i },
      }));
      const results = await Promise.all(
        asked.map(({ tenant, type, priority, payload }) =>
          ctx.store.messagePublish(publish({ tenant, type, payload, now: undefined, job: jobInsert({ type: 'deliver', maxAttempts: 9, priority }) })),
        ),
      );
      expect(new Set(results.map((result) => result.message.id)).size).toBe(30);
      for (const [i, result] of results.entries()) {
        const { tenant, type, priority, payload } = asked[i]!;
        expect(result.isDuplicate).toBe(false);
        expect(result.message).toMatchObject({ tenant, type, payload });
        const expected =
          tenant === 'globex'
            ? [[globex.id, 'pending']]
            : [[all.id, 'pending'], ...(type === 'invoice.paid' ? [[paid.id, 'pending']] : []), [off.id, 'skipped']];
        expect(result.deliveries.map((d) => [d.endpointId, d.status]), `publish ${i}`).toEqual(expected);
        expect(await ctx.store.deliveryList({ messageId: result.message.id })).toEqual(result.deliveries);
        for (const delivery of result.deliveries.filter((d) => d.status === 'pending')) {
          const job = (await ctx.store.jobGet({ id: delivery.jobId! }))!;
          expect(job).toMatchObject({ type: 'deliver', status: 'pending', maxAttempts: 9, priority });
          expect(job.payload).toEqual({ deliveryId: delivery.id, messageId: result.message.id, endpointId: delivery.endpointId });
        }
      }
      expect((await ctx.store.messageList({ tenant: 'globex', limit: 100 })).length).toBe(10);
      // Jobs are claimed in id order within a priority: the deliveries' jobs follow the
      // deliveries' order, across the publishes that shared a statement.
      const sent = results.flatMap((result) => result.deliveries).filter((d) => d.jobId !== null);
      const byDelivery = [...sent].sort((a, b) => Number(a.id) - Number(b.id)).map((d) => Number(d.jobId));
      expect(byDelivery).toEqual([...byDelivery].sort((a, b) => a - b));
    });

    it('stores a message that matches no endpoint, and reads it back by id', async () => {
      const result = await ctx.store.messagePublish(publish({ tenant: 'nobody' }));
      expect(result.deliveries).toEqual([]);
      expect((await ctx.store.messageList({ type: 'invoice.paid' })).map((m) => m.id)).toEqual([result.message.id]);
      expect(await ctx.store.messageGet({ id: result.message.id })).toEqual(result.message);
      for (const id of [String(Number(result.message.id) + 1), '0', 'msg_1', '99999999999999999999']) expect(await ctx.store.messageGet({ id })).toBeNull();
    });

    it('publishes a key once per tenant, and refuses the same key with another payload', async () => {
      await ctx.store.endpointAdd(endpoint());
      const first = await ctx.store.messagePublish(publish({ key: 'invoice:7' }));
      const again = await ctx.store.messagePublish(publish({ key: 'invoice:7', now: at(SECOND_MS) }));
      expect(again).toMatchObject({ isDuplicate: true, message: { id: first.message.id } });
      expect(again.deliveries.map((d) => d.id)).toEqual(first.deliveries.map((d) => d.id));
      const error = await rejectionOf(ctx.store.messagePublish(publish({ key: 'invoice:7', payload: { invoice: 8 } })));
      expect(error).toMatchObject({ code: 'MR_ERR_KEY_CONFLICT', existingMessageId: first.message.id });
      const otherTenant = await ctx.store.messagePublish(publish({ key: 'invoice:7', tenant: 'globex' }));
      expect(otherTenant.isDuplicate).toBe(false);
      expect(await ctx.store.messageList({ tenant: 'acme' })).toHaveLength(1);
      expect((await ctx.store.jobList({ type: 'deliver' })).length).toBe(1);
    });

    it('keys each deliver job by its endpoint, so per-key limits hold per endpoint', async () => {
      const a = await ctx.store.endpointAdd(endpoint());
      const b = await ctx.store.endpointAdd(endpoint());
      await ctx.store.messagePublish(publish());
      await ctx.store.messagePublish(publish());
      const claimed = await claim(ctx.store, { types: ['deliver'], limits: [{ type: 'deliver', perKey: { concurrency: 1 } }], now: T0 });
      expect(claimed.map((job) => (job.payload as { endpointId: string }).endpointId).sort()).toEqual([a.id, b.id].sort());
    });

    it.skipIf(!harness.capabilities.syncTransactions)('publishes nothing when the caller’s transactionSync rolls back (syncTransactions)', async () => {
      await ctx.store.endpointAdd(endpoint());
      expect(() =>
        ctx.store.transactionSync!((tx) => {
          tx.messagePublish(publish());
          throw new Error('order failed');
        }),
      ).toThrow('order failed');
      expect(await ctx.store.messageList({})).toEqual([]);
      expect(await ctx.store.jobList({})).toEqual([]);
      const committed = ctx.store.transactionSync!((tx) => tx.messagePublish(publish()));
      expect(await ctx.store.jobGet({ id: committed.deliveries[0]!.jobId! })).not.toBeNull();
    });

    it.skipIf(!harness.capabilities.asyncTransactions)('publishes nothing when the caller’s own transaction rolls back (asyncTransactions)', async () => {
      await ctx.store.endpointAdd(endpoint());
      const error = await rejectionOf(
        ctx.store.transaction!(async (tx) => {
          await tx.messagePublish(publish());
          throw new Error('order failed');
        }),
      );
      expect(error.message).toBe('order failed');
      expect(await ctx.store.messageList({})).toEqual([]);
      expect(await ctx.store.jobList({})).toEqual([]);
    });

    it('records who added an endpoint, the operator unless a tenant did, and hands it to the deliver task with every read', async () => {
      const operators = await ctx.store.endpointAdd(endpoint());
      const tenants = await ctx.store.endpointAdd(endpoint({ addedBy: 'tenant' }));
      expect([operators.addedBy, tenants.addedBy]).toEqual(['operator', 'tenant']);
      expect((await ctx.store.endpointGet({ id: tenants.id }))!.addedBy).toBe('tenant');
      expect((await ctx.store.endpointList({ tenant: 'acme' })).map((e) => e.addedBy)).toEqual(['operator', 'tenant']);
      expect((await ctx.store.endpointUpdate({ id: tenants.id, description: 'moved' }))!.addedBy).toBe('tenant');
      const { deliveries } = await ctx.store.messagePublish(publish());
      const starts = await Promise.all(deliveries.map((d) => startOne(ctx.store, d.id, T0)));
      expect(Object.fromEntries(starts.map((start) => [start!.endpoint!.id, start!.endpoint!.addedBy]))).toEqual({ [operators.id]: 'operator', [tenants.id]: 'tenant' });
    });

    it('reads an endpoint that code before migration 0018 added, which names no adder, as the operator’s', async () => {
      await atSchemaVersion(harness, 17, async ({ store, exec }) => {
        await exec(oldCodeEndpointInsert(harness, 'https://hooks.example.com/in'));
        await store.migrate();
        await exec(oldCodeEndpointInsert(harness, 'https://hooks.example.com/later'));
        expect((await store.endpointList({ tenant: 'acme' })).map((e) => e.addedBy)).toEqual(['operator', 'operator']);
      });
    });

    it('hands the deliver task the stored body, the endpoint and both secrets during a rotation’s overlap', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish({ ...publish(), payloadJson: '{"b":1,  "a":2}' });
      const start = (await startOne(ctx.store, deliveries[0]!.id, T0))!;
      expect(start).toMatchObject({ endpoint: { id: ep.id, enabled: true }, secrets: [SECRET], admission: { kind: 'send' } });
      expect(start.message.payload).toBe('{"b":1,  "a":2}');
      expect(await ctx.store.endpointRotateSecret({ id: ep.id, secret: NEW_SECRET, overlapMs: MINUTE_MS, now: at(SECOND_MS) })).toEqual({ rotated: true, previousUntil: at(SECOND_MS + MINUTE_MS) });
      const during = (await startOne(ctx.store, deliveries[0]!.id, at(30 * SECOND_MS)))!;
      expect(during.secrets).toEqual([NEW_SECRET, SECRET]);
      const after = (await startOne(ctx.store, deliveries[0]!.id, at(2 * MINUTE_MS)))!;
      expect(after.secrets).toEqual([NEW_SECRET]);
      expect(await startOne(ctx.store, '999999', T0)).toBeNull();
    });

    it('starts a batch of several messages to several endpoints with each delivery’s own message, endpoint and secrets', async () => {
      const first = await ctx.store.endpointAdd(endpoint());
      const second = await ctx.store.endpointAdd(endpoint({ url: 'https://other.example.com/in', secret: NEW_SECRET }));
      const gone = await ctx.store.endpointAdd(endpoint({ url: 'https://gone.example.com/in' }));
      const a = await ctx.store.messagePublish(publish({ payload: { n: 'a' } }));
      const b = await ctx.store.messagePublish(publish({ payload: { n: 'b' } }));
      const byEndpoint = (published: typeof a, id: string) => published.deliveries.find((d) => d.endpointId === id)!.id;
      expect(await ctx.store.endpointRemove({ id: gone.id })).toBe(true);
      // Interleaved as a claim hands them out: a message's deliveries side by side, each endpoint's spread out.
      const ids = [byEndpoint(a, first.id), byEndpoint(a, second.id), byEndpoint(a, gone.id), byEndpoint(b, first.id), byEndpoint(b, second.id)];
      const starts = await ctx.store.deliveryStartMany({ deliveryIds: ids, breaker: BREAKER, now: T0 });
      expect(starts.map((start) => [start!.delivery.id, start!.message.payload, start!.endpoint?.id ?? null, start!.secrets])).toEqual([
        [ids[0], '{"n":"a"}', first.id, [SECRET]],
        [ids[1], '{"n":"a"}', second.id, [NEW_SECRET]],
        [ids[2], '{"n":"a"}', null, []],
        [ids[3], '{"n":"b"}', first.id, [SECRET]],
        [ids[4], '{"n":"b"}', second.id, [NEW_SECRET]],
      ]);
    });

    it('refuses a second rotation while the first one’s old secret still signs, unless its overlap is 0', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish(publish());
      const THIRD = 'whsec_VGhpcmQgc2VjcmV0IGZvciB0aGUgdGVzdA==';
      const FOURTH = 'whsec_Rm91cnRoIHNlY3JldCBmb3IgdGhlIHRlc3Q=';
      await ctx.store.endpointRotateSecret({ id: ep.id, secret: NEW_SECRET, overlapMs: MINUTE_MS, now: T0 });
      expect(await ctx.store.endpointRotateSecret({ id: ep.id, secret: THIRD, overlapMs: MINUTE_MS, now: at(30 * SECOND_MS) })).toEqual({ rotated: false, overlapUntil: at(MINUTE_MS) });
      // Refused means untouched: both secrets of the first rotation still sign.
      expect((await startOne(ctx.store, deliveries[0]!.id, at(40 * SECOND_MS)))!.secrets).toEqual([NEW_SECRET, SECRET]);
      // Once the overlap has ended, the next rotation goes through.
      expect(await ctx.store.endpointRotateSecret({ id: ep.id, secret: THIRD, overlapMs: MINUTE_MS, now: at(MINUTE_MS) })).toEqual({ rotated: true, previousUntil: at(2 * MINUTE_MS) });
      // An overlap of 0 during an overlap stops every earlier secret at once.
      expect(await ctx.store.endpointRotateSecret({ id: ep.id, secret: FOURTH, overlapMs: 0, now: at(MINUTE_MS + SECOND_MS) })).toEqual({ rotated: true, previousUntil: at(MINUTE_MS + SECOND_MS) });
      expect((await startOne(ctx.store, deliveries[0]!.id, at(MINUTE_MS + 2 * SECOND_MS)))!.secrets).toEqual([FOURTH]);
      expect(await ctx.store.endpointRotateSecret({ id: '999999', secret: THIRD, overlapMs: 0, now: T0 })).toBeNull();
    });

    it('opens the breaker on a failure ratio, lets one probe through when it may, and closes on its success', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await ctx.store.messagePublish(publish())).deliveries[0]!.id);
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, ids[i]!, ep.id, 'outage', at(i * SECOND_MS));
      const elsewhere = await ctx.opened.openAnother();
      const waiting = (await startOne(elsewhere, ids[5]!, at(10 * SECOND_MS)))!;
      const opensAt = (BREAKER.minAttempts - 1) * SECOND_MS + BREAKER.openMs;
      expect(waiting.admission).toEqual({ kind: 'wait', waitMs: opensAt - 10 * SECOND_MS, reason: 'breaker_open' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ breakerState: 'open', failures: 5, successes: 0, breakerRetryAt: at(opensAt) });

      const probe = (await startOne(ctx.store, ids[5]!, at(opensAt)))!;
      expect(probe.admission?.kind).toBe('probe');
      const other = (await startOne(elsewhere, ids[6]!, at(opensAt + SECOND_MS)))!;
      expect(other.admission).toEqual({ kind: 'wait', waitMs: BREAKER.probeRecheckMs, reason: 'probing' });
      // The probe fails: open again, for twice as long.
      await record(ctx.store, ids[5]!, ep.id, 'outage', at(opensAt + SECOND_MS));
      expect((await startOne(ctx.store, ids[6]!, at(opensAt + 2 * SECOND_MS)))!.admission).toEqual({
        kind: 'wait',
        waitMs: 2 * BREAKER.openMs - SECOND_MS,
        reason: 'breaker_open',
      });
      const secondProbeAt = opensAt + SECOND_MS + 2 * BREAKER.openMs;
      expect((await startOne(ctx.store, ids[6]!, at(secondProbeAt)))!.admission?.kind).toBe('probe');
      await record(ctx.store, ids[6]!, ep.id, 'success', at(secondProbeAt + SECOND_MS));
      expect((await startOne(elsewhere, ids[6]!, at(secondProbeAt + 2 * SECOND_MS)))!.admission).toEqual({ kind: 'send' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({
        breakerState: 'closed',
        successes: 1,
        failures: 6,
        successRate: 1 / 7,
        lastSuccessAt: at(secondProbeAt + SECOND_MS),
        lastFailureAt: at(opensAt + SECOND_MS),
        failingSince: null,
      });
    });

    it('does not open the breaker on refused requests (4xx), which still count as failures', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish(publish());
      for (let i = 0; i < 10; i++) await record(ctx.store, deliveries[0]!.id, ep.id, 'failure', at(i * SECOND_MS));
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ breakerState: 'closed', failures: 10 });
    });

    it('disables an endpoint after failing for the streak’s length without a success, or at once when told (410)', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish(publish());
      const id = deliveries[0]!.id;
      expect(await record(ctx.store, id, ep.id, 'outage', T0)).toEqual({ disabledReason: null });
      expect(await record(ctx.store, id, ep.id, 'outage', at(FIVE_DAYS_MS - SECOND_MS))).toEqual({ disabledReason: null });
      const streak = await record(ctx.store, id, ep.id, 'outage', at(FIVE_DAYS_MS));
      expect(streak.disabledReason).toContain(T0.toISOString());
      expect(await ctx.store.endpointGet({ id: ep.id })).toMatchObject({ enabled: false, disabledReason: streak.disabledReason });
      // Disabled once: a later failure does not report it again.
      expect(await record(ctx.store, id, ep.id, 'outage', at(FIVE_DAYS_MS + SECOND_MS))).toEqual({ disabledReason: null });

      /** A new endpoint failing since T0, and its batch of attempts recorded together five days on. */
      const failingSinceT0 = async () => {
        const failing = await ctx.store.endpointAdd(endpoint());
        const delivery = (await ctx.store.messagePublish(publish())).deliveries.find((d) => d.endpointId === failing.id)!;
        await record(ctx.store, delivery.id, failing.id, 'outage', T0);
        const recordFiveDaysOn = (attempts: Parameters<typeof recordTogether>[3]) => recordTogether(ctx.store, delivery.id, failing.id, attempts, at(FIVE_DAYS_MS));
        return { failing, recordFiveDaysOn };
      };

      // A failure past the limit and a success recorded after it in one batch (answers of the
      // same moment): the streak ended, so the endpoint stays enabled.
      const { failing: recovering, recordFiveDaysOn: recordRecovering } = await failingSinceT0();
      const batch = await recordRecovering([
        { status: 'pending', attempt: 'outage' },
        { status: 'delivered', attempt: 'success' },
      ]);
      expect(batch).toEqual([{ disabledReason: null }, { disabledReason: null }]);
      expect(await ctx.store.endpointGet({ id: recovering.id })).toMatchObject({ enabled: true });
      expect(await ctx.store.endpointHealth({ id: recovering.id, breaker: BREAKER })).toMatchObject({ failingSince: null });

      // The same, then a 410 in the batch: the 410 disables, though the streak it ends did not.
      const { failing: goneLater, recordFiveDaysOn: recordGoneLater } = await failingSinceT0();
      const withGone = await recordGoneLater([
        { status: 'pending', attempt: 'outage' },
        { status: 'pending', attempt: 'success' },
        { status: 'failed', attempt: 'failure', disableReason: 'answered 410 Gone' },
      ]);
      expect(withGone).toEqual([{ disabledReason: null }, { disabledReason: null }, { disabledReason: 'answered 410 Gone' }]);
      expect(await ctx.store.endpointGet({ id: goneLater.id })).toMatchObject({ enabled: false, disabledReason: 'answered 410 Gone' });

      const gone = await ctx.store.endpointAdd(endpoint());
      const next = await ctx.store.messagePublish(publish());
      const goneDelivery = next.deliveries.find((d) => d.endpointId === gone.id)!;
      expect(await record(ctx.store, goneDelivery.id, gone.id, 'failure', T0, { disableReason: 'answered 410 Gone' })).toEqual({ disabledReason: 'answered 410 Gone' });
      expect(await ctx.store.endpointGet({ id: gone.id })).toMatchObject({ enabled: false, disabledReason: 'answered 410 Gone' });
    });

    it('starts an endpoint enabled again with a closed breaker and no streak, so its next failure does not disable it again', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish(publish());
      const id = deliveries[0]!.id;
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, id, ep.id, 'outage', at(i * SECOND_MS));
      const streak = await record(ctx.store, id, ep.id, 'outage', at(FIVE_DAYS_MS));
      expect(streak.disabledReason).toContain(T0.toISOString());
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ breakerState: 'open', failingSince: T0 });
      // Enabling one already enabled changes nothing of its health.
      const failing = await ctx.store.endpointAdd(endpoint());
      const other = (await ctx.store.messagePublish(publish())).deliveries.find((d) => d.endpointId === failing.id)!;
      await record(ctx.store, other.id, failing.id, 'outage', T0);
      await ctx.store.endpointSetEnabled({ id: failing.id, enabled: true, reason: null, now: at(SECOND_MS) });
      expect(await ctx.store.endpointHealth({ id: failing.id, breaker: BREAKER })).toMatchObject({ failingSince: T0 });

      const fixedAt = at(FIVE_DAYS_MS + DAY_MS);
      expect(await ctx.store.endpointSetEnabled({ id: ep.id, enabled: true, reason: null, now: fixedAt })).toMatchObject({ enabled: true });
      const health = await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER });
      // The history stays; the streak and the breaker start over.
      expect(health).toMatchObject({ breakerState: 'closed', failingSince: null, failures: BREAKER.minAttempts + 1, successes: 0 });
      expect((await startOne(ctx.store, id, fixedAt))!.admission).toEqual({ kind: 'send' });
      expect(await record(ctx.store, id, ep.id, 'outage', at(FIVE_DAYS_MS + DAY_MS + SECOND_MS))).toEqual({ disabledReason: null });
      expect(await ctx.store.endpointGet({ id: ep.id })).toMatchObject({ enabled: true });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ failingSince: at(FIVE_DAYS_MS + DAY_MS + SECOND_MS) });
    });

    it('starts an endpoint sent to a new URL with a closed breaker and no streak; other changes keep its health', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const { deliveries } = await ctx.store.messagePublish(publish());
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, deliveries[0]!.id, ep.id, 'outage', at(i * SECOND_MS));
      const failing = { breakerState: 'open', failingSince: T0, failures: BREAKER.minAttempts };
      await ctx.store.endpointUpdate({ id: ep.id, description: 'billing', url: ep.url, now: at(MINUTE_MS) });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject(failing);
      await ctx.store.endpointUpdate({ id: ep.id, url: 'https://hooks.example.com/fixed', now: at(2 * MINUTE_MS) });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ breakerState: 'closed', failingSince: null, failures: BREAKER.minAttempts });
      expect((await startOne(ctx.store, deliveries[0]!.id, at(2 * MINUTE_MS)))!.admission).toEqual({ kind: 'send' });
    });

    it('records a batch of attempts on several endpoints in order: counters, breaker and one disable each, a result per record', async () => {
      const a = await ctx.store.endpointAdd(endpoint());
      const b = await ctx.store.endpointAdd(endpoint());
      const c = await ctx.store.endpointAdd(endpoint());
      const ids: Record<string, string[]> = { [a.id]: [], [b.id]: [], [c.id]: [] };
      for (let i = 0; i < BREAKER.minAttempts; i++) {
        for (const d of (await ctx.store.messagePublish(publish())).deliveries) ids[d.endpointId]!.push(d.id);
      }
      const outages = ids[a.id]!.map((deliveryId) => ({ deliveryId, endpointId: a.id, status: 'pending' as const, attempt: 'outage' as const }));
      const results = await ctx.store.deliveryRecordMany({
        records: [
          outages[0]!,
          { deliveryId: ids[b.id]![0]!, endpointId: b.id, status: 'delivered', attempt: 'success' },
          ...outages.slice(1),
          { deliveryId: ids[b.id]![1]!, endpointId: b.id, status: 'failed', attempt: 'failure', disableReason: 'answered 410 Gone' },
          // After the 410 in the same batch: counted, but the endpoint is disabled once.
          { deliveryId: ids[b.id]![2]!, endpointId: b.id, status: 'failed', attempt: 'failure', disableReason: 'answered 410 Gone' },
          // Nothing sent: the delivery's status only.
          { deliveryId: ids[c.id]![0]!, endpointId: c.id, status: 'skipped', attempt: null },
        ],
        disableAfterMs: FIVE_DAYS_MS,
        breaker: BREAKER,
        now: at(SECOND_MS),
      });
      expect(results.map((r) => r.disabledReason)).toEqual([...outages.map(() => null), null, 'answered 410 Gone', null, null]);
      // Every outage of the batch counted for the breaker: minAttempts of them open it.
      expect(await ctx.store.endpointHealth({ id: a.id, breaker: BREAKER })).toMatchObject({ breakerState: 'open', failures: BREAKER.minAttempts, successes: 0 });
      expect(await ctx.store.endpointHealth({ id: b.id, breaker: BREAKER })).toMatchObject({ breakerState: 'closed', successes: 1, failures: 2, lastSuccessAt: at(SECOND_MS) });
      expect(await ctx.store.endpointGet({ id: b.id })).toMatchObject({ enabled: false, disabledReason: 'answered 410 Gone' });
      expect(await ctx.store.endpointHealth({ id: c.id, breaker: BREAKER })).toMatchObject({ successes: 0, failures: 0 });
      const statusOf = new Map((await ctx.store.deliveryList({ endpointId: b.id })).map((d) => [d.id, d.status]));
      expect(ids[b.id]!.slice(0, 3).map((id) => statusOf.get(id))).toEqual(['delivered', 'failed', 'failed']);
      expect((await ctx.store.deliveryList({ endpointId: c.id })).find((d) => d.id === ids[c.id]![0])!.status).toBe('skipped');
      expect(await ctx.store.deliveryRecordMany({ records: [], disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now: at(SECOND_MS) })).toEqual([]);
      // A batch with nothing sent (skips alone): the statuses, and no health row touched.
      const skips = ids[c.id]!.slice(1, 3).map((deliveryId) => ({ deliveryId, endpointId: c.id, status: 'skipped' as const, attempt: null }));
      expect(await ctx.store.deliveryRecordMany({ records: skips, disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now: at(2 * SECOND_MS) })).toEqual([
        { disabledReason: null },
        { disabledReason: null },
      ]);
      const skipped = new Map((await ctx.store.deliveryList({ endpointId: c.id })).map((d) => [d.id, d.status]));
      expect(ids[c.id]!.slice(0, 3).map((id) => skipped.get(id))).toEqual(['skipped', 'skipped', 'skipped']);
      expect(await ctx.store.endpointHealth({ id: c.id, breaker: BREAKER })).toMatchObject({ successes: 0, failures: 0, lastSuccessAt: null, lastFailureAt: null });
    });

    it('records two attempts of one delivery in one batch in order: its last status stands, both count', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const [delivery] = (await ctx.store.messagePublish(publish())).deliveries;
      const records = [
        { deliveryId: delivery!.id, endpointId: ep.id, status: 'pending' as const, attempt: 'outage' as const },
        { deliveryId: delivery!.id, endpointId: ep.id, status: 'delivered' as const, attempt: 'success' as const },
      ];
      expect(await ctx.store.deliveryRecordMany({ records, disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now: at(SECOND_MS) })).toEqual([
        { disabledReason: null },
        { disabledReason: null },
      ]);
      expect((await ctx.store.deliveryList({ endpointId: ep.id }))[0]!.status).toBe('delivered');
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ successes: 1, failures: 1, failingSince: null });
    });

    it('writes a deliver job’s success with its done: the delivery delivered and counted, the breaker closed, fenced off or not', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const other = await ctx.store.endpointAdd(endpoint({ url: 'https://other.example.com/in' }));
      await ctx.store.messagePublish(publish({ now: T0 }));
      await ctx.store.messagePublish(publish({ now: T0 }));
      // A message's deliveries side by side: a and b are the first message's (ep, other), c and d the second's.
      const [a, b, c, d] = await claim(ctx.store, { types: ['deliver'], now: at(SECOND_MS) });
      const delivery = (job: typeof a) => job!.payload as { deliveryId: string; endpointId: string };
      expect([a, b, c, d].map((job) => delivery(job).endpointId)).toEqual([ep.id, other.id, ep.id, other.id]);
      const delivered = (job: typeof a) => ({ ...delivery(job), breaker: BREAKER });
      const isFailing = async (job: typeof a) => (await startOne(ctx.store, delivery(job).deliveryId, at(SECOND_MS)))!.isFailing;
      expect(await isFailing(a)).toBe(false);
      // ep's breaker is open: its outages, on another delivery of its own. other's last attempt was refused (4xx): closed, but failing.
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, delivery(c).deliveryId, ep.id, 'outage', at(SECOND_MS));
      await record(ctx.store, delivery(d).deliveryId, other.id, 'failure', at(SECOND_MS));
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ breakerState: 'open', failures: BREAKER.minAttempts });
      expect(await isFailing(c)).toBe(true);
      expect(await isFailing(b)).toBe(true);

      // Successes alone (PostgreSQL's one statement). b's lease was taken over: its job stays
      // as it is, but its receiver has the message, so its success counts all the same.
      const written = await ctx.store.jobFinishMany({
        finishes: [
          { kind: 'done', id: a!.id, leaseToken: a!.leaseToken, resultJson: '{"status":200}', detailsJson: '{"status":200}', delivered: delivered(a) },
          { kind: 'done', id: b!.id, leaseToken: 'taken-over', delivered: delivered(b) },
        ],
        now: at(2 * SECOND_MS),
      });
      expect(written).toEqual([a!.id]);
      const statusOf = async () => new Map([...(await ctx.store.deliveryList({ endpointId: ep.id })), ...(await ctx.store.deliveryList({ endpointId: other.id }))].map((x) => [x.id, x.status]));
      let statuses = await statusOf();
      expect([a, b, c, d].map((job) => statuses.get(delivery(job).deliveryId))).toEqual(['delivered', 'delivered', 'pending', 'pending']);
      expect(await ctx.store.jobGet({ id: a!.id })).toMatchObject({ status: 'done', result: { status: 200 } });
      expect(await ctx.store.jobGet({ id: b!.id })).toMatchObject({ status: 'running' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({
        breakerState: 'closed',
        successes: 1,
        failures: BREAKER.minAttempts,
        lastSuccessAt: at(2 * SECOND_MS),
        failingSince: null,
      });
      expect(await ctx.store.endpointHealth({ id: other.id, breaker: BREAKER })).toMatchObject({ successes: 1, failures: 1, failingSince: null });
      expect(await isFailing(a)).toBe(false);
      // The same write again (a retry of a commit whose answer was lost): fenced off, and its
      // success is not counted twice.
      expect(
        await ctx.store.jobFinishMany({ finishes: [{ kind: 'done', id: a!.id, leaseToken: a!.leaseToken, delivered: delivered(a) }], now: at(2 * SECOND_MS) }),
      ).toEqual([]);
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ successes: 1 });

      // Beside other kinds of finish (one transaction), and beside a plain success: each delivery once.
      expect(
        await ctx.store.jobFinishMany({
          finishes: [
            { kind: 'done', id: c!.id, leaseToken: c!.leaseToken, delivered: delivered(c) },
            { kind: 'handedBack', id: b!.id, leaseToken: b!.leaseToken },
            { kind: 'done', id: d!.id, leaseToken: d!.leaseToken, delivered: delivered(d) },
          ],
          now: at(3 * SECOND_MS),
        }),
      ).toEqual([c!.id, b!.id, d!.id]);
      statuses = await statusOf();
      expect([a, b, c, d].map((job) => statuses.get(delivery(job).deliveryId))).toEqual(['delivered', 'delivered', 'delivered', 'delivered']);
      expect(await ctx.store.jobGet({ id: b!.id })).toMatchObject({ status: 'pending' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ successes: 2, lastSuccessAt: at(3 * SECOND_MS), backlog: 0 });
      expect(await ctx.store.endpointHealth({ id: other.id, breaker: BREAKER })).toMatchObject({ successes: 2, failures: 1, lastSuccessAt: at(3 * SECOND_MS), backlog: 0 });
    });

    for (const via of ['deliveryRecordMany', 'jobFinishMany'] as const)
    it(`folds a batch of successes into the breaker’s window as one at a time would: the same window, a new one, or closing (${via})`, async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) ids.push((await ctx.store.messagePublish(publish())).deliveries[0]!.id);
      const jobs = new Map((await claim(ctx.store, { types: ['deliver'], limit: 12, leaseMs: DAY_MS })).map((job) => [(job.payload as { deliveryId: string }).deliveryId, job]));
      const successes = async (from: number, count: number, now: Date) => {
        const records = ids.slice(from, from + count).map((deliveryId) => ({ deliveryId, endpointId: ep.id, status: 'delivered' as const, attempt: 'success' as const }));
        if (via === 'deliveryRecordMany') {
          expect(await ctx.store.deliveryRecordMany({ records, disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now })).toEqual(records.map(() => ({ disabledReason: null })));
          return;
        }
        const finishes = records.map(({ deliveryId }) => {
          const job = jobs.get(deliveryId)!;
          return { kind: 'done' as const, id: job.id, leaseToken: job.leaseToken, delivered: { deliveryId, endpointId: ep.id, breaker: BREAKER } };
        });
        expect(await ctx.store.jobFinishMany({ finishes, now })).toEqual(finishes.map((finish) => finish.id));
      };
      const breakerState = async () => (await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER }))!.breakerState;

      // In the window of two outages: 3 successes join it, so one more outage makes 3 of 6 and opens.
      await record(ctx.store, ids[0]!, ep.id, 'outage', at(0));
      await record(ctx.store, ids[1]!, ep.id, 'outage', at(SECOND_MS));
      await successes(2, 3, at(2 * SECOND_MS));
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({
        breakerState: 'closed',
        successes: 3,
        failures: 2,
        lastSuccessAt: at(2 * SECOND_MS),
        lastFailureAt: at(SECOND_MS),
        failingSince: null,
      });
      await record(ctx.store, ids[5]!, ep.id, 'outage', at(3 * SECOND_MS));
      expect(await breakerState()).toBe('open');

      // Open: a success (a late one, or the probe's) closes it with a window of its own. Two
      // successes, then outages: the third makes 3 of 5 and opens it, the second (2 of 4) does not.
      await successes(6, 2, at(4 * SECOND_MS));
      expect(await breakerState()).toBe('closed');
      await record(ctx.store, ids[8]!, ep.id, 'outage', at(5 * SECOND_MS));
      await record(ctx.store, ids[9]!, ep.id, 'outage', at(6 * SECOND_MS));
      expect(await breakerState()).toBe('closed');
      // A window that ended: successes start a new one, so the two outages before no longer count.
      await successes(10, 2, at(6 * SECOND_MS + BREAKER.windowMs));
      await record(ctx.store, ids[8]!, ep.id, 'outage', at(7 * SECOND_MS + BREAKER.windowMs));
      await record(ctx.store, ids[9]!, ep.id, 'outage', at(8 * SECOND_MS + BREAKER.windowMs));
      expect(await breakerState()).toBe('closed');
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ successes: 7, failures: 7, lastSuccessAt: at(6 * SECOND_MS + BREAKER.windowMs) });
    });

    it('starts a batch in order: a result per id, null for an unknown one, and one probe per half-open endpoint', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const ids: string[] = [];
      for (let i = 0; i < BREAKER.minAttempts + 2; i++) ids.push((await ctx.store.messagePublish(publish())).deliveries[0]!.id);
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, ids[i]!, ep.id, 'outage', at(i * SECOND_MS));
      const opensAt = (BREAKER.minAttempts - 1) * SECOND_MS + BREAKER.openMs;
      const [first, unknown, second] = await ctx.store.deliveryStartMany({ deliveryIds: [ids.at(-2)!, '999999', ids.at(-1)!], breaker: BREAKER, now: at(opensAt) });
      expect(first!.delivery.id).toBe(ids.at(-2));
      expect(first!.admission?.kind).toBe('probe');
      expect(unknown).toBeNull();
      expect(second!.delivery.id).toBe(ids.at(-1));
      expect(second!.admission).toEqual({ kind: 'wait', waitMs: BREAKER.probeRecheckMs, reason: 'probing' });
      expect(await ctx.store.deliveryStartMany({ deliveryIds: [], breaker: BREAKER, now: at(opensAt) })).toEqual([]);
    });

    it('takes nothing from the endpoint for a delivery handed to another job: no probe, no rate slot', async () => {
      // A half-open endpoint: the stale job's start must leave the probe to the delivery's own job.
      const ep = await ctx.store.endpointAdd(endpoint());
      const deliveries = [];
      for (let i = 0; i < BREAKER.minAttempts + 1; i++) deliveries.push((await ctx.store.messagePublish(publish())).deliveries[0]!);
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, deliveries[i]!.id, ep.id, 'outage', at(i * SECOND_MS));
      const opensAt = (BREAKER.minAttempts - 1) * SECOND_MS + BREAKER.openMs;
      const last = deliveries.at(-1)!;
      expect(last.jobId).not.toBeNull();
      const startAs = (store: StoreExecutor, deliveryId: string, jobId: string, now: Date) => one(store.deliveryStartMany({ deliveryIds: [deliveryId], jobIds: [jobId], breaker: BREAKER, now }));
      const stale = (await startAs(ctx.store, last.id, '999999', at(opensAt)))!;
      expect(stale.delivery.jobId).toBe(last.jobId);
      expect(stale.admission).toBeNull();
      expect((await startAs(ctx.store, last.id, last.jobId!, at(opensAt)))!.admission?.kind).toBe('probe');

      // A rate of one start a second: the stale start does not use it up.
      const limited = await ctx.store.endpointAdd(endpoint({ tenant: 'globex', rateLimit: { limit: 1, intervalMs: SECOND_MS } }));
      const [first, second] = [(await ctx.store.messagePublish(publish({ tenant: 'globex' }))).deliveries[0]!, (await ctx.store.messagePublish(publish({ tenant: 'globex' }))).deliveries[0]!];
      expect(first.endpointId).toBe(limited.id);
      const [staleStart, ownStart, nextStart] = await ctx.store.deliveryStartMany({
        deliveryIds: [first.id, first.id, second.id],
        jobIds: ['999999', first.jobId!, second.jobId!],
        breaker: BREAKER,
        now: at(opensAt),
      });
      expect(staleStart!.admission).toBeNull();
      expect(ownStart!.admission).toEqual({ kind: 'send' });
      expect(nextStart!.admission).toMatchObject({ kind: 'wait', reason: 'rate_limit' });

      // A removed endpoint: still null, so the stale job records no `skipped` over the other's work.
      await ctx.store.endpointRemove({ id: limited.id });
      expect((await startAs(ctx.store, second.id, '999999', at(opensAt)))!.admission).toBeNull();
      expect((await startAs(ctx.store, second.id, second.jobId!, at(opensAt)))!.admission).toEqual({ kind: 'send' });
    });

    it('lists a delivery whose job died as failed, counts the backlog, and recovers failed and skipped deliveries since a time', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const early = await ctx.store.messagePublish(publish({ now: T0 }));
      const failed = await ctx.store.messagePublish(publish({ now: at(MINUTE_MS) }));
      await ctx.store.endpointSetEnabled({ id: ep.id, enabled: false, reason: 'maintenance', now: at(MINUTE_MS) });
      const skipped = await ctx.store.messagePublish(publish({ now: at(2 * MINUTE_MS) }));
      await ctx.store.endpointSetEnabled({ id: ep.id, enabled: true, reason: null, now: at(3 * MINUTE_MS) });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 2 });

      // Both pending jobs die (the first delivered nothing either).
      const jobs = await claim(ctx.store, { types: ['deliver'], now: at(3 * MINUTE_MS) });
      await ctx.store.jobFinishMany({
        finishes: asFailed(jobs.map((job) => ({ ...job, error: 'answered 400', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }))),
        now: at(3 * MINUTE_MS),
      });
      expect((await ctx.store.deliveryList({ endpointId: ep.id })).map((d) => d.status)).toEqual(['failed', 'failed', 'skipped']);
      expect((await ctx.store.deliveryList({ endpointId: ep.id, status: 'failed' })).map((d) => d.lastError)).toEqual(['answered 400', 'answered 400']);
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 0 });

      const recovered = await ctx.store.deliveryRecover({ endpointId: ep.id, since: at(MINUTE_MS), job: publish().job, now: at(4 * MINUTE_MS) });
      expect(recovered).toEqual([failed.deliveries[0]!.id, skipped.deliveries[0]!.id]);
      const after = await ctx.store.deliveryList({ endpointId: ep.id });
      expect(after.map((d) => d.status)).toEqual(['failed', 'pending', 'pending']);
      expect(after[0]!.id).toBe(early.deliveries[0]!.id);
      for (const delivery of after.slice(1)) expect(await ctx.store.jobGet({ id: delivery.jobId! })).toMatchObject({ status: 'pending', type: 'deliver' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 2 });
      // The failed delivery went back on the job it had, its failure kept in that job's
      // history with the replay that recovery recorded; the skipped one had no job.
      expect(after[1]!.jobId).toBe(failed.deliveries[0]!.jobId);
      const history = (await ctx.store.jobGet({ id: after[1]!.jobId! }))!;
      expect(history.attemptsLog.map((a) => [a.outcome, a.error])).toEqual([['failed', 'answered 400']]);
      expect(history.replays).toEqual([expect.objectContaining({ by: 'recover', reason: expect.stringContaining(at(MINUTE_MS).toISOString()) })]);
      expect(after[2]!.jobId).not.toBeNull();
      // Asked again while both wait in line: nothing is recovered twice (a second job would send it twice).
      expect(await ctx.store.deliveryRecover({ endpointId: ep.id, since: at(MINUTE_MS), job: publish().job, now: at(5 * MINUTE_MS) })).toEqual([]);
      expect((await ctx.store.jobList({ type: 'deliver', limit: 100 })).length).toBe(3);
    });

    it('recovers a delivery whose job recorded its last attempt and is only finishing, and leaves one whose re-send is in line', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const finishing = await ctx.store.messagePublish(publish({ now: T0 }));
      const inLine = await ctx.store.messagePublish(publish({ now: T0 }));
      const [first, second] = await claim(ctx.store, { types: ['deliver'], now: at(SECOND_MS) });
      // Both answered 400 on their last attempt: the delivery's record commits before the job's outcome.
      for (const job of [first!, second!]) {
        const deliveryId = (job.payload as { deliveryId: string }).deliveryId;
        await ctx.store.deliveryRecordMany({ records: [{ deliveryId, endpointId: ep.id, status: 'failed', attempt: 'failure' }], disableAfterMs: FIVE_DAYS_MS, breaker: BREAKER, now: at(2 * SECOND_MS) });
      }
      // The second's job ends and is put back in line (a portal re-send): its delivery is pending again.
      await ctx.store.jobFinishMany({ finishes: asFailed([{ ...second!, error: 'answered 400', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]), now: at(2 * SECOND_MS) });
      await ctx.store.jobReplay({ ids: [second!.id], reason: 're-sent', by: 'portal', now: at(3 * SECOND_MS) });
      expect((await ctx.store.deliveryList({ endpointId: ep.id })).map((d) => d.status)).toEqual(['failed', 'pending']);

      const recovered = await ctx.store.deliveryRecover({ endpointId: ep.id, since: T0, job: publish().job, now: at(4 * SECOND_MS) });
      expect(recovered).toEqual([finishing.deliveries[0]!.id]);
      const [finishingAfter, inLineAfter] = await ctx.store.deliveryList({ endpointId: ep.id });
      expect(finishingAfter).toMatchObject({ status: 'pending' });
      expect(finishingAfter!.jobId).not.toBe(first!.id); // a new job: the running one sends nothing more
      expect(inLineAfter).toMatchObject({ status: 'pending', jobId: inLine.deliveries[0]!.jobId });
      expect((await ctx.store.jobList({ type: 'deliver', limit: 100 })).length).toBe(3);
    });

    it('fails a delivery whose job dies without a recorded outcome (cancelled, lease lost on its last attempt), so no backlog counts it', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const cancelled = await ctx.store.messagePublish(publish({ now: T0 }));
      const lost = await ctx.store.messagePublish(publish({ now: T0, job: jobInsert({ type: 'deliver', maxAttempts: 1 }) }));
      const waiting = await ctx.store.messagePublish(publish({ now: T0 }));
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 3 });
      expect((await ctx.store.endpointStats({ topN: 1 })).backlog).toBe(3);

      expect(await ctx.store.jobCancel({ id: cancelled.deliveries[0]!.jobId!, now: at(SECOND_MS) })).toMatchObject({ status: 'dead' });
      const [claimed] = await claim(ctx.store, { types: ['deliver'], limit: 1, leaseMs: 30 * SECOND_MS, now: at(SECOND_MS) });
      expect(claimed!.id).toBe(lost.deliveries[0]!.jobId);
      expect((await ctx.store.jobRescue({ now: at(MINUTE_MS) })).dead).toEqual([claimed!.id]);

      const statuses = Object.fromEntries((await ctx.store.deliveryList({ endpointId: ep.id })).map((d) => [d.id, d.status]));
      expect(statuses).toEqual({ [cancelled.deliveries[0]!.id]: 'failed', [lost.deliveries[0]!.id]: 'failed', [waiting.deliveries[0]!.id]: 'pending' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 1 });
      expect(await ctx.store.endpointStats({ topN: 1 })).toMatchObject({ backlog: 1, topBacklog: [{ endpointId: ep.id, backlog: 1 }] });
      // Recover puts both back on their own jobs: pending again, and counted.
      expect(await ctx.store.deliveryRecover({ endpointId: ep.id, since: T0, job: publish().job, now: at(2 * MINUTE_MS) })).toHaveLength(2);
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 3 });
    });

    it('puts a replayed deliver job\'s delivery back to pending, counted in the backlog, and touches none for another job', async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const failed = await ctx.store.messagePublish(publish({ now: T0 }));
      const skipped = await ctx.store.messagePublish(publish({ now: T0 }));
      const [first, second] = await claim(ctx.store, { types: ['deliver'], now: at(SECOND_MS) });
      expect([first!.id, second!.id]).toEqual([failed.deliveries[0]!.jobId, skipped.deliveries[0]!.jobId]);
      // One answered 400 on its last attempt (dead); the other found its endpoint disabled (done, skipped).
      await ctx.store.deliveryRecordMany({
        records: [
          { deliveryId: failed.deliveries[0]!.id, endpointId: ep.id, status: 'failed', attempt: 'failure' },
          { deliveryId: skipped.deliveries[0]!.id, endpointId: ep.id, status: 'skipped', attempt: null },
        ],
        disableAfterMs: FIVE_DAYS_MS,
        breaker: BREAKER,
        now: at(2 * SECOND_MS),
      });
      await ctx.store.jobFinishMany({
        finishes: [
          ...asFailed([{ ...first!, error: 'answered 400', outcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }]),
          ...asDone([{ id: second!.id, leaseToken: second!.leaseToken! }]),
        ],
        now: at(2 * SECOND_MS),
      });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 0 });
      const other = (await ctx.store.jobInsertMany({ jobs: [jobInsert({ type: 'send_email' })], now: at(2 * SECOND_MS) }))[0]!.job;

      // A re-send (dead, replayed) and a forced replay (done): both wait again, and so do their deliveries.
      expect(await ctx.store.jobReplay({ ids: [first!.id, other.id], reason: 're-sent', by: 'portal', now: at(3 * SECOND_MS) })).toEqual([first!.id]);
      expect(await ctx.store.jobReplay({ ids: [second!.id], force: true, reason: 'again', by: 'cli', now: at(3 * SECOND_MS) })).toEqual([second!.id]);
      const statuses = Object.fromEntries((await ctx.store.deliveryList({ endpointId: ep.id })).map((d) => [d.id, d.status]));
      expect(statuses).toEqual({ [failed.deliveries[0]!.id]: 'pending', [skipped.deliveries[0]!.id]: 'pending' });
      expect(await ctx.store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 2 });
      expect((await ctx.store.endpointStats({ topN: 1 })).backlog).toBe(2);
    });

    it('settles, on upgrade to migration 0013, deliveries left pending by jobs that had ended, and counts the rest as the backlog', async () => {
      // Migration 0012's schema: the endpoint as 0012's code wrote it (today's endpointAdd
      // returns a column of 0017), its messages through the Store (0013 changes none of the
      // columns they write).
      await atSchemaVersion(harness, 12, async ({ store, exec, query }) => {
        await exec(oldCodeEndpointInsert(harness, 'https://hooks.example.com/in'));
        const ep = { id: String((await query('SELECT id FROM mailroom_endpoint'))[0]!.id) };
        await exec(`INSERT INTO mailroom_endpoint_health (endpoint_id) VALUES (${ep.id})`);
        const [dead, done, waiting] = [await store.messagePublish(publish()), await store.messagePublish(publish()), await store.messagePublish(publish())];
        const jobOf = (published: typeof dead) => published.deliveries[0]!.jobId!;
        // Jobs that ended without the deliver task recording it, as 0012's code could leave them.
        await exec(`UPDATE mailroom_job SET status = 'dead' WHERE id = ${jobOf(dead)}`);
        await exec(`UPDATE mailroom_job SET status = 'done' WHERE id = ${jobOf(done)}`);

        await store.migrate();
        const statuses = Object.fromEntries((await store.deliveryList({ endpointId: ep.id })).map((d) => [d.jobId, d.status]));
        expect(statuses).toEqual({ [jobOf(dead)]: 'failed', [jobOf(done)]: 'delivered', [jobOf(waiting)]: 'pending' });
        expect(await store.endpointHealth({ id: ep.id, breaker: BREAKER })).toMatchObject({ backlog: 1 });
        expect(await store.endpointStats({ topN: 1 })).toMatchObject({ backlog: 1, topBacklog: [{ endpointId: ep.id, backlog: 1 }] });
      });
    });

    it('records, on upgrade to migration 0017, who disabled each endpoint by the reason Mailroom wrote; any other reason is the operator\'s', async () => {
      await atSchemaVersion(harness, 16, async ({ store, exec }) => {
        const sql = sqlLiterals(harness);
        const [on, off] = [sql.bool(true), sql.bool(false)];
        const reasons: Array<[boolean, string | null]> = [
          [true, null],
          [false, 'disabled by the tenant in the portal'],
          [false, 'the endpoint answered 410 Gone'],
          [false, 'failing without a success since 2026-11-01T00:00:00.000Z'],
          [false, 'unpaid invoice'],
          [false, null],
          [false, 'failing without a success since whenever'],
          [false, 'FAILING WITHOUT A SUCCESS SINCE 2026-11-01T00:00:00.000Z'],
        ];
        for (const [enabled, reason] of reasons) await exec(oldCodeEndpointInsert(harness, 'https://hooks.example.com/in', enabled ? undefined : { reason }));
        await store.migrate();
        const listed = await store.endpointList({ tenant: 'acme' });
        expect(listed.map((e) => e.disabledBy)).toEqual([null, 'tenant', 'deliveries', 'deliveries', 'operator', 'operator', 'operator', 'operator']);

        // Code of 0016 still runs against this schema and never writes disabled_by: its
        // disable of the tenant's endpoint is the operator's, its enable clears it.
        const tenantDisabled = listed[1]!.id;
        await exec(`UPDATE mailroom_endpoint SET enabled = ${off}, disabled_reason = 'fraud' WHERE id = ${tenantDisabled}`);
        expect(await store.endpointGet({ id: tenantDisabled })).toMatchObject({ enabled: false, disabledBy: 'operator', disabledReason: 'fraud' });
        expect(await store.endpointSetEnabled({ id: tenantDisabled, enabled: true, reason: null, by: 'tenant' })).toBeNull();
        await exec(`UPDATE mailroom_endpoint SET enabled = ${on}, disabled_reason = NULL WHERE id = ${tenantDisabled}`);
        await exec(`UPDATE mailroom_endpoint SET enabled = ${off}, disabled_reason = 'the endpoint answered 410 Gone' WHERE id = ${tenantDisabled}`);
        expect((await store.endpointGet({ id: tenantDisabled }))!.disabledBy).toBe('operator');
      });
    });

    it("lets the tenant's switch disable only an enabled endpoint and enable only what the tenant or its deliveries disabled", async () => {
      const ep = await ctx.store.endpointAdd(endpoint());
      const asTenant = (enabled: boolean) => ctx.store.endpointSetEnabled({ id: ep.id, enabled, reason: enabled ? null : 'disabled by the tenant in the portal', by: 'tenant' });
      expect(await asTenant(false)).toMatchObject({ enabled: false, disabledBy: 'tenant' });
      expect(await asTenant(false)).toBeNull(); // disabled already: nothing written
      expect(await asTenant(true)).toMatchObject({ enabled: true, disabledBy: null, disabledReason: null });
      await ctx.store.endpointSetEnabled({ id: ep.id, enabled: false, reason: 'unpaid' });
      expect(await asTenant(true)).toBeNull();
      expect(await asTenant(false)).toBeNull();
      expect(await ctx.store.endpointGet({ id: ep.id })).toMatchObject({ enabled: false, disabledBy: 'operator', disabledReason: 'unpaid' });
    });

    it('counts endpoints by state and breaker, with the total backlog and the endpoints most behind', async () => {
      const [a, b, off] = [await ctx.store.endpointAdd(endpoint()), await ctx.store.endpointAdd(endpoint({ tenant: 'globex' })), await ctx.store.endpointAdd(endpoint())];
      await ctx.store.endpointSetEnabled({ id: off.id, enabled: false, reason: 'paused', now: T0 });
      await ctx.store.messagePublish(publish());
      await ctx.store.messagePublish(publish());
      await ctx.store.messagePublish(publish({ tenant: 'globex' }));
      for (let i = 0; i < BREAKER.minAttempts; i++) await record(ctx.store, '1', b.id, 'outage', at(i * SECOND_MS));
      expect(await ctx.store.endpointStats({ topN: 1 })).toEqual({
        enabled: 2,
        disabled: 1,
        breakers: { closed: 2, open: 1, half_open: 0 },
        backlog: 3,
        topBacklog: [{ endpointId: a.id, backlog: 2 }],
      });
      expect((await ctx.store.endpointStats({ topN: 0 })).topBacklog).toEqual([]);
    });

    it('holds an endpoint to its own rateLimit in any window, across connections, without taking the breaker’s probe', async () => {
      const limited = await ctx.store.endpointAdd(endpoint({ rateLimit: { limit: 2, intervalMs: SECOND_MS } }));
      const free = await ctx.store.endpointAdd(endpoint());
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push((await ctx.store.messagePublish(publish())).deliveries.find((d) => d.endpointId === limited.id)!.id);
      const elsewhere = await ctx.opened.openAnother();
      const admission = async (store: StoreExecutor, id: string, ms: number) => (await startOne(store, id, at(ms)))!.admission;
      expect(await admission(ctx.store, ids[0]!, 0)).toEqual({ kind: 'send' });
      expect(await admission(elsewhere, ids[1]!, 100)).toEqual({ kind: 'send' });
      expect(await admission(ctx.store, ids[2]!, 200)).toEqual({ kind: 'wait', waitMs: 800, reason: 'rate_limit' });
      // Another endpoint of the tenant is not held back.
      const other = (await ctx.store.deliveryList({ endpointId: free.id }))[0]!;
      expect(await admission(elsewhere, other.id, 200)).toEqual({ kind: 'send' });
      expect(await admission(elsewhere, ids[2]!, SECOND_MS)).toEqual({ kind: 'send' });
      expect(await admission(ctx.store, ids[2]!, SECOND_MS + 50)).toEqual({ kind: 'wait', waitMs: 50, reason: 'rate_limit' });
    });
  });
}
