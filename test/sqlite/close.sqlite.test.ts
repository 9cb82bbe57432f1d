// SQLite-only: close() and the acknowledgements still waiting for their group's commit
// (the shared suite checks that they are answered and stored). What only SQLite has: a
// lock held by another connection on the same file, which the flush waits out as any
// write does, and a caller's transaction on the shared handle, which could still roll
// back what they would be told was stored, so they are refused there.
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { sqliteHarness } from '../harness/sqlite.js';
import type { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';

describe('SQLite close with acknowledgements waiting for their commit', () => {
  afterEach(() => sqliteHarness.cleanup());

  it('commits them once another connection lets go of its lock, and answers with the usual errors', async () => {
    const { store, url } = await sqliteHarness.open();
    const other = new Database(url.slice('sqlite:'.length));
    try {
      other.exec('BEGIN IMMEDIATE');
      const asked = [0, 1].map(() => store.jobInsertMany({ jobs: [jobInsert({ type: 'before_close' })] }));
      const closed = store.close();
      setTimeout(() => other.exec('COMMIT'), 100);
      const settled = await Promise.allSettled(asked);
      await closed;
      expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled']);
      expect(other.prepare(`SELECT count(*) AS n FROM mailroom_job WHERE type = 'before_close'`).get()).toEqual({ n: 2 });
    } finally {
      other.close();
    }
  });

  it('answers a second close() only when the first is done: the waiting commit is not cut off', async () => {
    const { store, url } = await sqliteHarness.open();
    const other = new Database(url.slice('sqlite:'.length));
    try {
      other.exec('BEGIN IMMEDIATE');
      const asked = store.jobInsertMany({ jobs: [jobInsert({ type: 'before_close' })] });
      const first = store.close();
      const second = store.close();
      setTimeout(() => other.exec('COMMIT'), 100);
      await second;
      // By the time the second close() is answered, the flush the first one waits on has committed.
      expect(other.inTransaction).toBe(false);
      expect(other.prepare(`SELECT count(*) AS n FROM mailroom_job WHERE type = 'before_close'`).get()).toEqual({ n: 1 });
      await expect(asked).resolves.toHaveLength(1);
      await first;
    } finally {
      other.close();
    }
  });

  it('refuses them when close() is called inside a transaction on the shared handle', async () => {
    const { store } = await sqliteHarness.open();
    const asked = store.jobInsertMany({ jobs: [jobInsert({ type: 'before_close' })] });
    let closed: Promise<void> | undefined;
    try {
      (store as SqliteStore).transactionSync(() => {
        closed = store.close();
        return 1;
      });
    } catch {
      // Closing the database under its own open transaction fails that transaction.
    }
    await expect(asked).rejects.toMatchObject({ code: 'MR_ERR_CLOSED' });
    await closed;
  });
});
