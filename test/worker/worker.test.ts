// The worker and facade above the store: outcomes, retries, policies, leases, groups,
// priorities, queues and graceful stop, on every store in the harness list.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor, waitForEvent } from '../harness/wait.js';
import { KeyConflictError, LeaseLostError, Permanent, RetryAfter } from '../../src/index.js';
import type { JobDetail, TaskContext } from '../../src/index.js';

/** A promise with its resolve handle, to hold a handler until the test lets it go. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

const FAST_BACKOFF = { baseMs: 1, capMs: 5, jitter: 'none' as const };

describe.each(storeHarnesses)('worker on $name', (harness) => {
  afterEach(async () => closeTestMailrooms(harness));

  it.runIf(harness.isAvailable)('runs a job to done and hands the handler its payload and context', async () => {
    const { mr } = await openTestMailroom(harness);
    const seen: Array<{ payload: unknown; attempt: number; jobId: string; aborted: boolean }> = [];
    mr.task('greet', {
      async run(payload, ctx) {
        seen.push({ payload, attempt: ctx.attempt, jobId: ctx.job.id, aborted: ctx.signal.aborted });
      },
    });
    const job = await mr.enqueue('greet', { name: 'Ada' });
    const worker = mr.work({ concurrency: 2, pollMs: 50 });
    await worker.drained();
    expect(seen).toEqual([{ payload: { name: 'Ada' }, attempt: 1, jobId: job.id, aborted: false }]);
    const done = (await mr.getJob(job.id))!;
    expect(done.status).toBe('done');
    expect(done.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
    expect(done.attemptsLog[0]!.workerId).toBe(worker.id);
  });

  it.runIf(harness.isAvailable)('answers a second close() only once the first has stopped the workers and closed the store', async () => {
    const { mr } = await openTestMailroom(harness);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let finished = false;
    mr.task('slow', { run: async () => { await held; finished = true; } });
    await mr.enqueue('slow', {});
    const worker = mr.work({ pollMs: 10 });
    await waitFor(() => worker.activeCount === 1, { description: 'the slow job to start' });
    const first = mr.close({ timeoutMs: 10_000 });
    let secondDone = false;
    const second = mr.close().then(() => (secondDone = true));
    // Both wait for the handler the workers are letting finish.
    await new Promise((resolve) => setImmediate(resolve));
    expect(secondDone).toBe(false);
    release();
    await second;
    expect(finished).toBe(true);
    await first;
    await expect(mr.enqueue('slow', {})).rejects.toMatchObject({ code: 'MR_ERR_CLOSED' });
  });

  it.runIf(harness.isAvailable)('retries a failing job with backoff and keeps every attempt in the log', async () => {
    const { mr } = await openTestMailroom(harness);
    let calls = 0;
    mr.task('flaky', {
      backoff: FAST_BACKOFF,
      async run() {
        calls++;
        if (calls < 3) throw new Error(`failure ${calls}`);
      },
    });
    const job = await mr.enqueue('flaky', {});
    mr.work({ pollMs: 10 });
    const done = await waitFor(async () => {
      const j = await mr.getJob(job.id);
      return j?.status === 'done' && j;
    });
    expect(done.attempts).toBe(3);
    expect(done.attemptsLog.map((a) => [a.attempt, a.outcome, a.error])).toEqual([
      [1, 'failed', 'Error: failure 1'],
      [2, 'failed', 'Error: failure 2'],
      [3, 'done', null],
    ]);
  });

  it.runIf(harness.isAvailable)('parks a job as dead after exactly maxAttempts and keeps its payload and errors', async () => {
    const { mr } = await openTestMailroom(harness);
    let calls = 0;
    mr.task('always_fails', {
      maxAttempts: 3,
      backoff: FAST_BACKOFF,
      async run() {
        calls++;
        throw new Error(`nope ${calls}`);
      },
    });
    const job = await mr.enqueue('always_fails', { order: 7 });
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    const dead = (await mr.getJob(job.id))!;
    expect(calls).toBe(3);
    expect(dead.status).toBe('dead');
    expect(dead.deadReason).toBe('exhausted');
    expect(dead.payload).toEqual({ order: 7 });
    expect(dead.lastError).toBe('Error: nope 3');
    expect(dead.attemptsLog.map((a) => a.error)).toEqual(['Error: nope 1', 'Error: nope 2', 'Error: nope 3']);
  });

  it.runIf(harness.isAvailable)('takes maxAttempts from enqueue before the task policy', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('fails', { maxAttempts: 9, backoff: FAST_BACKOFF, run: () => Promise.reject(new Error('x')) });
    const job = await mr.enqueue('fails', {}, { maxAttempts: 2 });
    expect(job.maxAttempts).toBe(2);
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    expect((await mr.getJob(job.id))!.attempts).toBe(2);
  });

  it.runIf(harness.isAvailable)('parks a job at once when its handler throws Permanent', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('no_such_order', { maxAttempts: 5, run: () => Promise.reject(new Permanent('no such order')) });
    const job = await mr.enqueue('no_such_order', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    const dead = (await mr.getJob(job.id))!;
    expect(dead.attempts).toBe(1);
    expect(dead.deadReason).toBe('permanent');
    expect(dead.lastError).toContain('no such order');
  });

  it.runIf(harness.isAvailable)('recognises Permanent from another copy of the package by its code', async () => {
    const { mr } = await openTestMailroom(harness);
    const foreign = Object.assign(new Error('foreign permanent'), { code: 'MR_ERR_PERMANENT' });
    mr.task('foreign', { run: () => Promise.reject(foreign) });
    const job = await mr.enqueue('foreign', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    expect((await mr.getJob(job.id))!.deadReason).toBe('permanent');
  });

  it.runIf(harness.isAvailable)('reschedules no sooner than RetryAfter asks and charges the attempt', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('rate_limited', { run: () => Promise.reject(new RetryAfter(60_000, 'rate limited')) });
    const job = await mr.enqueue('rate_limited', {});
    const worker = mr.work({ pollMs: 10 });
    const before = Date.now();
    const [, , delayMs] = await new Promise<[unknown, unknown, number]>((resolve) =>
      worker.once('failed', (...args) => resolve(args)),
    );
    expect(delayMs).toBe(60_000);
    const pending = (await mr.getJob(job.id))!;
    expect(pending.status).toBe('pending');
    expect(pending.attempts).toBe(1);
    expect(pending.runAt.getTime()).toBeGreaterThanOrEqual(before + 60_000 - 1_000);
    expect(pending.attemptsLog.map((a) => a.outcome)).toEqual(['failed']);
  });

  it.runIf(harness.isAvailable)('aborts a handler at its timeout and counts it as a transient failure', async () => {
    const { mr } = await openTestMailroom(harness);
    let reason: unknown;
    mr.task('hangs', {
      timeoutMs: 100,
      maxAttempts: 1,
      run: (_p, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            reason = ctx.signal.reason;
            reject(ctx.signal.reason);
          });
        }),
    });
    const job = await mr.enqueue('hangs', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    const dead = (await mr.getJob(job.id))!;
    expect((reason as { code?: string }).code).toBe('MR_ERR_TIMEOUT');
    expect(dead.attemptsLog.map((a) => a.outcome)).toEqual(['timeout']);
    expect(dead.lastError).toContain('timed out after 100 ms');
  });

  it.runIf(harness.isAvailable)('fences the late result of a handler that ignores its timeout', async () => {
    const { mr } = await openTestMailroom(harness);
    const release = gate();
    let finished = false;
    mr.task('ignores_timeout', {
      timeoutMs: 100,
      maxAttempts: 1,
      async run() {
        await release.promise; // ignores ctx.signal
        finished = true;
      },
    });
    const job = await mr.enqueue('ignores_timeout', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    release.open();
    await waitFor(() => finished);
    await worker.drained();
    const dead = (await mr.getJob(job.id))!;
    expect(dead.status).toBe('dead');
    expect(dead.attemptsLog.map((a) => a.outcome)).toEqual(['timeout']);
  });

  it.runIf(harness.isAvailable)('hands an already-aborted signal to a handler that first reads it after its timeout', async () => {
    const { mr } = await openTestMailroom(harness);
    const release = gate();
    let seen: { aborted: boolean; code: unknown } | null = null;
    mr.task('late_reader', {
      timeoutMs: 100,
      maxAttempts: 1,
      async run(_payload, ctx) {
        await release.promise; // the signal is made on first read, after the timeout
        seen = { aborted: ctx.signal.aborted, code: (ctx.signal.reason as { code?: string }).code };
      },
    });
    await mr.enqueue('late_reader', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    release.open();
    await waitFor(() => seen !== null);
    expect(seen).toEqual({ aborted: true, code: 'MR_ERR_TIMEOUT' });
  });

  it.runIf(harness.isAvailable)('keeps signal and log on a context the handler spreads into its own', async () => {
    const { mr } = await openTestMailroom(harness);
    let seen: { keys: string[]; aborted: boolean; hasLog: boolean } | null = null;
    mr.task('spreads_ctx', {
      timeoutMs: 100,
      maxAttempts: 1,
      async run(_payload, ctx) {
        const mine = { ...ctx, extra: true };
        await new Promise((resolve) => mine.signal.addEventListener('abort', resolve, { once: true }));
        seen = { keys: Object.keys(mine).sort(), aborted: mine.signal.aborted, hasLog: typeof mine.log.info === 'function' };
      },
    });
    await mr.enqueue('spreads_ctx', {});
    mr.work({ pollMs: 10 });
    await waitFor(() => seen !== null);
    expect(seen).toEqual({ keys: ['attempt', 'batch', 'complete', 'enqueueBatch', 'event', 'extendLease', 'extra', 'job', 'log', 'progress', 'setDetails', 'signal'], aborted: true, hasLog: true });
  });

  it.runIf(harness.isAvailable)('aborts the handler signal when its lease is lost to a rescue', async () => {
    const { mr } = await openTestMailroom(harness);
    const started = gate<TaskContext>();
    let abortReason: unknown;
    mr.task('long', {
      run: (_p, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => {
            abortReason = ctx.signal.reason;
            reject(ctx.signal.reason);
          });
          started.open(ctx);
        }),
    });
    const job = await mr.enqueue('long', {});
    const worker = mr.work({ leaseMs: 1_000, pollMs: 10_000 });
    await started.promise;
    // Another process decides the lease expired (its clock runs far ahead) and rescues it.
    const rescued = await mr.store.jobRescue({ now: new Date(Date.now() + 3_600_000) });
    expect(rescued.requeued).toEqual([job.id]);
    await waitForEvent(worker, 'leaseLost');
    expect(abortReason).toBeInstanceOf(LeaseLostError);
    const detail = (await mr.getJob(job.id))!;
    expect(detail.status).toBe('pending');
    expect(detail.attemptsLog.map((a) => a.outcome)).toEqual(['lost']);
  });

  it.runIf(harness.isAvailable)('extends the lease while a handler runs past leaseMs', async () => {
    const { mr } = await openTestMailroom(harness);
    const started = gate();
    const release = gate();
    mr.task('slowish', {
      async run() {
        started.open();
        await release.promise;
      },
    });
    const job = await mr.enqueue('slowish', {});
    const worker = mr.work({ leaseMs: 1_000, pollMs: 50 });
    await started.promise;
    const first = (await mr.getJob(job.id))!.leaseExpiresAt!.getTime();
    const later = await waitFor(async () => {
      const j = (await mr.getJob(job.id))!;
      return j.leaseExpiresAt!.getTime() > first && j.leaseExpiresAt!.getTime();
    });
    expect(later).toBeGreaterThan(first);
    release.open();
    await worker.drained();
    expect((await mr.getJob(job.id))!.status).toBe('done');
  });

  it.runIf(harness.isAvailable)('runs one job per group at a time in enqueue order without blocking other groups', async () => {
    const { mr } = await openTestMailroom(harness);
    const log: string[] = [];
    const firstRelease = gate();
    const othersStarted = gate();
    let othersSeen = 0;
    mr.task('step', {
      async run(payload: any) {
        log.push(`start ${payload.name}`);
        if (payload.name === 'a1') await firstRelease.promise;
        if (payload.name === 'b1' || payload.name === 'free') {
          othersSeen++;
          if (othersSeen === 2) othersStarted.open();
        }
        log.push(`end ${payload.name}`);
      },
    });
    await mr.enqueue('step', { name: 'a1' }, { group: 'customer:a' });
    await mr.enqueue('step', { name: 'a2' }, { group: 'customer:a' });
    await mr.enqueue('step', { name: 'a3' }, { group: 'customer:a', priority: 10 });
    await mr.enqueue('step', { name: 'b1' }, { group: 'customer:b' });
    await mr.enqueue('step', { name: 'free' });
    const worker = mr.work({ concurrency: 5, pollMs: 10 });
    await othersStarted.promise; // b1 and the ungrouped job ran while a1 held its group
    expect(log).not.toContain('start a2');
    firstRelease.open();
    await worker.drained();
    const aEvents = log.filter((line) => / a\d$/.test(line));
    expect(aEvents).toEqual(['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
  });

  it.runIf(harness.isAvailable)('runs higher priority first within a queue', async () => {
    const { mr } = await openTestMailroom(harness);
    const order: number[] = [];
    mr.task('prio', { run: async (p: any) => void order.push(p.n) });
    await mr.enqueue('prio', { n: 1 }, { priority: 0 });
    await mr.enqueue('prio', { n: 2 }, { priority: 5 });
    await mr.enqueue('prio', { n: 3 }, { priority: -1 });
    await mr.enqueue('prio', { n: 4 }, { priority: 5 });
    const worker = mr.work({ concurrency: 1, prefetch: 0, pollMs: 10 });
    await worker.drained();
    expect(order).toEqual([2, 4, 1, 3]);
  });

  it.runIf(harness.isAvailable)('claims only from the queues a worker was given', async () => {
    const { mr } = await openTestMailroom(harness);
    const ran: string[] = [];
    mr.task('email', { queue: 'email', run: async () => void ran.push('email') });
    mr.task('report', { queue: 'reports', run: async () => void ran.push('report') });
    const report = await mr.enqueue('report', {});
    const email = await mr.enqueue('email', {});
    expect(email.queue).toBe('email');
    const worker = mr.work({ queues: ['email'], pollMs: 10 });
    await worker.drained();
    expect(ran).toEqual(['email']);
    expect((await mr.getJob(report.id))!.status).toBe('pending');
  });

  it.runIf(harness.isAvailable)('only claims types it has a handler for', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('known', async () => undefined);
    const unknown = await mr.enqueue('unknown_type', { a: 1 });
    const known = await mr.enqueue('known', {});
    const worker = mr.work({ pollMs: 10 });
    await worker.drained();
    expect((await mr.getJob(known.id))!.status).toBe('done');
    expect((await mr.getJob(unknown.id))!.status).toBe('pending');
  });

  it.runIf(harness.isAvailable)('does not count delayed jobs when reporting drained', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('later', async () => undefined);
    const job = await mr.enqueue('later', {}, { delayMs: 3_600_000 });
    const worker = mr.work({ pollMs: 10 });
    await worker.drained();
    expect((await mr.getJob(job.id))!.status).toBe('pending');
  });

  it.runIf(harness.isAvailable)('picks up a job enqueued while idle well within the poll interval', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('wake', async () => undefined);
    const worker = mr.work({ pollMs: 60_000 });
    await worker.drained();
    const job = await mr.enqueue('wake', {});
    await waitFor(async () => (await mr.getJob(job.id))?.status === 'done', { timeoutMs: 5_000 });
  });

  it.runIf(harness.isAvailable)('stop lets a running handler finish and hands back prefetched jobs uncharged', async () => {
    const { mr } = await openTestMailroom(harness);
    const started = gate();
    const release = gate();
    mr.task('work', {
      async run(p: any) {
        if (p.n === 0) {
          started.open();
          await release.promise;
        }
      },
    });
    const jobs = [];
    for (let n = 0; n < 4; n++) jobs.push(await mr.enqueue('work', { n }));
    const worker = mr.work({ concurrency: 1, prefetch: 3, pollMs: 10 });
    await started.promise;
    const stopping = worker.stop({ timeoutMs: 5_000 });
    release.open();
    await stopping;
    const after = await Promise.all(jobs.map((j) => mr.getJob(j.id)));
    expect(after[0]!.status).toBe('done');
    for (const job of after.slice(1) as JobDetail[]) {
      expect(job.status).toBe('pending');
      expect(job.attempts).toBe(0);
      expect(job.attemptsLog.map((a) => a.outcome)).toEqual(['handed_back']);
    }
  });

  it.runIf(harness.isAvailable)('stop hands back a handler that honours its abort, uncharged', async () => {
    const { mr } = await openTestMailroom(harness);
    const started = gate();
    mr.task('honours', {
      run: (_p, ctx) =>
        new Promise((_resolve, reject) => {
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
          started.open();
        }),
    });
    const job = await mr.enqueue('honours', {});
    const worker = mr.work({ pollMs: 10 });
    await started.promise;
    await worker.stop({ timeoutMs: 400 });
    const after = (await mr.getJob(job.id))!;
    expect(after.status).toBe('pending');
    expect(after.attempts).toBe(0);
    expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['handed_back']);
  });

  it.runIf(harness.isAvailable)('stop resolves by its deadline when a handler ignores its abort, and fences its late outcome', async () => {
    const { mr } = await openTestMailroom(harness);
    const started = gate();
    const release = gate();
    let finished = false;
    mr.task('stubborn', {
      async run() {
        started.open();
        await release.promise;
        finished = true;
      },
    });
    const job = await mr.enqueue('stubborn', {});
    const worker = mr.work({ pollMs: 10 });
    await started.promise;
    const t0 = Date.now();
    await worker.stop({ timeoutMs: 400 });
    expect(Date.now() - t0).toBeLessThan(2_000);
    const released = (await mr.getJob(job.id))!;
    expect(released.status).toBe('pending');
    expect(released.attempts).toBe(1);
    release.open();
    await waitFor(() => finished);
    // The late success changed nothing.
    const after = (await mr.getJob(job.id))!;
    expect(after.status).toBe('pending');
    expect(after.attemptsLog.map((a) => a.outcome)).toEqual(['failed']);
  });

  it.runIf(harness.isAvailable)('makes no claim after stop', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('after_stop', async () => undefined);
    const worker = mr.work({ pollMs: 10 });
    await worker.drained();
    await worker.stop();
    const job = await mr.enqueue('after_stop', {});
    // Give a live worker every chance to claim: a second worker on another queue drains.
    const other = mr.work({ queues: ['elsewhere'], pollMs: 10 });
    await other.drained();
    expect((await mr.getJob(job.id))!.status).toBe('pending');
  });

  it.runIf(harness.isAvailable)('returns the existing job for a repeated key and refuses a different payload', async () => {
    const { mr } = await openTestMailroom(harness);
    const first = await mr.enqueue('welcome', { userId: 42, lang: 'en' }, { key: 'welcome:42' });
    const again = await mr.enqueue('welcome', { lang: 'en', userId: 42 }, { key: 'welcome:42' });
    expect(again.id).toBe(first.id);
    await expect(mr.enqueue('welcome', { userId: 43 }, { key: 'welcome:42' })).rejects.toBeInstanceOf(KeyConflictError);
    const stored = await mr.listJobs({ type: 'welcome' });
    expect(stored.map((j) => j.payload)).toEqual([{ userId: 42, lang: 'en' }]);
  });

  it.runIf(harness.isAvailable)('keeps the stack of a thrown failure on its attempt, and none for a timeout', async () => {
    const { mr } = await openTestMailroom(harness);
    function sendWelcomeMail(): never {
      throw new Error('smtp 421');
    }
    mr.task('mail', { maxAttempts: 1, async run() {
      sendWelcomeMail();
    } });
    mr.task('slow', { maxAttempts: 1, timeoutMs: 20, async run(_payload, ctx) {
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    } });
    const mail = await mr.enqueue('mail', {});
    const slow = await mr.enqueue('slow', {});
    const worker = mr.work({ pollMs: 10 });
    await waitFor(async () => (await mr.getJob(mail.id))?.status === 'dead' && (await mr.getJob(slow.id))?.status === 'dead');
    await worker.drained();
    const [failed] = (await mr.getJob(mail.id))!.attemptsLog;
    expect(failed!.error).toBe('Error: smtp 421');
    expect(failed!.stack).toMatch(/^Error: smtp 421\n\s+at sendWelcomeMail /);
    expect((await mr.getJob(slow.id))!.attemptsLog[0]).toMatchObject({ outcome: 'timeout', stack: null });
  });

  it.runIf(harness.isAvailable)('replays a dead job with a fresh budget and runs it again', async () => {
    const { mr } = await openTestMailroom(harness);
    let isFixed = false;
    mr.task('template', {
      maxAttempts: 1,
      async run() {
        if (!isFixed) throw new Error('template missing');
      },
    });
    const job = await mr.enqueue('template', {});
    const worker = mr.work({ pollMs: 10 });
    await waitForEvent(worker, 'dead');
    isFixed = true;
    const result = await mr.replay({ status: 'dead', type: 'template' }, { reason: 'fixed template', by: 'ops' });
    expect(result.ids).toEqual([job.id]);
    await waitFor(async () => (await mr.getJob(job.id))?.status === 'done');
    const detail = (await mr.getJob(job.id))!;
    expect(detail.attemptsLog.map((a) => a.outcome)).toEqual(['failed', 'done']);
    expect(detail.replays).toHaveLength(1);
    expect(detail.replays[0]).toMatchObject({ reason: 'fixed template', by: 'ops' });
  });

  it.runIf(harness.isAvailable)('runs a job waiting for its next retry at once after retryNow, counting on from its attempts', async () => {
    const { mr } = await openTestMailroom(harness);
    let calls = 0;
    mr.task('forward', {
      backoff: { baseMs: 10 * 60_000, capMs: 10 * 60_000, jitter: 'none' },
      async run() {
        calls++;
        if (calls === 1) throw new Error('connect ECONNREFUSED');
      },
    });
    const job = await mr.enqueue('forward', {}, { group: 'customer:1' });
    const later = await mr.enqueue('forward', {}, { group: 'customer:1' });
    const worker = mr.work({ pollMs: 20 });
    await waitForEvent(worker, 'failed');
    await worker.drained();
    expect((await mr.getJob(job.id))!).toMatchObject({ status: 'pending', attempts: 1 });
    expect((await mr.getJob(later.id))!.status).toBe('pending');

    expect(await mr.retryNow(job.id)).toEqual({ count: 1, ids: [job.id] });
    await waitFor(async () => (await mr.getJob(later.id))?.status === 'done', { description: 'both jobs of the group to run' });
    const done = (await mr.getJob(job.id))!;
    expect(done).toMatchObject({ status: 'done', attempts: 2 });
    expect(done.attemptsLog.map((a) => [a.attempt, a.outcome])).toEqual([[1, 'failed'], [2, 'done']]);
    // Group order held: the later job of the group ran after the first one.
    expect((await mr.getJob(later.id))!.startedAt!.getTime()).toBeGreaterThanOrEqual(done.finishedAt!.getTime());
    expect(await mr.retryNow({ type: 'forward' })).toEqual({ count: 0, ids: [] });
    await expect(mr.retryNow(job.id)).rejects.toThrow(`Job ${job.id} is done; cannot retry it. Replay it to run it again.`);
    await expect(mr.retryNow('987654321')).rejects.toMatchObject({ code: 'MR_ERR_JOB_NOT_FOUND' });
  });

  it.runIf(harness.isAvailable)('cancels a pending job and refuses to cancel a done one', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('c', async () => undefined);
    const pending = await mr.enqueue('c', {}, { delayMs: 60_000 });
    const cancelled = await mr.cancel(pending.id);
    expect(cancelled.status).toBe('dead');
    expect(cancelled.deadReason).toBe('cancelled');
    const done = await mr.enqueue('c', {});
    await mr.work({ pollMs: 10 }).drained();
    await expect(mr.cancel(done.id)).rejects.toMatchObject({ code: 'MR_ERR_JOB_STATE' });
    await expect(mr.cancel('999999')).rejects.toMatchObject({ code: 'MR_ERR_JOB_NOT_FOUND' });
  });

  it.runIf(harness.isAvailable)('reports counts for all four statuses by queue', async () => {
    const { mr } = await openTestMailroom(harness);
    mr.task('s_ok', async () => undefined);
    mr.task('s_bad', { maxAttempts: 1, run: () => Promise.reject(new Error('bad')) });
    await mr.enqueue('s_ok', {});
    await mr.enqueue('s_bad', {});
    await mr.enqueue('s_ok', {}, { delayMs: 60_000, queue: 'later' });
    await mr.work({ queues: ['default'], pollMs: 10 }).drained();
    const stats = await mr.stats();
    expect(stats.byStatus).toEqual({ pending: 1, running: 0, done: 1, dead: 1 });
    expect(stats.byQueue.default).toEqual({ pending: 0, running: 0, done: 1, dead: 1 });
    expect(stats.byQueue.later).toEqual({ pending: 1, running: 0, done: 0, dead: 0 });
    expect(stats.oldestPendingAgeMs).toBe(0);
  });

  it.runIf(harness.isAvailable)('rejects bad enqueue input with a clear error and stores nothing', async () => {
    const { mr } = await openTestMailroom(harness);
    await expect(mr.enqueue('', {})).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    await expect(mr.enqueue('t', {}, { maxAttempts: 0 })).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    await expect(mr.enqueue('t', {}, { runAt: new Date('nope') })).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    await expect(mr.enqueue('t', { n: 1n } as never)).rejects.toMatchObject({ code: 'MR_ERR_INVALID_ARGUMENT' });
    await expect(mr.enqueueMany([{ type: 't', payload: {} }, { type: 't', payload: {}, options: { priority: 1.5 } }])).rejects.toMatchObject({
      code: 'MR_ERR_INVALID_ARGUMENT',
    });
    expect((await mr.stats()).byStatus).toEqual({ pending: 0, running: 0, done: 0, dead: 0 });
  });
});
