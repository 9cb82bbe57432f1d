// Recurring jobs: slots computed from cron syntax in a time zone, and exactly one job per
// slot however many schedulers fire it, on every store.

import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { CronScheduler, nextSlot, slotKey } from '../../src/maintenance/cron-scheduler.js';
import { Mailroom } from '../../src/mailroom.js';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';

const silent = pino({ level: 'silent' });

describe('cron slots', () => {
  it('finds the next slot strictly after a time, in UTC by default', () => {
    expect(nextSlot({ cron: '*/5 * * * *' }, new Date('2026-11-30T10:02:30Z')).toISOString()).toBe('2026-11-30T10:05:00.000Z');
    expect(nextSlot({ cron: '*/5 * * * *' }, new Date('2026-11-30T10:05:00Z')).toISOString()).toBe('2026-11-30T10:10:00.000Z');
  });

  it('reads the expression in the schedule time zone', () => {
    // 03:00 in Berlin is 02:00 UTC in winter.
    expect(nextSlot({ cron: '0 3 * * *', timezone: 'Europe/Berlin' }, new Date('2026-11-30T12:00:00Z')).toISOString()).toBe(
      '2026-12-01T02:00:00.000Z',
    );
  });

  it('names each slot in its key', () => {
    expect(slotKey('nightly', new Date('2026-12-01T02:00:00Z'))).toBe('cron:nightly:2026-12-01T02:00:00.000Z');
  });

  it('refuses an expression that does not parse', () => {
    const scheduler = new CronScheduler(async () => undefined, silent);
    expect(() => scheduler.add('bad', { cron: 'every tuesday', type: 't' })).toThrow(/not a cron expression/);
  });
});

describe.each(storeHarnesses)('recurring jobs on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('enqueues one job per slot however many schedulers fire it', async () => {
    const { mr, url } = await openTestMailroom(harness);
    // A second process's Mailroom on the same data.
    const other = await Mailroom.open({ db: url, logger: silent });
    const schedulers = [mr, other].map(
      (m) => new CronScheduler((type, payload, options) => m.enqueue(type, payload as never, options), silent),
    );
    for (const s of schedulers) s.add('digest', { cron: '0 * * * *', type: 'digest', payload: { kind: 'hourly' } });
    const slot = new Date('2026-11-30T11:00:00Z');
    await Promise.all([...schedulers, ...schedulers].map((s) => s.fire('digest', slot)));
    await schedulers[0]!.fire('digest', new Date('2026-11-30T12:00:00Z'));
    const jobs = await mr.listJobs({ type: 'digest' });
    expect(jobs.map((j) => j.key)).toEqual(['cron:digest:2026-11-30T11:00:00.000Z', 'cron:digest:2026-11-30T12:00:00.000Z']);
    expect(jobs[0]!.payload).toEqual({ kind: 'hourly' });
    await other.close();
  });

  it.runIf(harness.isAvailable)('runs a scheduled job in a process that works', async () => {
    const { mr } = await openTestMailroom(harness);
    const ran: string[] = [];
    mr.task('tick', async (_payload, ctx) => void ran.push(ctx.job.key!));
    mr.schedule('every-second', { cron: '* * * * * *', type: 'tick' });
    mr.work({ pollMs: 50 });
    await waitFor(() => ran.length >= 1, { timeoutMs: 5_000, description: 'a scheduled job to run' });
    expect(ran[0]).toMatch(/^cron:every-second:\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  });
});
