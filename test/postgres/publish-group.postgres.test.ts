// PostgreSQL-only: keyless publishes asked for in one turn of the event loop share one
// statement, and no more than two publish statements run at once (postgres-store.ts,
// publishGrouped; grouped-writes.ts). What the shared suite cannot show: a publish whose
// data the server refuses fails alone, the others of its group are stored (enqueues too,
// and while close() runs); and a burst of
// publishes does not take a pooled connection each. (SQLite runs each publish in a
// savepoint of a shared commit on its one connection.)
import { afterEach, describe, expect, it } from 'vitest';
import { GroupedWrites } from '../../src/store/postgres/grouped-writes.js';
import type { GroupedWrite } from '../../src/store/postgres/grouped-writes.js';
import { jobInsert } from '../harness/factory.js';
import { connectClient, postgresHarness } from '../harness/postgres.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('grouped writes', () => {
  it('sends the first write of a turn at once, the rest of its turn together, and holds what comes while two run', async () => {
    const sent: number[][] = [];
    const finishers: Array<() => void> = [];
    const writes = new GroupedWrites<number, string>({ maxInFlight: 2, firstAtOnce: true }, (batch: ReadonlyArray<GroupedWrite<number, string>>) => {
      sent.push(batch.map((write) => write.params));
      return new Promise<void>((resolve) =>
        finishers.push(() => {
          for (const write of batch) write.resolve(`ok ${write.params}`);
          resolve();
        }),
      );
    });
    const results = [writes.add(1), writes.add(2), writes.add(3)];
    expect(sent).toEqual([[1]]);
    await nextTurn();
    expect(sent).toEqual([[1], [2, 3]]);
    // Two in flight: later turns wait, and go as one when a statement finishes.
    results.push(writes.add(4));
    await nextTurn();
    results.push(writes.add(5));
    await nextTurn();
    expect(sent).toEqual([[1], [2, 3]]);
    finishers[0]!();
    await nextTurn();
    expect(sent).toEqual([[1], [2, 3], [4, 5]]);
    finishers[1]!();
    finishers[2]!();
    expect(await Promise.all(results)).toEqual(['ok 1', 'ok 2', 'ok 3', 'ok 4', 'ok 5']);
  });

  it('by default sends a turn’s writes together at its end, however many statements run', async () => {
    const sent: number[][] = [];
    const writes = new GroupedWrites<number, number>({}, (batch) => {
      sent.push(batch.map((write) => write.params));
      // Never finishes: the next turn must not wait for it.
      return new Promise<void>(() => undefined);
    });
    void writes.add(1);
    void writes.add(2);
    expect(sent).toEqual([]);
    await nextTurn();
    void writes.add(3);
    await nextTurn();
    expect(sent).toEqual([[1, 2], [3]]);
  });

  it('rejects every write of a batch whose send failed, and goes on with the next', async () => {
    let isBroken = true;
    const writes = new GroupedWrites<number, number>({ maxInFlight: 1 }, async (batch) => {
      if (isBroken) throw new Error('connection lost');
      for (const write of batch) write.resolve(write.params * 10);
    });
    const failed = Promise.allSettled([writes.add(1), writes.add(2)]);
    expect((await failed).map((result) => result.status)).toEqual(['rejected', 'rejected']);
    isBroken = false;
    expect(await writes.add(3)).toBe(30);
  });

  it('frees the slot of a send that threw at once or left a write unanswered, and answers that write with an error', async () => {
    let mode: 'throw' | 'forget' | 'fine' = 'throw';
    const writes = new GroupedWrites<number, number>({ maxInFlight: 1 }, (batch) => {
      if (mode === 'throw') throw new Error('bad statement');
      if (mode === 'fine') for (const write of batch) write.resolve(write.params);
      return Promise.resolve();
    });
    await expect(writes.add(1)).rejects.toThrow('bad statement');
    mode = 'forget';
    await expect(writes.add(2)).rejects.toThrow('not answered');
    mode = 'fine';
    expect(await writes.add(3)).toBe(3);
  });

  it('drain() sends what waits and resolves only once every batch in flight is settled, its retries included', async () => {
    const finishers: Array<() => void> = [];
    const writes = new GroupedWrites<number, number>({ maxInFlight: 1, firstAtOnce: true }, (batch) =>
      new Promise<void>((resolve) =>
        finishers.push(() => {
          for (const write of batch) write.resolve(write.params);
          resolve();
        }),
      ),
    );
    const results = [writes.add(1), writes.add(2)];
    let isDrained = false;
    const drained = writes.drain().then(() => (isDrained = true));
    // 2 waited behind the cap; drain sends it at once, beside 1.
    expect(finishers).toHaveLength(2);
    finishers[0]!();
    await nextTurn();
    expect(isDrained).toBe(false);
    finishers[1]!();
    await drained;
    expect(await Promise.all(results)).toEqual([1, 2]);
  });
});

const publish = (tenant: string, i: number) => ({ tenant, type: 'invoice.paid', key: null, job: jobInsert({ type: 'deliver' }), payloadJson: JSON.stringify({ i }) });

describe.skipIf(!postgresHarness.isAvailable)('postgres grouped publishes', () => {
  afterEach(() => postgresHarness.cleanup());

  it('fails only the publish whose data the server refuses, and stores the rest of its group', async () => {
    const { store } = await postgresHarness.open();
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    // A NUL character is not text to PostgreSQL (SQLSTATE 22021), and a tenant too long for
    // its index row is past a limit (54000): either fails the group's insert.
    for (const [round, bad] of [['nul', 'ac\u0000me'], ['too long', 'x'.repeat(300_000)]] as const) {
      const settled = await Promise.allSettled([0, 1, 2, 3, 4].map((i) => store.messagePublish(publish(i === 2 ? bad : 'acme', i))));
      expect(settled.map((result) => result.status), round).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      for (const result of settled) {
        if (result.status === 'fulfilled') expect(result.value.deliveries.map((delivery) => delivery.status)).toEqual(['pending']);
      }
    }
    const stored = await store.messageList({ tenant: 'acme' });
    expect(stored.map((message) => (message.payload as { i: number }).i).sort()).toEqual([0, 0, 1, 1, 3, 3, 4, 4]);
    expect((await store.jobStats({})).byQueue.default?.pending).toBe(8);
  });

  it('answers a burst of publishes, one per turn, on a few connections, not one each', async () => {
    const { store, url } = await postgresHarness.open();
    const schema = new URL(url).searchParams.get('schema')!;
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    // Each its own turn, as requests of a busy app arrive: with each one sent at once, the
    // pool grew to its ten connections.
    const published: Array<Promise<unknown>> = [];
    for (let i = 0; i < 60; i++) {
      published.push(store.messagePublish(publish('acme', i)));
      await nextTurn();
    }
    await Promise.all(published);
    expect((await store.jobStats({})).byQueue.default?.pending).toBe(60);
    const client = await connectClient();
    try {
      const { rows } = await client.query<{ count: string }>('SELECT count(*) FROM pg_stat_activity WHERE application_name = $1', [`mailroom:${schema}`]);
      // Two publish statements at a time; the endpoint's add and the stats read reuse them.
      expect(Number(rows[0]!.count)).toBeLessThanOrEqual(3);
    } finally {
      await client.end();
    }
  });

  it('fails only the enqueue whose data the server refuses, and stores the rest of its turn', async () => {
    const { store } = await postgresHarness.open();
    // A NUL in a queue name (22021), a priority past a 4-byte integer (22003).
    const rounds = [
      ['nul', jobInsert({ queue: 'q\u0000x' })],
      ['out of range', jobInsert({ priority: 2 ** 40 })],
    ] as const;
    for (const [round, bad] of rounds) {
      const settled = await Promise.allSettled([0, 1, 2, 3].map((i) => store.jobInsertMany({ jobs: i === 1 ? [bad] : [jobInsert({ payload: { i } }), jobInsert({ payload: { i } })] })));
      expect(settled.map((result) => result.status), round).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled']);
      for (const result of settled) if (result.status === 'fulfilled') expect(result.value).toHaveLength(2);
    }
    expect((await store.jobStats({})).byQueue.default?.pending).toBe(12);
  });

  it('answers a group refused for one write’s data while close() runs: the others are stored, not refused as closed', async () => {
    const { store, url } = await postgresHarness.open();
    const schema = new URL(url).searchParams.get('schema')!;
    await store.endpointAdd({ tenant: 'acme', url: 'https://hooks.example.com/in', description: null, eventTypes: null, rateLimit: null, metadata: null, secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', addedBy: 'operator' });
    const publishes = [0, 1, 2, 3].map((i) => store.messagePublish(publish(i === 2 ? 'ac\u0000me' : 'acme', i)));
    const enqueues = [0, 1, 2].map((i) => store.jobInsertMany({ jobs: [jobInsert(i === 1 ? { queue: 'q\u0000x' } : { payload: { i } })] }));
    const closed = store.close();
    let isAnswered = false;
    void Promise.allSettled([...publishes, ...enqueues]).then(() => (isAnswered = true));
    const secondClose = store.close().then(() => (isAnswered ? 'after the writes' : 'before the writes'));
    const settled = await Promise.allSettled([...publishes, ...enqueues]);
    await closed;
    expect(settled.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    for (const index of [2, 5]) expect(String((settled[index] as PromiseRejectedResult).reason)).not.toMatch(/closed/i);
    await expect(store.jobInsertMany({ jobs: [jobInsert()] })).rejects.toMatchObject({ code: 'MR_ERR_CLOSED' });
    // A second close() asked meanwhile had waited for the same close.
    expect(await secondClose).toBe('after the writes');
    const client = await connectClient();
    try {
      const messages = await client.query<{ count: string }>(`SELECT count(*) FROM "${schema}".mailroom_message`);
      const jobs = await client.query<{ type: string; count: string }>(`SELECT type, count(*) FROM "${schema}".mailroom_job GROUP BY type ORDER BY type`);
      expect(Number(messages.rows[0]!.count)).toBe(3);
      expect(jobs.rows.map((row) => [row.type, Number(row.count)])).toEqual([['deliver', 3], ['test_job', 2]]);
    } finally {
      await client.end();
    }
  });
});
