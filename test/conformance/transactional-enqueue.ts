// Transactional enqueue (the outbox): a job enqueued inside the caller's transaction exists
// exactly when that transaction commits. SQLite offers a synchronous transaction on its
// own handle; PostgreSQL async transactions and the caller's own client. Each case runs
// only where the store's capabilities promise it.

import { describe, expect, it } from 'vitest';
import type { StoreHarness } from '../harness/store-harness.js';
import { T0, jobInsert, rejectionOf, useStore } from './context.js';

/** The slice of a better-sqlite3 handle these tests use on the caller's own table. */
interface SyncSqlHandle {
  exec(sql: string): unknown;
  prepare(sql: string): { run(...params: unknown[]): unknown; get(...params: unknown[]): unknown };
}

export function transactionalEnqueueConformance(harness: StoreHarness): void {
  describe('transactional enqueue', () => {
    const ctx = useStore(harness);
    const sync = harness.capabilities.syncTransactions;
    const async = harness.capabilities.asyncTransactions;

    it('offers exactly the transaction methods its capabilities promise', () => {
      expect(typeof ctx.store.transactionSync === 'function').toBe(sync);
      expect(typeof ctx.store.transaction === 'function').toBe(async);
      expect(typeof ctx.store.fromClient === 'function').toBe(async);
    });

    it.skipIf(!sync)('commits a job with the caller’s own write in transactionSync (syncTransactions)', async () => {
      const result = ctx.store.transactionSync!((tx) => {
        const db = tx.db as SyncSqlHandle;
        db.exec('CREATE TABLE app_order (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)');
        db.prepare('INSERT INTO app_order (id, total) VALUES (?, ?)').run(1, 4200);
        const [inserted] = tx.jobInsertMany({ jobs: [jobInsert({ type: 'send_receipt', payload: { orderId: 1 } })], now: T0 });
        return inserted!.job.id;
      });
      expect((await ctx.store.jobGet({ id: result }))!).toMatchObject({ type: 'send_receipt', payload: { orderId: 1 } });
      const db = ctx.store.transactionSync!((tx) => tx.db as SyncSqlHandle);
      expect(db.prepare('SELECT total FROM app_order WHERE id = 1').get()).toEqual({ total: 4200 });
    });

    it.skipIf(!sync)('rolls back the job and the caller’s write when the transactionSync callback throws (syncTransactions)', async () => {
      const db = ctx.store.transactionSync!((tx) => tx.db as SyncSqlHandle);
      db.exec('CREATE TABLE app_order (id INTEGER PRIMARY KEY, total INTEGER NOT NULL)');
      expect(() =>
        ctx.store.transactionSync!((tx) => {
          (tx.db as SyncSqlHandle).prepare('INSERT INTO app_order (id, total) VALUES (?, ?)').run(1, 4200);
          tx.jobInsertMany({ jobs: [jobInsert({ type: 'send_receipt' })], now: T0 });
          throw new Error('payment declined');
        }),
      ).toThrow('payment declined');
      expect(await ctx.store.jobList({})).toEqual([]);
      expect(db.prepare('SELECT count(*) AS n FROM app_order').get()).toEqual({ n: 0 });
    });

    it.skipIf(!sync)('refuses a transactionSync callback that returns a promise and keeps nothing (syncTransactions)', async () => {
      let thrown: unknown;
      try {
        ctx.store.transactionSync!((tx) => {
          tx.jobInsertMany({ jobs: [jobInsert({ type: 'send_receipt' })], now: T0 });
          return Promise.resolve('too late');
        });
      } catch (error) {
        thrown = error;
      }
      expect((thrown as { code?: string } | undefined)?.code).toBe('MR_ERR_TRANSACTION_ASYNC');
      expect(await ctx.store.jobList({})).toEqual([]);
    });

    it.skipIf(!async)('commits a job enqueued in transaction and returns the callback’s value (asyncTransactions)', async () => {
      const id = await ctx.store.transaction!(async (tx) => {
        const [inserted] = await tx.jobInsertMany({ jobs: [jobInsert({ type: 'send_receipt' })], now: T0 });
        expect((await tx.jobGet({ id: inserted!.job.id }))!.status).toBe('pending');
        return inserted!.job.id;
      });
      expect((await ctx.store.jobGet({ id }))!.type).toBe('send_receipt');
    });

    it.skipIf(!async)('rolls back a job enqueued in transaction when the callback throws (asyncTransactions)', async () => {
      const error = await rejectionOf(
        ctx.store.transaction!(async (tx) => {
          await tx.jobInsertMany({ jobs: [jobInsert({ type: 'send_receipt' })], now: T0 });
          throw new Error('payment declined');
        }),
      );
      expect((error as Error).message).toBe('payment declined');
      expect(await ctx.store.jobList({})).toEqual([]);
    });

    it.skipIf(!async)('enqueues through fromClient inside the caller’s transaction and rolls back with it (asyncTransactions)', async () => {
      await rejectionOf(
        ctx.store.transaction!(async (tx) => {
          const executor = ctx.store.fromClient!(tx.client);
          await executor.jobInsertMany({ jobs: [jobInsert({ type: 'from_client' })], now: T0 });
          expect(await tx.jobList({ type: 'from_client' })).toHaveLength(1);
          throw new Error('roll it back');
        }),
      );
      expect(await ctx.store.jobList({})).toEqual([]);
    });

    it.skipIf(!async)('keeps a job enqueued in an open transaction invisible to other connections until commit (asyncTransactions)', async () => {
      const other = await ctx.opened.openAnother();
      await ctx.store.transaction!(async (tx) => {
        await tx.jobInsertMany({ jobs: [jobInsert({ type: 'outbox' })], now: T0 });
        expect(await other.jobList({ type: 'outbox' })).toEqual([]);
      });
      expect(await other.jobList({ type: 'outbox' })).toHaveLength(1);
    });
  });
}
