// PostgreSQL-only: keyless publishes asked for in one turn of the event loop share one
// statement (postgres-store.ts, publishGrouped). What the shared suite cannot show: a
// publish whose data the server refuses fails alone; the others of its group are stored.
// (SQLite runs each publish in a savepoint of a shared commit, and accepts what PostgreSQL
// refuses here.)
import { afterEach, describe, expect, it } from 'vitest';
import { jobInsert } from '../harness/factory.js';
import { postgresHarness } from '../harness/postgres.js';

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
});
