// Protection of customers' endpoints on both stores, on a pinned clock: the circuit breaker
// (a receiver down for an hour gets a handful of requests, not one per queued delivery, and
// everything arrives once it is back), auto-disable after a failure streak and recovery,
// per-endpoint concurrency, and publish inside a transaction that rolls back.

import { afterEach, describe, expect, it } from 'vitest';
import type { Mailroom } from '../../src/mailroom.js';
import type { DeliverPayload } from '../../src/tasks/deliver/deliver-task.js';
import type { Worker } from '../../src/worker/worker.js';
import { storeHarnesses } from '../harness/stores.js';
import { jsonLines, logSink } from '../harness/log-sink.js';
import { waitFor } from '../harness/wait.js';
import { answer, closeOutgoingMailrooms, openOutgoingMailroom, pinnedClock, startVerifyingReceiver } from './outgoing-kit.js';
import type { VerifyingReceiver } from './outgoing-kit.js';

const MINUTE_MS = 60_000;
const DAY_MS = 24 * 3_600_000;

/**
 * One step of simulated time: the clock moves on, every delivery that waits (for the
 * breaker or a retry) is made due now, and the worker runs until nothing is due.
 */
async function step(mr: Mailroom, worker: Worker, clock: ReturnType<typeof pinnedClock>, ms: number): Promise<void> {
  clock.advance(ms);
  await mr.retryNow({ type: 'deliver', includeDelayed: true });
  await worker.drained();
}

/**
 * Waits until `count` deliver jobs are done. Not the receivers' request counts: a request
 * retried after an outage (a reset under load) counts twice there, while a snoozed job
 * still carries its first claim's startedAt until it is claimed again.
 */
async function waitForDelivered(mr: Mailroom, count: number): Promise<void> {
  await waitFor(async () => (await mr.listJobs({ type: 'deliver', status: 'done' })).length === count, { timeoutMs: 10_000 });
}

/**
 * When each endpoint's deliveries started (the store's clock at the claim that sent them),
 * sorted. Limits govern starts; a receiver's arrival times add the first request's
 * connection and first-statement costs, tens of ms on PostgreSQL, which no limit sees.
 */
async function startsByEndpoint(mr: Mailroom): Promise<Map<string, number[]>> {
  const starts = new Map<string, number[]>();
  for (const job of await mr.listJobs({ type: 'deliver' })) {
    const { endpointId } = job.payload as DeliverPayload;
    starts.set(endpointId, [...(starts.get(endpointId) ?? []), job.startedAt!.getTime()]);
  }
  for (const at of starts.values()) at.sort((a, b) => a - b);
  return starts;
}

describe.each(storeHarnesses)('outgoing protection ($name)', (harness) => {
  const receivers: VerifyingReceiver[] = [];
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await closeOutgoingMailrooms(harness);
  });

  async function receiver(): Promise<VerifyingReceiver> {
    const started = await startVerifyingReceiver();
    receivers.push(started);
    return started;
  }

  it.skipIf(!harness.isAvailable)('sends a handful of requests to a receiver down for an hour, then delivers everything once it is back', async () => {
    const clock = pinnedClock();
    const mr = await openOutgoingMailroom(harness, { endpoints: { clock: () => clock.now, breaker: { probeRecheckMs: 20 } } });
    const target = await receiver();
    const endpoint = await mr.endpoints.add({ tenant: 'acme', url: target.url });
    target.secrets.push(endpoint.secret);
    target.respond = answer(503);
    const messages = [];
    for (let i = 0; i < 40; i++) messages.push((await mr.publish('invoice.paid', { invoice: i }, { tenant: 'acme' })).message);
    const worker = mr.work({ concurrency: 20 });
    await worker.drained();
    // Before the breaker opens: the failures that open it (5) and what was already in
    // flight to the endpoint then (its concurrency, 10), at most.
    const beforeOpen = target.received.length;
    expect(beforeOpen).toBeGreaterThanOrEqual(5);
    expect(beforeOpen).toBeLessThanOrEqual(5 - 1 + 10);
    // One simulated hour in 3-minute steps: one probe per open period (1, 2, 4, 8, 16 minutes).
    for (let elapsed = 0; elapsed < 60 * MINUTE_MS; elapsed += 3 * MINUTE_MS) await step(mr, worker, clock, 3 * MINUTE_MS);
    const whileDown = target.received.length;
    expect(whileDown - beforeOpen).toBeGreaterThanOrEqual(4);
    expect(whileDown - beforeOpen).toBeLessThanOrEqual(6);
    expect(await mr.endpoints.health(endpoint.id)).toMatchObject({ breakerState: 'open', successes: 0, backlog: 40 });

    target.respond = answer(204);
    await waitFor(
      async () => {
        await step(mr, worker, clock, 10 * MINUTE_MS);
        return (await mr.deliveries.list({ endpointId: endpoint.id, status: 'delivered' })).length === messages.length;
      },
      { timeoutMs: 60_000, intervalMs: 1, description: 'every delivery to arrive once the receiver is back' },
    );
    const delivered = target.received.slice(whileDown);
    expect(new Set(delivered.map((r) => r.headers['webhook-id']))).toEqual(new Set(messages.map((m) => m.id)));
    expect(target.received.every((r) => r.verifiedWith === endpoint.secret)).toBe(true);
    expect(await mr.endpoints.health(endpoint.id)).toMatchObject({ breakerState: 'closed', backlog: 0, failingSince: null });
  });

  it.skipIf(!harness.isAvailable)('disables an endpoint failing for five days with a reason and a log line, skips it, and recovers after it is enabled', async () => {
    const clock = pinnedClock();
    const log = logSink();
    // A breaker that never opens here: this is about the failure streak. Retries an hour
    // apart (real time) mean an attempt happens only when a step makes it due: with the
    // kit's 20 ms schedule one could be recorded at the old clock while a step advanced
    // it, and the step's drained() would return with the next retry still 20 ms away.
    const mr = await openOutgoingMailroom(harness, {
      log,
      endpoints: { clock: () => clock.now, breaker: { minAttempts: 1_000_000 }, maxAttempts: 100, retryScheduleMs: [60 * MINUTE_MS] },
    });
    const target = await receiver();
    const endpoint = await mr.endpoints.add({ tenant: 'acme', url: target.url });
    target.secrets.push(endpoint.secret);
    target.respond = answer(500);
    const worker = mr.work();
    const first = await mr.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
    // The first failure, recorded at the clock's start, begins the streak.
    await worker.drained();
    expect((await mr.endpoints.health(endpoint.id)).failures).toBe(1);
    await step(mr, worker, clock, DAY_MS);
    expect((await mr.endpoints.health(endpoint.id)).failures).toBe(2);
    expect((await mr.endpoints.get(endpoint.id))!.enabled).toBe(true);
    await step(mr, worker, clock, 4 * DAY_MS);
    const disabled = (await mr.endpoints.get(endpoint.id))!;
    expect(disabled.enabled).toBe(false);
    expect(disabled.disabledReason).toContain('2030-01-01T00:00:00.000Z');
    expect(jsonLines(log.text()).filter((line) => line.msg === 'endpoint disabled')).toEqual([
      expect.objectContaining({ level: 40, endpointId: endpoint.id, tenant: 'acme', reason: disabled.disabledReason }),
    ]);
    const requestsBefore = target.received.length;

    // While disabled: the waiting delivery and a new message are skipped, nothing is sent.
    await step(mr, worker, clock, MINUTE_MS);
    const second = await mr.publish('invoice.paid', { invoice: 2 }, { tenant: 'acme' });
    await worker.drained();
    expect(second.deliveries.map((d) => d.status)).toEqual(['skipped']);
    await waitFor(async () => (await mr.deliveries.list({ endpointId: endpoint.id, status: 'skipped' })).length === 2);
    // (A delivery's record commits just before its job's outcome: wait for the job that skipped it to be done.)
    await waitFor(async () => (await mr.getJob(first.deliveries[0]!.jobId!))!.status === 'done', { description: 'the skipping job done' });
    expect(target.received).toHaveLength(requestsBefore);
    await expect(mr.endpoints.recover(endpoint.id, { since: new Date(0) })).rejects.toMatchObject({ code: 'MR_ERR_ENDPOINT_DISABLED' });

    target.respond = answer(204);
    await mr.endpoints.enable(endpoint.id);
    const recovered = await mr.endpoints.recover(endpoint.id, { since: new Date(0) });
    expect(recovered.count).toBe(2);
    await waitFor(async () => (await mr.deliveries.list({ endpointId: endpoint.id, status: 'delivered' })).length === 2);
    const arrived = target.received.slice(requestsBefore).map((r) => r.headers['webhook-id']);
    expect(arrived.sort()).toEqual([first.message.id, second.message.id].sort());
    expect(target.received.slice(requestsBefore).every((r) => r.verifiedWith === endpoint.secret)).toBe(true);
    // The first delivery went back on its own job: the 500s that disabled the endpoint, the
    // skip while it was disabled and the success after it read as one history.
    // (A delivery's record commits just before its job's outcome: wait for the job.)
    await waitFor(async () => (await mr.getJob(first.deliveries[0]!.jobId!))!.status === 'done', { description: 'the recovered job done' });
    const firstJob = (await mr.getJob(first.deliveries[0]!.jobId!))!;
    expect(firstJob.attemptsLog.map((a) => a.outcome)).toEqual([...Array(firstJob.attemptsLog.length - 2).fill('failed'), 'done', 'done']);
    expect(firstJob.attemptsLog.length).toBeGreaterThanOrEqual(4);
    expect(firstJob.replays).toEqual([expect.objectContaining({ by: 'recover' })]);
  });

  it.skipIf(!harness.isAvailable)('keeps at most the configured number of deliveries in flight to one endpoint', async () => {
    const mr = await openOutgoingMailroom(harness, { endpoints: { concurrency: 2 } });
    const slow = await receiver();
    const endpoint = await mr.endpoints.add({ tenant: 'acme', url: slow.url });
    slow.secrets.push(endpoint.secret);
    let inFlight = 0;
    let most = 0;
    slow.respond = (_request, res) => {
      most = Math.max(most, ++inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(204);
        res.end();
      }, 30);
    };
    for (let i = 0; i < 8; i++) await mr.publish('invoice.paid', { i }, { tenant: 'acme' });
    mr.work({ concurrency: 8 });
    await waitFor(async () => (await mr.deliveries.list({ endpointId: endpoint.id, status: 'delivered' })).length === 8, { timeoutMs: 10_000 });
    expect(most).toBe(2);
  });

  it.skipIf(!harness.isAvailable)('starts at most `endpoints.rate` deliveries per interval to one endpoint, each endpoint on its own', async () => {
    const mr = await openOutgoingMailroom(harness, { endpoints: { rate: { limit: 2, intervalMs: 400 } } });
    const [first, second] = [await receiver(), await receiver()];
    for (const [tenant, target] of [['first', first], ['second', second]] as const) {
      target.secrets.push((await mr.endpoints.add({ tenant, url: target.url })).secret);
      for (let i = 0; i < 4; i++) await mr.publish('invoice.paid', { i }, { tenant });
    }
    mr.work({ concurrency: 8 });
    await waitForDelivered(mr, 8);
    expect([...first.received, ...second.received].every((r) => r.verifiedWith !== null)).toBe(true);
    const starts = await startsByEndpoint(mr);
    expect(starts.size).toBe(2);
    for (const at of starts.values()) {
      // The third and fourth wait for the window: 400 ms after the first and second.
      expect(at[2]! - at[0]!).toBeGreaterThanOrEqual(399);
      expect(at[3]! - at[1]!).toBeGreaterThanOrEqual(399);
    }
    // Two endpoints are limited each on its own: both started their first two at once.
    const [firstStarts, secondStarts] = [...starts.values()];
    expect(Math.abs(firstStarts![1]! - secondStarts![1]!)).toBeLessThan(350);
  });

  it.skipIf(!harness.isAvailable)('holds an endpoint to its own rateLimit while another endpoint of the tenant goes at full speed', async () => {
    const mr = await openOutgoingMailroom(harness);
    const [limited, free] = [await receiver(), await receiver()];
    const limitedEndpoint = await mr.endpoints.add({ tenant: 'acme', url: limited.url, rateLimit: { limit: 2, intervalMs: 400 } });
    const freeEndpoint = await mr.endpoints.add({ tenant: 'acme', url: free.url });
    limited.secrets.push(limitedEndpoint.secret);
    free.secrets.push(freeEndpoint.secret);
    for (let i = 0; i < 4; i++) await mr.publish('invoice.paid', { i }, { tenant: 'acme' });
    mr.work({ concurrency: 8 });
    await waitForDelivered(mr, 8);
    const starts = await startsByEndpoint(mr);
    const [limitedAt, freeAt] = [starts.get(limitedEndpoint.id)!, starts.get(freeEndpoint.id)!];
    // A snoozed delivery's start is the claim that sent it; its admission is a few ms later.
    expect(limitedAt[2]! - limitedAt[0]!).toBeGreaterThanOrEqual(350);
    expect(limitedAt[3]! - limitedAt[1]!).toBeGreaterThanOrEqual(350);
    expect(freeAt[3]! - freeAt[0]!).toBeLessThan(350);
    expect([...limited.received, ...free.received].every((r) => r.verifiedWith !== null)).toBe(true);
  });

  it.skipIf(!harness.isAvailable)('leaves no message and no job when publish runs inside a transaction that rolls back', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    await mr.endpoints.add({ tenant: 'acme', url: target.url });
    const failure = new Error('the order was not saved');
    if (harness.capabilities.syncTransactions) {
      expect(() =>
        mr.transaction((tx) => {
          tx.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
          throw failure;
        }),
      ).toThrow(failure);
    } else {
      await expect(
        mr.transaction(async (tx) => {
          await tx.publish('invoice.paid', { invoice: 1 }, { tenant: 'acme' });
          throw failure;
        }),
      ).rejects.toBe(failure);
      // And publish({ client }) on the transaction's own client (the outbox API).
      await expect(
        mr.transaction(async (tx) => {
          await mr.publish('invoice.paid', { invoice: 2 }, { tenant: 'acme', client: tx.client });
          throw failure;
        }),
      ).rejects.toBe(failure);
    }
    expect(await mr.messages.list({ tenant: 'acme' })).toEqual([]);
    expect(await mr.listJobs({ type: 'deliver' })).toEqual([]);
  });
});
