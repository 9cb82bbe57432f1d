// The forward task against a real local HTTP server: what it sends, and how each answer
// (2xx, 4xx, 5xx, 429/503 with Retry-After, a network error, a hang) decides the job's fate.

import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { isPermanent, retryAfterDelayMs } from '../../src/core/errors.js';
import { SECRET_HEADERS } from '../../src/providers/index.js';
import { createForwardTask } from '../../src/tasks/forward.js';
import { startReceiver, storedEvent, taskContext } from './task-kit.js';
import type { Receiver } from './task-kit.js';

const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
let receiver: Receiver;

async function runForward(extra: { secret?: string; requestTimeoutMs?: number; url?: string; signal?: AbortSignal } = {}): Promise<unknown> {
  const task = createForwardTask({ kind: 'forward', url: extra.url ?? receiver.url, secret: extra.secret, requestTimeoutMs: extra.requestTimeoutMs });
  try {
    await task.run({ ref: 'refs/heads/main' }, taskContext({ event: storedEvent(), attempt: 3, signal: extra.signal }));
    return 'done';
  } catch (error) {
    return error;
  }
}

describe('forward task', () => {
  afterEach(async () => {
    await receiver?.close();
  });

  it('posts the original body and content type with the event headers and stable mailroom headers', async () => {
    receiver = await startReceiver();
    expect(await runForward()).toBe('done');
    const [got] = receiver.received;
    expect(got!.method).toBe('POST');
    expect(got!.body.toString()).toBe('{"ref":"refs/heads/main"}');
    expect(got!.headers['content-type']).toBe('application/json');
    expect(got!.headers['x-github-event']).toBe('push');
    expect(got!.headers['mailroom-event-id']).toBe('41');
    expect(got!.headers['mailroom-attempt']).toBe('3');
    // Stable across attempts: the job's id, not the attempt's.
    expect(got!.headers['idempotency-key']).toBe('mailroom-job-7');
    expect(got!.headers.host).not.toBe('example.com');
    expect(got!.headers['webhook-signature']).toBeUndefined();
  });

  it("never sends on a signature or credential header, in any provider's spelling, that a stored event still holds", async () => {
    receiver = await startReceiver();
    // Every listed spelling, names that only look like a credential, and a client address
    // the sender made up (an app trusting its loopback proxy would take it as the client's).
    const invented = ['x-webhook-token', 'api-key', 'x-gitlab-token', 'x-shared-secret', 'x-forwarded-for', 'x-forwarded-prefix', 'forwarded', 'x-real-ip', 'cf-connecting-ip', 'true-client-ip'];
    const leaked = Object.fromEntries([...SECRET_HEADERS, ...invented].map((name) => [name, `leaked-${name}`]));
    expect(leaked).toHaveProperty('shopify-hmac-sha256');
    const task = createForwardTask({ kind: 'forward', url: receiver.url });
    const event = storedEvent({ headers: { ...storedEvent().headers, ...leaked } });
    await task.run(null, taskContext({ event }));
    const [got] = receiver.received;
    expect(got!.headers['x-github-event']).toBe('push');
    expect(JSON.stringify(got!.headers)).not.toContain('leaked-');
  });

  it('re-signs the hop with Standard Webhooks when the task has a secret', async () => {
    receiver = await startReceiver();
    expect(await runForward({ secret: SECRET })).toBe('done');
    const [got] = receiver.received;
    const headers = Object.fromEntries(Object.entries(got!.headers).map(([k, v]) => [k, String(v)]));
    expect(new StandardWebhook(SECRET).verify(got!.body.toString(), headers)).toEqual({ ref: 'refs/heads/main' });
    expect(headers['webhook-id']).toBe('evt_41');
  });

  it.each([200, 201, 204, 299])('completes on %i', async (status) => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status });
    expect(await runForward()).toBe('done');
  });

  it.each([400, 401, 403, 404, 410, 422])('parks the job on %i (permanent)', async (status) => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status, body: 'nope' });
    const error = await runForward();
    expect(isPermanent(error)).toBe(true);
    expect(String((error as Error).message)).toContain(`answered ${status}: nope`);
  });

  it.each([408, 409, 425, 429, 500, 502, 503, 504])('retries on %i (transient)', async (status) => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status });
    const error = await runForward();
    expect(error).toBeInstanceOf(Error);
    expect(isPermanent(error)).toBe(false);
    expect(retryAfterDelayMs(error)).toBeNull();
  });

  it.each([429, 503])('retries no sooner than Retry-After on %i', async (status) => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status, headers: { 'retry-after': '120' } });
    expect(retryAfterDelayMs(await runForward())).toBe(120_000);
  });

  it('records the answer in the attempt details: status, time, Retry-After and the start of a failure body', async () => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 503, headers: { 'retry-after': '120' }, body: 'maintenance '.repeat(100) });
    const task = createForwardTask({ kind: 'forward', url: receiver.url });
    const ctx = taskContext({ event: storedEvent() });
    // The receiver's Retry-After is a floor: a short one does not cut the schedule short.
    await expect(task.run(null, ctx)).rejects.toMatchObject({ code: 'MR_ERR_RETRY_AFTER', delayMs: 120_000, atLeastBackoff: true });
    const details = ctx.recordedDetails as { status: number; durationMs: number; retryAfter: string; excerpt: string };
    expect(details).toMatchObject({ status: 503, retryAfter: '120' });
    expect(details.durationMs).toBeGreaterThanOrEqual(0);
    expect(details.excerpt.startsWith('maintenance maintenance')).toBe(true);
    expect(details.excerpt.length).toBeLessThanOrEqual(513);

    receiver.respond = () => ({ status: 204 });
    const ok = taskContext({ event: storedEvent() });
    await task.run(null, ok);
    expect(Object.keys(ok.recordedDetails as object).sort()).toEqual(['durationMs', 'status']);
  });

  it('ignores Retry-After on a plain 500', async () => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 500, headers: { 'retry-after': '120' } });
    expect(retryAfterDelayMs(await runForward())).toBeNull();
  });

  it('treats a refused connection as transient', async () => {
    receiver = await startReceiver();
    const url = receiver.url;
    await receiver.close();
    const error = await runForward({ url });
    expect(isPermanent(error)).toBe(false);
    expect(String((error as Error).message)).toContain('ECONNREFUSED');
  });

  it('shows the URL without its query in errors and attempt details, which reach logs and the dashboard', async () => {
    receiver = await startReceiver();
    const url = `${receiver.url}?token=URLTOKEN123`;
    receiver.respond = () => ({ status: 500, body: 'down' });
    const answered = await runForward({ url });
    expect(String((answered as Error).message)).toBe(`forward to ${receiver.url}?… answered 500: down`);
    await receiver.close();
    const task = createForwardTask({ kind: 'forward', url });
    const ctx = taskContext({ event: storedEvent() });
    const refused = (await Promise.resolve(task.run(null, ctx)).catch((error: unknown) => error)) as Error;
    expect(refused.message).toContain('ECONNREFUSED');
    for (const shown of [refused.message, JSON.stringify(ctx.recordedDetails), String(refused.cause ?? '')]) {
      expect(shown).not.toContain('URLTOKEN123');
    }
  });

  it('times out a hanging receiver per request, as a transient failure', async () => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 200, hang: true });
    const error = await runForward({ requestTimeoutMs: 200 });
    expect(isPermanent(error)).toBe(false);
    expect(String((error as Error).message)).toContain('timed out after 200 ms');
  });

  it('stops at once when the job signal aborts', async () => {
    receiver = await startReceiver();
    receiver.respond = () => ({ status: 200, hang: true });
    const controller = new AbortController();
    const running = runForward({ signal: controller.signal });
    await new Promise<void>((resolve) => {
      const check = () => (receiver.received.length > 0 ? resolve() : setImmediate(check));
      check();
    });
    const reason = new Error('worker stopping');
    controller.abort(reason);
    expect(await running).toBe(reason);
  });

  it('defaults to the Standard Webhooks retry schedule with 8 attempts', () => {
    const task = createForwardTask({ kind: 'forward', url: 'http://127.0.0.1:1/x' });
    expect(task.maxAttempts).toBe(8);
    expect(task.retryScheduleMs).toEqual([5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000]);
  });
});
