// The retention purger on every store: it deletes done jobs past the window and the old
// events no job references any more, and nothing else; it runs at once, then on its
// interval, and a failing purge is logged, never thrown.

import pino from 'pino';
import { Writable } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { runRetentionOnce, startRetention } from '../../src/maintenance/retention.js';
import type { RetentionRunResult } from '../../src/maintenance/retention.js';
import { insertJob, jobInsert } from '../harness/factory.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { Mailroom } from '../../src/mailroom.js';

const DAY_MS = 24 * 3_600_000;
const WEEK_MS = 7 * DAY_MS;

function daysAgo(days: number): Date {
  return new Date(Date.now() - days * DAY_MS);
}

/** A logger whose lines the test can read. */
function capturingLogger(): { log: pino.Logger; lines: () => Array<Record<string, unknown>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _encoding, callback) {
      chunks.push(String(chunk));
      callback();
    },
  });
  return {
    log: pino({ level: 'debug' }, stream),
    lines: () => chunks.join('').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line)),
  };
}

describe.each(storeHarnesses)('retention on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('deletes only done jobs past the window and old events no job references', async () => {
    const { mr } = await openTestMailroom(harness);
    const event = (deliveryId: string, types: string[], now: Date) =>
      mr.store.eventInsertWithJobs({
        event: { source: 'stripe', deliveryId, type: 'charge.succeeded', headers: {}, rawBody: Buffer.from('{}') },
        jobs: types.map((type) => jobInsert({ type })),
        now,
      });
    const oldDone = await insertJob(mr.store, { status: 'done', now: daysAgo(10) });
    const oldDead = await insertJob(mr.store, { status: 'dead', now: daysAgo(60) });
    const oldRunning = await insertJob(mr.store, { status: 'running', now: daysAgo(60) });
    const oldPending = await insertJob(mr.store, { attempts: 1, now: daysAgo(60) });
    const recentDone = await insertJob(mr.store, { status: 'done', now: daysAgo(2) });
    const oldEventWithPendingJob = await event('evt_pending', ['fulfil_later'], daysAgo(30));
    const oldEventWithoutJobs = await event('evt_empty', [], daysAgo(30));
    const recentEventWithoutJobs = await event('evt_recent', [], daysAgo(1));

    const { log, lines } = capturingLogger();
    const result = await runRetentionOnce(mr, { doneMs: WEEK_MS, log });
    expect(result).toMatchObject({ ok: true, jobs: 1, events: 1 });

    expect(await mr.getJob(oldDone.id)).toBeNull();
    expect(await mr.store.eventGet({ id: oldEventWithoutJobs.event.id })).toBeNull();
    for (const kept of [oldDead, oldRunning, oldPending, recentDone]) expect((await mr.getJob(kept.id))?.status).toBe(kept.status);
    expect(await mr.store.eventGet({ id: oldEventWithPendingJob.event.id })).not.toBeNull();
    expect(await mr.store.eventGet({ id: recentEventWithoutJobs.event.id })).not.toBeNull();
    expect(lines().find((l) => l.msg === 'retention purged old jobs')).toMatchObject({ jobs: 1, events: 1, doneMs: WEEK_MS });

    // Nothing left to do: a second run deletes nothing.
    expect(await runRetentionOnce(mr, { doneMs: WEEK_MS, log })).toMatchObject({ ok: true, jobs: 0, events: 0 });
  });

  it.runIf(harness.isAvailable)('purges dead jobs only when given a dead window, and only past it', async () => {
    const { mr } = await openTestMailroom(harness);
    const ancientDead = await insertJob(mr.store, { status: 'dead', now: daysAgo(100) });
    const recentDead = await insertJob(mr.store, { status: 'dead', now: daysAgo(10) });
    expect(await runRetentionOnce(mr, { doneMs: WEEK_MS })).toMatchObject({ ok: true, jobs: 0 });
    expect(await runRetentionOnce(mr, { doneMs: WEEK_MS, deadMs: 30 * DAY_MS })).toMatchObject({ ok: true, jobs: 1 });
    expect(await mr.getJob(ancientDead.id)).toBeNull();
    expect((await mr.getJob(recentDead.id))?.status).toBe('dead');
  });

  it.runIf(harness.isAvailable)('a library Mailroom purges once it runs a worker: by default after 7 days, or its own window, or not at all', async () => {
    const { store } = await harness.open();
    const silent = pino({ level: 'silent' });
    const eightDays = await insertJob(store, { status: 'done', now: daysAgo(8) });
    const threeDays = await insertJob(store, { status: 'done', now: daysAgo(3) });
    const oneHour = await insertJob(store, { status: 'done', now: new Date(Date.now() - 3_600_000) });
    // Each close() waits for the purge its first mr.work() started.
    const withWorker = async (retention?: { doneMs: number } | false) => {
      const mr = await Mailroom.open({ store, logger: silent, ...(retention === undefined ? {} : { retention }) });
      mr.work({ pollMs: 50 });
      await mr.close();
    };
    await withWorker(false);
    expect((await store.jobGet({ id: eightDays.id }))?.status).toBe('done');
    await withWorker();
    expect(await store.jobGet({ id: eightDays.id })).toBeNull();
    expect((await store.jobGet({ id: threeDays.id }))?.status).toBe('done');
    await withWorker({ doneMs: 2 * DAY_MS });
    expect(await store.jobGet({ id: threeDays.id })).toBeNull();
    expect((await store.jobGet({ id: oneHour.id }))?.status).toBe('done');
    await expect(Mailroom.open({ store, logger: silent, retention: { doneMs: 0 } })).rejects.toThrow(/doneMs/);
  });

  it.runIf(harness.isAvailable)('startRetention purges at once with the 7-day default, and stop waits for it', async () => {
    const { mr } = await openTestMailroom(harness);
    const eightDays = await insertJob(mr.store, { status: 'done', now: daysAgo(8) });
    const sixDays = await insertJob(mr.store, { status: 'done', now: daysAgo(6) });
    const runs: RetentionRunResult[] = [];
    let firstRun!: () => void;
    const ran = new Promise<void>((resolve) => (firstRun = resolve));
    const stop = startRetention(mr, {
      onRun: (result) => {
        runs.push(result);
        firstRun();
      },
    });
    await ran;
    await stop();
    await stop();
    expect(runs).toEqual([expect.objectContaining({ ok: true, jobs: 1 })]);
    expect(await mr.getJob(eightDays.id)).toBeNull();
    expect((await mr.getJob(sixDays.id))?.status).toBe('done');
  });
});

describe('retention failures and settings', () => {
  afterEach(async () => closeTestMailrooms(storeHarnesses[0]!));

  it('logs a failed purge as a warning and reports it instead of throwing', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    vi.spyOn(mr, 'purge').mockRejectedValue(new Error('database is locked'));
    const { log, lines } = capturingLogger();
    const result = await runRetentionOnce(mr, { log });
    expect(result.ok).toBe(false);
    expect(lines().find((l) => l.msg === 'retention purge failed; will retry next interval')).toMatchObject({ level: 40 });
  });

  it('refuses a window or interval that makes no sense', async () => {
    const { mr } = await openTestMailroom(storeHarnesses[0]!);
    expect(() => startRetention(mr, { doneMs: 0 })).toThrow(/doneMs/);
    expect(() => startRetention(mr, { doneMs: WEEK_MS, intervalMs: 10 })).toThrow(/intervalMs/);
    expect(() => startRetention(mr, { deadMs: -1 })).toThrow(/deadMs/);
  });
});
