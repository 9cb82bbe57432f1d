// The API's options objects against typos, on both stores: JavaScript ignores a key nobody
// reads, so `{ delay: 5000 }` (for delayMs) would enqueue a job due now. Each is refused
// naming the key and nothing is stored; a bare id replays; registering a task again warns.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { Mailroom } from '../../src/mailroom.js';
import { insertJob } from '../harness/factory.js';
import { logSink } from '../harness/log-sink.js';
import { storeHarnesses } from '../harness/stores.js';

describe.each(storeHarnesses)('API options on $name', (harness) => {
  const opened: Mailroom[] = [];
  afterEach(async () => {
    for (const mr of opened.splice(0)) await mr.close({ timeoutMs: 2_000 });
    await harness.cleanup();
  });

  async function open(log = logSink()): Promise<Mailroom> {
    const { store } = await harness.open();
    const mr = await Mailroom.open({ store, logger: pino({ level: 'debug' }, log) });
    opened.push(mr);
    return mr;
  }

  it.skipIf(!harness.isAvailable)('refuses a misspelt option by name and stores nothing', async () => {
    const mr = await open();
    const refusals: Array<[string, () => unknown]> = [
      ['database', () => Mailroom.open({ database: 'sqlite:./elsewhere.db' } as never)],
      ['delay', () => mr.enqueue('send_email', {}, { delay: 5_000 } as never)],
      ['delay', () => mr.enqueueMany([{ type: 'send_email', payload: {}, options: { delay: 5_000 } as never }])],
      ['maxAttempt', () => mr.task('report', { run: async () => undefined, maxAttempt: 3 } as never)],
      ['concurency', () => mr.work({ concurency: 3 } as never)],
      ['concurency', () => mr.task('limited', { run: async () => undefined, limits: { concurency: 3 } } as never)],
      ['rates', () => mr.task('limited', { run: async () => undefined, limits: { key: () => 'k', perKey: { rates: { limit: 1, intervalMs: 1 } } } } as never)],
      ['reson', () => mr.pauseQueue('email', { reson: 'outage' } as never)],
      ['clinet', () => mr.enqueueBatch([], { then: { type: 'assemble', payload: {} }, clinet: {} } as never)],
      ['delay', () => mr.enqueueBatch([], { then: { type: 'assemble', payload: {}, delay: 5_000 } as never })],
      ['interval', () => mr.task('limited', { run: async () => undefined, limits: { rate: { limit: 1, interval: 1_000 } } } as never)],
      ['statuz', () => mr.listJobs({ statuz: 'dead' } as never)],
      ['typ', () => mr.retryNow({ typ: 'send_email' } as never)],
      ['reson', () => mr.replay({ status: 'dead' }, { reson: 'x' } as never)],
      ['tenat', () => mr.publish('invoice.paid', {}, { tenant: 'acme', tenat: 'x' } as never)],
      ['events', () => mr.endpoints.add({ tenant: 'acme', url: 'https://hooks.example.com/x', events: ['a'] } as never)],
    ];
    for (const [key, call] of refusals) {
      let error: unknown;
      try {
        await call();
      } catch (caught) {
        error = caught;
      }
      expect(error, key).toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringContaining(`no option "${key}"`) });
    }
    expect(mr.taskTypes()).not.toContain('limited');
    expect((await mr.stats()).paused).toEqual([]);
    expect(await mr.listJobs({})).toEqual([]);
    expect(await mr.messages.list({})).toEqual([]);
    expect(await mr.endpoints.list({})).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)('refuses runAt with delayMs (one would be ignored) and a runAt given as text, and stores nothing', async () => {
    const mr = await open();
    const inAnHour = new Date(Date.now() + 3_600_000);
    await expect(mr.enqueue('send_email', {}, { runAt: inAnHour, delayMs: 5_000 })).rejects.toMatchObject({
      code: 'MR_ERR_INVALID_ARGUMENT',
      message: 'give runAt or delayMs, not both',
    });
    await expect(mr.enqueueMany([{ type: 'send_email', payload: {}, options: { runAt: inAnHour, delayMs: 0 } }])).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    await expect(mr.enqueue('send_email', {}, { runAt: inAnHour.toISOString() as never })).rejects.toMatchObject({
      message: expect.stringContaining('not a string: pass new Date(text)'),
    });
    expect(await mr.listJobs({})).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)('refuses what one store could not keep (a NUL in a name, a priority past 32 bits) with the same error on both, and stores nothing', async () => {
    const mr = await open();
    mr.task('per_customer', { limits: { key: (payload) => (payload as { customer: string }).customer, perKey: { concurrency: 1 } }, run: async () => undefined });
    const refusals: Array<[string, () => Promise<unknown>]> = [
      ['job type must not contain the NUL character', () => mr.enqueue('send\u0000email', {})],
      ['queue must not contain the NUL character', () => mr.enqueue('send_email', {}, { queue: 'e\u0000mail' })],
      ['key must not contain the NUL character', () => mr.enqueue('send_email', {}, { key: 'a\u0000' })],
      ['group must not contain the NUL character', () => mr.enqueue('send_email', {}, { group: 'a\u0000' })],
      ['queue must not contain the NUL character', () => mr.pauseQueue('e\u0000mail')],
      ['returned a key with the NUL character', () => mr.enqueue('per_customer', { customer: 'c\u0000' })],
      ['priority must be between -2147483648 and 2147483647', () => mr.enqueue('send_email', {}, { priority: 2 ** 31 })],
      ['priority must be between -2147483648 and 2147483647', () => mr.enqueueMany([{ type: 'send_email', payload: {} }, { type: 'send_email', payload: {}, options: { priority: -(2 ** 40) } }])],
    ];
    for (const [message, call] of refusals) await expect(call(), message).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringContaining(message) });
    // The bounds themselves are kept, and come back as given.
    const highest = await mr.enqueue('send_email', {}, { priority: 2_147_483_647 });
    const lowest = await mr.enqueue('send_email', {}, { priority: -2_147_483_648 });
    expect([(await mr.getJob(highest.id))!.priority, (await mr.getJob(lowest.id))!.priority]).toEqual([2_147_483_647, -2_147_483_648]);
    expect((await mr.listJobs({})).map((job) => job.id).sort()).toEqual([highest.id, lowest.id].sort());
    expect((await mr.stats()).paused).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)("refuses an event type '*': types match exactly, so the endpoint would receive nothing", async () => {
    const mr = await open();
    await expect(mr.endpoints.add({ tenant: 'acme', url: 'https://hooks.example.com/x', eventTypes: ['*'] })).rejects.toMatchObject({
      code: 'MR_ERR_INVALID_ARGUMENT',
      message: expect.stringContaining('omit eventTypes'),
    });
    await expect(mr.endpoints.add({ tenant: 'acme', url: 'https://hooks.example.com/x', eventTypes: ['invoice.paid', 'invoice.*'] })).rejects.toMatchObject({
      code: 'MR_ERR_INVALID_ARGUMENT',
      message: 'eventTypes lists exact event types, not patterns: "invoice.*" matches no message; list each type',
    });
    expect(await mr.endpoints.list({})).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)('refuses a transaction without a callback, and a client that is not a connection, in the words of the call', async () => {
    const mr = await open();
    expect(() => mr.transaction(42 as never)).toThrow(expect.objectContaining({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringContaining('transaction takes a callback') }));
    if (harness.name === 'postgres') {
      await expect(mr.enqueue('send_email', {}, { client: {} })).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringMatching(/^client must be/) });
    }
    expect(await mr.listJobs({})).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)('refuses perKey without key: every job would share one key', async () => {
    const mr = await open();
    expect(() => mr.task('sync', { run: async () => undefined, limits: { perKey: { concurrency: 1 } } })).toThrow(
      expect.objectContaining({ code: 'MR_ERR_INVALID_ARGUMENT', message: expect.stringContaining('limits.perKey of "sync" needs limits.key') }),
    );
    expect(mr.taskTypes()).toEqual([]);
  });

  it.skipIf(!harness.isAvailable)('replays a bare id, as retryNow and cancel take one', async () => {
    const mr = await open();
    const dead = await insertJob(mr.store, { type: 'fulfil', status: 'dead', maxAttempts: 1 });
    expect(await mr.replay(dead.id, { reason: 'fixed' })).toEqual({ count: 1, ids: [dead.id] });
    expect((await mr.getJob(dead.id))!.status).toBe('pending');
  });

  it.skipIf(!harness.isAvailable)('warns when a task is registered again, since its policy is replaced whole', async () => {
    const log = logSink();
    const mr = await open(log);
    mr.task('send_email', { queue: 'email', run: async () => undefined });
    expect(log.text()).not.toContain('task registered again');
    mr.task('send_email', async () => undefined);
    expect(log.text()).toContain('"msg":"task registered again: the new definition replaces the earlier one, policy included"');
    expect((await mr.enqueue('send_email', {})).queue).toBe('default');
  });
});

// Mailroom.open checks it before any store is opened: once, not per store.
describe('Mailroom.open options', () => {
  it('refuses a lock deadline that is not a number of ms above 0', async () => {
    for (const lockDeadlineMs of [0, -1, Number.NaN, '5000']) {
      await expect(Mailroom.open({ db: 'sqlite::memory:', lockDeadlineMs: lockDeadlineMs as never, logger: pino({ level: 'silent' }) })).rejects.toMatchObject({
        code: 'MR_ERR_INVALID_ARGUMENT',
        message: expect.stringContaining('lockDeadlineMs must be'),
      });
    }
  });
});
