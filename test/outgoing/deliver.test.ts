// Outgoing deliveries end to end on both stores: publish, a real worker, and loopback
// receivers that verify every request with the official `standardwebhooks` library. Each
// case is one answer a customer's receiver can give (2xx, 500s, 429 with Retry-After, a
// hang, a slow or huge body, a redirect, 410) and what becomes of the delivery.

import { afterEach, describe, expect, it } from 'vitest';
import type { Mailroom } from '../../src/mailroom.js';
import type { DeliveryStatus } from '../../src/core/outgoing-types.js';
import { storeHarnesses } from '../harness/stores.js';
import { logSink } from '../harness/log-sink.js';
import { waitFor, waitForEvent } from '../harness/wait.js';
import { DEFAULT_BREAKER_SETTINGS } from '../../src/core/circuit-breaker.js';
import { DELIVERED_WITH_DONE } from '../../src/core/task-registry.js';
import type { WorkerTaskContext } from '../../src/core/task-registry.js';
import type { DeliveryRecord } from '../../src/store/outgoing-store.js';
import { answer, closeOutgoingMailrooms, openOutgoingMailroom, startVerifyingReceiver } from './outgoing-kit.js';
import type { VerifyingReceiver } from './outgoing-kit.js';

const receivers: VerifyingReceiver[] = [];

async function receiver(): Promise<VerifyingReceiver> {
  const started = await startVerifyingReceiver();
  receivers.push(started);
  return started;
}

/** An endpoint for `tenant` at the receiver, whose secret the receiver then holds. */
async function endpointAt(mr: Mailroom, target: VerifyingReceiver, tenant = 'acme') {
  const endpoint = await mr.endpoints.add({ tenant, url: target.url });
  target.secrets.push(endpoint.secret);
  return endpoint;
}

/**
 * The message's (one) delivery once it is `status` and its job has ended to match: the
 * task records the delivery just before the job's outcome (with its attempt's details)
 * is written.
 */
async function deliveryStatus(mr: Mailroom, messageId: string, status: Extract<DeliveryStatus, 'delivered' | 'failed'>, timeoutMs = 10_000) {
  const jobStatus = status === 'delivered' ? 'done' : 'dead';
  return waitFor(
    async () => {
      const [delivery] = await mr.deliveries.list({ messageId });
      return delivery?.status === status && (await mr.getJob(delivery.jobId!))?.status === jobStatus && delivery;
    },
    { timeoutMs, description: `message ${messageId}'s delivery to be ${status}` },
  );
}

describe.each(storeHarnesses)('outgoing deliveries ($name)', (harness) => {
  afterEach(async () => {
    for (const r of receivers.splice(0)) await r.close();
    await closeOutgoingMailrooms(harness);
  });

  it.skipIf(!harness.isAvailable)('delivers a signed message that standardwebhooks verifies, under one webhook-id at every endpoint', async () => {
    const mr = await openOutgoingMailroom(harness);
    const [first, second] = [await receiver(), await receiver()];
    await endpointAt(mr, first);
    await endpointAt(mr, second);
    mr.work();
    const { message } = await mr.publish('invoice.paid', { invoice: 7, total: 4200 }, { tenant: 'acme' });
    await waitFor(async () => (await mr.deliveries.list({ messageId: message.id, status: 'delivered' })).length === 2);
    // The webhook-id a receiver got finds the message again; another id finds none.
    expect(await mr.messages.get(message.id)).toEqual(message);
    for (const other of [String(Number(message.id) + 1), '0', 'msg_1']) expect(await mr.messages.get(other)).toBeNull();
    for (const target of [first, second]) {
      const [got] = target.received;
      expect(got!.verifiedWith).toBe(target.secrets[0]);
      expect(got!.headers['webhook-id']).toBe(message.id);
      expect(JSON.parse(got!.body.toString())).toEqual({ type: 'invoice.paid', timestamp: message.createdAt.toISOString(), data: { invoice: 7, total: 4200 } });
      expect(Math.abs(Number(got!.headers['webhook-timestamp']) * 1000 - got!.receivedAt)).toBeLessThan(2_000);
    }
    const [delivery] = await mr.deliveries.list({ messageId: message.id });
    const job = await waitFor(async () => {
      const found = (await mr.getJob(delivery!.jobId!))!;
      return found.status === 'done' && found;
    });
    expect(job.attemptsLog.at(-1)!.details).toMatchObject({ status: 204 });
  });

  it.skipIf(!harness.isAvailable)('survives 500s: retries on the schedule under the same webhook-id, each attempt freshly signed', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    await endpointAt(mr, target);
    target.respond = (_request, res) => {
      res.writeHead(target.received.length <= 2 ? 500 : 200);
      res.end(target.received.length <= 2 ? 'database is down' : 'ok');
    };
    mr.work();
    const { message } = await mr.publish('invoice.paid', { invoice: 8 }, { tenant: 'acme' });
    const delivery = await deliveryStatus(mr, message.id, 'delivered');
    expect(target.received).toHaveLength(3);
    expect(target.received.every((r) => r.verifiedWith !== null && r.headers['webhook-id'] === message.id)).toBe(true);
    const job = (await mr.getJob(delivery.jobId!))!;
    expect(job.attemptsLog.map((a) => a.outcome)).toEqual(['failed', 'failed', 'done']);
    expect(job.attemptsLog[0]!.details).toMatchObject({ status: 500, excerpt: 'database is down' });
    expect(job.attemptsLog[0]!.error).toContain('answered 500');
  });

  it.skipIf(!harness.isAvailable)('honours Retry-After on a 429', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    await endpointAt(mr, target);
    target.respond = (_request, res) => {
      if (target.received.length === 1) res.writeHead(429, { 'retry-after': '1' });
      else res.writeHead(204);
      res.end();
    };
    mr.work();
    const { message } = await mr.publish('invoice.paid', { invoice: 9 }, { tenant: 'acme' });
    const delivery = await deliveryStatus(mr, message.id, 'delivered');
    const [first, second] = target.received;
    // The schedule would have retried after 20 ms; the receiver asked for a second.
    expect(second!.receivedAt - first!.receivedAt).toBeGreaterThanOrEqual(950);
    expect((await mr.getJob(delivery.jobId!))!.attemptsLog[0]!.details).toMatchObject({ status: 429, retryAfter: '1' });
  });

  it.skipIf(!harness.isAvailable)('gives up on a receiver that hangs past the request timeout, and retries it', async () => {
    const mr = await openOutgoingMailroom(harness, { endpoints: { requestTimeoutMs: 300 } });
    const target = await receiver();
    await endpointAt(mr, target);
    target.respond = (_request, res) => {
      if (target.received.length > 1) {
        res.writeHead(204);
        res.end();
      }
    };
    mr.work();
    const { message } = await mr.publish('invoice.paid', { invoice: 10 }, { tenant: 'acme' });
    const delivery = await deliveryStatus(mr, message.id, 'delivered');
    const job = (await mr.getJob(delivery.jobId!))!;
    expect(job.attemptsLog[0]).toMatchObject({ outcome: 'failed', details: { error: 'timeout' } });
    expect(job.attemptsLog[0]!.error).toContain('timeout');
  });

  it.skipIf(!harness.isAvailable)('takes an answer whose body breaks off or stalls by its status: a 2xx cut short is delivered, not retried', async () => {
    const mr = await openOutgoingMailroom(harness, { endpoints: { requestTimeoutMs: 300, maxAttempts: 1 } });
    const target = await receiver();
    await endpointAt(mr, target);
    target.respond = (request, res) => {
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      // The first message's answer breaks off mid-body; the second's stalls past the timeout.
      if ((JSON.parse(request.body.toString()) as { data: { invoice: number } }).data.invoice === 1) res.write('accepted, writ', () => res.socket?.destroy());
      else res.write('accepted, writ');
    };
    mr.work();
    for (const invoice of [1, 2]) {
      const { message } = await mr.publish('invoice.paid', { invoice }, { tenant: 'acme' });
      const delivery = await deliveryStatus(mr, message.id, 'delivered');
      const [attempt] = (await mr.getJob(delivery.jobId!))!.attemptsLog;
      expect(attempt, `invoice ${invoice}`).toMatchObject({ outcome: 'done', details: { status: 200, excerpt: expect.stringContaining('accepted, writ') } });
    }
    expect(target.received).toHaveLength(2);
  });

  it.skipIf(!harness.isAvailable)('reads a slow answer to its end, and keeps a bounded excerpt of a huge one without reading it all', async () => {
    const mr = await openOutgoingMailroom(harness, { endpoints: { maxAttempts: 1 } });
    const slow = await receiver();
    const huge = await receiver();
    await endpointAt(mr, slow, 'slow');
    await endpointAt(mr, huge, 'huge');
    slow.respond = (_request, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      let sent = 0;
      const drip = setInterval(() => {
        res.write('.');
        if (++sent === 5) {
          clearInterval(drip);
          res.end();
        }
      }, 40);
    };
    let hugeBytesWritten = 0;
    huge.respond = (_request, res) => {
      res.writeHead(400, { 'content-type': 'text/plain' });
      const chunk = 'x'.repeat(64 * 1024);
      // 16 MiB if anyone read it all; the deliver task stops after 64 KiB.
      const pump = () => {
        while (hugeBytesWritten < 16 * 1024 * 1024) {
          hugeBytesWritten += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', pump);
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    };
    mr.work();
    const slowMessage = await mr.publish('report.ready', {}, { tenant: 'slow' });
    const hugeMessage = await mr.publish('report.ready', {}, { tenant: 'huge' });
    const slowDelivery = await deliveryStatus(mr, slowMessage.message.id, 'delivered');
    expect((await mr.getJob(slowDelivery.jobId!))!.attemptsLog.at(-1)!.details).toMatchObject({ status: 200 });
    const hugeDelivery = await deliveryStatus(mr, hugeMessage.message.id, 'failed');
    const details = (await mr.getJob(hugeDelivery.jobId!))!.attemptsLog[0]!.details as { status: number; excerpt: string };
    expect(details.status).toBe(400);
    expect(details.excerpt.length).toBeLessThanOrEqual(513);
    expect(details.excerpt.endsWith('…')).toBe(true);
    expect(hugeBytesWritten).toBeLessThan(16 * 1024 * 1024);
  });

  it.skipIf(!harness.isAvailable)('does not follow a redirect: the delivery fails and the other address gets nothing', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    const elsewhere = await receiver();
    await endpointAt(mr, target);
    target.respond = answer(307, { location: elsewhere.url });
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    const delivery = await deliveryStatus(mr, message.id, 'failed');
    expect(target.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
    expect((await mr.getJob(delivery.jobId!))!.deadReason).toBe('permanent');
  });

  it.skipIf(!harness.isAvailable)('disables an endpoint that answers 410, with a reason and a log line, and skips what is published to it next', async () => {
    const log = logSink();
    const mr = await openOutgoingMailroom(harness, { log });
    const target = await receiver();
    const endpoint = await endpointAt(mr, target);
    target.respond = answer(410);
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    await deliveryStatus(mr, message.id, 'failed');
    const disabled = (await mr.endpoints.get(endpoint.id))!;
    expect(disabled).toMatchObject({ enabled: false });
    expect(disabled.disabledReason).toContain('410');
    expect(log.text()).toContain('"msg":"endpoint disabled"');
    const next = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    expect(next.deliveries.map((d) => d.status)).toEqual(['skipped']);
    expect(target.received).toHaveLength(1);
    // Disabling it again without a reason keeps the 410's; a new reason replaces it.
    expect((await mr.endpoints.disable(endpoint.id)).disabledReason).toBe(disabled.disabledReason);
    expect((await mr.endpoints.disable(endpoint.id, 'customer asked')).disabledReason).toBe('customer asked');
    expect((await mr.endpoints.disable(endpoint.id)).disabledReason).toBe('customer asked');
    await mr.endpoints.enable(endpoint.id);
    expect((await mr.endpoints.disable(endpoint.id)).disabledReason).toBe('disabled by hand');
  });

  it.skipIf(!harness.isAvailable)('signs with both secrets during a rotation’s overlap, so a receiver holding either verifies', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    const endpoint = await endpointAt(mr, target);
    const oldSecret = endpoint.secret;
    const { secret: newSecret } = await mr.endpoints.rotateSecret(endpoint.id, { overlapMs: 60_000 });
    expect(newSecret).toMatch(/^whsec_/);
    expect(newSecret).not.toBe(oldSecret);
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    await deliveryStatus(mr, message.id, 'delivered');
    const [got] = target.received;
    expect(String(got!.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) {
      target.secrets = [secret];
      // Verified again by the library with only this secret.
      const { Webhook } = await import('standardwebhooks');
      expect(() => new Webhook(secret).verify(got!.body, got!.headers as Record<string, string>)).not.toThrow();
    }
    const { secret: latest } = await mr.endpoints.rotateSecret(endpoint.id, { overlapMs: 0 });
    const next = await mr.publish('invoice.paid', { n: 2 }, { tenant: 'acme' });
    await deliveryStatus(mr, next.message.id, 'delivered');
    expect(String(target.received[1]!.headers['webhook-signature']).split(' ')).toHaveLength(1);
    const { Webhook } = await import('standardwebhooks');
    expect(() => new Webhook(latest).verify(target.received[1]!.body, target.received[1]!.headers as Record<string, string>)).not.toThrow();
  });

  it.skipIf(!harness.isAvailable)('never shows an endpoint’s secret in logs, lists, job history or errors', async () => {
    const log = logSink();
    const mr = await openOutgoingMailroom(harness, { log });
    const target = await receiver();
    const endpoint = await endpointAt(mr, target);
    const { secret: rotated } = await mr.endpoints.rotateSecret(endpoint.id, { overlapMs: 60_000 });
    target.respond = (request, res) => {
      res.writeHead(target.received.length === 1 ? 500 : 204);
      // A receiver that echoes what it got: the signature, never a secret, comes back.
      res.end(JSON.stringify(request.headers));
    };
    mr.work();
    const { message } = await mr.publish('invoice.paid', {}, { tenant: 'acme' });
    const delivery = await deliveryStatus(mr, message.id, 'delivered');
    const errors: unknown[] = [];
    for (const attempt of [mr.endpoints.add({ tenant: 'acme', url: 'http://10.0.0.1/x' }), mr.endpoints.recover('999999', { since: new Date(0) })]) {
      errors.push(await attempt.catch((error: Error) => ({ message: error.message, stack: error.stack })));
    }
    const shown = JSON.stringify([
      await mr.endpoints.list(),
      await mr.endpoints.get(endpoint.id),
      await mr.endpoints.health(endpoint.id),
      await mr.messages.list({ tenant: 'acme' }),
      await mr.deliveries.list({ endpointId: endpoint.id }),
      await mr.getJob(delivery.jobId!),
      errors,
      log.text(),
    ]);
    for (const secret of [endpoint.secret, rotated]) {
      expect(shown).not.toContain(secret);
      expect(shown).not.toContain(secret.slice('whsec_'.length));
    }
  });
  it.skipIf(!harness.isAvailable)('sends nothing from a job replayed after recover() handed its delivery to a new one, and keeps the new one’s outcome', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    const endpoint = await endpointAt(mr, target);
    const { deliveries } = await mr.publish('invoice.paid', { invoice: 11 }, { tenant: 'acme' });
    const delivery = deliveries[0]!;
    // The first job's last attempt was refused and recorded; its outcome is not written yet
    // when recover() runs, so recover() gives the delivery a second job.
    const [first] = await mr.store.jobClaim({ workerId: 'gone', types: ['deliver'], queues: null, limits: [], limit: 1, leaseMs: 60_000 });
    expect(first!.id).toBe(delivery.jobId);
    await mr.store.deliveryRecordMany({ records: [{ deliveryId: delivery.id, endpointId: endpoint.id, status: 'failed', attempt: 'failure' }], disableAfterMs: 5 * 86_400_000, breaker: DEFAULT_BREAKER_SETTINGS });
    expect((await mr.endpoints.recover(endpoint.id, { since: new Date(0) })).count).toBe(1);
    await mr.store.jobFinishMany({ finishes: [{ kind: 'failed', id: first!.id, leaseToken: first!.leaseToken, error: 'answered 400', attemptOutcome: 'failed', retryDelayMs: null, deadReason: 'permanent' }] });
    const second = (await mr.deliveries.list({ messageId: delivery.messageId }))[0]!.jobId!;
    expect(second).not.toBe(first!.id);

    target.respond = answer(204);
    const worker = mr.work();
    await deliveryStatus(mr, delivery.messageId, 'delivered');
    expect(target.received).toHaveLength(1);
    // An operator replays the first job from the dashboard: it must not send again, and a
    // failure of it must not be written over the delivery.
    target.respond = answer(500);
    await mr.replay(first!.id, { reason: 'retry by hand' });
    await waitFor(async () => (await mr.getJob(first!.id))!.status === 'done', { description: 'the replayed job to end' });
    await worker.drained();
    expect(target.received).toHaveLength(1);
    expect((await mr.getJob(first!.id))!.result).toEqual({ skipped: `the delivery was handed to job ${second}` });
    expect((await mr.deliveries.list({ messageId: delivery.messageId }))[0]).toMatchObject({ status: 'delivered', jobId: second });
    expect(await mr.endpoints.health(endpoint.id)).toMatchObject({ successes: 1, failures: 1 });
  });

  it.skipIf(!harness.isAvailable)('records a success handed to the worker even when the job’s lease is lost before its outcome: the receiver has it', async () => {
    const mr = await openOutgoingMailroom(harness);
    const endpoint = await endpointAt(mr, await receiver());
    const { deliveries } = await mr.publish('invoice.paid', { invoice: 9 }, { tenant: 'acme' });
    const [delivery] = deliveries;
    // The deliver task's hand-off, from a task of another queue (so the real deliver job
    // stays put): a 2xx came back, then the lease is lost before the outcome is written.
    let handedOff!: () => void;
    const isHandedOff = new Promise<void>((resolve) => (handedOff = resolve));
    mr.task('answered', {
      queue: 'elsewhere',
      run: (_payload, ctx) =>
        new Promise<void>((resolve) => {
          (ctx as WorkerTaskContext)[DELIVERED_WITH_DONE]!.call(ctx, { deliveryId: delivery!.id, endpointId: endpoint.id, breaker: DEFAULT_BREAKER_SETTINGS });
          ctx.signal.addEventListener('abort', () => resolve());
          handedOff();
        }),
    });
    const job = await mr.enqueue('answered', {});
    const worker = mr.work({ queues: ['elsewhere'], leaseMs: 1_000, pollMs: 10_000 });
    await isHandedOff;
    expect((await mr.store.jobRescue({ now: new Date(Date.now() + 3_600_000) })).requeued).toEqual([job.id]);
    await waitForEvent(worker, 'leaseLost');
    await waitFor(async () => (await mr.deliveries.list({ messageId: delivery!.messageId }))[0]!.status === 'delivered', {
      description: 'the success to be recorded although the outcome was fenced off',
    });
    expect(await mr.endpoints.health(endpoint.id)).toMatchObject({ successes: 1 });
    expect((await mr.getJob(job.id))!.status).toBe('pending');
  });
  it.skipIf(!harness.isAvailable)('records a healthy endpoint’s success with its job’s done where store calls are round trips, and one that ends a failure streak before it', async () => {
    const mr = await openOutgoingMailroom(harness);
    const target = await receiver();
    const endpoint = await endpointAt(mr, target);
    // A spy on the real store: which records the deliver task writes on its own.
    const recorded: DeliveryRecord[] = [];
    const store = mr.store;
    const recordMany = store.deliveryRecordMany.bind(store);
    store.deliveryRecordMany = (params) => {
      recorded.push(...params.records);
      return recordMany(params);
    };
    mr.work();
    const healthy = await mr.publish('invoice.paid', { n: 1 }, { tenant: 'acme' });
    await deliveryStatus(mr, healthy.message.id, 'delivered');
    // The next message's first attempt fails (a streak starts); its retry's success ends it.
    let answered = 0;
    target.respond = (request, res) => (answered++ === 0 ? answer(500) : answer(204))(request, res);
    const recovering = await mr.publish('invoice.paid', { n: 2 }, { tenant: 'acme' });
    await deliveryStatus(mr, recovering.message.id, 'delivered');

    const successes = recorded.filter((record) => record.status === 'delivered').map((record) => record.deliveryId);
    const [healthyDelivery, recoveringDelivery] = [healthy.deliveries[0]!.id, recovering.deliveries[0]!.id];
    expect(successes).toEqual(harness.capabilities.roundTrips ? [recoveringDelivery] : [healthyDelivery, recoveringDelivery]);
    expect(recorded.filter((record) => record.attempt === 'outage').map((record) => record.deliveryId)).toEqual([recoveringDelivery]);
    expect(await mr.endpoints.health(endpoint.id)).toMatchObject({ successes: 2, failures: 1, failingSince: null });
  });
});
