// What a handler leaves besides done or failed, end to end through the worker and the
// store's one outcome writer: its return value as the job's result (within the cap),
// ctx.setDetails() on the attempt whatever the outcome, and Snooze (uncharged, bounded by
// maxSnoozes), on every store in the harness list.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import { Snooze } from '../../src/index.js';
import type { JobDetail } from '../../src/index.js';
import type { Mailroom } from '../../src/mailroom.js';

const FAST_BACKOFF = { baseMs: 1, capMs: 5, jitter: 'none' as const };

async function settled(mr: Mailroom, id: string, status: 'done' | 'dead'): Promise<JobDetail> {
  return waitFor(async () => {
    const job = await mr.getJob(id);
    return job?.status === status && job;
  }, { description: `job ${id} to be ${status}` });
}

describe.each(storeHarnesses)('results, details and snoozes on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('stores the return value as the result and the details with the attempt', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('send', {
      async run(payload, ctx) {
        const { to } = payload as { to: string };
        ctx.setDetails({ provider: 'smtp', to });
        return { messageId: `m-${to}` };
      },
    });
    mr.task('silent', { run() {} });
    const sent = await mr.enqueue('send', { to: 'ada' });
    const silent = await mr.enqueue('silent', {});
    mr.work({ pollMs: 10 });
    const job = await settled(mr, sent.id, 'done');
    expect(job.result).toEqual({ messageId: 'm-ada' });
    expect(job.attemptsLog.map((a) => [a.outcome, a.details])).toEqual([['done', { provider: 'smtp', to: 'ada' }]]);
    const nothing = await settled(mr, silent.id, 'done');
    expect(nothing.result).toBeNull();
    expect(nothing.attemptsLog[0]!.details).toBeNull();
  });

  it.runIf(harness.isAvailable)('keeps the details of a failed attempt beside its error', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('charge', {
      maxAttempts: 2,
      backoff: FAST_BACKOFF,
      async run(_payload, ctx) {
        ctx.setDetails({ attempt: ctx.attempt, status: 502 });
        throw new Error('gateway said 502');
      },
    });
    const { id } = await mr.enqueue('charge', {});
    mr.work({ pollMs: 10 });
    const dead = await settled(mr, id, 'dead');
    expect(dead.attemptsLog.map((a) => [a.outcome, a.error, a.details])).toEqual([
      ['failed', 'Error: gateway said 502', { attempt: 1, status: 502 }],
      ['failed', 'Error: gateway said 502', { attempt: 2, status: 502 }],
    ]);
  });

  it.runIf(harness.isAvailable)('fails an attempt whose return value is over the cap or not JSON, with a clear error', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('big', { maxAttempts: 1, maxResultBytes: 100, run: () => ({ text: 'x'.repeat(200) }) });
    mr.task('bigint', { maxAttempts: 1, run: () => ({ total: 10n }) });
    const big = await mr.enqueue('big', {});
    const bigint = await mr.enqueue('bigint', {});
    mr.work({ pollMs: 10 });
    expect((await settled(mr, big.id, 'dead')).lastError).toMatch(/return value is 211 bytes of JSON; the cap is 100/);
    expect((await settled(mr, bigint.id, 'dead')).lastError).toMatch(/return value is not JSON/);
  });

  it.runIf(harness.isAvailable)('refuses details over 8 KiB at the call, so the handler can tell', async () => {
    const { mr } = await openTestMailroom(harness);
    let refusal: unknown;
    mr.task('chatty', {
      run(_payload, ctx) {
        try {
          ctx.setDetails({ excerpt: 'y'.repeat(9_000) });
        } catch (error) {
          refusal = error;
        }
        ctx.setDetails({ excerpt: 'y'.repeat(10) });
      },
    });
    const { id } = await mr.enqueue('chatty', {});
    mr.work({ pollMs: 10 });
    const job = await settled(mr, id, 'done');
    expect(refusal).toMatchObject({ code: 'MR_ERR_RESULT_UNSTORABLE' });
    expect(job.attemptsLog[0]!.details).toEqual({ excerpt: 'yyyyyyyyyy' });
  });

  it.runIf(harness.isAvailable)('snoozes without charging the attempt, then runs it as attempt 1', async () => {
    const { mr } = await openTestMailroom(harness);
    let calls = 0;
    mr.task('report', {
      maxAttempts: 1,
      async run() {
        calls++;
        if (calls < 3) throw new Snooze(5, `not ready (${calls})`);
        return { pages: 3 };
      },
    });
    const { id } = await mr.enqueue('report', {});
    mr.work({ pollMs: 10 });
    const job = await settled(mr, id, 'done');
    expect(job).toMatchObject({ attempts: 1, snoozes: 2, result: { pages: 3 } });
    expect(job.attemptsLog.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'snoozed', 'not ready (1)'],
      [1, 'snoozed', 'not ready (2)'],
      [1, 'done', null],
    ]);
  });

  it.runIf(harness.isAvailable)('counts a snooze past maxSnoozes as a failure', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('never_ready', { maxAttempts: 1, maxSnoozes: 2, run: () => Promise.reject(new Snooze(1, 'still waiting')) });
    const { id } = await mr.enqueue('never_ready', {});
    mr.work({ pollMs: 10 });
    const dead = await settled(mr, id, 'dead');
    expect(dead.attemptsLog.map((a) => a.outcome)).toEqual(['snoozed', 'snoozed', 'failed']);
    expect(dead.lastError).toMatch(/snoozed 2 times, the task's maxSnoozes/);
    expect(dead).toMatchObject({ attempts: 1, snoozes: 2, deadReason: 'exhausted' });
  });

  it.runIf(harness.isAvailable)('shows progress while the job runs, coalesced to a few writes, and keeps the last report', async () => {
    const { mr } = await openTestMailroom(harness);
    const writes = vi.spyOn(mr.store, 'jobProgressMany');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    mr.task('render', {
      async run(_payload, ctx) {
        for (let page = 1; page <= 500; page++) ctx.progress(page / 1_000, `page ${page}`);
        await gate;
        ctx.progress(1, 'assembled');
        expect(() => ctx.progress(1.5)).toThrow(/from 0 to 1/);
      },
    });
    const { id } = await mr.enqueue('render', {});
    mr.work({ pollMs: 10 });
    const running = await waitFor(async () => {
      const job = await mr.getJob(id);
      return job?.progress?.note === 'page 500' && job;
    }, { description: 'the progress to show while running' });
    expect(running.progress).toEqual({ fraction: 0.5, note: 'page 500' });
    // 500 reports in one tick: one write, not 500.
    expect(writes.mock.calls.flatMap(([params]) => params.updates).length).toBe(1);
    release();
    const done = await settled(mr, id, 'done');
    expect(done.progress).toEqual({ fraction: 1, note: 'assembled' });
  });
});
