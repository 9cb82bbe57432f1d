// PostgreSQL-only: LISTEN/NOTIFY is a PostgreSQL capability (SQLite workers poll), and
// its failure mode — a dropped listener connection that must come back by itself — only
// exists here. Times are measured against deadlines; nothing sleeps to synchronise.
import { describe, it, expect, afterEach } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';
import { waitFor } from '../harness/wait.js';

/** The worker's default poll interval; a wake-up must beat it by a wide margin. */
const POLL_MS = 500;

/** Resolves with the first call whose argument passes `accept`, and the ms it took from `since`. */
function nextCall(calls: Array<{ queue: string | null; at: number }>, accept: (queue: string | null) => boolean, since: number) {
  return waitFor(() => calls.find((call) => call.at >= since && accept(call.queue)), { timeoutMs: 10_000, intervalMs: 1, description: 'a wake-up' });
}

describe.skipIf(!postgresHarness.isAvailable)('postgres LISTEN/NOTIFY wake-ups', () => {
  afterEach(() => postgresHarness.cleanup());

  it('wakes a subscriber within well under a poll interval when another process inserts a job', async () => {
    const opened = await postgresHarness.open();
    const calls: Array<{ queue: string | null; at: number }> = [];
    const unsubscribe = await opened.store.subscribe!((queue) => calls.push({ queue, at: performance.now() }));
    const other = await opened.openAnother();
    const samples: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      const started = performance.now();
      await other.jobInsertMany({ jobs: [jobInsert({ queue: `q${round}` })] });
      const call = await nextCall(calls, (queue) => queue === `q${round}`, started);
      samples.push(call.at - started);
    }
    await unsubscribe();
    // Measured here: a few ms per wake-up on a local server, insert round trip included.
    expect(Math.max(...samples)).toBeLessThan(POLL_MS / 2);
  });

  it('notifies once per queue for a batch insert, not once per row', async () => {
    const opened = await postgresHarness.open();
    const calls: Array<{ queue: string | null; at: number }> = [];
    const unsubscribe = await opened.store.subscribe!((queue) => calls.push({ queue, at: performance.now() }));
    const started = performance.now();
    await opened.store.jobInsertMany({ jobs: Array.from({ length: 50 }, (_, n) => jobInsert({ queue: n % 2 ? 'odd' : 'even' })) });
    // A marker insert after the batch: once its wake-up arrives, the batch's have too (one connection, in order).
    await opened.store.jobInsertMany({ jobs: [jobInsert({ queue: 'marker' })] });
    await nextCall(calls, (queue) => queue === 'marker', started);
    expect(calls.map((call) => call.queue).sort()).toEqual(['even', 'marker', 'odd']);
    await unsubscribe();
  });

  it('reconnects the listener after its connection is terminated and wakes subscribers again', async () => {
    const opened = await postgresHarness.open();
    const schema = new URL(opened.url).searchParams.get('schema')!;
    const calls: Array<{ queue: string | null; at: number }> = [];
    const unsubscribe = await opened.store.subscribe!((queue) => calls.push({ queue, at: performance.now() }));
    const admin = await connectClient();
    try {
      const listenerPids = async () =>
        (await admin.query("SELECT pid FROM pg_stat_activity WHERE application_name = $1", [`mailroom-listener:${schema}`])).rows.map(
          (row) => row.pid as number,
        );
      const [pid] = await listenerPids();
      expect(pid).toBeTypeOf('number');
      const killedAt = performance.now();
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      // The reconnect itself is announced with a null wake-up ("anything may have been missed").
      await nextCall(calls, (queue) => queue === null, killedAt);
      const pids = await listenerPids();
      expect(pids).toHaveLength(1);
      expect(pids[0]).not.toBe(pid);
      const started = performance.now();
      await opened.store.jobInsertMany({ jobs: [jobInsert({ queue: 'after-reconnect' })] });
      await nextCall(calls, (queue) => queue === 'after-reconnect', started);
    } finally {
      await admin.end();
      await unsubscribe();
    }
  });

  it('closes the listener connection when the last subscriber leaves', async () => {
    const opened = await postgresHarness.open();
    const schema = new URL(opened.url).searchParams.get('schema')!;
    const first = await opened.store.subscribe!(() => undefined);
    const second = await opened.store.subscribe!(() => undefined);
    const admin = await connectClient();
    try {
      const count = async () =>
        Number((await admin.query('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [`mailroom-listener:${schema}`])).rows[0].n);
      expect(await count()).toBe(1);
      await first();
      expect(await count()).toBe(1);
      await second();
      await waitFor(async () => (await count()) === 0, { description: 'the listener connection to close' });
    } finally {
      await admin.end();
    }
  });
});
