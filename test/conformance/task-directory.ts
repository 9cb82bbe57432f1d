// The task directory: what a starting worker records of its task types (queue, whether
// its per-key limits need a key computed at enqueue, maxAttempts), read by processes that
// enqueue a type they did not register. Stored, so another connection sees it; a newer
// record of a type replaces the older one.

import { describe, expect, it } from 'vitest';
import { SECOND_MS, T0, at, rawSql, sqlLiterals, useStore } from './context.js';
import type { StoreHarness } from '../harness/store-harness.js';

export function taskDirectoryConformance(harness: StoreHarness): void {
  describe('task directory', () => {
    const ctx = useStore(harness);

    it('keeps what workers recorded, per type; the newest record of a type wins, on every connection', async () => {
      expect(await ctx.store.taskList()).toEqual([]);
      await ctx.store.taskRecord({
        tasks: [
          { type: 'send_email', queue: 'email', keyed: true, maxAttempts: 10 },
          { type: 'build_report', queue: 'default', keyed: false, maxAttempts: null },
        ],
        now: T0,
      });
      await ctx.store.taskRecord({ tasks: [{ type: 'send_email', queue: 'email-v2', keyed: false, maxAttempts: 2 }], now: at(SECOND_MS) });
      await ctx.store.taskRecord({ tasks: [], now: at(SECOND_MS) });
      const elsewhere = await ctx.opened.openAnother();
      expect(await elsewhere.taskList()).toEqual([
        { type: 'build_report', queue: 'default', keyed: false, maxAttempts: null, recordedAt: T0 },
        { type: 'send_email', queue: 'email-v2', keyed: false, maxAttempts: 2, recordedAt: at(SECOND_MS) },
      ]);
    });

    it('reads and records on a schema before the budget columns (0016), as a process opened without migrating does', async () => {
      const opened = await harness.openUnmigrated();
      try {
        const { store } = opened;
        await store.migrate({ toVersion: 15 });
        const sql = sqlLiterals(harness);
        await rawSql(harness, opened).exec(`INSERT INTO mailroom_task (type, queue, keyed, recorded_at) VALUES ('build_report', 'reports', ${sql.bool(false)}, ${sql.time(T0)})`);
        await store.taskRecord({ tasks: [{ type: 'archive', queue: 'archive', keyed: true, maxAttempts: 2 }], now: at(SECOND_MS), withBudget: false });
        expect(await store.taskList()).toEqual([
          { type: 'archive', queue: 'archive', keyed: true, maxAttempts: null, recordedAt: at(SECOND_MS) },
          { type: 'build_report', queue: 'reports', keyed: false, maxAttempts: null, recordedAt: T0 },
        ]);
      } finally {
        await harness.cleanup();
      }
    });

    it("drops a type's budget once a worker of a release before 0016 records the type again (its record leaves the budget behind)", async () => {
      await ctx.store.taskRecord({ tasks: [{ type: 'send_email', queue: 'email', keyed: false, maxAttempts: 10 }], now: T0 });
      // What code of 0015 writes (the statement a process on an unmigrated schema uses too).
      await ctx.store.taskRecord({ tasks: [{ type: 'send_email', queue: 'email-old', keyed: false, maxAttempts: 1 }], now: at(SECOND_MS), withBudget: false });
      expect(await ctx.store.taskList()).toEqual([{ type: 'send_email', queue: 'email-old', keyed: false, maxAttempts: null, recordedAt: at(SECOND_MS) }]);
      await ctx.store.taskRecord({ tasks: [{ type: 'send_email', queue: 'email', keyed: false, maxAttempts: 10 }], now: at(2 * SECOND_MS) });
      expect((await ctx.store.taskList())[0]!.maxAttempts).toBe(10);
    });
  });
}
