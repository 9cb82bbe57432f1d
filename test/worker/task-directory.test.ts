// A process that enqueues a type it did not register (a web process beside separate
// workers, the CLI without --config) gets what the type's worker recorded when it started:
// the task's queue, so pausing that queue holds the job; its maxAttempts, stamped on the
// job as the worker's own enqueue would; and, for a task with per-key
// limits, a refusal instead of a job without a key (which would share one key with every
// other). Webhook ingress stores such a job without a key and warns once per type.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { TASK_DIRECTORY_MISSING_REFRESH_MS, TASK_DIRECTORY_REFRESH_MS } from '../../src/core/task-directory.js';
import { Mailroom } from '../../src/mailroom.js';
import { openStore } from '../../src/store/open-store.js';
import { jsonLines, logSink } from '../harness/log-sink.js';
import type { LogSink } from '../harness/log-sink.js';
import { storeHarnesses } from '../harness/stores.js';
import { waitFor } from '../harness/wait.js';

const emailTask = {
  queue: 'email',
  maxAttempts: 12,
  limits: { key: (p: unknown) => (p as { provider: string }).provider, perKey: { concurrency: 1 } },
  run: async () => undefined,
};

describe.each(storeHarnesses)('task directory on $name', (harness) => {
  const opened: Mailroom[] = [];
  afterEach(async () => {
    for (const mr of opened.splice(0)) await mr.close({ timeoutMs: 2_000 });
    await harness.cleanup();
  });

  /** The worker process: registers both tasks and starts a worker (which records them). */
  async function openWorkerProcess(): Promise<{ worker: Mailroom; url: string; limitKeys: () => Promise<unknown[]> }> {
    const { store, url, query } = await harness.open();
    const worker = await Mailroom.open({ store, logger: pino({ level: 'silent' }) });
    opened.push(worker);
    worker.task('send_email', emailTask).task('build_report', { queue: 'reports', maxAttempts: 2, run: async () => undefined });
    await worker.pauseQueue('email'); // nothing here should run; the test reads what was stored
    await worker.pauseQueue('reports');
    worker.work({ pollMs: 60_000 });
    await waitFor(async () => (await worker.store.taskList()).length === 2, { timeoutMs: 10_000, description: 'the worker recorded its two tasks' });
    const limitKeys = async () => (await query!('SELECT limit_key FROM mailroom_job ORDER BY id')).map((row) => row.limit_key);
    return { worker, url, limitKeys };
  }

  /** Another process on the same data that registers nothing. */
  async function openWebProcess(url: string, log: LogSink = logSink()): Promise<Mailroom> {
    const web = await Mailroom.open({ db: url, logger: pino({ level: 'debug' }, log) });
    opened.push(web);
    return web;
  }

  it.skipIf(!harness.isAvailable)("sends a type it did not register to the queue its worker recorded, so the queue's pause holds it", async () => {
    const { worker, url } = await openWorkerProcess();
    expect(await worker.store.taskList()).toEqual([
      { type: 'build_report', queue: 'reports', keyed: false, maxAttempts: 2, recordedAt: expect.any(Date) },
      { type: 'send_email', queue: 'email', keyed: true, maxAttempts: 12, recordedAt: expect.any(Date) },
    ]);
    const web = await openWebProcess(url);
    const report = await web.enqueue('build_report', { month: '2026-11' });
    expect(report.queue).toBe('reports');
    // An explicit queue still wins, and a type no worker recorded goes to the default queue.
    expect((await web.enqueue('build_report', {}, { queue: 'urgent' })).queue).toBe('urgent');
    expect((await web.enqueue('unknown_type', {})).queue).toBe('default');
    const [batchChild] = (await web.enqueueBatch([{ type: 'build_report', payload: {} }], { then: { type: 'build_report', payload: {} } })).jobs;
    expect(batchChild!.queue).toBe('reports');
    expect((await web.stats()).byQueue.reports).toMatchObject({ pending: 2 });
  });

  it.skipIf(!harness.isAvailable)("gives a type it did not register the attempt budget its worker declared, not the default's 5", async () => {
    const { url } = await openWorkerProcess();
    const web = await openWebProcess(url);
    const report = await web.enqueue('build_report', {});
    expect(report.maxAttempts).toBe(2);
    expect((await web.getJob(report.id))!.maxAttempts).toBe(2);
    // An explicit budget still wins; a type no worker recorded, or one recorded without a budget, gets the default.
    expect((await web.enqueue('build_report', {}, { maxAttempts: 7 })).maxAttempts).toBe(7);
    expect((await web.enqueue('unknown_type', {})).maxAttempts).toBe(5);
    await web.enqueueBatch([{ type: 'build_report', payload: { child: true } }], { then: { type: 'build_report', payload: { then: true } } });
    const inTransaction = harness.name === 'sqlite'
      ? (web.transaction((tx) => tx.enqueue('build_report', {})) as { maxAttempts: number })
      : ((await web.transaction(async (tx) => tx.enqueue('build_report', {}))) as { maxAttempts: number });
    expect(inTransaction.maxAttempts).toBe(2);
    const stored = (await web.listJobs({})).map((job) => [job.type, job.maxAttempts]);
    expect(stored.sort()).toEqual([...Array(3).fill(['build_report', 2]), ['build_report', 7], ['unknown_type', 5]].sort());
  });

  it.skipIf(!harness.isAvailable)('refuses to enqueue a type with per-key limits it cannot key, and stores nothing; registering the task here keys it', async () => {
    const { url, limitKeys } = await openWorkerProcess();
    const web = await openWebProcess(url);
    await expect(web.enqueue('send_email', { provider: 'postmark' })).rejects.toMatchObject({
      code: 'MR_ERR_LIMIT_KEY_UNKNOWN',
      message: expect.stringContaining('mr.task("send_email"'),
    });
    await expect(web.enqueueMany([{ type: 'build_report', payload: {} }, { type: 'send_email', payload: { provider: 'postmark' } }])).rejects.toMatchObject({
      code: 'MR_ERR_LIMIT_KEY_UNKNOWN',
    });
    expect(await web.listJobs({})).toEqual([]);

    web.task('send_email', emailTask);
    const job = await web.enqueue('send_email', { provider: 'postmark' });
    expect(job.queue).toBe('email');
    expect(await limitKeys()).toEqual(['postmark']);
  });

  it.skipIf(!harness.isAvailable)('records its task types once however many workers it starts, and again when a task is added', async () => {
    const { worker } = await openWorkerProcess();
    const recording = vi.spyOn(worker.store, 'taskRecord');
    worker.work({ pollMs: 60_000 }); // a second worker of the same tasks (serve starts two)
    expect(recording).not.toHaveBeenCalled();
    worker.task('archive_invoices', { queue: 'archive', run: async () => undefined });
    expect(recording).toHaveBeenCalledTimes(1);
    await waitFor(async () => (await worker.store.taskList()).length === 3, { timeoutMs: 10_000, description: 'the added task recorded' });
  });

  it.skipIf(!harness.isAvailable)('reads the directory again once its copy is stale, so a worker that started after this process opened is seen', async () => {
    const { store, url } = await harness.open();
    const web = await openWebProcess(url); // opened before any worker recorded anything
    const worker = await Mailroom.open({ store, logger: pino({ level: 'silent' }) });
    opened.push(worker);
    worker.task('build_report', { queue: 'reports', run: async () => undefined });
    await worker.pauseQueue('reports');
    worker.work({ pollMs: 60_000 });
    await waitFor(async () => (await worker.store.taskList()).length === 1, { timeoutMs: 10_000, description: 'the worker recorded its task' });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + 2 * TASK_DIRECTORY_REFRESH_MS);
      // The first enqueue after the interval already uses the new record (read before its insert).
      expect((await web.enqueue('build_report', {})).queue).toBe('reports');
      vi.setSystemTime(Date.now() + 2 * TASK_DIRECTORY_REFRESH_MS);
      // And inside a transaction, where the read happens before the transaction opens (PostgreSQL) or synchronously (SQLite).
      const job = harness.name === 'sqlite'
        ? (web.transaction((tx) => tx.enqueue('build_report', {})) as { queue: string })
        : ((await web.transaction(async (tx) => tx.enqueue('build_report', {}))) as { queue: string });
      expect(job.queue).toBe('reports');
    } finally {
      vi.useRealTimers();
    }
  });

  it.skipIf(!harness.isAvailable)('warns once that a type nobody recorded goes to the default queue, and reads the record again within half a second, not five', async () => {
    const { store, url } = await harness.open();
    const log = logSink();
    const web = await openWebProcess(url, log); // the web process starts first, as on a deploy
    expect((await web.enqueue('build_report', {})).queue).toBe('default');
    expect((await web.enqueue('build_report', {})).queue).toBe('default');
    const warnings = () => jsonLines(log.text()).filter((line) => line.level === 40 && line.type === 'build_report');
    expect(warnings()).toHaveLength(1);
    expect(warnings()[0]!.msg).toContain('default queue');
    expect((await web.enqueue('build_report', {}, { queue: 'reports' })).queue).toBe('reports'); // a queue given: nothing to warn of
    const worker = await Mailroom.open({ store, logger: pino({ level: 'silent' }) });
    opened.push(worker);
    worker.task('build_report', { queue: 'reports', maxAttempts: 3, run: async () => undefined });
    await worker.pauseQueue('reports');
    worker.work({ pollMs: 60_000 });
    await waitFor(async () => (await worker.store.taskList()).length === 1, { timeoutMs: 10_000, description: 'the worker recorded its task' });
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(Date.now() + TASK_DIRECTORY_MISSING_REFRESH_MS);
      const job = await web.enqueue('build_report', {});
      expect([job.queue, job.maxAttempts]).toEqual(['reports', 3]);
    } finally {
      vi.useRealTimers();
    }
    expect(warnings()).toHaveLength(1);
  });

  it.skipIf(!harness.isAvailable)('stores a webhook job it cannot key in the recorded queue, without a key, and warns once per type', async () => {
    const { url, limitKeys } = await openWorkerProcess();
    const log = logSink();
    const web = await openWebProcess(url, log);
    for (const deliveryId of ['evt_1', 'evt_2']) {
      const result = await web.ingest({
        event: { source: 'stripe', deliveryId, type: 'invoice.paid', headers: { 'content-type': 'application/json' }, rawBody: Buffer.from('{"provider":"postmark"}') },
        jobs: [{ type: 'send_email', priority: 0, group: null }],
      });
      expect(result.jobs).toHaveLength(1);
      expect(result.jobs[0]!.queue).toBe('email');
    }
    expect(await limitKeys()).toEqual([null, null]);
    const warnings = jsonLines(log.text()).filter((line) => line.level === 40 && line.type === 'send_email');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.msg).toContain('without a limit key');
  });
});

describe('task directory on a shared SQLite Database', () => {
  it("lets mr.enqueue inside the caller's own db.transaction join it, with a stale snapshot too", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-td-'));
    const db = new Database(join(dir, 'app.db'));
    const mr = await Mailroom.open({ db, logger: pino({ level: 'silent' }) });
    try {
      db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY)');
      // Past the refresh interval: an enqueue that awaited a directory read before its
      // insert would insert after the caller's transaction ended, and outlive its rollback.
      vi.useFakeTimers({ toFake: ['Date'] });
      vi.setSystemTime(Date.now() + 2 * TASK_DIRECTORY_REFRESH_MS);
      const enqueues: Promise<unknown>[] = [];
      const placeOrder = db.transaction((fail: boolean) => {
        db.prepare('INSERT INTO orders DEFAULT VALUES').run();
        enqueues.push(mr.enqueue('confirm_order', {}));
        if (fail) throw new Error('payment declined');
      });
      expect(() => placeOrder(true)).toThrow('payment declined');
      vi.setSystemTime(Date.now() + 2 * TASK_DIRECTORY_REFRESH_MS);
      placeOrder(false);
      vi.useRealTimers();
      const orders = db.prepare('SELECT count(*) AS n FROM orders').get() as { n: number };
      expect(orders.n).toBe(1);
      await Promise.allSettled(enqueues);
      expect(await mr.listJobs({ type: 'confirm_order' })).toHaveLength(1);
    } finally {
      vi.useRealTimers();
      await mr.close();
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('task directory on a schema before its maxAttempts column', () => {
  it('is still read by a process opened without migrating: the queue applies, the budget is the default', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-td-'));
    const path = join(dir, 'app.db');
    const store = await openStore({ db: `sqlite:${path}` });
    await store.migrate({ toVersion: 15 });
    await store.close();
    const db = new Database(path);
    // What a worker of the release before 0016 records.
    db.prepare("INSERT INTO mailroom_task (type, queue, keyed, recorded_at) VALUES ('build_report', 'reports', 0, 0)").run();
    db.close();
    const web = await Mailroom.open({ db: `sqlite:${path}`, migrate: false, logger: pino({ level: 'silent' }) });
    // A worker of this release on the same unmigrated schema still records queue and keyed.
    const worker = await Mailroom.open({ db: `sqlite:${path}`, migrate: false, logger: pino({ level: 'silent' }) });
    try {
      const job = await web.enqueue('build_report', {});
      expect([job.queue, job.maxAttempts]).toEqual(['reports', 5]);
      worker.task('archive', { queue: 'archive', maxAttempts: 2, run: async () => undefined });
      worker.work({ pollMs: 60_000 });
      await waitFor(async () => (await worker.store.taskList()).length === 2, { timeoutMs: 10_000, description: 'the worker recorded its task' });
      expect((await worker.store.taskList()).find((task) => task.type === 'archive')).toMatchObject({ queue: 'archive', maxAttempts: null });
    } finally {
      await worker.close({ timeoutMs: 2_000 });
      await web.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
