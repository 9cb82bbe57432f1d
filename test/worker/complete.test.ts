// ctx.complete: the handler's own writes and its job's `done` in one transaction, fenced
// by the lease (SPEC §3 "Transactional completion"), through the worker on every store in
// the harness list. SQLite's callback is synchronous on Mailroom's connection; PostgreSQL's
// is async on the transaction's client. The chaos version with real processes is
// test/faults/exactly-once.test.ts.

import { afterEach, describe, expect, it } from 'vitest';
import { storeHarnesses } from '../harness/stores.js';
import { closeTestMailrooms, openTestMailroom } from '../harness/mailroom.js';
import { waitFor } from '../harness/wait.js';
import type { JobDetail } from '../../src/index.js';
import type { Mailroom } from '../../src/mailroom.js';
import type { StoreHarness } from '../harness/store-harness.js';

/**
 * The order table a handler moves from awaiting_payment to paid, on either store. Its own
 * name per test: a PostgreSQL transaction's client writes where the application's tables
 * live (its search_path), not in the test's Mailroom schema.
 */
function ordersOn(harness: StoreHarness, mr: Mailroom) {
  const isSqlite = harness.name === 'sqlite';
  const p = (n: number) => (isSqlite ? '?' : `$${n}`);
  const table = `orders_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  created.push({ mr, table, isSqlite });
  return {
    async create(ids: number[]): Promise<void> {
      const ddl = `CREATE TABLE ${table} (id INTEGER PRIMARY KEY, status TEXT NOT NULL, paid_count INTEGER NOT NULL DEFAULT 0)`;
      if (isSqlite) {
        mr.transaction((tx) => {
          tx.db.exec(ddl);
          for (const id of ids) tx.db.prepare(`INSERT INTO ${table} (id, status) VALUES (?, 'awaiting_payment')`).run(id);
        });
      } else {
        await mr.transaction(async (tx) => {
          await tx.client.query(ddl);
          for (const id of ids) await tx.client.query(`INSERT INTO ${table} (id, status) VALUES ($1, 'awaiting_payment')`, [id]);
        });
      }
    },
    /** The write a handler makes inside ctx.complete, in the dialect's own shape. */
    pay(tx: any, id: number): unknown {
      const sql = `UPDATE ${table} SET status = 'paid', paid_count = paid_count + 1 WHERE id = ${p(1)} AND status = 'awaiting_payment'`;
      return isSqlite ? tx.db.prepare(sql).run(id) : tx.client.query(sql, [id]);
    },
    async read(id: number): Promise<{ status: string; paid_count: number }> {
      const sql = `SELECT status, paid_count FROM ${table} WHERE id = ${p(1)}`;
      const row = isSqlite
        ? mr.transaction((tx) => tx.db.prepare(sql).get(id))
        : await mr.transaction(async (tx) => (await tx.client.query(sql, [id])).rows[0]);
      return { status: (row as any).status, paid_count: Number((row as any).paid_count) };
    },
  };
}

const created: Array<{ mr: Mailroom; table: string; isSqlite: boolean }> = [];

/** PostgreSQL's tables outlive the test's schema: drop them (SQLite's go with its file). */
async function dropOrders(): Promise<void> {
  for (const { mr, table, isSqlite } of created.splice(0)) {
    if (!isSqlite) await mr.transaction(async (tx) => tx.client.query(`DROP TABLE IF EXISTS ${table}`)).catch(() => undefined);
  }
}

/**
 * Runs `write` in ctx.complete the way each store wants it: synchronous on SQLite (its
 * statements return values), async on PostgreSQL (the returned promises are awaited, in
 * order, by the transaction's one client).
 */
function completeWith(harness: StoreHarness, ctx: any, write: (tx: any) => unknown): unknown {
  return harness.name === 'sqlite' ? ctx.complete((tx: any) => void write(tx)) : ctx.complete(async (tx: any) => Promise.all([write(tx)].flat()));
}

/** Waits for the job's status; with `withResult`, also for the result written after ctx.complete's commit. */
async function settled(mr: Mailroom, id: string, status: 'done' | 'dead', withResult = false): Promise<JobDetail> {
  return waitFor(async () => {
    const job = await mr.getJob(id);
    return job?.status === status && (!withResult || job.result !== null) && job;
  }, { description: `job ${id} to be ${status}` });
}

describe.each(storeHarnesses)('ctx.complete on $name', (harness) => {
  afterEach(async () => {
    await dropOrders();
    await closeTestMailrooms(harness);
  });

  it.runIf(harness.isAvailable)('commits the handler\'s writes, an enqueue and the job\'s done together; the return value is the result', async () => {
    const { mr } = await openTestMailroom(harness);
    const orders = ordersOn(harness, mr);
    await orders.create([7]);
    mr.task('payment_succeeded', {
      async run(payload, ctx) {
        const { orderId } = payload as { orderId: number };
        await completeWith(harness, ctx, (tx) => [orders.pay(tx, orderId), tx.enqueue('fulfil_order', { orderId }, { key: `fulfil:${orderId}` })]);
        return { orderId, paid: true };
      },
    });
    const fulfilled: unknown[] = [];
    mr.task('fulfil_order', { run: (payload) => void fulfilled.push(payload) });
    const { id } = await mr.enqueue('payment_succeeded', { orderId: 7 });
    mr.work({ pollMs: 10 });
    const job = await settled(mr, id, 'done', true);
    expect(job).toMatchObject({ attempts: 1, result: { orderId: 7, paid: true } });
    expect(job.attemptsLog.map((a) => a.outcome)).toEqual(['done']);
    expect(await orders.read(7)).toEqual({ status: 'paid', paid_count: 1 });
    await waitFor(() => fulfilled.length === 1, { description: 'the fulfilment job' });
    expect(fulfilled).toEqual([{ orderId: 7 }]);
  });

  it.runIf(harness.isAvailable)('rolls back the writes when the callback throws, and fails the attempt as usual', async () => {
    const { mr } = await openTestMailroom(harness);
    const orders = ordersOn(harness, mr);
    await orders.create([8]);
    let calls = 0;
    mr.task('payment_succeeded', {
      maxAttempts: 3,
      backoff: { baseMs: 1, capMs: 5, jitter: 'none' },
      async run(_payload, ctx) {
        calls++;
        await completeWith(harness, ctx, (tx) => {
          const paying = orders.pay(tx, 8);
          if (calls === 1) throw new Error('inventory service said no');
          return paying;
        });
      },
    });
    const { id } = await mr.enqueue('payment_succeeded', {});
    mr.work({ pollMs: 10 });
    const job = await settled(mr, id, 'done');
    expect(job.attemptsLog.map((a) => [a.outcome, a.error])).toEqual([
      ['failed', 'Error: inventory service said no'],
      ['done', null],
    ]);
    // The first attempt's write was rolled back with it: paid once, by the second.
    expect(await orders.read(8)).toEqual({ status: 'paid', paid_count: 1 });
  });

  it.runIf(harness.isAvailable)('commits nothing when the lease was lost before ctx.complete, and the next run applies it once', async () => {
    const { mr } = await openTestMailroom(harness);
    const orders = ordersOn(harness, mr);
    await orders.create([9]);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const outcomes: string[] = [];
    let calls = 0;
    mr.task('payment_succeeded', {
      async run(_payload, ctx) {
        calls++;
        if (calls === 1) await held;
        try {
          await completeWith(harness, ctx, (tx) => orders.pay(tx, 9));
          outcomes.push('committed');
        } catch (error) {
          outcomes.push((error as { code?: string }).code ?? String(error));
          throw error;
        }
      },
    });
    const { id } = await mr.enqueue('payment_succeeded', {});
    const worker = mr.work({ pollMs: 10 });
    await waitFor(async () => (await mr.getJob(id))?.status === 'running', { description: 'the first run to start' });
    // The lease is taken over behind the worker's back (its heartbeat has not noticed):
    // the rescue of a far-future sweep expires it, and the job is pending again.
    expect((await mr.store.jobRescue({ now: new Date(Date.now() + 10 * 60_000) })).requeued).toEqual([id]);
    release();
    await waitFor(() => outcomes.length === 1, { description: 'the first run to try ctx.complete' });
    expect(outcomes).toEqual(['MR_ERR_LEASE_LOST']);
    await mr.retryNow(id); // the rescue's far-future clock made it due then
    const job = await settled(mr, id, 'done');
    await waitFor(() => outcomes.length === 2, { description: 'the second run to commit' });
    expect(outcomes).toEqual(['MR_ERR_LEASE_LOST', 'committed']);
    expect(await orders.read(9)).toEqual({ status: 'paid', paid_count: 1 });
    expect(job.attemptsLog.map((a) => a.outcome)).toEqual(['lost', 'done']);
    await worker.stop();
  });

  it.runIf(harness.isAvailable)('keeps the job done when the handler throws after the commit', async () => {
    const { mr } = await openTestMailroom(harness);
    const orders = ordersOn(harness, mr);
    await orders.create([10]);
    mr.task('payment_succeeded', {
      maxAttempts: 3,
      async run(_payload, ctx) {
        await completeWith(harness, ctx, (tx) => orders.pay(tx, 10));
        throw new Error('the receipt email failed');
      },
    });
    const { id } = await mr.enqueue('payment_succeeded', {});
    mr.work({ pollMs: 10 });
    const job = await settled(mr, id, 'done');
    expect(job).toMatchObject({ attempts: 1, result: null, lastError: null });
    expect(await orders.read(10)).toEqual({ status: 'paid', paid_count: 1 });
  });

  it.runIf(harness.isAvailable)('runs once per attempt', async () => {
    const { mr } = await openTestMailroom(harness);
    let second: unknown;
    mr.task('twice', {
      async run(_payload, ctx) {
        await completeWith(harness, ctx, () => undefined);
        try {
          await completeWith(harness, ctx, () => undefined);
        } catch (error) {
          second = error;
        }
      },
    });
    const { id } = await mr.enqueue('twice', {});
    mr.work({ pollMs: 10 });
    await settled(mr, id, 'done');
    expect(second).toMatchObject({ code: 'MR_ERR_JOB_STATE' });
  });
});
